package bench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/patchctl/patchctl/internal/boot"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/kconfig"
	"github.com/patchctl/patchctl/internal/ktap"
	"github.com/patchctl/patchctl/internal/vocab"
)

// Options say what to benchmark.
type Options struct {
	Kernel    string
	Transport string // rxe or siw
	// Baseline and Patched are the boots of the two kernels, as
	// patchctl boot makes them (image, build folder, QEMU settings); the
	// bench sets their transport, output folders and workloads.
	Baseline, Patched boot.Options
	// Boots is how many times each variant boots (A B A B ...).
	Boots    int
	Workload guestconf.Bench
	OutDir   string
	// Log gets a line per boot (progress), nil for none.
	Log io.Writer
}

// DefaultWorkload is the bench's default: what fits the bound on this
// project's machine (README, patchctl bench).
func DefaultWorkload() guestconf.Bench {
	return guestconf.Bench{
		LatencyBlock: 4096, LatencyMS: 1000, Reps: 3, WarmupMS: 300, LatencyInline: 16384,
		Workloads: []string{guestconf.RandWrite, guestconf.RandRW70}, Sizes: []int{512, 1024, 2048, 4096, 8192, 16384, 32768},
		InlineSizes: []int{16384, 4096}, SweepMS: 300, SweepWarmupMS: 60, SliceMS: 50, QueueDepth: 4,
		SelfCheckSize: 8192, SelfCheckMS: 2000,
		Span: 64 << 20, Seed: 19,
	}
}

// DefaultBoots is the default number of boots per variant (measured: see
// README, patchctl bench).
const DefaultBoots = 5

// Check refuses a workload that cannot run, naming the field.
func Check(w *guestconf.Bench, boots int) error {
	bad := func(f string, a ...any) error { return fmt.Errorf("bench: "+f+": %w", append(a, errs.ErrUsage)...) }
	switch {
	case boots < 1 || boots > 1000:
		return bad("--boots %d: want 1 to 1000 (2 or more for an interval)", boots)
	case w.LatencyMS < 1 || w.SweepMS < 1 || w.Reps < 1 || w.WarmupMS < 0 || w.SweepWarmupMS < 0 || w.SliceMS < 1:
		return bad("the workload's times must be positive (latency %d ms x %d, sweep %d ms)", w.LatencyMS, w.Reps, w.SweepMS)
	case w.LatencyMS > 600000 || w.SweepMS > 600000:
		return bad("a measurement of over 10 minutes per boot (latency %d ms, sweep %d ms) is not a bench", w.LatencyMS, w.SweepMS)
	case w.QueueDepth < 1 || w.QueueDepth > 256:
		return bad("queue depth %d: want 1 to 256", w.QueueDepth)
	case w.LatencyBlock < 512 || w.LatencyBlock%512 != 0:
		return bad("latency block %d: want a multiple of 512", w.LatencyBlock)
	case len(w.InlineSizes) == 0 || len(w.InlineSizes) > 8:
		return bad("%d in-capsule sizes: want 1 to 8 (one nvmet port each)", len(w.InlineSizes))
	}
	if w.SelfCheckMS < 0 || w.SelfCheckMS > 600000 || w.SelfCheckMS > 0 && (w.SelfCheckSize < 512 || w.SelfCheckSize%512 != 0 || int64(w.SelfCheckSize) > w.Span) {
		return bad("self-check of %d bytes for %d ms: want a multiple of 512 within the span, for up to 10 minutes", w.SelfCheckSize, w.SelfCheckMS)
	}
	for _, s := range w.Sizes {
		if s < 512 || s%512 != 0 || int64(s) > w.Span {
			return bad("I/O size %d: want a multiple of 512 within the span (%d)", s, w.Span)
		}
	}
	for _, in := range w.InlineSizes {
		if in < 0 || in > 1<<20 {
			return bad("in-capsule size %d", in)
		}
	}
	for _, wl := range w.Workloads {
		if _, err := guestconf.ReadPercent(wl); err != nil {
			return bad("%v", err)
		}
	}
	return nil
}

