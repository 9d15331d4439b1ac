package build

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// TestCompileErrorGolden: a failed build's error keeps gcc's context
// (In file included from, In function), the first error with its source
// excerpt and its notes (note: declared here), the next errors with
// theirs, make's Error lines, and none of the warnings between them.
// testdata/gcc-failure.log is gcc 12's output on a file with two kinds
// of error and warnings, inside kbuild's quiet lines.
func TestCompileErrorGolden(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "gcc-failure.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var d diagnostics
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		d.add(l, errorLine.MatchString(l) || strings.HasPrefix(l, "make") && strings.Contains(l, "Error "))
	}
	got := (&CompileError{First: d.lines, Log: "build.log"}).Error() + "\n"
	golden := filepath.Join("testdata", "gcc-failure.golden")
	if *update {
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("compile error text:\n%s\nwant (%s):\n%s", got, golden, want)
	}
	for _, s := range []string{"note: declared here", "In function 'main_fn'", "   8 |         return helper(1);"} {
		if !strings.Contains(got, s) {
			t.Errorf("lost %q", s)
		}
	}
	if strings.Contains(got, "warning:") {
		t.Errorf("a warning between the errors was kept:\n%s", got)
	}
}
