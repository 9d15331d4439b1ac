package vocab

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// words are the vocabulary's words: spelled here, and nowhere else in
// the module's code.
var words = map[string]bool{Pass: true, Fail: true, Error: true, Skip: true, Done: true,
	Baseline: true, Patched: true, RXE: true, SIW: true, DMAFaithful: true, DMAPlain: true}

// allowed are the bare literals that spell another vocabulary's word,
// by file (relative to the module's root) and word, with the reason.
var allowed = map[string]string{
	"checks/engine/cfg.go ERROR":               "tree-sitter's error node type",
	"checks/checkpatch.go ERROR":               "checkpatch.pl's severity word",
	"internal/report/b4.go ERROR":              "checkpatch.pl's severity word, as b4 reads it",
	"internal/ktap/ktap.go SKIP":               "a KTAP directive",
	"internal/ktap/ktap.go ERROR":              "a KTAP directive",
	"internal/report/junit.go ERROR":           "a KTAP directive",
	"internal/pipeline/checkstage.go baseline": "a field of the check stage's key (the --baseline tree)",
	"checks/findings/output.go baseline":       "SARIF's run property name",
	"cmd/patchctl/check.go baseline":           "the check verb's --baseline flag (a tree, not a variant)",
	"internal/guestconf/guestconf.go siw":      "the kernel module's name (siw.ko)",
}

// bareWords lists, in the non-test Go files under root, every string
// literal that is a vocabulary word and not allowed, as "file:line word".
func bareWords(t *testing.T, root string, allowed map[string]string) []string {
	t.Helper()
	var bad []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "internal/vocab/") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field: // struct tags are JSON's and YAML's names
				n.Tag = nil
			case *ast.ImportSpec:
				return false
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(n.Value)
				if err != nil || !words[s] {
					return true
				}
				if _, ok := allowed[rel+" "+s]; ok {
					return true
				}
				bad = append(bad, fmt.Sprintf("%s:%d %q", rel, fset.Position(n.Pos()).Line, s))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(bad)
	return bad
}

// TestNoBareWords keeps the vocabulary in one place: a status, variant
// or transport spelled as a bare string outside this package is a second
// definition that a change to the vocabulary would miss.
func TestNoBareWords(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module's root: %v", err)
	}
	if bad := bareWords(t, root, allowed); len(bad) > 0 {
		t.Errorf("%d bare vocabulary words outside internal/vocab (use vocab.Pass, vocab.Patched, vocab.DefaultTransports(), ...; or add a justified entry to allowed):\n%s", len(bad), strings.Join(bad, "\n"))
	}
	for k := range allowed {
		file := strings.Fields(k)[0]
		if _, err := os.Stat(filepath.Join(root, file)); err != nil {
			t.Errorf("allowed names %s, which is gone: drop the entry", file)
		}
	}
}

// TestBareWordsFound checks the walk on a fixture: a bare word in code
// is found; tags, imports, tests, other words and allowed ones are not.
func TestBareWordsFound(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/a.go", "package a\n\ntype T struct {\n\tX string `json:\"patched\"`\n}\n\nvar v = map[string]int{\"rxe\": 1}\n\nfunc f(s string) bool { return s == \"PASS\" || s == \"pass\" }\n")
	write("a/a_test.go", "package a\n\nvar w = \"FAIL\"\n")
	write("b/b.go", "package b\n\nvar ok = \"baseline\"\n")
	write("testdata/c.go", "package c\n\nvar x = \"siw\"\n")
	got := bareWords(t, dir, map[string]string{"b/b.go baseline": "fixture"})
	want := []string{`a/a.go:7 "rxe"`, `a/a.go:9 "PASS"`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("found %q, want %q", got, want)
	}
}

func TestParsers(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		ok   bool
	}{{"", "rxe,siw", true}, {"all", "rxe,siw", true}, {"siw", "siw", true}, {"rxe", "rxe", true}, {"RXE", "", false}, {"iwarp", "", false}} {
		got, err := ParseTransports(c.in)
		if (err == nil) != c.ok || strings.Join(got, ",") != c.want {
			t.Errorf("ParseTransports(%q) = %v, %v", c.in, got, err)
		}
	}
	a := DefaultTransports()
	a[0] = "x"
	if DefaultTransports()[0] != RXE {
		t.Error("DefaultTransports shares its slice")
	}
	for in, want := range map[string]string{"": FromSource, "source": FromSource, "distro": FromDistro, "debian": ""} {
		got, err := ParseKernelFrom(in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("ParseKernelFrom(%q) = %q, %v", in, got, err)
		}
	}
	for in, want := range map[string]string{"": "", "auto": "", "tcg": "tcg", "tcg-multi": "tcg-multi", "kvm": "kvm"} {
		if got, err := ParseAccel(in); err != nil || got != want {
			t.Errorf("ParseAccel(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseAccel("hvf"); err == nil {
		t.Error("an unknown accelerator was accepted")
	}
	for in, want := range map[string]string{"": Patched, "patched": Patched, "baseline": Baseline, "both": ""} {
		got, err := ParseVariant(in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("ParseVariant(%q) = %q, %v", in, got, err)
		}
	}
}
