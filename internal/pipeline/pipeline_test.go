package pipeline_test

import (
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/report"
	"github.com/patchctl/patchctl/internal/report/reportcheck"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/kbuild"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
)

func lock(t testing.TB, root string) *tree.Lock {
	l, err := tree.LoadLock(filepath.Join(root, "series", "kernels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestRunKernels is the end-to-end run on the kernels of
// $PATCHCTL_TEST_KERNELS (make test: the default kernel, 6.12; make
// test-matrix: all):
// tree, apply, checks, both builds, both boots over rxe and siw,
// comparison, and reports that CI systems read (checked: JUnit parses,
// KCIDB follows v5.3, SARIF follows 2.1.0).
func TestRunKernels(t *testing.T) {
	root := testenv.RepoRoot(t)
	l := lock(t, root)
	names := testenv.EndToEndKernels(t, l)
	for _, k := range names {
		testenv.Kernel(t, k)
		kbuild.Exclusive(t, k)
	}
	if testing.Short() {
		t.Skip("-short: no end-to-end run")
	}
	c := testenv.Cache()
	res, err := pipeline.Run(context.Background(), pipeline.Options{Root: root, Cache: c, Lock: l, Kernels: names, Progress: c.Progress})
	if err != nil {
		t.Fatal(err)
	}
	var sum strings.Builder
	report.Summary(&sum, res)
	if res.Verdict != vocab.Pass {
		t.Fatalf("verdict %s:\n%s", res.Verdict, sum.String())
	}
	for _, k := range res.Kernels {
		for _, s := range k.Stages {
			if s.Status != vocab.Pass {
				t.Errorf("%s %s: %s %s", k.Name, s.Name, s.Status, s.Detail)
			}
		}
		if b := k.Boots["patched"]; b == nil || b.KTAP.Count().Pass < 24 {
			t.Errorf("%s: patched boot %+v", k.Name, b)
		}
	}
	t.Log("\n" + sum.String())

	dir := t.TempDir()
	if _, err := report.WriteWith(dir, res, report.Options{Version: "test", Root: root, Cache: c.Dir}); err != nil {
		t.Fatal(err)
	}
	junit, _ := os.ReadFile(filepath.Join(dir, "junit.xml"))
	var j struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(junit, &j); err != nil || j.Tests < 60 || j.Failures != 0 {
		t.Errorf("junit: %v, %d tests, %d failures", err, j.Tests, j.Failures)
	}
	// Every report, read by the tool of its own ecosystem (SARIF
	// Multitool and schema, xmllint and junitparser, kcidb's schema,
	// kunit_parser on each console: the newest kernel's of those run, as
	// 5.10's kunit_parser predates the API the check reads).
	_, tree := testenv.Kernel(t, names[len(names)-1])
	if p := reportcheck.Folder(t, dir, tree); len(p) > 0 {
		t.Errorf("reports rejected by their consumers:\n%s", strings.Join(p, "\n"))
	}
	// A second run reuses every stage, and its reports are a submission
	// of their own (no KCIDB id in common).
	again, err := pipeline.Run(context.Background(), pipeline.Options{Root: root, Cache: c, Lock: l, Kernels: names[:1]})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range again.Kernels[0].Stages {
		if !s.Reused && (strings.HasPrefix(s.Name, "build") || strings.HasPrefix(s.Name, "boot") || s.Name == "check") {
			t.Errorf("second run redid %s (%s)", s.Name, s.Redone)
		}
	}
	dir2 := t.TempDir()
	if _, err := report.WriteWith(dir2, again, report.Options{Version: "test", Root: root, Cache: c.Dir}); err != nil {
		t.Fatal(err)
	}
	first := map[string]bool{}
	for _, id := range reportcheck.KCIDBIDs(t, filepath.Join(dir, "kcidb.json")) {
		first[id] = true
	}
	for _, id := range reportcheck.KCIDBIDs(t, filepath.Join(dir2, "kcidb.json")) {
		if first[id] {
			t.Errorf("KCIDB id %s in both runs' reports: a second submission would merge into the first", id)
		}
	}
}

// editedRoot copies the repository and edits one line of seed 000 (the
// wording of an added comment line), then regenerates series/6.12 as a
// user would (patchctl refresh).
func editedRoot(t testing.TB, src, dst string, variant int) {
	copyTree(t, src, dst)
	p := filepath.Join(dst, "patches/nvme-rdma-inline-capsule/000_97dfe90d7f7f5563.txt")
	b, _ := os.ReadFile(p)
	words := []string{"+\t * address, so point the SGE at qe->data.", "+\t * address, so make the SGE point at qe->data."}
	s := strings.Replace(string(b), words[0], words[variant%2], 1)
	if s == string(b) && variant%2 == 1 {
		t.Fatal("the edit did not apply")
	}
	os.WriteFile(p, []byte(s), 0o644)
	_, pristine := testenv.Kernel(t, testkernel.Default)
	plan, err := apply.LoadPlan(dst, testkernel.Default, "")
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

// copyTree copies the repository (without .git and outputs).
func copyTree(t testing.TB, src, dst string) {
	filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() && (rel == ".git" || rel == "out" || rel == "bin") {
			return filepath.SkipDir
		}
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

// BenchmarkRunWarmAfterEdit: a run of 6.12 after a one-line change to a
// patch (target ≤ 30 s): apply, check, the patched build (incremental) and
// the patched boot are redone, the baseline is reused.
func BenchmarkRunWarmAfterEdit(b *testing.B) {
	src := testenv.RepoRoot(b)
	c := testenv.Cache()
	kbuild.Exclusive(b, testkernel.Default)
	cpu := testenv.MeasureCPU(b)
	defer cpu.Report()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		cpu.Stop()
		root := b.TempDir()
		editedRoot(b, src, root, i+1)
		cpu.Start()
		b.StartTimer()
		res, err := pipeline.Run(context.Background(), pipeline.Options{Root: root, Cache: c, Lock: lock(b, root), Kernels: []string{testkernel.Default}})
		if err != nil || res.Verdict != vocab.Pass {
			var sum strings.Builder
			if res != nil {
				report.Summary(&sum, res)
			}
			b.Fatalf("%v\n%s", err, sum.String())
		}
		for _, s := range res.Kernels[0].Stages {
			if s.Name == "build-baseline" && !s.Reused {
				b.Error("the baseline build was redone for a patch edit")
			}
		}
	}
}

// BenchmarkRunCold: one kernel from an empty cache (downloads, cold
// builds: about 10 minutes here). Only with PATCHCTL_BENCH_COLD=1.
func BenchmarkRunCold(b *testing.B) {
	if os.Getenv("PATCHCTL_BENCH_COLD") == "" {
		b.Skip("set PATCHCTL_BENCH_COLD=1: a cold run takes about 10 minutes")
	}
	root := testenv.RepoRoot(b)
	cpu := testenv.MeasureCPU(b)
	defer cpu.Report()
	for b.Loop() {
		b.StopTimer()
		cpu.Stop()
		c := &tree.Cache{Dir: b.TempDir()}
		cpu.Start()
		b.StartTimer()
		res, err := pipeline.Run(context.Background(), pipeline.Options{Root: root, Cache: c, Lock: lock(b, root), Kernels: []string{testkernel.Default}})
		if err != nil || res.Verdict != vocab.Pass {
			b.Fatalf("%v %+v", err, res)
		}
	}
}
