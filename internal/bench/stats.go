package bench

import (
	"math"
)

// Confidence is the level of every interval the bench reports.
const Confidence = 0.95

// Summary is one variant's figure over its boots: each boot's value is one
// sample (boots, not I/Os, are the independent samples: two I/Os of one
// boot share its page cache, its placement and its host load).
type Summary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	// Lo and Hi are the 95 % confidence interval of the mean (Student's t
	// with N-1 degrees of freedom); with fewer than two samples there is
	// none and HasCI is false (Lo = Hi = Mean).
	Lo    float64 `json:"ci_lo"`
	Hi    float64 `json:"ci_hi"`
	HasCI bool    `json:"has_ci"`
}

// Summarize is the mean of xs with its 95 % confidence interval. Values
// that are not finite are dropped.
func Summarize(xs []float64) Summary {
	xs = finite(xs)
	s := Summary{N: len(xs)}
	if s.N == 0 {
		return s
	}
	s.Mean = mean(xs)
	s.Lo, s.Hi = s.Mean, s.Mean
	if s.N < 2 {
		return s
	}
	s.SD = math.Sqrt(variance(xs, s.Mean))
	h := TQuantile(1-(1-Confidence)/2, float64(s.N-1)) * s.SD / math.Sqrt(float64(s.N))
	s.Lo, s.Hi, s.HasCI = s.Mean-h, s.Mean+h, true
	return s
}

// Verdicts of a comparison at 95 %.
const (
	Faster       = "faster"
	Slower       = "slower"
	NoDifference = "no difference"
	TooFew       = "too few samples"
)

// Difference is B - A (patched minus baseline) with Welch's 95 %
// confidence interval over the boot values, and what it means.
type Difference struct {
	Diff float64 `json:"diff"`
	Lo   float64 `json:"ci_lo"`
	Hi   float64 `json:"ci_hi"`
	// Rel is Diff relative to A's mean, in percent (0 when A's mean is 0).
	Rel float64 `json:"rel_pct"`
	DF  float64 `json:"df"`
	// P is the two-sided p-value of Welch's t-test.
	P       float64 `json:"p"`
	Verdict string  `json:"verdict"`
}

// Significant is whether the interval excludes zero.
func (d Difference) Significant() bool { return d.Verdict == Faster || d.Verdict == Slower }

// Welch compares b with a: the difference of the means, its 95 %
// interval from Welch's t (unequal variances, Welch-Satterthwaite degrees
// of freedom) and the verdict; lowerBetter says which direction is faster
// (latency: lower; IOPS: higher). Values that are not finite are dropped.
func Welch(a, b []float64, lowerBetter bool) Difference {
	a, b = finite(a), finite(b)
	var d Difference
	if len(a) == 0 || len(b) == 0 {
		d.Verdict = TooFew
		return d
	}
	ma, mb := mean(a), mean(b)
	d.Diff = mb - ma
	d.Lo, d.Hi = d.Diff, d.Diff
	if ma != 0 {
		d.Rel = 100 * d.Diff / ma
	}
	if len(a) < 2 || len(b) < 2 {
		d.Verdict, d.P = TooFew, 1
		return d
	}
	qa, qb := variance(a, ma)/float64(len(a)), variance(b, mb)/float64(len(b))
	se2 := qa + qb
	if se2 == 0 {
		// Both samples constant: the difference is exact.
		d.DF = float64(len(a) + len(b) - 2)
		d.P = 1
		if d.Diff != 0 {
			d.P = 0
		}
	} else {
		d.DF = se2 * se2 / (qa*qa/float64(len(a)-1) + qb*qb/float64(len(b)-1))
		se := math.Sqrt(se2)
		h := TQuantile(1-(1-Confidence)/2, d.DF) * se
		d.Lo, d.Hi = d.Diff-h, d.Diff+h
		d.P = 2 * (1 - TCDF(math.Abs(d.Diff)/se, d.DF))
	}
	d.Verdict = verdict(d.Lo, d.Hi, lowerBetter)
	return d
}

