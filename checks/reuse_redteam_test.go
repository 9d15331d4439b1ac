package checks

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/patchctl/patchctl/checks/engine"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// The tests below try to make a reused report differ from a fresh
// analysis's (docs/checks.md, "What reuse was tested against").

// rtWrite writes files (relative to tree) for a test.
func rtWrite(t *testing.T, tree string, files map[string]string) {
	t.Helper()
	for rel, src := range files {
		p := filepath.Join(tree, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func rtRun(t *testing.T, o Options) *Report {
	t.Helper()
	rep, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// rtDiff names the first field in which two reports differ, byte for
// byte (reflect, not JSON: an encoding must not hide a difference), an
// empty list and none counting the same.
func rtDiff(a, b *Report) string {
	for _, c := range []struct {
		name string
		x, y any
	}{
		{"findings", a.Findings, b.Findings}, {"providers", a.Providers, b.Providers}, {"layouts", a.Layouts, b.Layouts},
		{"inline users", a.Inline, b.Inline}, {"files", a.Files, b.Files}, {"functions", a.Functions, b.Functions},
		{"linked incomplete", a.LinkedIncomplete, b.LinkedIncomplete}, {"analysis", a.Analysis, b.Analysis},
	} {
		if !sameValue(reflect.ValueOf(c.x), reflect.ValueOf(c.y)) {
			return fmt.Sprintf("%s: %+v != %+v", c.name, c.x, c.y)
		}
	}
	return ""
}

// rtFresh is a fresh analysis of o (no cache).
func rtFresh(t *testing.T, o Options) *Report {
	t.Helper()
	o.Cache, o.Code = "", ""
	return rtRun(t, o)
}

// TestReuseEqualsFreshOnEveryCase: on a tree holding every case of
// testdata (each its own module) and a provider whose limit is written
// with a byte that is not UTF-8, a report kept and reused equals a fresh
// analysis's in every field, and two fresh analyses agree (nothing in the
// output depends on map order or timing).
func TestReuseEqualsFreshOnEveryCase(t *testing.T) {
	tree := t.TempDir()
	files := map[string]string{}
	ents, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".c")
		if !ok || e.IsDir() || testing.Short() && i%3 != 0 {
			continue // -short: one case in three
		}
		dir := "drivers/infiniband/ulp/" + name
		if strings.HasPrefix(name, "bounds_") {
			dir = "drivers/nvme/target/" + name
		}
		files[dir+"/"+name+".c"] = readCase(t, e.Name())
	}
	rtWrite(t, tree, files)
	opts := Options{Tree: tree, Paths: []string{"drivers/infiniband", "drivers/nvme"}, Cache: filepath.Join(t.TempDir(), "checks"), Code: "c1"}
	fresh := rtFresh(t, opts)
	if len(fresh.Findings) < 20 {
		t.Fatalf("%d findings on the cases: the tree is not what the test means", len(fresh.Findings))
	}
	kept := rtRun(t, opts) // a fresh analysis too: two must agree
	reused := rtRun(t, opts)
	if kept.Reused || !reused.Reused {
		t.Fatalf("kept run reused %v, second run reused %v (want false, true)", kept.Reused, reused.Reused)
	}
	for name, r := range map[string]*Report{"the run that kept the report": kept, "the reused report": reused} {
		if d := rtDiff(fresh, r); d != "" {
			t.Errorf("%s differs from a fresh analysis: %s", name, d)
		}
	}

	// A provider's limit quoted with a byte JSON cannot carry.
	tree = t.TempDir()
	opts.Tree = tree
	rtWrite(t, tree, map[string]string{"drivers/infiniband/ulp/tcase/m.c": readCase(t, "addr_cast_bug.c")})
	rtWrite(t, tree, map[string]string{"drivers/infiniband/hw/lat/lat.c": "int lat_create_qp(struct ib_qp_init_attr *init_attr)\n{\n" +
		"\tif (init_attr->cap.max_inline_data > sizeof(\"caf\xe9\"))\n\t\treturn -EINVAL;\n" +
		"\tinit_attr->cap.max_inline_data = 64;\n\treturn 0;\n}\n"})
	fresh = rtFresh(t, opts)
	if !strings.Contains(fmt.Sprint(fresh.Providers), "caf\xe9") {
		t.Fatalf("the provider's limit is not quoted as written: %v", fresh.Providers)
	}
	rtRun(t, opts)
	if r := rtRun(t, opts); r.Reused {
		if d := rtDiff(fresh, r); d != "" {
			t.Errorf("a report with a byte that is not UTF-8, reused, differs from a fresh analysis: %s", d)
		}
	}
}

// TestReuseFileChangedWhileAnalysed: a file the analysis reads twice
// (a module's header: read with the scope, read again for a struct's
// layout) and changed between the two reads. The report then drew on
// both contents; it must not be reused for the second, whose fresh
// analysis differs.
func TestReuseFileChangedWhileAnalysed(t *testing.T) {
	tree := t.TempDir()
	mod := "drivers/infiniband/ulp/tcase"
	rtWrite(t, tree, map[string]string{
		mod + "/m.c": readCase(t, "grant_restatesizeof_bug.c"),
		mod + "/m.h": "#define TCASE_DEPTH 4\n",
	})
	// The header as it is after the change: it sets the flag itself,
	// wrongly (a finding of its own in a fresh analysis).
	changed := "#define TCASE_DEPTH 4\n" + readCase(t, "addr_cast_bug.c")
	opts := Options{Tree: tree, Paths: []string{mod}, Cache: filepath.Join(t.TempDir(), "checks"), Code: "c1"}
	var once sync.Once
	traceFn = func(*engine.File, string, time.Duration, *engine.Interp) {
		once.Do(func() { rtWrite(t, tree, map[string]string{mod + "/m.h": changed}) })
	}
	first := rtRun(t, opts)
	traceFn = nil
	if first.Reused {
		t.Fatal("the first run was reused")
	}
	fresh := rtFresh(t, opts)
	again := rtRun(t, opts)
	if d := rtDiff(fresh, again); d != "" {
		t.Errorf("after a file changed between two reads of one analysis, the next run (reused %v) differs from a fresh one: %s", again.Reused, d)
	}
}

// TestReuseRelativeTree: a tree named relative to the working folder is
// reused like an absolute one (Verify re-reads what was read: a glob's
// matches, made absolute).
func TestReuseRelativeTree(t *testing.T) {
	base := t.TempDir()
	mod := "drivers/infiniband/ulp/tcase"
	rtWrite(t, filepath.Join(base, "linux"), map[string]string{mod + "/m.c": readCase(t, "grant_restatesizeof_bug.c"), mod + "/m.h": "#define TCASE_DEPTH 4\n"})
	t.Chdir(base)
	opts := Options{Tree: "linux", Paths: []string{mod}, Cache: filepath.Join(t.TempDir(), "checks"), Code: "c1"}
	first := rtRun(t, opts)
	if len(first.Layouts) == 0 {
		t.Fatalf("no layout computed: the test means a glob of headers to be read (%+v)", first)
	}
	if r := rtRun(t, opts); !r.Reused {
		t.Error("a relative tree, nothing changed: not reused")
	}
}

// TestReuseCacheTrouble: a cache that cannot be written, damaged or
// foreign kept reports, stale temporary files: the check analyses and
// succeeds; the cache does not grow without bound; a report reused often
// is not the first pruned.
func TestReuseCacheTrouble(t *testing.T) {
	tree := t.TempDir()
	mod := "drivers/infiniband/ulp/tcase"
	rtWrite(t, tree, map[string]string{mod + "/m.c": readCase(t, "addr_cast_bug.c")})
	opts := Options{Tree: tree, Paths: []string{mod}, Code: "c1"}
	want := rtFresh(t, opts)

	t.Run("cache not writable", func(t *testing.T) {
		// A file where the folder should be: no report can be kept
		// (a read-only folder would not stop root).
		blocker := filepath.Join(t.TempDir(), "file")
		rtWrite(t, filepath.Dir(blocker), map[string]string{"file": "x"})
		o := opts
		o.Cache = filepath.Join(blocker, "checks")
		r, err := Run(o)
		if err != nil {
			t.Fatalf("a cache that cannot be written fails the check: %v", err)
		}
		if d := rtDiff(want, r); d != "" {
			t.Errorf("differs from a fresh analysis: %s", d)
		}
	})

	t.Run("damaged or foreign kept reports", func(t *testing.T) {
		o := opts
		o.Cache = t.TempDir()
		rtRun(t, o)
		key, _ := reuseKey(o)
		p := filepath.Join(o.Cache, key+".json")
		good, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for name, b := range map[string][]byte{
			"truncated":      good[:len(good)/2],
			"empty":          nil,
			"another format": []byte(strings.Replace(string(good), reuseFormat, "patchctl check report 0", 1)),
			"no reads":       []byte(`{"format":"` + reuseFormat + `","reads":{"files":{},"lists":{}},"report":{"findings":[]}}`),
			"null report":    []byte(`{"format":"` + reuseFormat + `","reads":` + mustReads(t, good) + `,"report":null}`),
			"a folder":       nil,
		} {
			os.RemoveAll(p)
			if name == "a folder" {
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Run(o)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if r.Reused {
				t.Errorf("%s: reused", name)
			}
			if d := rtDiff(want, r); d != "" {
				t.Errorf("%s: differs from a fresh analysis: %s", name, d)
			}
		}
	})

	t.Run("stale temporary files", func(t *testing.T) {
		o := opts
		o.Cache = t.TempDir()
		old := time.Now().Add(-3 * time.Hour)
		var stale []string
		for i := 0; i < 5; i++ {
			p := filepath.Join(o.Cache, fmt.Sprintf(".deadbeef.json.tmp-%d", i))
			if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
			stale = append(stale, p)
		}
		rtRun(t, o)
		for _, p := range stale {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s, left by a run that died hours ago, is still there", filepath.Base(p))
			}
		}
	})

	t.Run("a report reused often is kept", func(t *testing.T) {
		o := opts
		o.Cache = t.TempDir()
		rtRun(t, o)
		key, _ := reuseKey(o)
		mine := filepath.Join(o.Cache, key+".json")
		long := time.Now().Add(-2 * time.Hour)
		if err := os.Chtimes(mine, long, long); err != nil {
			t.Fatal(err)
		}
		hour := time.Now().Add(-time.Hour)
		for i := 0; i < maxKept; i++ {
			p := filepath.Join(o.Cache, fmt.Sprintf("other%02d.json", i))
			if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, hour, hour); err != nil {
				t.Fatal(err)
			}
		}
		if r := rtRun(t, o); !r.Reused {
			t.Fatal("not reused")
		}
		other := o
		other.Code = "c2"
		rtRun(t, other) // keeps one more: the cache is pruned
		if ms, _ := filepath.Glob(filepath.Join(o.Cache, "*.json")); len(ms) > maxKept {
			t.Errorf("%d reports kept, more than %d", len(ms), maxKept)
		}
		if r := rtRun(t, o); !r.Reused {
			t.Error("the report just reused was pruned before reports never used")
		}
	})
}

func mustReads(t *testing.T, kept []byte) string {
	t.Helper()
	i := strings.Index(string(kept), `"reads":`)
	j := strings.Index(string(kept), `,"report":`)
	if i < 0 || j < i {
		t.Fatalf("kept report without reads: %.200s", kept)
	}
	return string(kept[i+len(`"reads":`) : j])
}

// TestReuseConcurrentRuns: runs of the same key at once, in one process
// (one shared set of recorders), all succeed and agree with a fresh
// analysis; the kept report is whole.
func TestReuseConcurrentRuns(t *testing.T) {
	tree := t.TempDir()
	mod := "drivers/infiniband/ulp/tcase"
	rtWrite(t, tree, map[string]string{mod + "/m.c": readCase(t, "addr_cast_bug.c"), mod + "/m.h": "#define TCASE_DEPTH 4\n"})
	opts := Options{Tree: tree, Paths: []string{mod}, Cache: filepath.Join(t.TempDir(), "checks"), Code: "c1"}
	want := rtFresh(t, opts)
	var wg sync.WaitGroup
	reps := make([]*Report, 6)
	errs := make([]error, len(reps))
	for i := range reps {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			reps[i], errs[i] = Run(opts)
		}(i)
	}
	wg.Wait()
	for i, r := range reps {
		if errs[i] != nil {
			t.Fatalf("run %d: %v", i, errs[i])
		}
		if d := rtDiff(want, r); d != "" {
			t.Errorf("run %d differs from a fresh analysis: %s", i, d)
		}
	}
	if r := rtRun(t, opts); !r.Reused || rtDiff(want, r) != "" {
		t.Errorf("after concurrent runs: reused %v, %s", r.Reused, rtDiff(want, r))
	}
	if tmps, _ := filepath.Glob(filepath.Join(opts.Cache, tempPattern)); len(tmps) > 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
}

