package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/report"
	"github.com/patchctl/patchctl/internal/report/reportcheck"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/vocab"
)

// TestRunDistro is the distro-kernel path end to end on 6.12 (Debian's
// binary kernel; the patched variant with seed 000's nvme-rdma.ko rebuilt):
// inline evidence on the patched kernel and none on the baseline over
// rxe, siw skipped as not available, every result saying its path, the
// reports accepted by their consumers.
func TestRunDistro(t *testing.T) {
	root := testenv.RepoRoot(t)
	l := lock(t, root)
	testenv.Kernel(t, testkernel.Default)
	if testing.Short() {
		t.Skip("-short: no end-to-end run")
	}
	c := testenv.Cache()
	res, err := pipeline.Run(context.Background(), pipeline.Options{Root: root, Cache: c, Lock: l, Kernels: []string{testkernel.Default},
		KernelFrom: vocab.FromDistro, Progress: c.Progress})
	if err != nil {
		t.Fatal(err)
	}
	var sum strings.Builder
	report.Summary(&sum, res)
	t.Log("\n" + sum.String())
	k := res.Kernels[0]
	if res.Verdict != vocab.Pass || k.KernelFrom != vocab.FromDistro {
		t.Fatalf("verdict %s from %q", res.Verdict, k.KernelFrom)
	}
	for _, v := range []string{vocab.Baseline, vocab.Patched} {
		md := k.Builds[v]
		if md == nil || md.KernelFrom != vocab.FromDistro || md.KernelRelease != "6.12.117+deb12-amd64" {
			t.Errorf("%s build %+v", v, md)
		}
		b := k.Boots[v]
		if b == nil || len(b.Evidence) != 1 || b.Evidence[0].Transport != "rxe" {
			t.Fatalf("%s boot evidence %+v", v, b)
		}
		ev := b.Evidence[0]
		if v == vocab.Patched && (ev.Inline == 0 || ev.ByRef != 0) || v == vocab.Baseline && (ev.Inline != 0 || ev.ByRef == 0) {
			t.Errorf("%s: %d inline, %d by reference", v, ev.Inline, ev.ByRef)
		}
		siw := false
		for _, s := range b.KTAP.Subtests {
			siw = siw || s.Name == "siw" && s.Skip && strings.Contains(strings.Join(s.Diagnostics, " "), "not available")
		}
		if !siw {
			t.Errorf("%s: siw not reported as not available", v)
		}
	}
	if r := k.Builds[vocab.Patched].Rebuilt; len(r) != 1 || r[0] != "nvme_rdma" {
		t.Errorf("rebuilt %v", r)
	}
	if !strings.Contains(sum.String(), "kernels from distro") {
		t.Errorf("summary does not say the path:\n%s", sum.String())
	}
	dir := t.TempDir()
	if _, err := report.WriteWith(dir, res, report.Options{Version: "test", Root: root, Cache: c.Dir}); err != nil {
		t.Fatal(err)
	}
	kc, _ := os.ReadFile(filepath.Join(dir, "kcidb.json"))
	if !strings.Contains(string(kc), `"kernel_from": "distro"`) && !strings.Contains(string(kc), `"kernel_from":"distro"`) {
		t.Errorf("KCIDB builds do not say the path")
	}
	_, tr := testenv.Kernel(t, testkernel.Default)
	if p := reportcheck.Folder(t, dir, tr); len(p) > 0 {
		t.Errorf("reports rejected by their consumers:\n%s", strings.Join(p, "\n"))
	}
}
