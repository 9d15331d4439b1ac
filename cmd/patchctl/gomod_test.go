package main

import (
	"os/exec"
	"testing"

	"github.com/patchctl/patchctl/internal/testenv"
)

// TestGoModTidy: go.mod and go.sum are what `go mod tidy` makes of them,
// so every dependency imported directly is marked direct and nothing
// unused is kept. `go mod tidy -diff` changes nothing and prints what it
// would change.
func TestGoModTidy(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: go mod tidy may download the modules of every test of every dependency")
	}
	cmd := exec.Command("go", "mod", "tidy", "-diff")
	cmd.Dir = testenv.RepoRoot(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go mod tidy -diff: %v: go.mod or go.sum is not tidy (run go mod tidy):\n%s", err, out)
	}
}
