package checks

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Held-out round 3 (issue 26): testdata/heldout3/ holds bug/twin pairs
// written from the kernel ULPs' shapes before the engine was read
// (CLASS_r3NAME_bug / _ok, files or module folders, wants as in
// testdata/). TestHeldOut3 measures them, raw and (without -short)
// through the preprocessed path, and prints a table per class: bugs
// caught at rule and line, bugs whose rule fires elsewhere only, twins
// flagged. Every case must be exact (the bug draws exactly its wants,
// the twin nothing) unless heldOut3Open lists it with why; a listed
// case that became exact must leave the list.

// heldOut3Open: the cases the engine does not get right yet, with the
// reason (docs/checks.md "Held-out round 3").
var heldOut3Open = map[string]string{
	"across_r3xfile_bug": "rule elsewhere: reported where smc_wr.c stores the request (its exit), not at the post in smc_tx.c",
}

type heldOutResult struct {
	base, class, kind string // kind: bug or ok
	exact             bool
	outcome           string // bug: caught, rule-only, missed; twin: clean, warned, flagged
	extra             bool   // a bug draws findings besides its wants
	got, want         []string
}

func judgeHeldOut(name string, got, w []string) heldOutResult {
	base := strings.TrimSuffix(strings.TrimSuffix(name, "_bug"), "_ok")
	r := heldOutResult{base: base, class: strings.SplitN(base, "_", 2)[0], got: got, want: w}
	r.exact = slices.Equal(got, w)
	if strings.HasSuffix(name, "_ok") {
		r.kind = "ok"
		r.outcome = "clean"
		for _, g := range got {
			if strings.HasSuffix(g, "[error]") {
				r.outcome = "flagged"
				break
			}
			r.outcome = "warned"
		}
		return r
	}
	r.kind = "bug"
	caught, rule := true, true
	for _, x := range w {
		if !slices.Contains(got, x) {
			caught = false
			// x is "file:line: rule [sev]": the rule at another line or severity
			f := strings.Fields(x)
			rl := f[len(f)-2]
			found := false
			for _, g := range got {
				if strings.Contains(g, ": "+rl+" [") {
					found = true
				}
			}
			rule = rule && found
		}
	}
	switch {
	case caught:
		r.outcome = "caught"
	case rule:
		r.outcome = "rule-only"
	default:
		r.outcome = "missed"
	}
	for _, g := range got {
		if !slices.Contains(w, g) {
			r.extra = true
		}
	}
	return r
}

func heldOutTable(t *testing.T, label string, rs []heldOutResult) {
	t.Helper()
	type row struct{ bugs, caught, ruleOnly, extra, twins, flagged, warned int }
	rows := map[string]*row{}
	var classes []string
	tot := &row{}
	for _, r := range rs {
		x := rows[r.class]
		if x == nil {
			x = &row{}
			rows[r.class] = x
			classes = append(classes, r.class)
		}
		for _, y := range []*row{x, tot} {
			if r.kind == "bug" {
				y.bugs++
				switch r.outcome {
				case "caught":
					y.caught++
				case "rule-only":
					y.ruleOnly++
				}
				if r.extra {
					y.extra++
				}
			} else {
				y.twins++
				switch r.outcome {
				case "flagged":
					y.flagged++
				case "warned":
					y.warned++
				}
			}
		}
	}
	sort.Strings(classes)
	var b strings.Builder
	fmt.Fprintf(&b, "held-out round 3, %s\n| class | bugs caught at rule and line | rule elsewhere only | bugs with extra findings | twins flagged (error) | twins warned only |\n|---|---|---|---|---|---|\n", label)
	for _, c := range append(classes, "total") {
		x := tot
		if c != "total" {
			x = rows[c]
		}
		fmt.Fprintf(&b, "| %s | %d/%d | %d | %d | %d/%d | %d |\n", c, x.caught, x.bugs, x.ruleOnly, x.extra, x.flagged, x.twins, x.warned)
	}
	t.Log(b.String())
}

func heldOutCases(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join("testdata", "heldout3"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		n := strings.TrimSuffix(e.Name(), ".c")
		if strings.HasSuffix(n, "_bug") || strings.HasSuffix(n, "_ok") {
			names = append(names, e.Name())
		}
	}
	if len(names) < 48 {
		t.Fatalf("%d held-out cases, want at least 24 pairs", len(names))
	}
	return names
}

func TestHeldOut3(t *testing.T) {
	modes := []string{"raw"}
	if !testing.Short() {
		if _, err := exec.LookPath("gcc"); err == nil {
			modes = append(modes, "preprocessed")
		}
	}
	for _, mode := range modes {
		var rs []heldOutResult
		for _, file := range heldOutCases(t) {
			name := strings.TrimSuffix(file, ".c")
			path := filepath.Join("testdata", "heldout3", file)
			var got, w []string
			t.Run(mode+"/"+name, func(t *testing.T) {
				if mode == "raw" {
					g, ws, rep := runCase(t, path)
					if os.Getenv("HELDOUT_DETAIL") != "" {
						t.Log(describe(rep))
					}
					for _, x := range g {
						got = append(got, x.String())
					}
					for _, x := range ws {
						w = append(w, x.String())
					}
					sort.Strings(got)
					sort.Strings(w)
					got, w = slices.Compact(got), slices.Compact(w)
				} else {
					got, w, _ = runCasePreprocessed(t, path)
				}
				r := judgeHeldOut(name, got, w)
				rs = append(rs, r)
				why, open := heldOut3Open[name]
				switch {
				case !r.exact && !open:
					t.Errorf("%s: %s\n got:  %v\n want: %v", name, r.outcome, got, w)
				case r.exact && open && mode == "raw":
					t.Errorf("%s is exact now: take it out of heldOut3Open (%s)", name, why)
				case !r.exact:
					t.Logf("open (%s): %s, got %v", why, r.outcome, got)
				}
			})
		}
		heldOutTable(t, mode, rs)
	}
}
