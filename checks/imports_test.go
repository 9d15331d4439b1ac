package checks

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNoStageGlue: the checks read a tree and know nothing of
// how it was prepared. No package under checks/ depends, directly or
// through another package, on the apply stage, the stage keys or the
// tree cache; the glue between them lives in internal/pipeline
// (checkstage.go). Test files may use them to set up fixtures.
func TestImportsNoStageGlue(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list the imports with")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "github.com/patchctl/patchctl/checks/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./checks/...: %v\n%s", err, out)
	}
	forbidden := []string{"internal/apply", "internal/stage", "internal/tree", "internal/pipeline"}
	for _, p := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if p == "github.com/patchctl/patchctl/"+f {
				t.Errorf("checks/... depends on %s: move the code that needs it into internal/pipeline (checkstage.go)", p)
			}
		}
	}
}
