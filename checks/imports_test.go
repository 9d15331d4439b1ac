package checks

import (
	"os/exec"
	"slices"
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
	forbidden := []string{"internal/apply", "internal/stagecache", "internal/tree", "internal/pipeline"}
	for _, p := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if p == "github.com/patchctl/patchctl/"+f {
				t.Errorf("checks/... depends on %s: move the code that needs it into internal/pipeline (checkstage.go)", p)
			}
		}
	}
}

// TestEngineImportsNoRules: the dataflow engine (checks/engine) knows no
// rule. It reports states through its hooks and the rules in checks call
// it, never the other way round: checks/engine depends neither directly
// nor indirectly on package checks.
func TestEngineImportsNoRules(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list the imports with")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "github.com/patchctl/patchctl/checks/engine").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./checks/engine: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/patchctl/patchctl/checks/engine") {
		t.Fatalf("go list -deps named no engine package: %s", out)
	}
	for _, p := range deps {
		if p == "github.com/patchctl/patchctl/checks" {
			t.Errorf("checks/engine depends on checks (the rules): move what the engine needs into checks/engine, or report it through a hook")
		}
	}
}
