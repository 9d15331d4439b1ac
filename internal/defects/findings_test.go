package defects_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/checks"
	"github.com/patchctl/patchctl/internal/defects"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/tree"
)

// fires runs the finding's rule on a tree holding the file with src and
// says whether it reports the finding in the function.
func fires(t *testing.T, f *defects.KnownFinding, src string) bool {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, f.File)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := checks.Run(checks.Options{Tree: dir, Paths: []string{filepath.Dir(f.File)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range rep.Findings {
		if x.Rule == f.Rule && x.File == f.File && x.Function == f.Function {
			return true
		}
	}
	return false
}

// checkClaims checks a finding's claims on one tree's file: it fires as
// claimed, each fix with an edit closes it or not as claimed, and each
// fix said to be in the kernel has its marker.
func checkClaims(t *testing.T, f *defects.KnownFinding, kernel, src string, want bool) {
	t.Helper()
	if got := fires(t, f, src); got != want {
		t.Errorf("%s: %s in %s fires %v, the claim is %v", kernel, f.Rule, f.Function, got, want)
	}
	for _, x := range f.Fixes {
		for _, k := range x.In {
			if k == kernel && !strings.Contains(src, x.Marker) {
				t.Errorf("%s: the fix %q is said to be in %s, but its marker %q is not in %s", kernel, x.Name, k, x.Marker, f.File)
			}
		}
		if x.Edit == nil || !want {
			continue
		}
		fixed, err := x.Edit.Apply(src)
		if err != nil {
			t.Errorf("%s: fix %q: %v", kernel, x.Name, err)
			continue
		}
		if got := fires(t, f, fixed); got == x.Closes {
			t.Errorf("%s: with the fix %q applied the finding fires %v, the claim is closes: %v", kernel, x.Name, got, x.Closes)
		}
	}
}

// TestKnownFindingClaims checks series/known-findings.yaml against the
// pinned trees that are prepared (under -short; every pinned tree
// otherwise, CI failing when one cannot be had) and against a fixture
// written here; and that the checks' note on each finding is the note of
// the data.
func TestKnownFindingClaims(t *testing.T) {
	root := testenv.RepoRoot(t)
	fs, err := defects.LoadFindings(defects.FindingsPath(root))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.Findings) == 0 {
		t.Fatal("no known findings")
	}
	lock, err := tree.LoadLock(filepath.Join(root, "series", "kernels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range fs.Findings {
		f := &fs.Findings[i]
		if got := checks.KnownNote(f.Rule, f.File, f.Function); got != f.Note {
			t.Errorf("the checks' note on %s in %s is not the data's:\n  checks: %s\n  data:   %s", f.Rule, f.Function, got, f.Note)
		}
		t.Run("fixture", func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join("testdata", "fixture", f.File))
			if err != nil {
				t.Fatal(err)
			}
			checkClaims(t, f, "fixture", string(src), true)
		})
		for _, k := range lock.Names() {
			t.Run(k, func(t *testing.T) {
				_, dir := testenv.KernelIfTested(t, k)
				src, err := os.ReadFile(filepath.Join(dir, f.File))
				if err != nil {
					t.Fatal(err)
				}
				checkClaims(t, f, k, string(src), f.Fires(k))
			})
		}
	}
}

// TestKnownFindingClaimsCatchWrongData: the check refuses data that says
// what is not true: a fix that does not close the finding said to close
// it, a fix said to be in a tree without its marker.
func TestKnownFindingClaimsCatchWrongData(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "fixture", "drivers/nvme/target/rdma.c"))
	if err != nil {
		t.Fatal(err)
	}
	f := &defects.KnownFinding{Rule: "incapsule-bounds", File: "drivers/nvme/target/rdma.c", Function: "nvmet_rdma_map_sgl_inline",
		Fixes: []defects.Fix{{Name: "a comment", Closes: true, Edit: &defects.Edit{From: "\tnvmet_rdma_use_inline_sg(rsp, len, off);", To: "\t/* fixed */\n\tnvmet_rdma_use_inline_sg(rsp, len, off);"}},
			{Name: "absent", In: []string{"fixture"}, Marker: "no such line"}}}
	// The checks of checkClaims, by hand: each must find its claim false.
	var failed []string
	if fires(t, f, string(src)) {
		fixed, _ := f.Fixes[0].Edit.Apply(string(src))
		if fires(t, f, fixed) == f.Fixes[0].Closes {
			failed = append(failed, "closes")
		}
	}
	if !strings.Contains(string(src), f.Fixes[1].Marker) {
		failed = append(failed, "marker")
	}
	if strings.Join(failed, ",") != "closes,marker" {
		t.Errorf("wrong claims not caught: %v", failed)
	}
}
