package bench

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/ktap"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/vocab"
)

// console is one synthetic bench boot's console as the agent prints it:
// KTAP with the records as diagnostics, kernel lines in between.
func console(recs []*guestconf.BenchRecord) string {
	var b strings.Builder
	b.WriteString("[    0.1] Linux version 6.12\nKTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: rxe\n    1..2\n")
	for _, r := range recs {
		b.WriteString("    # " + r.Diagnostic() + "\n")
	}
	b.WriteString("[    1.2] nvme nvme0: new ctrl\n    ok 1 link\n    ok 2 dmesg\nok 1 rxe\n")
	return b.String()
}

// synthetic makes the boots of a bench whose answer is known: the
// patched kernel's QD1 reads are latencyShift us slower (negative:
// faster), its 8K random writes at 4K in-capsule data take writeShift
// more, and the self-check's 16K writes take selfShift us more than 4K,
// each with Gaussian noise of sd us around it.
func synthetic(t *testing.T, w guestconf.Bench, boots int, latencyShift, writeShift, selfShift, sd float64) *Result {
	t.Helper()
	rng := rand.New(rand.NewSource(3))
	res := &Result{Kernel: testkernel.Default, Transport: "rxe", Accel: "tcg", VCPUs: 2, BootsPerVariant: boots, Workload: w}
	for round := 1; round <= boots; round++ {
		for _, v := range []string{vocab.Baseline, vocab.Patched} {
			shift := 0.0
			if v == vocab.Patched {
				shift = 1
			}
			boot := 50 * rng.NormFloat64() // what the boot shares: its host load
			recs := []*guestconf.BenchRecord{{Kind: "env", Transport: "rxe", CPUs: 1, Kernel: "6.12.117", Clocksource: "tsc", ClockStepNS: 300}}
			mean := 700 + shift*latencyShift + sd*rng.NormFloat64()
			recs = append(recs, &guestconf.BenchRecord{Kind: "latency", Transport: "rxe", InlineDataSize: 16384, Workload: "randread", Size: 4096, QD: 1,
				IOs: 4000, Seconds: 3, IOPS: 1e6 / mean, MeanUS: mean, MedianUS: mean - 50, P99US: mean * 3, Hist: map[int]int{guestconf.Bucket(mean): 3000, guestconf.Bucket(mean * 3): 1000}})
			for _, wl := range w.Workloads {
				for _, size := range w.Sizes {
					for _, in := range w.InlineSizes {
						lat := 1000 + float64(size)/16 + boot + sd*rng.NormFloat64()
						if wl == guestconf.RandWrite && size == 8192 && in == 4096 {
							lat += shift * writeShift
						}
						recs = append(recs, &guestconf.BenchRecord{Kind: "sweep", Transport: "rxe", InlineDataSize: in, Workload: wl, Size: size, QD: 4,
							IOs: 300, Seconds: 0.3, IOPS: 4e6 / lat, MeanUS: lat})
					}
				}
			}
			for _, in := range w.InlineSizes {
				lat := 1500 + 4*boot + sd/4*rng.NormFloat64()
				if in == 16384 {
					lat += selfShift
				}
				recs = append(recs, &guestconf.BenchRecord{Kind: "selfcheck", Transport: "rxe", InlineDataSize: in, Workload: guestconf.RandWrite, Size: 8192, QD: 1,
					IOs: 1000, Seconds: 2, IOPS: 1e6 / lat, MeanUS: lat})
			}
			b := Boot{Variant: v, Round: round, Verdict: "PASS"}
			if err := b.read(ktap.Parse(console(recs))); err != nil {
				t.Fatal(err)
			}
			res.Boots = append(res.Boots, b)
		}
	}
	res.aggregate()
	return res
}