// TestReuseFailedReadThenFile: a file the analysis tried to read and
// could not (an #include of the module's that is missing), added later,
// makes a new analysis; so does a symbolic link in the tree pointed
// elsewhere.
func TestReuseFailedReadThenFile(t *testing.T) {
	tree := t.TempDir()
	mod := "drivers/infiniband/ulp/tcase"
	src := "#include \"../defs.h\"\n" + readCase(t, "addr_cast_bug.c")
	rtWrite(t, tree, map[string]string{mod + "/m.c": src})
	opts := Options{Tree: tree, Paths: []string{mod}, Cache: filepath.Join(t.TempDir(), "checks"), Code: "c1"}
	rtRun(t, opts)
	if r := rtRun(t, opts); !r.Reused {
		t.Fatal("not reused")
	}
	// The missing header appears, outside the paths listed: the
	// recorded failed read sees it.
	rtWrite(t, tree, map[string]string{"drivers/infiniband/ulp/defs.h": "#define TC_FLAGS (IB_SEND_INLINE)\n"})
	if r := rtRun(t, opts); r.Reused {
		t.Error("a header the analysis failed to read now exists: reused")
	}
	// A symbolic link to a source, pointed at another one.
	other := filepath.Join(t.TempDir(), "elsewhere")
	rtWrite(t, other, map[string]string{"a.c": readCase(t, "addr_cast_bug.c"), "b.c": readCase(t, "addr_cast_ok.c")})
	link := filepath.Join(tree, mod, "l.c")
	if err := os.Symlink(filepath.Join(other, "a.c"), link); err != nil {
		t.Fatal(err)
	}
	rtRun(t, opts)
	if r := rtRun(t, opts); !r.Reused {
		t.Fatal("with a link: not reused")
	}
	os.Remove(link)
	if err := os.Symlink(filepath.Join(other, "b.c"), link); err != nil {
		t.Fatal(err)
	}
	r := rtRun(t, opts)
	if d := rtDiff(rtFresh(t, opts), r); r.Reused || d != "" {
		t.Errorf("a link pointed elsewhere: reused %v, %s", r.Reused, d)
	}
}

