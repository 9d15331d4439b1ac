package testkernel_test

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/tree"
)

// TestDefaultIsTheLocks: the constant is series/kernels.yaml's default.
func TestDefaultIsTheLocks(t *testing.T) {
	root := testenv.RepoRoot(t)
	lock, err := tree.LoadLock(filepath.Join(root, "series", "kernels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if lock.Default != testkernel.Default {
		t.Errorf("series/kernels.yaml's default is %q, testkernel.Default %q: change the constant with the lock", lock.Default, testkernel.Default)
	}
	if _, err := lock.Find(testkernel.Default); err != nil {
		t.Errorf("testkernel.Default: %v", err)
	}
}

// bareDefaults are the string literals equal to the default kernel in a
// Go test file's source, as "file:line", except those whose line or the
// line above has a comment saying the version is meant ("6.12 itself").
func bareDefaults(name string, src []byte) []string {
	mark := testkernel.Default + " itself"
	fset := token.NewFileSet()
	file := fset.AddFile(name, -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, scanner.ScanComments)
	marked := map[int]bool{} // lines with the mark in a comment
	var hits []token.Position
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		switch tok {
		case token.COMMENT:
			if strings.Contains(lit, mark) {
				// A comment's mark covers its lines and the next.
				start, end := fset.Position(pos).Line, fset.Position(pos+token.Pos(len(lit))).Line
				for l := start; l <= end+1; l++ {
					marked[l] = true
				}
			}
		case token.STRING:
			if v, err := strconv.Unquote(lit); err == nil && v == testkernel.Default {
				hits = append(hits, fset.Position(pos))
			}
		}
	}
	var out []string
	for _, p := range hits {
		if !marked[p.Line] {
			out = append(out, p.String())
		}
	}
	return out
}

// TestNoBareDefault: no test writes the default kernel's version as a
// bare string: testkernel.Default says "the default kernel", and a test
// about the version itself says so ("6.12 itself" in a comment).
func TestNoBareDefault(t *testing.T) {
	root := testenv.RepoRoot(t)
	var bare []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "out" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		bare = append(bare, bareDefaults(rel, src)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bare {
		t.Errorf("%s: a bare %q: write testkernel.Default for the default kernel, or say \"%s itself\" in a comment when the test is about that version", b, testkernel.Default, testkernel.Default)
	}
}

// TestBareDefaultsSeen: the scanner finds a bare default and honours
// the mark on the line and on the line above, and only there.
func TestBareDefaultsSeen(t *testing.T) {
	q := strconv.Quote(testkernel.Default)
	src := "package x\n" +
		"var a = " + q + "\n" + // 2: bare
		"var b = " + q + " // " + testkernel.Default + " itself: its layout\n" + // 3: marked
		"// " + testkernel.Default + " itself: a recorded trace\n" +
		"var c = " + q + "\n" + // 5: marked from above
		"\n" +
		"var d = " + q + "\n" + // 7: bare again
		"var e = `" + testkernel.Default + "` + \"" + testkernel.Default + ".117\"\n" // raw string: a literal too
	got := bareDefaults("x_test.go", []byte(src))
	want := []string{"x_test.go:2:9", "x_test.go:7:9", "x_test.go:8:9"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %v, want %v", got, want)
	}
}
