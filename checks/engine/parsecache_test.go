package engine

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// A file whose module's macros were expanded is parsed once per content
// and uses (a warm check re-reads the whole scope), and a change of
// either parses it anew with its own uses.
func TestParseCachedMacroUses(t *testing.T) {
	src := []byte("void f(struct ib_send_wr *wr) { wr->send_flags = 1; }\n")
	uses := map[int]macroUse{32: {Name: "SET_FLAGS", File: "drivers/x/x.h", Line: 3}}
	a := parseCached("drivers/x/a.c", src, uses)
	b := parseCached("drivers/x/a.c", src, map[int]macroUse{32: {Name: "SET_FLAGS", File: "drivers/x/x.h", Line: 3}})
	if a != b {
		t.Fatal("the same content and macro uses were parsed twice")
	}
	c := parseCached("drivers/x/a.c", src, map[int]macroUse{32: {Name: "SET_FLAGS", File: "drivers/x/x.h", Line: 4}})
	if c == a || c.Macros[32].Line != 4 || a.Macros[32].Line != 3 {
		t.Fatalf("another definition's use was served from the cache: %+v", c.Macros)
	}
	d := parseCached("drivers/x/a.c", src, nil)
	if d == a || len(d.Macros) != 0 {
		t.Fatalf("a file without macro uses was served one with uses: %+v", d.Macros)
	}
}

// TestParsedTreesAreFreed: a file made by Parse is its caller's and Close
// frees its tree (once; a second Close is nothing); a file of the parse
// cache is shared and Close leaves it. Several goroutines parsing the same
// content get the one cached file, and the trees of the others are freed.
// A layout database frees the trees of the headers it parsed. OpenTrees
// counts what is left.
func TestParsedTreesAreFreed(t *testing.T) {
	open := OpenTrees()
	f := Parse("x.c", []byte("int f(void) { return 1; }\n"))
	if OpenTrees() != open+1 {
		t.Fatalf("Parse: %d open trees, want %d", OpenTrees(), open+1)
	}
	if f.Cached() {
		t.Error("a file made by Parse says it is the cache's")
	}
	f.Close()
	f.Close()
	if f.Tree != nil || OpenTrees() != open {
		t.Fatalf("after Close: tree %v, %d open trees, want %d", f.Tree, OpenTrees(), open)
	}

	// Long enough that the parses overlap once the goroutines start
	// together, so some lose the race to the cache.
	src := []byte("/* TestParsedTreesAreFreed */\n" + strings.Repeat("static int g(int x) { if (x > 2) return x * 3; return g(x + 1); }\n", 2000))
	got := make([]*File, 8)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); <-start; got[i] = parseCached("drivers/x/g.c", src, nil) }()
	}
	close(start)
	wg.Wait()
	for _, g := range got {
		if g != got[0] || !g.Cached() || g.Tree == nil {
			t.Fatalf("parseCached from 8 goroutines: %p cached %v tree %v, want the one cached file %p", g, g.Cached(), g.Tree, got[0])
		}
	}
	got[0].Close()
	if got[0].Tree == nil || len(Functions(got[0])) != 2000 {
		t.Fatal("Close freed the tree of a cached file, which every check of that content shares")
	}
	if OpenTrees() != open {
		t.Fatalf("after the cached parses: %d open trees, want %d (the trees the cache did not keep were not freed)", OpenTrees(), open)
	}

	tree := t.TempDir()
	h := filepath.Join(tree, "include", "linux", "x.h")
	os.MkdirAll(filepath.Dir(h), 0o755)
	os.WriteFile(h, []byte("struct wanted { int a; long b; };\n"), 0o644)
	db, err := LoadLayouts(tree, []string{"include/linux"}, "wanted")
	if err != nil {
		t.Fatal(err)
	}
	if s, _, err := db.Sizeof("struct wanted", 0); err != nil || s != 16 {
		t.Fatalf("sizeof(struct wanted) = %d (%v), want 16", s, err)
	}
	if OpenTrees() != open+1 {
		t.Fatalf("the layouts hold %d trees, want 1 (the header)", OpenTrees()-open)
	}
	db.Close()
	if OpenTrees() != open {
		t.Fatalf("after the layouts' Close: %d open trees, want %d", OpenTrees(), open)
	}
}

// TestFunctionsKeptWithTheFile: a file's function definitions are walked
// once and shared by every caller, from several goroutines at once; the
// list is what a walk of the tree finds, in the source's order (nested
// declarations are not definitions), and an append to it copies instead
// of writing into the list the others read.
func TestFunctionsKeptWithTheFile(t *testing.T) {
	src := []byte("/* TestFunctionsKeptWithTheFile */\nstatic int a(void) { return 1; }\nint b;\nstruct s { int (*c)(void); };\nvoid d(int x) { if (x) a(); }\nint e(void);\nint f(void) { return 0; }\n")
	file := parseCached("drivers/x/funcs.c", src, nil)
	lists := make([][]string, 8)
	var wg sync.WaitGroup
	for i := range lists {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, fn := range Functions(file) {
				lists[i] = append(lists[i], file.Text(fn.ChildByFieldName("declarator")))
			}
		}()
	}
	wg.Wait()
	want := []string{"a(void)", "d(int x)", "f(void)"}
	for i, got := range lists {
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("goroutine %d: %q, want %q", i, got, want)
		}
	}
	// A walk of the tree, anew.
	var walked int
	Walk(file.Tree.RootNode(), func(n *sitter.Node) bool {
		if KindOf(n) == "function_definition" {
			walked++
			return false
		}
		return true
	})
	first := Functions(file)
	if walked != len(first) {
		t.Fatalf("Functions lists %d definitions, a walk finds %d", len(first), walked)
	}
	if again := Functions(file); &again[0] != &first[0] {
		t.Error("the second call walked the tree again: the list is not kept with the file")
	}
	grown := append(Functions(file), nil)
	if &grown[0] == &first[0] || len(Functions(file)) != 3 {
		t.Error("an append to the list wrote into the one the others share")
	}
}
