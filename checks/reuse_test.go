package checks

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/checks/engine"
)

// TestReuse: a report is reused only while every file and folder the
// analysis read reads the same, for the same code, tree and paths; any
// change anywhere it looked (a file that decides nothing, a header, a
// new or removed file, a folder listed) analyses again, and the result
// is the fresh analysis's.
func TestReuse(t *testing.T) {
	tree := t.TempDir()
	cache := filepath.Join(t.TempDir(), "checks")
	dir := filepath.Join(tree, caseModule)
	write := func(rel, src string) {
		t.Helper()
		p := filepath.Join(tree, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bug, ok := readCase(t, "addr_cast_bug.c"), readCase(t, "addr_cast_ok.c")
	write(caseModule+"/m.c", bug)
	write(caseModule+"/other.c", "int unrelated(void) { return 0; }\n")
	write(caseModule+"/m.h", "#define TCASE_DEPTH 4\n")
	opts := Options{Tree: tree, Paths: []string{"drivers/infiniband"}, Cache: cache, Code: "code-1"}
	run := func(o Options) *Report {
		t.Helper()
		rep, err := Run(o)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	errors := func(r *Report) []string {
		var out []string
		for _, f := range r.Findings {
			out = append(out, f.String())
		}
		return out
	}
	first := run(opts)
	if first.Reused || len(first.Findings) == 0 {
		t.Fatalf("first run: reused %v, %d findings (want a fresh analysis that finds the bug)", first.Reused, len(first.Findings))
	}
	again := run(opts)
	if !again.Reused || !slices.Equal(errors(again), errors(first)) || again.Files != first.Files || again.Functions != first.Functions {
		t.Fatalf("second run, nothing changed: reused %v, findings %v (want reused, %v)", again.Reused, errors(again), errors(first))
	}
	for _, step := range []struct {
		name   string
		change func()
		opts   func(Options) Options
		found  bool // the fresh analysis still finds the bug
	}{
		{"a file that decides nothing changed", func() { write(caseModule+"/other.c", "int unrelated(void) { return 1; }\n") }, nil, true},
		{"a header changed", func() { write(caseModule+"/m.h", "#define TCASE_DEPTH 8\n") }, nil, true},
		{"a file added to a folder read", func() { write(caseModule+"/new.c", "int added(void) { return 0; }\n") }, nil, true},
		{"a file added elsewhere under the paths", func() { write("drivers/infiniband/hw/x/y.c", "int y;\n") }, nil, true},
		{"a file removed", func() { os.Remove(filepath.Join(dir, "new.c")) }, nil, true},
		{"the bug fixed", func() { write(caseModule+"/m.c", ok) }, nil, false},
		{"the bug back", func() { write(caseModule+"/m.c", bug) }, nil, true},
		{"other code", nil, func(o Options) Options { o.Code = "code-2"; return o }, true},
		{"other paths", nil, func(o Options) Options { o.Paths = []string{caseModule}; return o }, true},
	} {
		if step.change != nil {
			step.change()
		}
		o := opts
		if step.opts != nil {
			o = step.opts(o)
		}
		r := run(o)
		if r.Reused {
			t.Errorf("%s: the report was reused", step.name)
		}
		if got := len(r.Findings) > 0; got != step.found {
			t.Errorf("%s: findings %v, want the bug found: %v", step.name, errors(r), step.found)
		}
		if r2 := run(o); !r2.Reused || !slices.Equal(errors(r2), errors(r)) {
			t.Errorf("%s: the run after it: reused %v, findings %v (want reused, %v)", step.name, r2.Reused, errors(r2), errors(r))
		}
	}
	// A kept report that cannot be read is analysed anew, not an error.
	ents, _ := filepath.Glob(filepath.Join(cache, "*.json"))
	if len(ents) == 0 {
		t.Fatal("no report kept")
	}
	for _, e := range ents {
		if err := os.WriteFile(e, []byte("{not json"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r := run(opts); r.Reused || len(r.Findings) == 0 {
		t.Errorf("a damaged kept report: reused %v, %d findings", r.Reused, len(r.Findings))
	}
	// Never reused without Code.
	o := Options{Tree: tree, Paths: opts.Paths, Cache: cache}
	run(o)
	if r := run(o); r.Reused {
		t.Error("no code: reused")
	}
	if reusable(Options{Tree: tree, Cache: cache, Code: "code-1", Preprocessor: engine.NewPreprocessor(context.Background(), nil)}) {
		t.Error("a preprocessed analysis would be reused")
	}
}

// TestReadsRecordEveryListing: what a recorder holds is re-read by
// Verify the same way; a change to each kind of read is seen.
func TestReadsRecordEveryListing(t *testing.T) {
	tree := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tree, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"a/x.c", "a/b/y.h"} {
		if err := os.WriteFile(filepath.Join(tree, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := engine.Record()
	rels, err := engine.ListC(tree, []string{"a"})
	if err != nil || len(rels) != 2 {
		t.Fatalf("ListC: %v %v", rels, err)
	}
	engine.Glob(filepath.Join(tree, "a", "b", "*.h"))
	engine.ReadDirNames(filepath.Join(tree, "a"))
	if _, err := engine.LoadFiles(tree, rels); err != nil {
		t.Fatal(err)
	}
	r.Stop()
	if ok, what := r.Verify(); !ok {
		t.Fatalf("nothing changed, Verify says %s", what)
	}
	if len(r.Files) != 2 || len(r.Lists) != 3 {
		t.Fatalf("recorded %d files and %d listings, want 2 and 3: %v %v", len(r.Files), len(r.Lists), r.Files, r.Lists)
	}
	for _, c := range []struct {
		name   string
		change func() error
		undo   func() error
	}{
		{"content", func() error { return os.WriteFile(filepath.Join(tree, "a/x.c"), []byte("changed"), 0o644) },
			func() error { return os.WriteFile(filepath.Join(tree, "a/x.c"), []byte("a/x.c"), 0o644) }},
		{"a folder's entry", func() error { return os.Mkdir(filepath.Join(tree, "a", "c"), 0o755) },
			func() error { return os.Remove(filepath.Join(tree, "a", "c")) }},
		{"a glob's match", func() error { return os.WriteFile(filepath.Join(tree, "a/b/z.h"), nil, 0o644) },
			func() error { return os.Remove(filepath.Join(tree, "a/b/z.h")) }},
		{"a file read removed", func() error { return os.Rename(filepath.Join(tree, "a/b/y.h"), filepath.Join(tree, "y.h")) },
			func() error { return os.Rename(filepath.Join(tree, "y.h"), filepath.Join(tree, "a/b/y.h")) }},
	} {
		if err := c.change(); err != nil {
			t.Fatal(err)
		}
		if ok, _ := r.Verify(); ok {
			t.Errorf("%s changed, Verify says the same", c.name)
		}
		if err := c.undo(); err != nil {
			t.Fatal(err)
		}
		if ok, what := r.Verify(); !ok {
			t.Errorf("%s changed back, Verify says %s", c.name, what)
		}
	}
}

// TestReuseWithBuildDWARF: a check that reads a build's objects for
// their DWARF layouts is reused only while each object it read reads the
// same, in the same build folder; each report, reused or not, equals a
// fresh analysis's. The objects are compiled here with gcc -g.
func TestReuseWithBuildDWARF(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc to compile the objects whose DWARF is read (scripts/deps.sh installs it)")
	}
	tree := t.TempDir()
	mod := "drivers/infiniband/ulp/tcase"
	rtWrite(t, tree, map[string]string{mod + "/m.c": readCase(t, "grant_restatesizeof_bug.c")})
	// compile writes build/mod/m.o with struct gs_credit_ext holding
	// window[n]: 4 is the headers' layout, another count disagrees.
	compile := func(build string, n int) {
		t.Helper()
		src := filepath.Join(t.TempDir(), "m.c")
		c := "struct gs_credit { unsigned int seq, credits; } a;\n" +
			"struct gs_credit_ext { unsigned int seq, credits; unsigned long long window[" + string(rune('0'+n)) + "]; } b;\n"
		rtWrite(t, filepath.Dir(src), map[string]string{"m.c": c})
		obj := filepath.Join(build, mod, "m.o")
		if err := os.MkdirAll(filepath.Dir(obj), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("gcc", "-g", "-c", "-o", obj, src).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
	}
	dwarfOf := func(r *Report) int64 {
		for _, l := range r.Layouts {
			if l.Struct == "struct gs_credit_ext" {
				return l.DWARF
			}
		}
		return -1
	}
	mismatch := func(r *Report) bool {
		return slices.ContainsFunc(r.Findings, func(f Finding) bool { return strings.Contains(f.Message, "in the build's DWARF") })
	}
	b1, b2 := t.TempDir(), t.TempDir()
	opts := Options{Tree: tree, Paths: []string{mod}, BuildDir: b1, Cache: filepath.Join(t.TempDir(), "checks"), Code: "c1"}
	for _, step := range []struct {
		name     string
		change   func()
		opts     func(Options) Options
		dwarf    int64 // struct gs_credit_ext's size by DWARF; 0: no object read
		mismatch bool
	}{
		{"the object agrees", func() { compile(b1, 4) }, nil, 40, false},
		{"the object rebuilt, disagreeing", func() { compile(b1, 5) }, nil, 48, true},
		{"the object removed", func() { os.Remove(filepath.Join(b1, mod, "m.o")) }, nil, 0, false},
		{"the object back", func() { compile(b1, 4) }, nil, 40, false},
		{"another build folder", func() { compile(b2, 5) }, func(o Options) Options { o.BuildDir = b2; return o }, 48, true},
		{"no build folder", nil, func(o Options) Options { o.BuildDir = ""; return o }, 0, false},
	} {
		if step.change != nil {
			step.change()
		}
		o := opts
		if step.opts != nil {
			o = step.opts(o)
		}
		r := rtRun(t, o)
		if r.Reused {
			t.Errorf("%s: the report was reused", step.name)
		}
		fresh := rtFresh(t, o)
		if d := rtDiff(r, fresh); d != "" {
			t.Errorf("%s: differs from a fresh analysis: %s", step.name, d)
		}
		if got := dwarfOf(fresh); got != step.dwarf || mismatch(fresh) != step.mismatch {
			t.Errorf("%s: DWARF size %d, mismatch reported %v; want %d, %v", step.name, got, mismatch(fresh), step.dwarf, step.mismatch)
		}
		again := rtRun(t, o)
		if !again.Reused {
			t.Errorf("%s: nothing changed after it, not reused", step.name)
		}
		if d := rtDiff(again, fresh); d != "" {
			t.Errorf("%s: the reused report differs from a fresh analysis: %s", step.name, d)
		}
	}
	// An object written again with the same bytes (a build that rewrote
	// it, a copy) is the same input: reused, by content, not by time.
	obj := filepath.Join(b1, mod, "m.o")
	b, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	rtRun(t, opts)
	os.Remove(obj)
	rtWrite(t, filepath.Dir(obj), map[string]string{"m.o": string(b)})
	if r := rtRun(t, opts); !r.Reused || dwarfOf(r) != 40 {
		t.Errorf("the object rewritten with the same bytes: reused %v, DWARF size %d (want reused, 40)", r.Reused, dwarfOf(r))
	}
}
