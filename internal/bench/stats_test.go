package bench

import (
	"math"
	"math/rand"
	"testing"
)

// The reference values below were computed independently with mpmath
// (30 digits): the t quantile as the root of mpmath.betainc's
// distribution function, Welch's interval from it.

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want)) }

func TestTQuantileReference(t *testing.T) {
	for _, c := range []struct{ p, df, want float64 }{
		{0.975, 1, 12.706204736174693},
		{0.975, 4, 2.7764451051977987},
		{0.975, 10, 2.2281388519862742},
		{0.975, 100.0 / 17, 2.4588237096991462}, // a Welch df: not whole
		{0.995, 3.5, 5.085702223091257},
		{0.975, 1e6, 1.9599663568141067},
		{0.025, 10, -2.2281388519862742},
		{0.5, 3, 0},
	} {
		if got := TQuantile(c.p, c.df); !near(got, c.want, 1e-9) {
			t.Errorf("TQuantile(%v, %v) = %.15g, want %.15g", c.p, c.df, got, c.want)
		}
	}
	if got := TCDF(2.0, 7.3); !near(got, 0.95802948033294842, 1e-12) {
		t.Errorf("TCDF(2, 7.3) = %.17g", got)
	}
	if got := TCDF(-0.5, 2.5); !near(got, 0.32884895993485732, 1e-12) {
		t.Errorf("TCDF(-0.5, 2.5) = %.17g", got)
	}
	for _, bad := range [][2]float64{{0, 3}, {1, 3}, {0.9, 0}, {math.NaN(), 3}, {0.9, -1}} {
		if got := TQuantile(bad[0], bad[1]); !math.IsNaN(got) {
			t.Errorf("TQuantile(%v) = %v, want NaN", bad, got)
		}
	}
}

// TestWelchKnownAnswer: two samples whose means and variances are exact
// (3 and 2.5; 7 and 10): difference 4, standard error sqrt(2.5), Welch's
// degrees of freedom 100/17.
func TestWelchKnownAnswer(t *testing.T) {
	a := []float64{1, 2, 3, 4, 5}
	b := []float64{3, 5, 7, 9, 11}
	d := Welch(a, b, true)
	if !near(d.Diff, 4, 1e-12) || !near(d.DF, 100.0/17, 1e-12) || !near(d.Lo, 0.11225835626302479, 1e-9) || !near(d.Hi, 7.8877416437369752, 1e-9) {
		t.Errorf("Welch = %+v", d)
	}
	if !near(d.P, 0.045464618970930452, 1e-8) || d.Verdict != Slower || !near(d.Rel, 400.0/3, 1e-12) {
		t.Errorf("Welch p %v verdict %q rel %v", d.P, d.Verdict, d.Rel)
	}
	if d := Welch(a, b, false); d.Verdict != Faster {
		t.Errorf("higher is better: verdict %q", d.Verdict)
	}
	s := Summarize(a)
	if s.N != 5 || s.Mean != 3 || !near(s.SD, math.Sqrt(2.5), 1e-12) || !near(s.Lo, 1.0367568385224429, 1e-9) || !near(s.Hi, 4.9632431614775571, 1e-9) || !s.HasCI {
		t.Errorf("Summarize = %+v", s)
	}
}

// TestPairedKnownAnswer: per-boot differences 1..5 (b - a) have mean 3
// and the interval of TestWelchKnownAnswer's first sample; a shift shared
// by both samples of a boot cancels.
func TestPairedKnownAnswer(t *testing.T) {
	a := []float64{10, 50, 20, 90, 30}
	b := []float64{11, 52, 23, 94, 35}
	d := Paired(a, b, true)
	if !near(d.Diff, 3, 1e-12) || !near(d.Lo, 1.0367568385224429, 1e-9) || !near(d.Hi, 4.9632431614775571, 1e-9) || d.DF != 4 || d.Verdict != Slower {
		t.Errorf("Paired = %+v", d)
	}
	// t = 3 / sqrt(2.5/5) with 4 df: two-sided p from mpmath.betainc.
	if !near(d.P, 0.0132355995636827, 1e-9) {
		t.Errorf("Paired p = %.9f", d.P)
	}
	// The same boots compared unpaired: the boot-to-boot spread hides it.
	if w := Welch(a, b, true); w.Verdict != NoDifference {
		t.Errorf("Welch on the same boots: %+v", w)
	}
	if d := Paired([]float64{1}, []float64{2}, true); d.Verdict != TooFew {
		t.Errorf("one pair: %+v", d)
	}
	if d := Paired([]float64{1, 2, math.NaN()}, []float64{1, 2, 3, 4}, false); d.Verdict != NoDifference || d.Diff != 0 {
		t.Errorf("constant zero differences: %+v", d)
	}
}