// Estimate is how long a bench should take: per boot the boot and the
// teardown (about 5 s under TCG here, measured), the warm-ups and
// measurements, and 2 s per in-capsule size for its target and connect.
// Measured here at a load of 4: 4m16s and 4m21s for the default, which
// this estimates at 4m25s.
func Estimate(w *guestconf.Bench, boots int) time.Duration {
	per := 5*time.Second + time.Duration(w.WarmupMS+w.Reps*w.LatencyMS)*time.Millisecond
	points := len(w.Workloads) * len(w.Sizes) * len(w.InlineSizes)
	per += time.Duration(points*(w.SweepMS+w.SweepWarmupMS)) * time.Millisecond
	per += time.Duration(len(w.InlineSizes)*(w.SelfCheckMS+w.SweepWarmupMS)) * time.Millisecond
	per += time.Duration(len(w.InlineSizes)) * 2 * time.Second // targets and connects
	return time.Duration(2*boots) * per
}

// Run boots the variants alternately and returns the comparison. An
// error means the bench could not run (a boot that failed its own
// checks: exit 1; a harness fault: exit 3).
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := Check(&o.Workload, o.Boots); err != nil {
		return nil, err
	}
	start := time.Now()
	// Under TCG the guest needs the host's TSC frequency for a clock
	// that can time one I/O (clock.go).
	accel := o.Baseline.Accel
	if accel == "" {
		accel = boot.Accel()
	}
	clock := ""
	if vocab.IsTCG(accel) {
		clock = TCGClockCmdline()
	}
	for _, bo := range []*boot.Options{&o.Baseline, &o.Patched} {
		bo.Accel = accel
		if clock != "" {
			bo.Cmdline = strings.TrimSpace(bo.Cmdline + " " + clock)
		}
	}
	type prepared struct {
		name string
		p    *boot.Prepared
	}
	var vars []prepared
	for _, v := range []struct {
		name string
		o    boot.Options
	}{{vocab.Baseline, o.Baseline}, {vocab.Patched, o.Patched}} {
		w := o.Workload
		bo := v.o
		bo.Variant, bo.Transports, bo.Bench = v.name, []string{o.Transport}, &w
		if bo.TestTimeout == 0 {
			bo.TestTimeout = 60 * time.Second
		}
		if bo.TotalTimeout == 0 {
			bo.TotalTimeout = 10 * time.Minute
		}
		p, err := boot.Prepare(ctx, bo)
		if err != nil {
			return nil, fmt.Errorf("bench: preparing the %s boot: %w", v.name, err)
		}
		vars = append(vars, prepared{v.name, p})
	}
	res := &Result{Kernel: o.Kernel, Transport: o.Transport, BootsPerVariant: o.Boots, Workload: o.Workload,
		VCPUs: o.Baseline.CPUs, Estimate: Estimate(&o.Workload, o.Boots).Seconds()}
	if c, err := kconfig.Load(filepath.Join(o.Baseline.BuildDir, ".config")); err == nil {
		res.ACPI = c.Value("ACPI") == "y"
	}
	if res.VCPUs == 0 {
		res.VCPUs = 2 // boot's default
	}
	total := 2 * o.Boots
	for round := 0; round < o.Boots; round++ {
		for _, v := range vars {
			n := len(res.Boots) + 1
			dir := filepath.Join(o.OutDir, "boots", fmt.Sprintf("%02d-%s", n, v.name))
			if o.Log != nil {
				fmt.Fprintf(o.Log, "bench: boot %d of %d: %s, round %d (elapsed %s of about %s)\n", n, total, v.name, round+1,
					time.Since(start).Round(time.Second), time.Duration(res.Estimate*float64(time.Second)).Round(time.Second))
			}
			r, err := v.p.Run(ctx, dir)
			if err != nil {
				return nil, fmt.Errorf("bench: boot %d (%s): %w", n, v.name, err)
			}
			res.Accel = r.Accel
			b := Boot{Variant: v.name, Round: round + 1, Dir: dir, Seconds: r.Duration, Verdict: r.Verdict}
			switch r.Verdict {
			case vocab.Pass:
			case vocab.Fail:
				return nil, fmt.Errorf("bench: boot %d (%s) failed: %s (console %s): %w", n, v.name, r.Reason, r.ConsoleLog, errs.ErrFindings)
			default:
				return nil, fmt.Errorf("bench: boot %d (%s) did not finish: %s (console %s): %w", n, v.name, r.Reason, r.ConsoleLog, errs.ErrEnv)
			}
			if err := b.read(r.KTAP); err != nil {
				return nil, fmt.Errorf("bench: boot %d (%s), console %s: %w: %w", n, v.name, r.ConsoleLog, err, errs.ErrEnv)
			}
			res.Boots = append(res.Boots, b)
		}
	}
	res.Seconds = time.Since(start).Seconds()
	res.aggregate()
	if err := fsutil.WriteJSON(filepath.Join(o.OutDir, "bench.json"), res); err != nil {
		return res, fmt.Errorf("bench: writing bench.json: %w", err)
	}
	if err := fsutil.WriteFile(filepath.Join(o.OutDir, "bench.svg"), Plot(res), 0o644); err != nil {
		return res, fmt.Errorf("bench: writing the plot: %w", err)
	}
	return res, nil
}

