package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/boot"
	"github.com/patchctl/patchctl/internal/defects"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/ktap"
	"github.com/patchctl/patchctl/internal/vocab"
)

// TestKnownDefectNotBlamedOnPatch: with a fake defect table (rxe broken
// for inline sends on 9.1), a patched boot whose rxe tests fail is an
// ERROR of class known-provider-defect naming the fix (exit 3), not a
// FAIL of the patch; a failure over siw, a baseline failure (no inline)
// and a kernel outside the range stay failures of the run.
func TestKnownDefectNotBlamedOnPatch(t *testing.T) {
	tb := &defects.Table{Defects: []defects.Defect{{Provider: "rxe", From: "9.0", Fixed: "9.2", Affects: "inline",
		Defect: "inline copy broken", Fix: "RDMA/rxe: fake fix"}}}
	treeAt := func(v string) string {
		d := t.TempDir()
		p := strings.Split(v, ".")
		os.WriteFile(filepath.Join(d, "Makefile"), []byte("VERSION = "+p[0]+"\nPATCHLEVEL = "+p[1]+"\nSUBLEVEL = "+p[2]+"\n"), 0o644)
		return d
	}
	failing := func(transport string) *boot.Result {
		return &boot.Result{Verdict: "fail", Reason: "data mismatch", KTAP: &ktap.Test{Name: "patchctl", Subtests: []*ktap.Test{
			{Name: "rxe", OK: transport != "rxe", Subtests: []*ktap.Test{{Name: "write_read_16k", OK: transport != "rxe"}}},
			{Name: "siw", OK: transport != "siw", Subtests: []*ktap.Test{{Name: "write_read_16k", OK: transport != "siw"}}}}}}
	}
	newRun := func(version string) *kernelRun {
		r := &kernelRun{o: Options{Defects: tb, Transports: []string{"rxe", "siw"}}, kr: &Kernel{Name: "9.1", Verdict: vocab.Pass}}
		r.defects(treeAt(version))
		return r
	}
	r := newRun("9.1.3")
	if len(r.kr.KnownDefects) != 1 {
		t.Fatalf("known defects of 9.1.3: %+v", r.kr.KnownDefects)
	}
	if d := r.explains(failing("rxe"), true); len(d) != 1 || !strings.Contains(d[0], "RDMA/rxe: fake fix") {
		t.Errorf("patched rxe failure: %v", d)
	}
	if d := r.explains(failing("siw"), true); len(d) != 0 {
		t.Errorf("siw failure explained by an rxe defect: %v", d)
	}
	if d := r.explains(failing("rxe"), false); len(d) != 0 {
		t.Errorf("a failure without inline sends explained by an inline defect: %v", d)
	}
	if r := newRun("9.2.0"); len(r.kr.KnownDefects) != 0 || len(r.explains(failing("rxe"), true)) != 0 {
		t.Errorf("fixed kernel has the defect: %+v", r.kr.KnownDefects)
	}
	// The stage's outcome and the run's exit class.
	s := r.stage(StageBootPatched, func(*Stage) error {
		return errors.Join(errors.New("data mismatch: "+r.explains(failing("rxe"), true)[0]), errKnownDefect)
	})
	if s.Status != vocab.Error || s.Class != ClassKnownDefect || !strings.Contains(r.kr.Reason, "fake fix") {
		t.Errorf("stage %+v, reason %q", s, r.kr.Reason)
	}
	res := &Result{Kernels: []*Kernel{r.kr}, Verdict: r.kr.Verdict}
	if err := res.Err(); !errors.Is(err, errs.ErrEnv) {
		t.Errorf("run error %v, want environment (exit 3)", err)
	}
	r2 := newRun("9.2.0")
	r2.stage(StageBootPatched, func(*Stage) error { return errors.Join(errors.New("data mismatch"), errs.ErrFindings) })
	if err := (&Result{Kernels: []*Kernel{r2.kr}, Verdict: r2.kr.Verdict}).Err(); !errors.Is(err, errs.ErrFindings) {
		t.Errorf("an unexplained failure: %v, want findings", err)
	}
}

// TestKnownReportsOfTheKernel: the known kernel reports of the kernel's
// version (by its tree) reach the result and, as the gates need them,
// the boot's options; a kernel outside the range has none.
func TestKnownReportsOfTheKernel(t *testing.T) {
	tb := &defects.Reports{Reports: []defects.Report{{ID: "pair", From: "9.0", Fixed: "9.2", Match: []string{"circular locking", "sem_a"}, Defect: "d", Upstream: "u"}}}
	treeAt := func(v string) string {
		d := t.TempDir()
		p := strings.Split(v, ".")
		os.WriteFile(filepath.Join(d, "Makefile"), []byte("VERSION = "+p[0]+"\nPATCHLEVEL = "+p[1]+"\nSUBLEVEL = "+p[2]+"\n"), 0o644)
		return d
	}
	r := &kernelRun{o: Options{Reports: tb, Transports: []string{"rxe"}}, kr: &Kernel{Name: "9.1", Verdict: vocab.Pass}}
	r.defects(treeAt("9.1.4"))
	if len(r.kr.KnownReports) != 1 {
		t.Fatalf("known reports of 9.1.4: %+v", r.kr.KnownReports)
	}
	if g := guestKnown(r.kr.KnownReports); len(g) != 1 || g[0].ID != "pair" || len(g[0].Match) != 2 {
		t.Errorf("for the gates: %+v", g)
	}
	r = &kernelRun{o: Options{Reports: tb}, kr: &Kernel{Name: "9.2"}}
	if r.defects(treeAt("9.2.0")); len(r.kr.KnownReports) != 0 {
		t.Errorf("a fixed kernel: %+v", r.kr.KnownReports)
	}
}