// TestAggregateKnownEffects: the verdicts follow the effects put in,
// and nothing else is called significant.
func TestAggregateKnownEffects(t *testing.T) {
	w := DefaultWorkload()
	r := synthetic(t, w, 6, -40, 300, -300, 10)
	if r.Latency.Diff.Verdict != Faster || r.Latency.Diff.Hi >= 0 || r.Latency.Diff.Lo > -40 || r.Latency.Diff.Hi < -40 {
		t.Errorf("latency: %+v (put in: -40 us)", r.Latency.Diff)
	}
	if r.Latency.Baseline.Mean.N != 6 || r.Latency.Baseline.IOs != 6*4000 || len(r.Latency.Patched.Hist) == 0 {
		t.Errorf("latency stats: %+v", r.Latency.Baseline)
	}
	if len(r.Sweep) != len(w.Workloads)*len(w.Sizes)*len(w.InlineSizes) {
		t.Fatalf("%d sweep points", len(r.Sweep))
	}
	significant := 0
	for _, s := range r.Sweep {
		if s.Workload == guestconf.RandWrite && s.Size == 8192 && s.Inline == 4096 {
			if s.LatDiff.Verdict != Slower || s.IOPSDiff.Verdict != Slower {
				t.Errorf("8K writes at 4K in-capsule: %+v / %+v (put in: +300 us)", s.LatDiff, s.IOPSDiff)
			}
			continue
		}
		if s.LatDiff.Significant() {
			significant++
		}
	}
	if significant > 3 { // 27 null comparisons at 95 %: about 1.4 expected
		t.Errorf("%d of the null sweep points called significant", significant)
	}
	if !r.SelfCheck.Pass || len(r.SelfCheck.PerVariant) != 2 || r.SelfCheck.Source != "selfcheck" || r.SelfCheck.QD != 1 {
		t.Errorf("self-check: %+v", r.SelfCheck)
	}
	for _, v := range r.SelfCheck.PerVariant {
		// Paired by boot, the boots' shared load cancels: the interval is
		// far narrower than Welch's over the same boots.
		if v.LatDiff.Hi-v.LatDiff.Lo >= v.LatWelch.Hi-v.LatWelch.Lo {
			t.Errorf("%s: paired %+v not narrower than Welch %+v", v.Variant, v.LatDiff, v.LatWelch)
		}
	}
	// No effect: the self-check fails, and says so.
	r = synthetic(t, w, 6, 0, 0, 0, 10)
	if r.SelfCheck.Pass || !strings.Contains(r.SelfCheck.Reason, "--boots") || r.Latency.Diff.Verdict != NoDifference {
		t.Errorf("null bench: self-check %+v, latency %+v", r.SelfCheck, r.Latency.Diff)
	}
	// One boot each: no intervals, no verdicts, no panic.
	r = synthetic(t, w, 1, -40, 300, -300, 10)
	if r.Latency.Diff.Verdict != TooFew || r.SelfCheck.Pass || r.Latency.Baseline.Mean.HasCI || !strings.Contains(r.SelfCheck.Reason, "--boots 2 or more") {
		t.Errorf("one boot: %+v %+v", r.Latency.Diff, r.SelfCheck)
	}
	Text(io.Discard, r)
	Plot(r)
}

// TestResultJSON: bench.json is valid JSON (no NaN even with one boot)
// and reads back.
func TestResultJSON(t *testing.T) {
	for _, boots := range []int{1, 3} {
		r := synthetic(t, DefaultWorkload(), boots, -40, 300, -300, 10)
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("%d boots: %v", boots, err)
		}
		var back Result
		if err := json.Unmarshal(b, &back); err != nil || back.Latency.Diff != r.Latency.Diff || len(back.Boots) != 2*boots {
			t.Errorf("%d boots: read back %v", boots, err)
		}
	}
}

// TestTextTables: the tables have the seeds' shapes: seed 000's
// sentence, seed 003's rows by I/O size with 16K before 4K, the A/B rows,
// the self-check and the environment notes.
func TestTextTables(t *testing.T) {
	r := synthetic(t, DefaultWorkload(), 5, -40, 300, -300, 10)
	var b strings.Builder
	Text(&b, r)
	out := b.String()
	for _, want := range []string{
		"kernel 6.12, nvmet-rdma loopback to a memory-backed null_blk over soft-RoCE (rxe), TCG, 2 vCPUs (the guest sees 1), 5 boots per variant",
		"Seed 000: 4K random reads, O_DIRECT, queue depth 1",
		"Patched vs baseline: the mean completion latency fell by ",
		"Seed 003, baseline kernel:", "Seed 003, patched kernel:",
		"Inline size  16K",
		"io_size      random write",
		"io_size      mix R/W 70/30",
		"Seed 003 sweep, patched vs baseline",
		"self-check: PASS",
		"does not model the HCA's DMA read",
		"mlx5-only",
		"TCG",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	// Seed 003's rows: every size, in order, in each variant's table.
	for _, v := range []string{"baseline", "patched"} {
		i := strings.Index(out, "Seed 003, "+v+" kernel")
		table := out[i : i+strings.Index(out[i:], "\n\n")]
		var sizes []string
		for _, l := range strings.Split(table, "\n") {
			if f := strings.Fields(l); len(f) == 5 && !strings.HasPrefix(l, "Inline") && !strings.HasPrefix(l, "io_size") {
				sizes = append(sizes, f[0])
			}
		}
		if got := strings.Join(sizes, " "); got != "512 1K 2K 4K 8K 16K 32K 512 1K 2K 4K 8K 16K 32K" {
			t.Errorf("%s rows: %s\n%s", v, got, table)
		}
	}
	if !strings.Contains(out, fmt.Sprintf("%d", r.Latency.Baseline.IOs)) {
		t.Error("the I/O count is not printed")
	}
}

func TestLatencySentence(t *testing.T) {
	for _, c := range []struct {
		d    Difference
		want string
	}{
		{Difference{Diff: -0.998, Lo: -1.049, Hi: -0.943, Verdict: Faster}, "fell by 0.998 us (95% CI 0.943 to 1.049)"},
		{Difference{Diff: 12, Lo: 2, Hi: 22, Rel: 1.5, Verdict: Slower}, "rose by 12.00 us (95% CI 2.000 to 22.00), +1.5 %: slower"},
		{Difference{Diff: 3, Lo: -5, Hi: 11, Verdict: NoDifference}, "changed by +3.000 us (95% CI -5.000 to 11.00)"},
		{Difference{Diff: 3, Verdict: TooFew}, "too few boots"},
	} {
		if got := latencySentence(c.d); !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.d, got, c.want)
		}
	}
}