// Boot is what one boot measured.
type Boot struct {
	Variant   string  `json:"variant"`
	Round     int     `json:"round"`
	Dir       string  `json:"dir"`
	Seconds   float64 `json:"duration_s"`
	Verdict   string  `json:"verdict"`
	GuestCPUs int     `json:"guest_cpus"`
	Release   string  `json:"release,omitempty"`
	// Clocksource is the guest's, and ClockStepNS the smallest step it
	// was seen to take.
	Clocksource string `json:"clocksource"`
	ClockStepNS int64  `json:"clock_step_ns"`
	// Latency is the QD1 read workload over all repetitions; Reps each
	// repetition's.
	Latency *guestconf.BenchRecord   `json:"latency"`
	Reps    []*guestconf.BenchRecord `json:"latency_reps,omitempty"`
	Sweep   []*guestconf.BenchRecord `json:"sweep"`
	// SelfCheck is the QD1 8K write measurement per in-capsule size.
	SelfCheck []*guestconf.BenchRecord `json:"self_check,omitempty"`
}

// read takes the agent's records out of a boot's KTAP results.
func (b *Boot) read(t *ktap.Test) error {
	for _, r := range records(t) {
		switch r.Kind {
		case "env":
			b.GuestCPUs, b.Release, b.Clocksource, b.ClockStepNS = r.CPUs, r.Kernel, r.Clocksource, r.ClockStepNS
		case "latency":
			if r.Rep == 0 {
				b.Latency = r
			} else {
				b.Reps = append(b.Reps, r)
			}
		case "sweep":
			b.Sweep = append(b.Sweep, r)
		case "selfcheck":
			b.SelfCheck = append(b.SelfCheck, r)
		}
	}
	if b.Latency == nil || b.Latency.IOs == 0 {
		return fmt.Errorf("the guest reported no latency measurement")
	}
	if coarseClock(b.Clocksource) || b.ClockStepNS > 10000 {
		return fmt.Errorf("the guest's clock (clocksource %q, steps of %s) cannot time one I/O: under TCG the bench needs the host's TSC (amd64, constant_tsc in /proc/cpuinfo) to give the guest kernel tsc_early_khz", b.Clocksource, time.Duration(b.ClockStepNS))
	}
	return nil
}

// records are the bench diagnostics in t and its subtests, in order.
func records(t *ktap.Test) []*guestconf.BenchRecord {
	if t == nil {
		return nil
	}
	var out []*guestconf.BenchRecord
	for _, d := range t.Diagnostics {
		if r, ok := guestconf.ParseBench(d); ok {
			out = append(out, r)
		}
	}
	for _, s := range t.Subtests {
		out = append(out, records(s)...)
	}
	return out
}

// Result is bench.json.
type Result struct {
	Kernel          string          `json:"kernel"`
	Transport       string          `json:"transport"`
	Accel           string          `json:"accel"`
	VCPUs           int             `json:"vcpus"`      // given to QEMU
	GuestCPUs       int             `json:"guest_cpus"` // what the guest sees
	ACPI            bool            `json:"acpi"`       // the kernel's CONFIG_ACPI
	BootsPerVariant int             `json:"boots_per_variant"`
	Workload        guestconf.Bench `json:"workload"`
	Seconds         float64         `json:"duration_s"`
	Estimate        float64         `json:"estimate_s"`
	Notes           []string        `json:"notes"`
	Latency         LatencyAB       `json:"latency"`
	Sweep           []SweepAB       `json:"sweep"`
	SelfCheck       SelfCheck       `json:"self_check"`
	Boots           []Boot          `json:"boots"`
}

