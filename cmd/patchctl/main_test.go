package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/stagecache"
	"github.com/patchctl/patchctl/internal/tree"
)

// TestMain lets these tests key the stages they run by patchctl's sources,
// as patchctl itself does (stagecache.CodeKey): what `make run` made is
// then reused here, and what these tests made by patchctl. That holds
// while a test has changed nothing the stages run with: the environment
// is as the binary started (a test's fakes come first in PATH, its
// caches through PATCHCTL_CACHE and HOME), and the one hook of a stage
// these tests set is unset. TestTestsSetNoStageState keeps that list
// whole. A stage run otherwise is keyed by this binary, its records its
// own.
func TestMain(m *testing.M) {
	start := environ()
	stagecache.ShareCodeInTests(func() bool {
		return tree.TestHookBeforeRename == nil && slices.Equal(environ(), start)
	})
	os.Exit(m.Run())
}

// environ is the environment, sorted.
func environ() []string {
	e := os.Environ()
	slices.Sort(e)
	return e
}

// stageHooks are the package state of other packages these tests may
// set: TestMain's condition checks each.
var stageHooks = map[string]bool{"tree.TestHookBeforeRename": true}

// TestTestsSetNoStageState: no test of this package writes a variable of
// another package (an assignment, ++ or --, its address taken) other than
// those TestMain checks, nor a variable of this package's own code (which
// the verbs read). The stages these tests run share records with
// patchctl's, so a test's change to what they run with must be one
// TestMain sees.
func TestTestsSetNoStageState(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]bool{} // this package's variables, from its code
	var tests []*ast.File
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, "_test.go") {
			tests = append(tests, af)
			continue
		}
		for _, d := range af.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						own[n.Name] = true
					}
				}
			}
		}
	}
	if len(own) == 0 || len(tests) < 10 {
		t.Fatalf("read %d variables of the code and %d test files: the package is not where the test runs", len(own), len(tests))
	}
	written := 0
	for _, af := range tests {
		imports := map[string]bool{}
		for _, is := range af.Imports {
			p, _ := strconv.Unquote(is.Path.Value)
			name := filepath.Base(p)
			if is.Name != nil {
				name = is.Name.Name
			}
			imports[name] = true
		}
		check := func(e ast.Expr) {
			written++
			root, sel := rootOf(e)
			switch {
			case root == nil:
			case sel != "" && imports[root.Name] && root.Obj == nil:
				if !stageHooks[root.Name+"."+sel] {
					t.Errorf("%s writes %s.%s, another package's state: stages these tests run share records with patchctl's (TestMain); check it in TestMain and stageHooks", fset.Position(e.Pos()), root.Name, sel)
				}
			case root.Obj == nil && own[root.Name]:
				t.Errorf("%s writes %s, a variable of patchctl's own code: stages these tests run share records with patchctl's (TestMain)", fset.Position(e.Pos()), root.Name)
			}
		}
		ast.Inspect(af, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				if n.Tok != token.DEFINE {
					for _, l := range n.Lhs {
						check(l)
					}
				}
			case *ast.IncDecStmt:
				check(n.X)
			case *ast.UnaryExpr:
				if n.Op == token.AND {
					check(n.X)
				}
			}
			return true
		})
	}
	if written == 0 {
		t.Fatal("found no write at all in the tests: the walk is broken")
	}
}

// rootOf is the identifier an expression that is written starts from, and
// the name selected from it first (pkg.Var[i].f: pkg and Var).
func rootOf(e ast.Expr) (*ast.Ident, string) {
	sel := ""
	for {
		switch x := e.(type) {
		case *ast.Ident:
			return x, sel
		case *ast.SelectorExpr:
			sel = x.Sel.Name
			e = x.X
		case *ast.IndexExpr:
			e, sel = x.X, ""
		case *ast.IndexListExpr:
			e, sel = x.X, ""
		case *ast.StarExpr:
			e, sel = x.X, ""
		case *ast.ParenExpr:
			e = x.X
		default:
			return nil, ""
		}
	}
}

// TestStagesKeyedBySourcesWhileUnchanged: in this binary the stages are
// keyed by patchctl's sources, as in patchctl, until a test changes the
// environment or sets the stage's hook; then by this binary.
func TestStagesKeyedBySourcesWhileUnchanged(t *testing.T) {
	src, err := stagecache.SourceKey()
	if err != nil {
		t.Fatal(err)
	}
	self, err := stagecache.Self()
	if err != nil {
		t.Fatal(err)
	}
	key := func() string {
		k, err := stagecache.CodeKey()
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	if k := key(); k != src {
		t.Fatalf("CodeKey() = %s, want the sources' %s", k, src)
	}
	t.Run("environment", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir()+string(os.PathListSeparator)+os.Getenv("PATH"))
		if k := key(); k != self {
			t.Errorf("with PATH changed, CodeKey() = %s, want the binary's %s", k, self)
		}
	})
	t.Run("hook", func(t *testing.T) {
		tree.TestHookBeforeRename = func(int, string) error { return nil }
		defer func() { tree.TestHookBeforeRename = nil }()
		if k := key(); k != self {
			t.Errorf("with the hook set, CodeKey() = %s, want the binary's %s", k, self)
		}
	})
	if k := key(); k != src {
		t.Errorf("after the tests restored what they changed, CodeKey() = %s, want the sources' %s", k, src)
	}
}
