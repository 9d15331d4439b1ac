package main

import (
	"encoding/json"
	"os"
	"path/filepath"
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
	out := filepath.Join(t.TempDir(), "out")
	if code, _, errOut := run(t, "--root", root, "run", "--out", out, "--kernel", "4.19"); code != 2 || !strings.Contains(errOut, "pinned kernels: 6.1, 6.12") {
		t.Errorf("unknown kernel: exit %d %s", code, errOut)
	}
	// A run that could not start says why in its reports.
	for _, f := range []string{"result.json", "summary.txt", "junit.xml", "kcidb.json"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || (f != "kcidb.json" && !strings.Contains(string(b), "4.19")) {
			t.Errorf("%s of a run that did not start: %v\n%s", f, err, b)
		}
	}
	if code, _, _ := run(t, "--root", root, "run", "--out", out, "--transport", "ib"); code != 2 {
		t.Errorf("bad transport: exit %d", code)
	}
	for _, c := range [][]string{
		{"--tree", filepath.Join(t.TempDir(), "nothing")},
		{"--tree", t.TempDir()},
		{"--tree", t.TempDir(), "--kernel", "6.1", "--kernel", "6.12"},
	} {
		if code, _, errOut := run(t, append([]string{"--root", root, "run", "--out", out}, c...)...); code != 2 {
			t.Errorf("run %v: exit %d, want 2\n%s", c, code, errOut)
		}
	}
}

// A series/ folder that refresh did not write (a manifest entry added by
// hand) fails the apply stage, and every report is still written, with
// the reason.
func TestRunStaleSeriesWritesReports(t *testing.T) {
	testenv.Kernel(t, "6.12")
	root := cleanClone(t)
	pats, _ := filepath.Glob(filepath.Join(root, "series", "6.12", "*.patch"))
	for _, p := range pats {
		os.Remove(p)
	}
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, errOut := run(t, "--root", root, "run", "--kernel", "6.12", "--out", out)
	if code != 1 {
		t.Errorf("stale series: exit %d, want 1\n%s%s", code, stdout, errOut)
	}
	b, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil || !strings.Contains(string(b), "differs from what refresh generates") {
		t.Errorf("result.json: %v\n%.400s", err, b)
	}
	if b, err := os.ReadFile(filepath.Join(out, "kcidb.json")); err != nil || !strings.Contains(string(b), "\"valid\": false") && !strings.Contains(string(b), "\"valid\":false") {
		t.Errorf("kcidb.json: %v\n%.400s", err, b)
	}
}