// LatencyStats is one variant's QD1 read latency over its boots.
type LatencyStats struct {
	Mean   Summary `json:"mean_us"`
	Median Summary `json:"median_us"`
	P99    Summary `json:"p99_us"`
	IOPS   Summary `json:"iops"`
	IOs    int     `json:"ios"`
	// Hist is every boot's histogram added up (guestconf.Bucket).
	Hist map[int]int `json:"hist"`
}

// LatencyAB is seed 000's comparison.
type LatencyAB struct {
	Block    int          `json:"block"`
	Baseline LatencyStats `json:"baseline"`
	Patched  LatencyStats `json:"patched"`
	// Diff is patched - baseline of the boots' mean latencies.
	Diff       Difference `json:"diff_mean_us"`
	DiffMedian Difference `json:"diff_median_us"`
	DiffP99    Difference `json:"diff_p99_us"`
}

// Point is one variant's sweep point over its boots.
type Point struct {
	IOPS   Summary `json:"iops"`
	MeanUS Summary `json:"mean_us"`
}

// SweepAB is one sweep point, both variants and their difference.
type SweepAB struct {
	Workload string     `json:"workload"`
	Size     int        `json:"size"`
	Inline   int        `json:"inline_data_size"`
	Baseline Point      `json:"baseline"`
	Patched  Point      `json:"patched"`
	IOPSDiff Difference `json:"diff_iops"`
	LatDiff  Difference `json:"diff_mean_us"`
}

// SelfCheck is the known effect: with in-capsule data of 4K, 8K writes
// make the target RDMA READ the data, a round trip that 16K avoids.
type SelfCheck struct {
	Workload string `json:"workload"`
	Size     int    `json:"size"`
	Small    int    `json:"small_inline"` // 4096
	Large    int    `json:"large_inline"` // 16384
	QD       int    `json:"qd"`
	// Source is the records it reads: "selfcheck" (its own QD1
	// measurement) or "sweep" (the sweep's 8K random writes).
	Source string `json:"source"`
	// PerVariant: latency and IOPS, large minus small, per variant, each
	// boot's two sizes paired (the order of the sizes alternates between
	// rounds).
	PerVariant []SelfCheckVariant `json:"per_variant"`
	Pass       bool               `json:"pass"`
	Reason     string             `json:"reason"`
}

// SelfCheckVariant is the self-check on one variant's boots.
type SelfCheckVariant struct {
	Variant string `json:"variant"`
	Small   Point  `json:"small"`
	Large   Point  `json:"large"`
	// LatDiff and IOPSDiff are large - small paired by boot (both sizes
	// are measured in every boot): a negative latency difference is the
	// effect. LatWelch is the same unpaired, for comparison.
	LatDiff  Difference `json:"diff_mean_us"`
	IOPSDiff Difference `json:"diff_iops"`
	LatWelch Difference `json:"diff_mean_us_welch"`
	// LatRatio is the latency change in percent, the per-boot ratios
	// large/small averaged on the log scale: a boot's slowness (the
	// emulator's share of the host) scales both sizes alike and cancels.
	// The self-check's verdict.
	LatRatio Difference `json:"ratio_mean_us_pct"`
}

// perVariant gathers a figure of every boot of a variant.
func (r *Result) perVariant(variant string, f func(*Boot) (float64, bool)) []float64 {
	var xs []float64
	for i := range r.Boots {
		if r.Boots[i].Variant != variant {
			continue
		}
		if x, ok := f(&r.Boots[i]); ok {
			xs = append(xs, x)
		}
	}
	return xs
}

func (b *Boot) point(workload string, size, inline int) *guestconf.BenchRecord {
	for _, s := range b.Sweep {
		if s.Workload == workload && s.Size == size && s.InlineDataSize == inline {
			return s
		}
	}
	return nil
}

func (r *Result) sweepFigure(variant, workload string, size, inline int, lat bool) []float64 {
	return r.perVariant(variant, func(b *Boot) (float64, bool) {
		p := b.point(workload, size, inline)
		if p == nil {
			return 0, false
		}
		if lat {
			return p.MeanUS, true
		}
		return p.IOPS, true
	})
}

