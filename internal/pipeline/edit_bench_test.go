package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/report"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/kbuild"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/vocab"
)

// seed000 is the series of record's patch for nvme-rdma, the one the
// one-line-edit benchmark edits.
const seed000 = "patches/nvme-rdma-inline-capsule/000_97dfe90d7f7f5563.txt"

// editedLine is the code line of seed 000 the benchmark edits: the test
// for an inline send in nvme_rdma_post_send.
const editedLine = "+\tif (num_sge == 1 && sge->length <= queue->max_inline_data"

// editCode gives seed 000's edited line in root an upper bound on the
// granted inline size that never decides (a device grants a few hundred
// bytes; the bound is over a MiB), a different constant for each n:
// every edit is a state never built or booted before, and the compiled
// code differs (the granted size is read at run time, so the compiler
// keeps the comparison and its new immediate; a bound on sge->length
// would not do: the compiler knows the command SGE's length and folds
// it), so the edit recompiles nvme/host/rdma.o, relinks nvme-rdma.ko and
// boots the patched image again, and the behaviour stays the same.
func editCode(t testing.TB, root string, n int64) {
	t.Helper()
	p := filepath.Join(root, seed000)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, editedLine) })
	if i < 0 {
		t.Fatalf("%s has no line %q", seed000, editedLine)
	}
	lines[i] = fmt.Sprintf("%s && queue->max_inline_data <= %d) {", editedLine, 1<<20+n)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// refresh regenerates series/6.12 from root's patches, as `patchctl
// refresh` does after an edit.
func refresh(t testing.TB, root string) {
	t.Helper()
	_, pristine := testenv.Kernel(t, testkernel.Default)
	plan, err := apply.LoadPlan(root, testkernel.Default, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := plan.Run(pristine)
	if err != nil {
		t.Fatal(err)
	}
	if err := apply.Refresh(res).Write(plan.Manifest.Dir()); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkEditVerdict: warm caches, a one-line code edit in seed 000
// (a new constant each time, so every iteration is a new state) →
// refresh → run's verdict on 6.12 (target ≤ 10 s, boots included). The
// baseline's build and boots are reused; the patched build recompiles
// nvme/host/rdma.o and relinks nvme-rdma.ko (vmlinux shared), and the
// patched boots run. Reports seconds and CPU seconds per edit.
func BenchmarkEditVerdict(b *testing.B) {
	if testing.Short() {
		b.Skip("-short: builds and boots a kernel")
	}
	src := testenv.RepoRoot(b)
	if k, err := lock(b, src).Find(testkernel.Default); err != nil || !testenv.Cache().Prepared(k) {
		b.Skip("kernel 6.12 is not prepared (patchctl tree prepare --kernel 6.12)")
	}
	kbuild.Exclusive(b, testkernel.Default)
	c := testenv.Cache()
	root := b.TempDir()
	copyTree(b, src, root)
	run := func() *pipeline.Result {
		res, err := pipeline.Run(context.Background(), pipeline.Options{Root: root, Cache: c, Lock: lock(b, root), Kernels: []string{testkernel.Default}})
		if err != nil || res.Verdict != vocab.Pass {
			var sum strings.Builder
			if res != nil {
				report.Summary(&sum, res)
			}
			b.Fatalf("%v\n%s", err, sum.String())
		}
		return res
	}
	// Constants of this run only: a state of an earlier run of the
	// benchmark would be reused from its records, not built and booted.
	// Below 2^32 - 2^20 - N: a bound beyond u32 would be folded away.
	base := time.Now().UnixNano() % 1e6 * 1000
	// Warm: the patched folder holds an edited state, untimed.
	editCode(b, root, base)
	refresh(b, root)
	run()
	cpu := testenv.MeasureCPU(b)
	defer cpu.Report()
	for i := 0; b.Loop(); i++ {
		editCode(b, root, base+int64(i)+1)
		refresh(b, root)
		res := run()
		b.StopTimer()
		cpu.Stop()
		var redone []string
		for _, s := range res.Kernels[0].Stages {
			if !s.Reused {
				redone = append(redone, s.Name)
			}
			if strings.HasSuffix(s.Name, "-baseline") && !s.Reused {
				b.Errorf("an edit of the series redid %s (%s)", s.Name, s.Redone)
			}
		}
		if !slices.Contains(redone, "build-patched") || !slices.ContainsFunc(redone, func(s string) bool { return strings.HasPrefix(s, "boot-patched") }) {
			b.Errorf("the edit did not rebuild and reboot the patched kernel: redone %v", redone)
		}
		var took []string
		for _, s := range res.Kernels[0].Stages {
			if !s.Reused {
				took = append(took, fmt.Sprintf("%s %.1fs %.1f cpu-s", s.Name, s.Duration, s.CPU))
			}
		}
		b.Logf("edit %d: %s", i, strings.Join(took, ", "))
		cpu.Start()
		b.StartTimer()
	}
}
