package bench_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/bench"
	"github.com/patchctl/patchctl/internal/boot"

	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/kbuild"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/vocab"
)

// TestRealBenchShort runs a short bench of the built 6.12 kernels (two
// boots each, short measurements): every boot passes, every workload and
// sweep point is reported for both in-capsule sizes, the guest's clock
// can time one I/O, and bench.json and bench.svg are written. Its
// figures are not judged: the measurements are too short for that.
func TestRealBenchShort(t *testing.T) {
	kbuild.Exclusive(t, testkernel.Default)
	if _, err := os.Stat("/usr/bin/qemu-system-x86_64"); err != nil {
		testenv.Unavailable(t, "qemu-system-x86_64 not installed")
	}
	out := t.TempDir()
	o := bench.Options{Kernel: testkernel.Default, Transport: "rxe", Boots: 2, OutDir: out, Workload: bench.DefaultWorkload()}
	w := &o.Workload
	w.LatencyMS, w.Reps, w.WarmupMS = 200, 1, 50
	w.SweepMS, w.SweepWarmupMS, w.SliceMS, w.SelfCheckMS = 40, 10, 20, 300
	for _, v := range []struct {
		name string
		bo   *boot.Options
	}{{vocab.Baseline, &o.Baseline}, {vocab.Patched, &o.Patched}} {
		md := kbuild.Build(t, testkernel.Default, v.name)
		img := filepath.Join(out, v.name+"-bzImage")
		sum, err := bench.PinImage(md.VariantDir, img)
		if err != nil {
			t.Fatal(err)
		}
		*v.bo = boot.Options{Root: testenv.RepoRoot(t), Kernel: testkernel.Default, BzImage: img, BzImageSHA256: sum, BuildDir: md.BuildDir, Modules: md.Modules}
	}
	res, err := bench.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Boots) != 4 || res.Boots[0].Variant != vocab.Baseline || res.Boots[1].Variant != vocab.Patched || res.Boots[2].Variant != vocab.Baseline {
		t.Fatalf("boots: %+v", res.Boots)
	}
	points := len(w.Workloads) * len(w.Sizes) * len(w.InlineSizes)
	for _, b := range res.Boots {
		if b.Verdict != vocab.Pass || b.Latency == nil || b.Latency.IOs == 0 || len(b.Sweep) != points || len(b.SelfCheck) != 2 {
			t.Errorf("%s round %d: verdict %s, latency %+v, %d sweep points, %d self-check records", b.Variant, b.Round, b.Verdict, b.Latency, len(b.Sweep), len(b.SelfCheck))
		}
		if b.Clocksource == "" || strings.Contains(b.Clocksource, "jiffies") || b.ClockStepNS > 10000 {
			t.Errorf("%s: clock %q, steps of %d ns", b.Variant, b.Clocksource, b.ClockStepNS)
		}
		seen := map[int]bool{}
		for _, s := range b.Sweep {
			seen[s.InlineDataSize] = true
			if s.IOs == 0 || !(s.IOPS > 0) || !(s.MeanUS > 0) {
				t.Errorf("%s: empty point %+v", b.Variant, s)
			}
		}
		if !seen[4096] || !seen[16384] {
			t.Errorf("%s: in-capsule sizes measured %v", b.Variant, seen)
		}
		if b.Latency.MedianUS == 0 || b.Latency.MedianUS == b.Latency.P99US && b.Latency.IOs > 100 {
			t.Errorf("%s: latency %+v: the clock cannot tell I/Os apart", b.Variant, b.Latency)
		}
	}
	if res.Accel == "" || res.GuestCPUs == 0 || res.SelfCheck.Source != "selfcheck" || len(res.SelfCheck.PerVariant) != 2 {
		t.Errorf("result: accel %q, guest cpus %d, self-check %+v", res.Accel, res.GuestCPUs, res.SelfCheck)
	}
	for _, f := range []string{"bench.json", "bench.svg"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	var text strings.Builder
	bench.Text(&text, res)
	if !strings.Contains(text.String(), "Seed 003, patched kernel") || !strings.Contains(text.String(), "soft-RoCE (rxe)") {
		t.Errorf("text:\n%s", text.String())
	}
}
