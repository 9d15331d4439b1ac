package build_test

import (
	"context"
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/dwarflayout"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/kbuild"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/vocab"
)

// TestRealBuild builds 6.12 baseline and patched (incremental: the cold
// build happens once per machine and cache) and checks what the issue
// asks: bzImage and metadata, every requested symbol landed, the touched
// drivers compile-tested, a second call a no-op, the code under test as
// modules (vmlinux shared, nvme_rdma rebuilt), and the baseline never
// rebuilt.
func TestRealBuild(t *testing.T) {
	kbuild.Exclusive(t, testkernel.Default)
	base := kbuild.Build(t, testkernel.Default, vocab.Baseline)
	md := kbuild.Build(t, testkernel.Default, vocab.Patched)
	for _, m := range []*build.Metadata{base, md} {
		if m.Status != "PASS" || m.KernelRelease != "6.12.117" || m.Artifacts["bzImage"] == "" || m.Verified < 50 {
			t.Errorf("%s metadata: %+v", m.Variant, m)
		}
	}
	// Only what the patches that apply on 6.12 change is compile-tested:
	// seed 000 (nvme host); 002 (mlx5) and 003 (nvmet) do not apply, so
	// the compile-test fragment is off and mlx5 is not built at all.
	if !slices.Contains(md.CompileTested, "drivers/nvme/host/rdma.o") {
		t.Errorf("drivers/nvme/host/rdma.o not compile-tested: %v", md.CompileTested)
	}
	for _, o := range md.CompileTested {
		if _, err := os.Stat(filepath.Join(md.BuildDir, o)); err != nil {
			t.Errorf("%s listed as compile-tested but not built: %v", o, err)
		}
	}
	if _, off := md.FragmentsOff["compile-test"]; !off {
		t.Errorf("compile-test fragment on (%v) though no patch that applies on 6.12 changes mlx5", md.FragmentsOn)
	}
	if _, err := os.Stat(filepath.Join(md.BuildDir, "drivers/infiniband/hw/mlx5/qp.o")); err == nil {
		t.Errorf("mlx5 built though nothing that applies changes it")
	}
	if len(md.Applied) != 1 || !strings.Contains(md.Applied[0], "nvme-rdma-inline-capsule") {
		t.Errorf("patched build applied %v", md.Applied)
	}
	// DWARF in module objects only: the boot reads ib_send_wr from
	// rxe_verbs.o and sizeof(struct nvme_command) from nvme/host/rdma.o;
	// built-in objects and vmlinux carry none (no CONFIG_DEBUG_INFO).
	for _, m := range []*build.Metadata{base, md} {
		r, err := dwarflayout.Open(filepath.Join(m.BuildDir, "drivers/infiniband/sw/rxe/rxe_verbs.o"))
		if err != nil {
			t.Fatalf("%s: %v", m.Variant, err)
		}
		if wr, err := r.Struct("ib_send_wr"); err != nil || wr.Members["send_flags"] == 0 {
			t.Errorf("%s: ib_send_wr from rxe_verbs.o: %+v, %v", m.Variant, wr, err)
		}
		h, err := dwarflayout.Open(filepath.Join(m.BuildDir, "drivers/nvme/host/rdma.o"))
		if err != nil {
			t.Fatalf("%s: %v", m.Variant, err)
		}
		if c, err := h.Struct("nvme_command"); err != nil || c.Size != 64 {
			t.Errorf("%s: nvme_command from nvme/host/rdma.o: %+v, %v", m.Variant, c, err)
		}
		for _, obj := range []string{"kernel/fork.o", "vmlinux"} {
			f, err := elf.Open(filepath.Join(m.BuildDir, obj))
			if err != nil {
				t.Fatal(err)
			}
			if f.Section(".debug_info") != nil {
				t.Errorf("%s: %s has DWARF: CONFIG_DEBUG_INFO is on", m.Variant, obj)
			}
			f.Close()
		}
	}
	again := kbuild.Build(t, testkernel.Default, vocab.Patched)
	if !again.UpToDate {
		t.Errorf("second patched build was not a no-op")
	}
	// Seed 000 changes nvme-rdma only, which is a module: the patched
	// build relinks nvme_rdma.ko, not vmlinux, so both variants boot the
	// same bzImage with different modules, and the report says so.
	if md.VmlinuxShared == nil || !*md.VmlinuxShared || base.SHA256["bzImage"] != md.SHA256["bzImage"] {
		t.Errorf("vmlinux not shared (%v): baseline %s, patched %s", md.VmlinuxShared, base.SHA256["bzImage"], md.SHA256["bzImage"])
	}
	// nvme_rdma alone: the other modules' code is the baseline's, even
	// those the patched folder compiled again (their build IDs differ).
	if !slices.Equal(md.Rebuilt, []string{"nvme_rdma"}) {
		t.Errorf("rebuilt modules %v, want nvme_rdma alone", md.Rebuilt)
	}
	// The baseline folder never compiles a patched state: building the
	// baseline again after the patched build does nothing, and its image
	// is the first baseline's, byte for byte.
	rebuilt := kbuild.Build(t, testkernel.Default, vocab.Baseline)
	if !rebuilt.UpToDate {
		t.Error("the baseline after the patched build recompiled something: the baseline is never rebuilt")
	}
	if rebuilt.SHA256["bzImage"] != base.SHA256["bzImage"] {
		t.Errorf("the baseline again made another image: %s, first %s", rebuilt.SHA256["bzImage"], base.SHA256["bzImage"])
	}
}

