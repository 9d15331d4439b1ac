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

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]Version{"6.4": {6, 4, 0}, "6.12.117": {6, 12, 117}, "7.3-rc7": {7, 3, 0}, "7.3.0-rc7": {7, 3, 0},
		"6.12.117-1~deb12u1": {6, 12, 117}, "7.3~rc7-1~exp1": {7, 3, 0}, "5.10.223-1": {5, 10, 223}} {
		if got, err := ParseVersion(in); err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "v6.4", "six", "6"} {
		if _, err := ParseVersion(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// TestAffectedRange: a fake defect from 9.4 to 9.10, backported to 9.6.30.
func TestAffectedRange(t *testing.T) {
	tb := &Table{Defects: []Defect{{Provider: "rxe", From: "9.4", Fixed: "9.10", FixedStable: []string{"9.6.30"}, Affects: "inline", Defect: "d", Fix: "f"},
		{Provider: "siw", From: "9.8", Affects: "all", Defect: "open", Fix: "none yet"}}}
	cases := map[string][]string{
		"9.3.99": nil, "9.4": {"rxe"}, "9.4.0-rc1": {"rxe"}, "9.6.29": {"rxe"}, "9.6.30": nil, "9.6.31": nil,
		"9.9.5": {"rxe", "siw"}, "9.10": {"siw"}, "10.0": {"siw"},
	}
	for in, want := range cases {
		v, _ := ParseVersion(in)
		var got []string
		for _, p := range []string{"rxe", "siw"} {
			for _, d := range tb.Match(v, p) {
				got = append(got, d.Provider)
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: %v, want %v", in, got, want)
		}
	}
	if s := tb.Defects[0].String(); !strings.Contains(s, "rxe") || !strings.Contains(s, "9.4..9.10") || !strings.Contains(s, "fixed upstream by f") {
		t.Errorf("String %q", s)
	}
}

func TestLoadRefuses(t *testing.T) {
	for _, bad := range []string{
		"defects:\n  - provider: rxe\n    from: six\n    affects: all\n    defect: d\n    fix: f\n",
		"defects:\n  - provider: rxe\n    from: \"6.4\"\n    affects: some\n    defect: d\n    fix: f\n",
		"defects:\n  - provider: rxe\n    from: \"6.4\"\n    affects: all\n    defect: d\n",
		"defects:\n  - provider: rxe\n    form: \"6.4\"\n",
	} {
		p := filepath.Join(t.TempDir(), "d.yaml")
		os.WriteFile(p, []byte(bad), 0o644)
		if _, err := Load(p); !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "d.yaml:") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if tb, err := Load(filepath.Join(t.TempDir(), "none.yaml")); err != nil || len(tb.Defects) != 0 {
		t.Errorf("missing table: %v %v", tb, err)
	}
}

func TestTreeVersion(t *testing.T) {
	d := t.TempDir()
	os.WriteFile(filepath.Join(d, "Makefile"), []byte("# SPDX\nVERSION = 7\nPATCHLEVEL = 3\nSUBLEVEL = 0\nEXTRAVERSION = -rc7\nNAME = Baby Opossum Posse\n"), 0o644)
	if v, err := TreeVersion(d); err != nil || v != (Version{7, 3, 0}) {
		t.Errorf("%v %v", v, err)
	}
	os.WriteFile(filepath.Join(d, "Makefile"), []byte("all:\n"), 0o644)
	if _, err := TreeVersion(d); err == nil {
		t.Error("a Makefile without a version accepted")
	}
}

// TestRealTable: the repository's table loads, has the rxe inline copy
// defect, and no pinned kernel is in any range (the pinned kernels must
// pass on their own merits).
func TestRealTable(t *testing.T) {
	tb, err := Load(Path(filepath.Join("..", "..")))
	if err != nil {
		t.Fatal(err)
	}
	var rxe *Defect
	for i := range tb.Defects {
		if tb.Defects[i].Provider == "rxe" && strings.Contains(tb.Defects[i].Fix, "Fix data copy for IB_SEND_INLINE") {
			rxe = &tb.Defects[i]
		}
	}
	if rxe == nil {
		t.Fatal("no rxe IB_SEND_INLINE defect")
	}
	for in, want := range map[string]bool{"6.3.13": false, "6.4": true, "6.6.20": true, "6.9.12": true, "6.10": false} {
		v, _ := ParseVersion(in)
		if rxe.Affected(v) != want {
			t.Errorf("rxe defect on %s: %v, want %v", in, !want, want)
		}
	}
	l, err := tree.LoadLock(filepath.Join("..", "..", "series", "kernels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range l.Kernels {
		v, err := ParseVersion(k.Debian.Version)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"rxe", "siw"} {
			if m := tb.Match(v, p); len(m) > 0 {
				t.Errorf("pinned %s (%s) has %s", k.Name, v, m[0].String())
			}
		}
	}
}