// TestPairedRatioKnownAnswer: boots whose second value is 0.8 times the
// first, whatever the boot's own speed, give -20 % exactly; ratios
// exp(-0.1 +- 0.05) per boot give the interval of their logs.
func TestPairedRatioKnownAnswer(t *testing.T) {
	a := []float64{100, 1000, 250, 4000}
	b := []float64{80, 800, 200, 3200}
	if d := PairedRatio(a, b, true); !near(d.Diff, -20, 1e-9) || !near(d.Lo, -20, 1e-9) || !near(d.Hi, -20, 1e-9) || d.Verdict != Faster {
		t.Errorf("%+v", d)
	}
	// logs of the ratios: -0.05, -0.15, -0.1, -0.1: mean -0.1, sd 0.0408248.
	b = []float64{100 * math.Exp(-0.05), 1000 * math.Exp(-0.15), 250 * math.Exp(-0.1), 4000 * math.Exp(-0.1)}
	d := PairedRatio(a, b, true)
	h := 3.1824463052837084 * 0.040824829046386304 / 2 // t(0.975, 3) from mpmath
	if !near(d.Diff, 100*math.Expm1(-0.1), 1e-9) || !near(d.Lo, 100*math.Expm1(-0.1-h), 1e-7) || !near(d.Hi, 100*math.Expm1(-0.1+h), 1e-7) {
		t.Errorf("%+v", d)
	}
	if d := PairedRatio([]float64{0, -1}, []float64{1, 1}, true); d.Verdict != TooFew {
		t.Errorf("no positive pair: %+v", d)
	}
}

func TestWelchEdges(t *testing.T) {
	for _, c := range []struct {
		name    string
		a, b    []float64
		verdict string
	}{
		{"empty", nil, []float64{1, 2}, TooFew},
		{"one each", []float64{1}, []float64{2}, TooFew},
		{"constant, equal", []float64{2, 2, 2}, []float64{2, 2}, NoDifference},
		{"constant, lower", []float64{2, 2, 2}, []float64{1, 1}, Faster},
		{"not finite dropped", []float64{1, 2, math.NaN(), 3}, []float64{1, 2, math.Inf(1), 3}, NoDifference},
	} {
		d := Welch(c.a, c.b, true)
		if d.Verdict != c.verdict {
			t.Errorf("%s: verdict %q, want %q (%+v)", c.name, d.Verdict, c.verdict, d)
		}
		for _, f := range []float64{d.Diff, d.Lo, d.Hi, d.DF, d.P, d.Rel} {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				t.Errorf("%s: a figure is not finite: %+v", c.name, d)
			}
		}
	}
	if s := Summarize([]float64{7}); s.HasCI || s.Lo != 7 || s.Hi != 7 {
		t.Errorf("one sample: %+v", s)
	}
	if s := Summarize(nil); s.N != 0 || s.HasCI {
		t.Errorf("no sample: %+v", s)
	}
}

// TestWelchCoverage: on synthetic boots drawn from normal distributions
// with a known difference (and unequal spreads, 6 and 5 boots), the 95 %
// interval covers the true difference in 95 % of 4000 trials (binomial
// standard error 0.34 %), a zero difference is called "no difference" as
// often, and a difference of four standard errors is found nearly always.
func TestWelchCoverage(t *testing.T) {
	rng := rand.New(rand.NewSource(19))
	draw := func(n int, mu, sd float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = mu + sd*rng.NormFloat64()
		}
		return xs
	}
	const trials = 4000
	covered, nulls, found := 0, 0, 0
	for i := 0; i < trials; i++ {
		a, b := draw(6, 100, 2), draw(5, 97, 5) // true difference -3
		if d := Welch(a, b, true); d.Lo <= -3 && -3 <= d.Hi {
			covered++
		}
		if d := Welch(draw(6, 100, 2), draw(5, 100, 5), true); d.Verdict == NoDifference {
			nulls++
		}
		if d := Welch(draw(6, 100, 1), draw(6, 90, 1), true); d.Verdict == Faster {
			found++
		}
	}
	for name, got := range map[string]int{"covered": covered, "no difference under the null": nulls} {
		if r := float64(got) / trials; r < 0.935 || r > 0.965 {
			t.Errorf("%s: %.3f of %d trials, want 0.95", name, r, trials)
		}
	}
	if r := float64(found) / trials; r < 0.999 {
		t.Errorf("a difference of 10 sd found in %.4f of trials", r)
	}
	// Summarize's interval covers the mean 95 % of the time too.
	in := 0
	for i := 0; i < trials; i++ {
		if s := Summarize(draw(4, 50, 3)); s.Lo <= 50 && 50 <= s.Hi {
			in++
		}
	}
	if r := float64(in) / trials; r < 0.935 || r > 0.965 {
		t.Errorf("Summarize covered the mean in %.3f of trials", r)
	}
}
