package defects

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/tree"
)

// TestLoadReportsRefuses: a known report needs an id (once), a version
// range, what it is and what upstream knows, and at least two match
// strings, none blank (a bare kind would hide every report of it).
func TestLoadReportsRefuses(t *testing.T) {
	ok := "  - id: a\n    from: \"6.1\"\n    match: [circular locking, sem_a]\n    defect: d\n    upstream: u\n"
	for _, bad := range []string{
		"reports:\n  - id: a\n    from: six\n    match: [x, y]\n    defect: d\n    upstream: u\n",
		"reports:\n  - id: a\n    from: \"6.1\"\n    match: [circular locking]\n    defect: d\n    upstream: u\n",
		"reports:\n  - id: a\n    from: \"6.1\"\n    match: [circular locking, \" \"]\n    defect: d\n    upstream: u\n",
		"reports:\n  - id: a\n    from: \"6.1\"\n    match: [x, y]\n    defect: d\n",
		"reports:\n  - from: \"6.1\"\n    match: [x, y]\n    defect: d\n    upstream: u\n",
		"reports:\n" + ok + ok,
		"reports:\n  - id: a\n    from: \"6.1\"\n    fixed: later\n    match: [x, y]\n    defect: d\n    upstream: u\n",
		"reports:\n  - id: a\n    form: \"6.1\"\n",
	} {
		p := filepath.Join(t.TempDir(), "r.yaml")
		os.WriteFile(p, []byte(bad), 0o644)
		if _, err := LoadReports(p); !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "r.yaml:") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	p := filepath.Join(t.TempDir(), "r.yaml")
	os.WriteFile(p, []byte("reports:\n"+ok), 0o644)
	tb, err := LoadReports(p)
	if err != nil || len(tb.Reports) != 1 {
		t.Fatalf("%v %v", tb, err)
	}
	if tb, err := LoadReports(filepath.Join(t.TempDir(), "none.yaml")); err != nil || len(tb.Reports) != 0 {
		t.Errorf("missing table: %v %v", tb, err)
	}
}

// TestReportsMatchRange: a report from 9.4 fixed in 9.10 is known on the
// kernels in that range only.
func TestReportsMatchRange(t *testing.T) {
	tb := &Reports{Reports: []Report{{ID: "a", From: "9.4", Fixed: "9.10", Match: []string{"x", "y"}, Defect: "d", Upstream: "u"}}}
	for in, want := range map[string]int{"9.3.9": 0, "9.4": 1, "9.9.12": 1, "9.10.0-rc1": 0, "10.1": 0} {
		v, _ := ParseVersion(in)
		if got := len(tb.Match(v)); got != want {
			t.Errorf("%s: %d known reports, want %d", in, got, want)
		}
	}
}

// TestRealReports: the repository's table loads and every entry covers
// at least one pinned kernel (an entry no kernel here can meet is dead).
func TestRealReports(t *testing.T) {
	tb, err := LoadReports(ReportsPath(filepath.Join("..", "..")))
	if err != nil {
		t.Fatal(err)
	}
	l, err := tree.LoadLock(filepath.Join("..", "..", "series", "kernels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tb.Reports {
		n := 0
		for _, k := range l.Kernels {
			v, err := ParseVersion(k.Name)
			if err != nil {
				t.Fatal(err)
			}
			n += len((&Reports{Reports: []Report{r}}).Match(v))
		}
		if n == 0 {
			t.Errorf("known report %s covers no pinned kernel", r.ID)
		}
	}
}
