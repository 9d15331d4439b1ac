package bench

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"

	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/vocab"
)

// Plot is bench.svg: the QD1 read latency distribution per variant (the
// share of I/Os per log-spaced bucket, every boot's I/Os together), and
// IOPS by I/O size per in-capsule size and variant for each sweep
// workload, with the 95 % interval of each point as a bar.
func Plot(r *Result) []byte {
	const pw, ph = 420.0, 300.0 // one panel
	panels := 1 + len(r.Workload.Workloads)
	var b bytes.Buffer
	W := pw * float64(panels)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">`+"\n", W, ph+30, W, ph+30)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="8" y="16" font-size="13">%s</text>`+"\n", html.EscapeString(fmt.Sprintf("patchctl bench: %s, %s, %s, %s per variant", r.Kernel, r.Transport, r.Accel, nBoots(r.BootsPerVariant))))
	latencyPanel(&b, r, 0, 30, pw, ph)
	for i, wl := range r.Workload.Workloads {
		sweepPanel(&b, r, wl, pw*float64(i+1), 30, pw, ph)
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

var variantColor = map[string]string{vocab.Baseline: "#1f77b4", vocab.Patched: "#d62728"}

// frame is one panel's plotting area and its axes' ranges.
type frame struct {
	x0, y0, w, h           float64 // the area, in SVG units
	xmin, xmax, ymin, ymax float64
	logX                   bool
}

func (f *frame) px(x float64) float64 {
	if f.logX {
		lo, hi := math.Log10(f.xmin), math.Log10(f.xmax)
		return f.x0 + (math.Log10(math.Max(x, 1e-9))-lo)/(hi-lo)*f.w
	}
	return f.x0 + (x-f.xmin)/(f.xmax-f.xmin)*f.w
}

func (f *frame) py(y float64) float64 { return f.y0 + f.h - (y-f.ymin)/(f.ymax-f.ymin)*f.h }

func (f *frame) axes(b *bytes.Buffer, title, xlabel, ylabel string, xticks []float64, xtick func(float64) string) {
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="12">%s</text>`+"\n", f.x0, f.y0-8, html.EscapeString(title))
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#444"/>`+"\n", f.x0, f.y0, f.w, f.h)
	for _, t := range xticks {
		x := f.px(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x, f.y0, x, f.y0+f.h)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x, f.y0+f.h+13, html.EscapeString(xtick(t)))
	}
	for i := 0; i <= 4; i++ {
		v := f.ymin + (f.ymax-f.ymin)*float64(i)/4
		y := f.py(v)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`+"\n", f.x0, y, f.x0+f.w, y)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", f.x0-4, y+4, tick(v))
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", f.x0+f.w/2, f.y0+f.h+28, html.EscapeString(xlabel))
	fmt.Fprintf(b, `<text transform="translate(%.1f %.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", f.x0-36, f.y0+f.h/2, html.EscapeString(ylabel))
}