func (r *Result) latency(variant string) LatencyStats {
	get := func(f func(*guestconf.BenchRecord) float64) []float64 {
		return r.perVariant(variant, func(b *Boot) (float64, bool) { return f(b.Latency), b.Latency != nil })
	}
	s := LatencyStats{
		Mean:   Summarize(get(func(x *guestconf.BenchRecord) float64 { return x.MeanUS })),
		Median: Summarize(get(func(x *guestconf.BenchRecord) float64 { return x.MedianUS })),
		P99:    Summarize(get(func(x *guestconf.BenchRecord) float64 { return x.P99US })),
		IOPS:   Summarize(get(func(x *guestconf.BenchRecord) float64 { return x.IOPS })),
		Hist:   map[int]int{},
	}
	for _, b := range r.Boots {
		if b.Variant == variant && b.Latency != nil {
			s.IOs += b.Latency.IOs
			for k, v := range b.Latency.Hist {
				s.Hist[k] += v
			}
		}
	}
	return s
}

// aggregate computes the statistics from the boots.
func (r *Result) aggregate() {
	for _, b := range r.Boots {
		if r.GuestCPUs == 0 || b.GuestCPUs < r.GuestCPUs {
			r.GuestCPUs = b.GuestCPUs
		}
	}
	lat := func(v string, f func(*guestconf.BenchRecord) float64) []float64 {
		return r.perVariant(v, func(b *Boot) (float64, bool) { return f(b.Latency), b.Latency != nil })
	}
	mean := func(x *guestconf.BenchRecord) float64 { return x.MeanUS }
	median := func(x *guestconf.BenchRecord) float64 { return x.MedianUS }
	p99 := func(x *guestconf.BenchRecord) float64 { return x.P99US }
	r.Latency = LatencyAB{Block: r.Workload.LatencyBlock, Baseline: r.latency(vocab.Baseline), Patched: r.latency(vocab.Patched),
		Diff:       Welch(lat(vocab.Baseline, mean), lat(vocab.Patched, mean), true),
		DiffMedian: Welch(lat(vocab.Baseline, median), lat(vocab.Patched, median), true),
		DiffP99:    Welch(lat(vocab.Baseline, p99), lat(vocab.Patched, p99), true)}

	r.Sweep = nil
	inlines := slices.Clone(r.Workload.InlineSizes)
	sort.Sort(sort.Reverse(sort.IntSlice(inlines))) // 16K before 4K, as seed 003's columns
	for _, w := range r.Workload.Workloads {
		for _, size := range r.Workload.Sizes {
			for _, in := range inlines {
				pt := func(v string) Point {
					return Point{IOPS: Summarize(r.sweepFigure(v, w, size, in, false)), MeanUS: Summarize(r.sweepFigure(v, w, size, in, true))}
				}
				r.Sweep = append(r.Sweep, SweepAB{Workload: w, Size: size, Inline: in, Baseline: pt(vocab.Baseline), Patched: pt(vocab.Patched),
					IOPSDiff: Welch(r.sweepFigure(vocab.Baseline, w, size, in, false), r.sweepFigure(vocab.Patched, w, size, in, false), false),
					LatDiff:  Welch(r.sweepFigure(vocab.Baseline, w, size, in, true), r.sweepFigure(vocab.Patched, w, size, in, true), true)})
			}
		}
	}
	r.selfCheck()
	r.Notes = notes(r)
}