// TestRealImpossibleSymbol asks the real 6.12 Kconfig for tmpfs without
// shmem: olddefconfig drops it and the build names why.
func TestRealImpossibleSymbol(t *testing.T) {
	kbuild.Exclusive(t, testkernel.Default)
	k, _ := testenv.Kernel(t, testkernel.Default)
	if err := build.CheckHostTools(); err != nil {
		testenv.Unavailable(t, err.Error())
	}
	root := t.TempDir()
	src := testenv.RepoRoot(t)
	for _, p := range []string{"series/6.12/manifest.yaml", "patches/nvme-rdma-inline-capsule/000_97dfe90d7f7f5563.txt",
		"patches/mlx5-umr-inline-reg-wr/002_ae99e225fbf26f56.txt", "patches/nvmet-rdma-inline-16k/003_be5ede6ad577d1fd.txt", "kconfig/base.config"} {
		b, err := os.ReadFile(filepath.Join(src, p))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(root, p), b, 0o644)
	}
	os.WriteFile(filepath.Join(root, "kconfig", "impossible.config"), []byte("# CONFIG_SHMEM is not set\nCONFIG_TMPFS=y\n"), 0o644)
	c := testenv.Cache()
	_, pristine := testenv.Kernel(t, testkernel.Default)
	out, err := apply.Run(context.Background(), apply.In{Root: root, Kernel: k, Pristine: pristine})
	if err != nil {
		t.Fatal(err)
	}
	_, err = build.Build(context.Background(), build.Options{Root: root, Cache: c, Kernel: k, Apply: out, Variant: vocab.Baseline,
		Fragments: []string{"base", "impossible"}})
	var ce *build.ConfigError
	if !errors.As(err, &ce) || !errors.Is(err, errs.ErrInput) {
		t.Fatalf("error %v, want a config error", err)
	}
	if !strings.Contains(err.Error(), "CONFIG_TMPFS=y requested, got n: depends on SHMEM (SHMEM=n) [fs/Kconfig:") {
		t.Errorf("the reason is not named: %v", err)
	}
	dir, _ := build.Locate(root, c, k, out, []string{"base", "impossible"})
	os.RemoveAll(dir)
}

func BenchmarkBuildNoop(b *testing.B) {
	kbuild.Build(b, testkernel.Default, vocab.Patched)
	cpu := testenv.MeasureCPU(b)
	for b.Loop() {
		kbuild.Build(b, testkernel.Default, vocab.Patched)
	}
	cpu.Report()
}

// BenchmarkBuildPatchedAfterBaseline: the patched build right after the
// baseline's, in the same folder (target ≤ 20 s).
func BenchmarkBuildPatchedAfterBaseline(b *testing.B) {
	cpu := testenv.MeasureCPU(b)
	for b.Loop() {
		b.StopTimer()
		cpu.Stop()
		kbuild.Build(b, testkernel.Default, vocab.Baseline) // the work tree back to pristine
		cpu.Start()
		b.StartTimer()
		kbuild.Build(b, testkernel.Default, vocab.Patched)
	}
	cpu.Report()
}

// BenchmarkBuildCold: 6.12 baseline from an empty build folder, without
// ccache (target ≤ 8 min). Only with PATCHCTL_BENCH_COLD=1.
func BenchmarkBuildCold(b *testing.B) {
	if os.Getenv("PATCHCTL_BENCH_COLD") == "" {
		b.Skip("set PATCHCTL_BENCH_COLD=1: a cold build takes about 8 minutes")
	}
	k, _ := testenv.Kernel(b, testkernel.Default)
	cpu := testenv.MeasureCPU(b)
	for b.Loop() {
		b.StopTimer()
		cpu.Stop()
		c := testenv.Cache()
		dir, _ := build.Locate(testenv.RepoRoot(b), c, k, nil, nil) // no patch changes mlx5 on 6.12: the same selection as with the apply output
		os.RemoveAll(dir)
		cpu.Start()
		b.StartTimer()
		kbuild.Build(b, testkernel.Default, vocab.Baseline, func(o *build.Options) { o.NoCcache = true })
	}
	cpu.Report()
}