func legend(b *bytes.Buffer, x, y float64, items [][3]string) {
	for i, it := range items { // label, colour, dash
		yy := y + float64(i)*14
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`+"\n", x, yy, x+18, yy, it[1], it[2])
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", x+22, yy+4, html.EscapeString(it[0]))
	}
}

func latencyPanel(b *bytes.Buffer, r *Result, ox, oy, pw, ph float64) {
	f := frame{x0: ox + 50, y0: oy + 20, w: pw - 70, h: ph - 70, logX: true, ymin: 0}
	lo, hi := math.MaxInt, math.MinInt
	for _, s := range []LatencyStats{r.Latency.Baseline, r.Latency.Patched} {
		for k := range s.Hist {
			lo, hi = min(lo, k), max(hi, k)
		}
	}
	if lo > hi {
		lo, hi = guestconf.Bucket(10), guestconf.Bucket(1000)
	}
	f.xmin, f.xmax = guestconf.BucketLower(lo), guestconf.BucketLower(hi+1)
	share := func(s LatencyStats, k int) float64 {
		if s.IOs == 0 {
			return 0
		}
		return float64(s.Hist[k]) / float64(s.IOs)
	}
	f.ymax = 0.01
	for _, s := range []LatencyStats{r.Latency.Baseline, r.Latency.Patched} {
		for k := lo; k <= hi; k++ {
			f.ymax = math.Max(f.ymax, share(s, k)*1.1)
		}
	}
	var ticks []float64
	for d := math.Pow(10, math.Floor(math.Log10(f.xmin))); d <= f.xmax; d *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if t := d * m; t >= f.xmin && t <= f.xmax {
				ticks = append(ticks, t)
			}
		}
	}
	f.ymax = niceCeil(f.ymax)
	f.axes(b, fmt.Sprintf("%s random reads, QD1: latency distribution", sizeLabel(r.Latency.Block)), "latency (us, log scale)", "share of I/Os", ticks, tick)
	for _, v := range []struct {
		name string
		s    LatencyStats
	}{{vocab.Baseline, r.Latency.Baseline}, {vocab.Patched, r.Latency.Patched}} {
		var pts bytes.Buffer
		fmt.Fprintf(&pts, "%.1f,%.1f", f.px(f.xmin), f.py(0))
		for k := lo; k <= hi; k++ {
			y := f.py(share(v.s, k))
			fmt.Fprintf(&pts, " %.1f,%.1f %.1f,%.1f", f.px(guestconf.BucketLower(k)), y, f.px(guestconf.BucketLower(k+1)), y)
		}
		fmt.Fprintf(&pts, " %.1f,%.1f", f.px(f.xmax), f.py(0))
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", variantColor[v.name], pts.String())
		if m := v.s.Mean.Mean; m > 0 {
			x := f.px(m)
			fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="3 2"/>`+"\n", x, f.y0, x, f.y0+f.h, variantColor[v.name])
		}
	}
	legend(b, f.x0+f.w-150, f.y0+12, [][3]string{
		{fmt.Sprintf("baseline (mean %s us)", num(r.Latency.Baseline.Mean.Mean)), variantColor[vocab.Baseline], ""},
		{fmt.Sprintf("patched (mean %s us)", num(r.Latency.Patched.Mean.Mean)), variantColor[vocab.Patched], ""}})
}

func sweepPanel(b *bytes.Buffer, r *Result, workload string, ox, oy, pw, ph float64) {
	f := frame{x0: ox + 50, y0: oy + 20, w: pw - 70, h: ph - 70, logX: true, ymin: 0, ymax: 1}
	sizes := r.Workload.Sizes
	if len(sizes) == 0 {
		return
	}
	f.xmin, f.xmax = float64(slices.Min(sizes))/1.4, float64(slices.Max(sizes))*1.4
	inl := sortedInlines(r)
	for _, in := range inl {
		for _, v := range []string{vocab.Baseline, vocab.Patched} {
			for _, s := range sizes {
				p := r.point(workload, s, in, v)
				f.ymax = math.Max(f.ymax, math.Max(p.IOPS.Hi, p.IOPS.Mean)/1000*1.1)
			}
		}
	}
	f.ymax = niceCeil(f.ymax)
	var ticks []float64
	for _, s := range sizes {
		ticks = append(ticks, float64(s))
	}
	f.axes(b, fmt.Sprintf("%s, QD%d: IOPS by I/O size", workloadTitle[workload], r.Workload.QueueDepth), "I/O size (log scale)", "IOPS (K)", ticks, func(x float64) string { return sizeLabel(int(x)) })
	dashes := []string{"", "5 3", "2 2", "8 2 2 2"}
	var items [][3]string
	for i, in := range inl {
		dash := dashes[i%len(dashes)]
		for vi, v := range []string{vocab.Baseline, vocab.Patched} {
			var pts bytes.Buffer
			shift := (float64(vi) - 0.5) * 0.03 // the two variants' bars side by side
			for _, s := range sizes {
				p := r.point(workload, s, in, v)
				x := f.px(float64(s) * math.Pow(10, shift))
				fmt.Fprintf(&pts, "%.1f,%.1f ", x, f.py(p.IOPS.Mean/1000))
				if p.IOPS.HasCI {
					fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>`+"\n", x, f.py(math.Max(p.IOPS.Lo, 0)/1000), x, f.py(p.IOPS.Hi/1000), variantColor[v])
				}
			}
			fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.5" stroke-dasharray="%s" points="%s"/>`+"\n", variantColor[v], dash, pts.String())
			items = append(items, [3]string{fmt.Sprintf("%s, in-capsule %s", v, sizeLabel(in)), variantColor[v], dash})
		}
	}
	legend(b, f.x0+f.w-150, f.y0+12, items)
}

// tick prints an axis value: as short as it can be.
func tick(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// niceCeil is the smallest of 1, 2, 4 or 8 times a power of ten at or
// above x (x > 0), so that an axis' quarters read as round numbers.
func niceCeil(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 4, 8, 10} {
		if m*p >= x*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}