// selfCheck looks for seed 003's premise on every variant: in each boot,
// the QD1 8K writes of the self-check workload (or, without it, the
// sweep's 8K random writes) at in-capsule sizes 16K and 4K, paired.
func (r *Result) selfCheck() {
	sc := SelfCheck{Workload: guestconf.RandWrite, Size: r.Workload.SelfCheckSize, Small: 4096, Large: 16384, QD: 1, Source: "selfcheck"}
	if r.Workload.SelfCheckMS == 0 {
		sc.Size, sc.QD, sc.Source = 8192, r.Workload.QueueDepth, "sweep"
	}
	have := slices.Contains(r.Workload.InlineSizes, sc.Small) && slices.Contains(r.Workload.InlineSizes, sc.Large) &&
		(sc.Source == "selfcheck" || slices.Contains(r.Workload.Workloads, sc.Workload) && slices.Contains(r.Workload.Sizes, sc.Size))
	if !have {
		sc.Reason = "not measured: the workload has no 8K random writes at in-capsule sizes 4K and 16K"
		r.SelfCheck = sc
		return
	}
	fig := func(v string, inline int, lat bool) []float64 {
		return r.perVariant(v, func(b *Boot) (float64, bool) {
			recs := b.Sweep
			if sc.Source == "selfcheck" {
				recs = b.SelfCheck
			}
			for _, p := range recs {
				if p.Workload == sc.Workload && p.Size == sc.Size && p.InlineDataSize == inline {
					if lat {
						return p.MeanUS, true
					}
					return p.IOPS, true
				}
			}
			return 0, false
		})
	}
	sc.Pass = true
	tooFew := false
	for _, v := range []string{vocab.Baseline, vocab.Patched} {
		small := func(lat bool) []float64 { return fig(v, sc.Small, lat) }
		large := func(lat bool) []float64 { return fig(v, sc.Large, lat) }
		sv := SelfCheckVariant{Variant: v,
			Small:    Point{IOPS: Summarize(small(false)), MeanUS: Summarize(small(true))},
			Large:    Point{IOPS: Summarize(large(false)), MeanUS: Summarize(large(true))},
			LatDiff:  Paired(small(true), large(true), true),
			IOPSDiff: Paired(small(false), large(false), false),
			LatWelch: Welch(small(true), large(true), true),
			LatRatio: PairedRatio(small(true), large(true), true)}
		if sv.LatRatio.Verdict != Faster {
			sc.Pass = false
		}
		tooFew = tooFew || sv.LatRatio.Verdict == TooFew
		sc.PerVariant = append(sc.PerVariant, sv)
	}
	switch {
	case tooFew:
		sc.Reason = "one boot per variant gives no interval: the self-check needs --boots 2 or more (the default is 5)"
	case sc.Pass:
		sc.Reason = "8K writes are faster with 16K in-capsule data than with 4K on every variant, the 95 % interval of the per-boot latency ratio excluding no change: the harness sees a real effect"
	default:
		sc.Reason = "the 16K-vs-4K difference for 8K writes was not found at 95 % on every variant: the harness may not see a real effect; take more --boots or a quieter machine before reading the A/B figures"
	}
	r.SelfCheck = sc
}

// notes are what the figures cannot say, printed with them.
func notes(r *Result) []string {
	var out []string
	provider := map[string]string{vocab.RXE: "soft-RoCE (rxe)", vocab.SIW: "soft-iWARP (siw)"}[r.Transport]
	out = append(out, provider+" copies every payload and every capsule in software, on the same CPUs as the host and the target: it does not model the HCA's DMA read of the command capsule that seed 000 removes, so a null result here is an expected, reportable outcome, not a verdict on the patch.")
	if vocab.IsTCG(r.Accel) {
		out = append(out, "QEMU runs under TCG (no KVM here): every instruction is emulated, so absolute latencies are tens to hundreds of times a real host's; only differences measured in the same conditions mean something.")
	}
	if r.GuestCPUs > 0 && r.GuestCPUs < r.VCPUs {
		why := ""
		if !r.ACPI {
			why = " (the kernel is built without ACPI, which enumerates the others)"
		}
		out = append(out, fmt.Sprintf("QEMU gives %d vCPUs but the guest sees %d%s: the queue depth of %d is kept by threads blocked in I/O, not by more CPUs.", r.VCPUs, r.GuestCPUs, why, r.Workload.QueueDepth))
	}
	if r.Accel == vocab.AccelTCG && r.GuestCPUs > 1 {
		out = append(out, fmt.Sprintf("TCG runs the guest's %d CPUs on one host thread, in turns: work that would run on its CPUs in parallel is measured one after another (--accel tcg-multi gives each a host thread).", r.GuestCPUs))
	}
	if n := len(r.Sweep); n > 1 {
		out = append(out, fmt.Sprintf("The sweep makes %d A/B comparisons at 95 %%: about %.1f of them read faster or slower by chance alone when nothing differs; a lone verdict among them is not a finding.", n, 0.05*float64(n)))
	}
	out = append(out, "Seed 002 (KLM/MTT lists posted inline in the UMR for reg_wr) is mlx5-only: rxe and siw have no UMR, so its s/g-vs-inline reg_wr table cannot be measured here and is not attempted.")
	out = append(out, "Seed 003 is superseded upstream by the port attribute param_inline_data_size: the sweep sets it to 4K and 16K instead of applying the patch, on both variants.")
	return out
}