// Paired compares b with a sample by sample (a[i] and b[i] measured in
// the same boot): the mean of the differences b[i] - a[i] with its 95 %
// interval (Student's t, n-1 degrees of freedom) and the verdict. Each
// boot is still one sample; what the boots share (their host load, their
// placement) cancels. Pairs with a value that is not finite are dropped;
// unequal lengths use the common prefix.
func Paired(a, b []float64, lowerBetter bool) Difference {
	var diffs, as []float64
	for i := 0; i < min(len(a), len(b)); i++ {
		if d := b[i] - a[i]; !math.IsNaN(d) && !math.IsInf(d, 0) {
			diffs, as = append(diffs, d), append(as, a[i])
		}
	}
	var d Difference
	if len(diffs) == 0 {
		d.Verdict = TooFew
		return d
	}
	s := Summarize(diffs)
	d.Diff, d.Lo, d.Hi, d.DF, d.P = s.Mean, s.Lo, s.Hi, float64(s.N-1), 1
	if ma := mean(as); ma != 0 {
		d.Rel = 100 * d.Diff / ma
	}
	switch {
	case !s.HasCI:
		d.Verdict = TooFew
		return d
	case s.SD == 0:
		if d.Diff != 0 {
			d.P = 0
		}
	default:
		d.P = 2 * (1 - TCDF(math.Abs(s.Mean)/(s.SD/math.Sqrt(float64(s.N))), d.DF))
	}
	d.Verdict = verdict(d.Lo, d.Hi, lowerBetter)
	return d
}

// PairedRatio is Paired on the scale of ratios: the mean of the per-boot
// log(b[i]/a[i]) with its interval, given back as percent changes of a
// (Diff, Lo, Hi, Rel in percent). What slows a whole boot (an emulator
// sharing the host's CPUs) scales both of its values alike: their ratio
// cancels it where their difference keeps it. Pairs that are not
// positive are dropped.
func PairedRatio(a, b []float64, lowerBetter bool) Difference {
	var la, lb []float64
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] > 0 && b[i] > 0 {
			la, lb = append(la, math.Log(a[i])), append(lb, math.Log(b[i]))
		}
	}
	d := Paired(la, lb, lowerBetter)
	pc := func(x float64) float64 { return 100 * math.Expm1(x) }
	d.Diff, d.Lo, d.Hi = pc(d.Diff), pc(d.Lo), pc(d.Hi)
	d.Rel = d.Diff
	return d
}

// verdict reads an interval of B - A: one that excludes zero is faster or
// slower by lowerBetter.
func verdict(lo, hi float64, lowerBetter bool) string {
	switch {
	case lo > 0 && lowerBetter, hi < 0 && !lowerBetter:
		return Slower
	case hi < 0 && lowerBetter, lo > 0 && !lowerBetter:
		return Faster
	}
	return NoDifference
}

func finite(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	return out
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// variance is the sample variance (n-1).
func variance(xs []float64, m float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return s / float64(len(xs)-1)
}

// TCDF is Student's t distribution function with df degrees of freedom
// (df > 0, not necessarily whole: Welch's are not).
func TCDF(t, df float64) float64 {
	if math.IsNaN(t) || !(df > 0) {
		return math.NaN()
	}
	if math.IsInf(t, 1) {
		return 1
	}
	if math.IsInf(t, -1) {
		return 0
	}
	// P(|T| > |t|) = I_x(df/2, 1/2) with x = df / (df + t^2).
	tail := 0.5 * regIncBeta(df/2, 0.5, df/(df+t*t))
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// TQuantile is the p-quantile of Student's t with df degrees of freedom,
// 0 < p < 1, found by bisection on TCDF (monotone; 200 halvings reach
// the float's resolution).
func TQuantile(p, df float64) float64 {
	if !(p > 0 && p < 1) || !(df > 0) {
		return math.NaN()
	}
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -TQuantile(1-p, df)
	}
	lo, hi := 0.0, 1.0
	for TCDF(hi, df) < p {
		lo, hi = hi, hi*2
		if hi > 1e300 {
			return math.Inf(1)
		}
	}
	for i := 0; i < 200 && hi-lo > 1e-15*hi; i++ {
		mid := (lo + hi) / 2
		if TCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), from
// its continued fraction (modified Lentz), using the symmetry
// I_x(a,b) = 1 - I_{1-x}(b,a) where the fraction converges slowly.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log(1-x))
	if x > (a+1)/(a+b+2) {
		return 1 - front*betaFraction(b, a, 1-x)/b
	}
	return front * betaFraction(a, b, x) / a
}

// betaFraction evaluates the continued fraction of the incomplete beta
// function by the modified Lentz method.
func betaFraction(a, b, x float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	f := d
	for m := 1; m <= 500; m++ {
		fm := float64(m)
		// even step
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		f *= c * d
		// odd step
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		delta := c * d
		f *= delta
		if math.Abs(delta-1) < 1e-15 {
			break
		}
	}
	return f
}
