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
	// Every pinned kernel, in the lock's order, the default marked.
	want := []string{"5.10", "6.1", "6.12", "7.2", "7.3"}
	if len(m.Include) != len(want) {
		t.Fatalf("matrix %+v", m)
	}
	for i, e := range m.Include {
		if e.Kernel != want[i] || e.Default != (e.Kernel == "6.12") || !strings.Contains(e.Source, "linux-source-"+e.Kernel+"=") {
			t.Errorf("matrix entry %d: %+v", i, e)
		}
	}
	if !strings.Contains(m.Include[4].Source, "experimental") || !strings.Contains(m.Include[0].Source, "bullseye") {
		t.Errorf("matrix sources do not name the suites: %+v", m)
	}
}

func TestRunInputErrors(t *testing.T) {
	root := testenv.RepoRoot(t)
	if code, _, errOut := run(t, "--root", root, "run", "--kernel", "4.19"); code != 2 || !strings.Contains(errOut, "pinned kernels: 5.10, 6.1, 6.12, 7.2, 7.3") {
		t.Errorf("unknown kernel: exit %d %s", code, errOut)
	}
	if code, _, _ := run(t, "--root", root, "run", "--transport", "ib"); code != 2 {
		t.Errorf("bad transport: exit %d", code)
	}
}