// TestReuseEqualsFreshOnKernel: on the default pinned kernel's pristine
// tree, the report kept and the report reused equal a fresh analysis's.
func TestReuseEqualsFreshOnKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three analyses of a whole tree")
	}
	_, dir := testenv.KernelIfTested(t, testkernel.Default)
	opts := Options{Tree: dir, Cache: t.TempDir(), Code: "TestReuseEqualsFreshOnKernel"}
	fresh := rtFresh(t, opts)
	kept := rtRun(t, opts)
	reused := rtRun(t, opts)
	if kept.Reused || !reused.Reused {
		t.Fatalf("kept run reused %v, second run reused %v (want false, true)", kept.Reused, reused.Reused)
	}
	for name, r := range map[string]*Report{"the run that kept the report": kept, "the reused report": reused} {
		if d := rtDiff(fresh, r); d != "" {
			t.Errorf("%s differs from a fresh analysis: %s", name, d)
		}
	}
}

// TestReadsConsistent: a recording in which one file, or one listing,
// read differently twice says so; reading the same twice is consistent.
func TestReadsConsistent(t *testing.T) {
	tree := t.TempDir()
	rtWrite(t, tree, map[string]string{"a/x.c": "one", "a/y.h": "h"})
	r := engine.Record()
	engine.LoadFiles(tree, []string{"a/x.c"})
	engine.LoadFiles(tree, []string{"a/x.c"})
	engine.ListC(tree, []string{"a"})
	if ok, what := r.Consistent(); !ok {
		t.Fatalf("the same read twice: inconsistent (%s)", what)
	}
	rtWrite(t, tree, map[string]string{"a/x.c": "two"})
	engine.LoadFiles(tree, []string{"a/x.c"})
	if ok, _ := r.Consistent(); ok {
		t.Error("a file read twice, changed between: consistent")
	}
	r.Stop()
	r = engine.Record()
	defer r.Stop()
	engine.ListC(tree, []string{"a"})
	rtWrite(t, tree, map[string]string{"a/z.c": "new"})
	engine.ListC(tree, []string{"a"})
	if ok, _ := r.Consistent(); ok {
		t.Error("a folder listed twice, a file added between: consistent")
	}
}
