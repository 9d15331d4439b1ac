package boot_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"errors"
	"github.com/patchctl/patchctl/internal/boot"
	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/kbuild"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/vocab"
)

// evidence returns the inline and by-reference capsule counts of a
// transport, as the agent reported them.
func evidence(t *testing.T, r *boot.Result, transport string) (int, int) {
	t.Helper()
	for _, e := range r.Evidence {
		if e.Transport == transport {
			return e.Inline, e.ByRef
		}
	}
	t.Fatalf("no %s evidence in %+v", transport, r.Evidence)
	return 0, 0
}

func realOptions(t *testing.T, md *build.Metadata, expect bool) boot.Options {
	if _, err := os.Stat("/usr/bin/qemu-system-x86_64"); err != nil {
		testenv.Unavailable(t, "qemu-system-x86_64 not installed")
	}
	return boot.Options{Root: testenv.RepoRoot(t), Kernel: testkernel.Default, Variant: md.Variant, BzImage: md.Artifacts["bzImage"],
		BuildDir: md.BuildDir, Modules: md.Modules, OutDir: t.TempDir(), ExpectInline: guestconf.ExpectOf(expect), InlineDataSize: 16384}
}

// TestRealBoot boots the built 6.12 kernels: both variants pass every test
// over rxe and siw, the patched one posts the command capsules inline and
// the baseline does not.
func TestRealBoot(t *testing.T) {
	kbuild.Exclusive(t, testkernel.Default)
	for _, c := range []struct {
		variant string
		inline  bool
	}{{vocab.Baseline, false}, {vocab.Patched, true}} {
		t.Run(c.variant, func(t *testing.T) {
			md := kbuild.Build(t, testkernel.Default, c.variant)
			res, err := boot.Run(context.Background(), realOptions(t, md, c.inline))
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != "PASS" {
				t.Fatalf("%s: %s %s\n%s", c.variant, res.Verdict, res.Reason, strings.Join(res.Tail, "\n"))
			}
			if got := res.KTAP.Count(); got.Pass < 24 || got.Fail != 0 {
				t.Errorf("counts %+v", got)
			}
			for _, tr := range []string{"rxe", "siw"} {
				in, ref := evidence(t, res, tr)
				if c.inline && (in == 0 || ref != 0) || !c.inline && (in != 0 || ref == 0) {
					t.Errorf("%s %s: %d inline, %d by reference", c.variant, tr, in, ref)
				}
			}
		})
	}
}

// TestRealHangIsKilled: a guest that stops in init is killed at the
// timeout, with the console's tail in the result.
func TestRealHangIsKilled(t *testing.T) {
	kbuild.Exclusive(t, testkernel.Default)
	md := kbuild.Build(t, testkernel.Default, vocab.Patched)
	o := realOptions(t, md, true)
	o.Transports = []string{"rxe"}
	o.Cmdline = "patchctl.stop=before-tests"
	o.TestTimeout = 5 * time.Second
	res, err := boot.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Verdict != "ERROR" || res.Phase != "tests" || !strings.Contains(strings.Join(res.Tail, "\n"), "patchctl-agent: started") {
		t.Errorf("result %+v", res)
	}
}

// TestRealKernelWithoutRxe: the same build's config without RDMA_RXE is
// refused with the symbol named.
func TestRealKernelWithoutRxe(t *testing.T) {
	kbuild.Exclusive(t, testkernel.Default)
	md := kbuild.Build(t, testkernel.Default, vocab.Patched)
	dir := t.TempDir()
	cfg, _ := os.ReadFile(filepath.Join(md.BuildDir, ".config"))
	cfg = regexp.MustCompile(`(?m)^CONFIG_RDMA_RXE=[ym]$`).ReplaceAll(cfg, []byte("# CONFIG_RDMA_RXE is not set"))
	os.WriteFile(filepath.Join(dir, ".config"), cfg, 0o644)
	o := realOptions(t, md, true)
	o.BuildDir = dir
	o.Modules = nil // the configuration alone decides
	_, err := boot.Run(context.Background(), o)
	if !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "CONFIG_RDMA_RXE") {
		t.Errorf("error %v", err)
	}
}

// BenchmarkBootRxe / Siw: boot to verdict for the full suite of one
// transport (target ≤ 15 s).
func BenchmarkBootRxe(b *testing.B) { benchBoot(b, "rxe") }
func BenchmarkBootSiw(b *testing.B) { benchBoot(b, "siw") }

func benchBoot(b *testing.B, tr string) {
	md := kbuild.Build(b, testkernel.Default, vocab.Patched)
	cpu := testenv.MeasureCPU(b)
	defer cpu.Report()
	for b.Loop() {
		res, err := boot.Run(context.Background(), boot.Options{Root: testenv.RepoRoot(b), Kernel: testkernel.Default, Variant: md.Variant,
			BzImage: md.Artifacts["bzImage"], BuildDir: md.BuildDir, Modules: md.Modules, OutDir: b.TempDir(), Transports: []string{tr}, ExpectInline: guestconf.ExpectInline})
		if err != nil || res.Verdict != "PASS" {
			b.Fatalf("%v %+v", err, res)
		}
	}
}
