package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/vocab"
)

// Text prints the bench as the seeds state their effects: seed 000's
// latency sentence and table (baseline vs patched, 95 % CI, the
// difference), seed 003's sweep table per variant (in-capsule 16K vs 4K,
// IOPS and latency by I/O size), the A/B difference of every sweep
// point, the self-check and the notes.
func Text(w io.Writer, r *Result) {
	accel := strings.ToUpper(r.Accel)
	if accel == "" {
		accel = "unknown accelerator"
	}
	guest := ""
	if r.GuestCPUs > 0 && r.GuestCPUs != r.VCPUs {
		guest = fmt.Sprintf(" (the guest sees %d)", r.GuestCPUs)
	}
	boots := fmt.Sprintf("%d boots per variant interleaved (A B A B)", r.BootsPerVariant)
	if r.BootsPerVariant == 1 {
		boots = "1 boot per variant (A B)"
	}
	fmt.Fprintf(w, "patchctl bench: kernel %s, %s over %s, %s, %d vCPUs%s, %s, %s\n",
		r.Kernel, "nvmet-rdma loopback to a memory-backed null_blk", providerName(r.Transport), accel, r.VCPUs, guest,
		boots, dur(r.Seconds))
	fmt.Fprintln(w, "Figures are means over boots (each boot one sample) with 95 % confidence intervals (Student's t); differences are patched - baseline with Welch's interval.")
	fmt.Fprintln(w)
	latencyTable(w, r)
	fmt.Fprintln(w)
	for _, v := range []string{vocab.Baseline, vocab.Patched} {
		sweepTable(w, r, v)
		fmt.Fprintln(w)
	}
	sweepAB(w, r)
	fmt.Fprintln(w)
	selfCheckTable(w, r)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Notes:")
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  - %s\n", n)
	}
}

// nBoots is "1 boot" or "N boots".
func nBoots(n int) string {
	if n == 1 {
		return "1 boot"
	}
	return fmt.Sprintf("%d boots", n)
}

func providerName(t string) string {
	switch t {
	case vocab.RXE:
		return "soft-RoCE (rxe)"
	case vocab.SIW:
		return "soft-iWARP (siw)"
	}
	return t
}

func dur(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Second).String()
}

// num prints a figure with four significant digits, as the seeds do
// (0.998, 1.049, 21.65, 1308).
func num(x float64) string {
	a := math.Abs(x)
	switch {
	case a >= 1000:
		return fmt.Sprintf("%.0f", x)
	case a >= 100:
		return fmt.Sprintf("%.1f", x)
	case a >= 10:
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.3f", x)
}

// pct prints a relative difference in percent, signed.
func pct(x float64) string { return fmt.Sprintf("%+.1f", x) }

func interval(lo, hi float64) string { return num(lo) + " to " + num(hi) }

func ci(s Summary) string {
	if !s.HasCI {
		return "(one boot: no interval)"
	}
	return interval(s.Lo, s.Hi)
}

// latencyTable is seed 000's statement: "the mean completion latency fell
// by 0.998 us (95% CI 0.943-1.049)", with the table behind it.
func latencyTable(w io.Writer, r *Result) {
	l := r.Latency
	fmt.Fprintf(w, "Seed 000: %s random reads, O_DIRECT, queue depth 1, per-I/O latency (CLOCK_MONOTONIC), in-capsule size %s\n",
		sizeLabel(l.Block), sizeLabel(r.Workload.LatencyInline))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tboots\tI/Os\tmean (us)\t95% CI\tmedian (us)\t95% CI\tp99 (us)\t95% CI\tIOPS (K)")
	for _, v := range []struct {
		name string
		s    LatencyStats
	}{{vocab.Baseline, l.Baseline}, {vocab.Patched, l.Patched}} {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.name, v.s.Mean.N, v.s.IOs, num(v.s.Mean.Mean), ci(v.s.Mean),
			num(v.s.Median.Mean), ci(v.s.Median), num(v.s.P99.Mean), ci(v.s.P99), num(v.s.IOPS.Mean/1000))
	}
	for _, d := range []struct {
		name string
		d    Difference
	}{{"mean", l.Diff}, {"median", l.DiffMedian}, {"p99", l.DiffP99}} {
		fmt.Fprintf(tw, "difference (%s)\t\t\t%s\t%s\t\t\t\t\t%s\n", d.name, signed(d.d.Diff), diffCI(d.d), d.d.Verdict)
	}
	tw.Flush()
	fmt.Fprintf(w, "Patched vs baseline: %s\n", latencySentence(l.Diff))
}

func signed(x float64) string {
	if x > 0 {
		return "+" + num(x)
	}
	return num(x)
}

func diffCI(d Difference) string {
	if d.Verdict == TooFew {
		return "(too few boots)"
	}
	return interval(d.Lo, d.Hi)
}

// latencySentence says what seed 000 says, in its words.
func latencySentence(d Difference) string {
	switch d.Verdict {
	case TooFew:
		return fmt.Sprintf("the mean completion latency changed by %s us; too few boots for an interval (--boots 2 or more).", signed(d.Diff))
	case Faster:
		return fmt.Sprintf("the mean completion latency fell by %s us (95%% CI %s), %s %%: faster.", num(-d.Diff), interval(-d.Hi, -d.Lo), pct(d.Rel))
	case Slower:
		return fmt.Sprintf("the mean completion latency rose by %s us (95%% CI %s), %s %%: slower.", num(d.Diff), interval(d.Lo, d.Hi), pct(d.Rel))
	}
	return fmt.Sprintf("the mean completion latency changed by %s us (95%% CI %s), %s %%: no difference at 95 %%.", signed(d.Diff), interval(d.Lo, d.Hi), pct(d.Rel))
}