// TestPlotSVG: the plot is well-formed XML with the latency panel and
// one panel per sweep workload, a line per variant and in-capsule size.
func TestPlotSVG(t *testing.T) {
	r := synthetic(t, DefaultWorkload(), 3, -40, 300, -300, 10)
	svg := Plot(r)
	d := xml.NewDecoder(strings.NewReader(string(svg)))
	lines := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			lines++
		}
	}
	if want := 2 + 2*2*len(r.Workload.Workloads); lines != want {
		t.Errorf("%d polylines, want %d", lines, want)
	}
	for _, want := range []string{"latency distribution", "random write, QD4", "in-capsule 4K", "NaN"} {
		if strings.Contains(string(svg), want) != (want != "NaN") {
			t.Errorf("%q: %v", want, !strings.Contains(string(svg), want))
		}
	}
	Plot(&Result{}) // nothing measured: no panic
	for x, want := range map[float64]float64{0.17: 0.2, 0.2: 0.2, 2.19: 4, 0.051: 0.08, 7: 8, 9: 10, 0: 1} {
		if got := niceCeil(x); !near(got, want, 1e-12) {
			t.Errorf("niceCeil(%v) = %v, want %v", x, got, want)
		}
	}
}

// TestBootRead: a boot without the latency record, or whose clock steps
// by jiffies, is refused with the reason.
func TestBootRead(t *testing.T) {
	var b Boot
	if err := b.read(ktap.Parse(console(nil))); err == nil || !strings.Contains(err.Error(), "no latency") {
		t.Errorf("no records: %v", err)
	}
	recs := []*guestconf.BenchRecord{{Kind: "env", Clocksource: "refined-jiffies", ClockStepNS: 4e6}, {Kind: "latency", Rep: 0, IOs: 10, MeanUS: 4000}}
	if err := (&Boot{}).read(ktap.Parse(console(recs))); err == nil || !strings.Contains(err.Error(), "tsc_early_khz") {
		t.Errorf("a jiffies clock: %v", err)
	}
	if got := records(nil); got != nil {
		t.Errorf("records(nil) = %v", got)
	}
}

func TestCheckWorkload(t *testing.T) {
	ok := DefaultWorkload()
	if err := Check(&ok, DefaultBoots); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(w *guestconf.Bench, boots *int){
		"no boots":      func(w *guestconf.Bench, b *int) { *b = 0 },
		"zero sweep":    func(w *guestconf.Bench, b *int) { w.SweepMS = 0 },
		"qd 0":          func(w *guestconf.Bench, b *int) { w.QueueDepth = 0 },
		"odd size":      func(w *guestconf.Bench, b *int) { w.Sizes = []int{1000} },
		"no inline":     func(w *guestconf.Bench, b *int) { w.InlineSizes = nil },
		"bad workload":  func(w *guestconf.Bench, b *int) { w.Workloads = []string{"seqread"} },
		"hour latency":  func(w *guestconf.Bench, b *int) { w.LatencyMS = 3600000 },
		"odd selfcheck": func(w *guestconf.Bench, b *int) { w.SelfCheckSize = 100 },
	} {
		w, boots := DefaultWorkload(), DefaultBoots
		mod(&w, &boots)
		if err := Check(&w, boots); !errors.Is(err, errs.ErrUsage) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if e := Estimate(&ok, DefaultBoots); e.Minutes() > 5 || e.Minutes() < 2 {
		t.Errorf("the default bench is estimated at %s", e)
	}
}

// TestNotesSayHowTCGRanTheCPUs: a guest that sees several CPUs under
// one-thread TCG is told apart from one under a thread per vCPU, and a
// one-CPU guest (patchctl's own builds) gets no such note.
func TestNotesSayHowTCGRanTheCPUs(t *testing.T) {
	turns := func(r *Result) bool {
		for _, n := range notes(r) {
			if strings.Contains(n, "one host thread, in turns") {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		accel      string
		guest      int
		wantTurns  bool
		wantTCGBit bool
	}{
		{vocab.AccelTCG, 2, true, true},
		{vocab.AccelTCG, 1, false, true},
		{vocab.AccelTCGMulti, 2, false, true},
		{vocab.AccelKVM, 2, false, false},
	} {
		r := &Result{Accel: c.accel, VCPUs: 2, GuestCPUs: c.guest, ACPI: c.guest > 1, Transport: vocab.RXE}
		if got := turns(r); got != c.wantTurns {
			t.Errorf("%s, guest sees %d: the one-thread note present=%v, want %v", c.accel, c.guest, got, c.wantTurns)
		}
		tcg := false
		for _, n := range notes(r) {
			tcg = tcg || strings.Contains(n, "QEMU runs under TCG")
		}
		if tcg != c.wantTCGBit {
			t.Errorf("%s: the TCG note present=%v, want %v", c.accel, tcg, c.wantTCGBit)
		}
	}
}
