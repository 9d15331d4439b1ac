package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/testenv"
)

func TestMatrix(t *testing.T) {
	code, out, errOut := run(t, "--root", testenv.RepoRoot(t), "matrix")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var m struct {
		Include []struct {
			Kernel, Source string
			Default        bool
		}
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Include) != 2 || m.Include[0].Kernel != "6.12" || !m.Include[0].Default || m.Include[1].Kernel != "6.1" || !strings.Contains(m.Include[1].Source, "6.1.192-3") {
		t.Errorf("matrix %+v", m)
	}
}

func TestRunInputErrors(t *testing.T) {
	root := testenv.RepoRoot(t)
	if code, _, errOut := run(t, "--root", root, "run", "--kernel", "4.19"); code != 2 || !strings.Contains(errOut, "pinned kernels: 6.1, 6.12") {
		t.Errorf("unknown kernel: exit %d %s", code, errOut)
	}
	if code, _, _ := run(t, "--root", root, "run", "--transport", "ib"); code != 2 {
		t.Errorf("bad transport: exit %d", code)
	}
}