func sizeLabel(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%dK", n/1024)
	}
	return fmt.Sprint(n)
}

var workloadTitle = map[string]string{guestconf.RandWrite: "random write", guestconf.RandRW70: "mix R/W 70/30"}

// sweepTable is seed 003's table for one variant: rows by I/O size,
// columns IOPS (K) and latency (usec) at in-capsule 16K and 4K.
func sweepTable(w io.Writer, r *Result, variant string) {
	inl := sortedInlines(r)
	fmt.Fprintf(w, "Seed 003, %s kernel: IOPS and mean latency by I/O size, queue depth %d, %s; port param_inline_data_size %s\n",
		variant, r.Workload.QueueDepth, nBoots(r.BootsPerVariant), joinSizes(inl, " vs "))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	span := strings.Repeat("\t", len(inl)) // a heading over the columns of every in-capsule size
	fmt.Fprintln(tw, "\tiops (K)"+span+"latency (usec)"+span)
	fmt.Fprintln(tw, "\t(higher better)"+span+"(lower better)"+span)
	fmt.Fprintln(tw, "Inline size\t"+joinSizes(inl, "\t")+"\t"+joinSizes(inl, "\t")+"\t")
	for _, wl := range r.Workload.Workloads {
		title := workloadTitle[wl]
		fmt.Fprintln(tw, "io_size\t"+title+span+title+span)
		for _, size := range r.Workload.Sizes {
			line := sizeLabel(size) + "\t"
			var lat string
			for _, in := range inl {
				p := r.point(wl, size, in, variant)
				line += num(p.IOPS.Mean/1000) + "\t"
				lat += num(p.MeanUS.Mean) + "\t"
			}
			fmt.Fprintln(tw, line+lat)
		}
	}
	tw.Flush()
}

func (r *Result) point(workload string, size, inline int, variant string) Point {
	for _, s := range r.Sweep {
		if s.Workload == workload && s.Size == size && s.Inline == inline {
			if variant == vocab.Baseline {
				return s.Baseline
			}
			return s.Patched
		}
	}
	return Point{}
}

func sortedInlines(r *Result) []int {
	var out []int
	for _, s := range r.Sweep {
		found := false
		for _, x := range out {
			found = found || x == s.Inline
		}
		if !found {
			out = append(out, s.Inline)
		}
	}
	return out
}

func joinSizes(xs []int, sep string) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, sizeLabel(x))
	}
	return strings.Join(parts, sep)
}

// sweepAB is the A/B comparison of every sweep point.
func sweepAB(w io.Writer, r *Result) {
	fmt.Fprintln(w, "Seed 003 sweep, patched vs baseline: IOPS (K), difference in % of baseline with its 95 % interval")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tio_size\tinline\tbaseline\tpatched\tdiff %\t95% CI (%)\tverdict\t")
	for _, s := range r.Sweep {
		d := s.IOPSDiff
		rel := func(x float64) float64 {
			if s.Baseline.IOPS.Mean == 0 {
				return 0
			}
			return 100 * x / s.Baseline.IOPS.Mean
		}
		cis := "(too few boots)"
		if d.Verdict != TooFew {
			cis = interval(rel(d.Lo), rel(d.Hi))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", workloadTitle[s.Workload], sizeLabel(s.Size), sizeLabel(s.Inline),
			num(s.Baseline.IOPS.Mean/1000), num(s.Patched.IOPS.Mean/1000), pct(d.Rel), cis, d.Verdict)
	}
	tw.Flush()
}

func selfCheckTable(w io.Writer, r *Result) {
	sc := r.SelfCheck
	fmt.Fprintf(w, "Self-check (seed 003's premise): %s %s at queue depth %d, in-capsule %s vs %s in turns (with %s the target must RDMA READ the data); %s vs %s paired by boot (the ratio decides)\n",
		sizeLabel(sc.Size), workloadTitle[sc.Workload], sc.QD, sizeLabel(sc.Large), sizeLabel(sc.Small), sizeLabel(sc.Small), sizeLabel(sc.Large), sizeLabel(sc.Small))
	if len(sc.PerVariant) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "variant\tlatency %s (us)\tlatency %s (us)\tdifference (us)\t95%% CI\tratio (%%)\t95%% CI (%%)\tiops %s (K)\tiops %s (K)\tverdict for %s\t\n",
			sizeLabel(sc.Large), sizeLabel(sc.Small), sizeLabel(sc.Large), sizeLabel(sc.Small), sizeLabel(sc.Large))
		for _, v := range sc.PerVariant {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", v.Variant, num(v.Large.MeanUS.Mean), num(v.Small.MeanUS.Mean),
				signed(v.LatDiff.Diff), diffCI(v.LatDiff), pct(v.LatRatio.Diff), diffCI(v.LatRatio), num(v.Large.IOPS.Mean/1000), num(v.Small.IOPS.Mean/1000), v.LatRatio.Verdict)
		}
		tw.Flush()
	}
	status := vocab.Fail
	if sc.Pass {
		status = vocab.Pass
	}
	fmt.Fprintf(w, "self-check: %s: %s\n", status, sc.Reason)
}
