package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
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
	// 6.12 itself: every pin, in order
	want := []string{"5.10", "6.1", "6.12", "7.2", "7.3"}
	if len(m.Include) != len(want) {
		t.Fatalf("matrix %+v", m)
	}
	for i, e := range m.Include {
		if e.Kernel != want[i] || e.Default != (e.Kernel == testkernel.Default) || !strings.Contains(e.Source, "linux-source-"+e.Kernel+"=") {
			t.Errorf("matrix entry %d: %+v", i, e)
		}
	}
	if !strings.Contains(m.Include[4].Source, "experimental") || !strings.Contains(m.Include[0].Source, "bullseye") {
		t.Errorf("matrix sources do not name the suites: %+v", m)
	}
}

func TestRunInputErrors(t *testing.T) {
	root := testenv.RepoRoot(t)
	out := filepath.Join(t.TempDir(), "out")
	if code, _, errOut := run(t, "--root", root, "run", "--out", out, "--kernel", "4.19"); code != 2 || !strings.Contains(errOut, "pinned kernels: 5.10, 6.1, 6.12, 7.2, 7.3") {
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
		{"--tree", t.TempDir(), "--kernel", "6.1", "--kernel", testkernel.Default},
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
	testenv.Kernel(t, testkernel.Default)
	root := cleanClone(t)
	pats, _ := filepath.Glob(filepath.Join(root, "series", testkernel.Default, "*.patch"))
	for _, p := range pats {
		os.Remove(p)
	}
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, errOut := run(t, "--root", root, "run", "--kernel", testkernel.Default, "--out", out)
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

// TestRunRefusesBeforeWork: what run would only find out at its end is
// refused before any work, with exit 2: an --out that is / or the
// repository, a file, or a folder that cannot be made; no kernels pinned;
// a cache path kbuild refuses.
func TestRunRefusesBeforeWork(t *testing.T) {
	root, cache := slowProject(t)
	file := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, out := range []string{"/", root, filepath.Dir(root), file, filepath.Join(file, "below")} {
		code, _, errOut := run(t, "--root", root, "--cache", cache, "run", "--out", out)
		if code != 2 || !strings.Contains(errOut, "--out") {
			t.Errorf("--out %s: exit %d %s", out, code, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(cache, "trees")); err == nil {
		t.Error("a refused run prepared a tree first")
	}
	spaced := filepath.Join(t.TempDir(), "my cache")
	code, _, errOut := run(t, "--root", root, "--cache", spaced, "build", "--kernel", "9.9")
	if code != 2 || !strings.Contains(errOut, "space or a colon") {
		t.Errorf("cache with a space: exit %d %s", code, errOut)
	}
	// A malformed fragment is the input's fault in run as in build.
	if code, _, errOut := run(t, "--root", root, "--cache", cache, "refresh", "--kernel", "9.9"); code != 0 {
		t.Fatalf("refresh: %d %s", code, errOut)
	}
	os.WriteFile(filepath.Join(root, "kconfig", "base.config"), []byte("CONFIG_A=y\nthis is not kconfig\n"), 0o644)
	for _, args := range [][]string{{"build", "--kernel", "9.9"}, {"run", "--out", t.TempDir()}} {
		code, _, errOut := run(t, append([]string{"--root", root, "--cache", cache}, args...)...)
		if code != 2 || !strings.Contains(errOut, "base.config") && args[0] == "build" {
			t.Errorf("%s with a malformed fragment: exit %d %s", args[0], code, errOut)
		}
	}
	os.WriteFile(filepath.Join(root, "series", "kernels.yaml"), []byte("kernels: []\n"), 0o644)
	code, out, errOut := run(t, "--root", root, "--cache", cache, "run", "--out", t.TempDir())
	if code != 2 || strings.Contains(out, "PASS") || !strings.Contains(errOut, "no kernels") {
		t.Errorf("no kernels: exit %d %s %s", code, out, errOut)
	}
}

// TestFlagValuesRefused: values that make no sense are refused before any
// work, with exit 2.
func TestFlagValuesRefused(t *testing.T) {
	root, cache := slowProject(t)
	for _, args := range [][]string{
		{"boot", "--boot-timeout", "-1s"},
		{"boot", "--test-timeout", "-5m"},
		{"boot", "--accel", "hvf"},
		{"run", "--accel", "xen"},
		{"build", "--fragment", "../../etc/passwd"},
		{"build", "--variant", "patch"},
	} {
		code, _, errOut := run(t, append([]string{"--root", root, "--cache", cache}, args...)...)
		if code != 2 {
			t.Errorf("%v: exit %d %s", args, code, errOut)
		}
	}
}

// TestKernelFrom: --kernel-from takes source or distro; distro on a kernel
// without pinned Debian binaries is refused with what to pin (exit 2), in
// build and in run, whose result says which path it took.
func TestKernelFrom(t *testing.T) {
	root, cache := slowProject(t)
	for _, cmd := range []string{"build", "boot", "run"} {
		if code, _, errOut := run(t, "--root", root, "--cache", cache, cmd, "--kernel-from", "binary"); code != 2 || !strings.Contains(errOut, "want source") {
			t.Errorf("%s --kernel-from binary: exit %d %s", cmd, code, errOut)
		}
	}
	if code, _, errOut := run(t, "--root", root, "--cache", cache, "build", "--kernel", "9.9", "--kernel-from", "distro"); code != 2 || !strings.Contains(errOut, "debian.binary") {
		t.Errorf("build: exit %d %s", code, errOut)
	}
	if code, _, errOut := run(t, "--root", root, "--cache", cache, "refresh", "--kernel", "9.9"); code != 0 {
		t.Fatalf("refresh: %d %s", code, errOut)
	}
	out := t.TempDir()
	code, _, errOut := run(t, "--root", root, "--cache", cache, "run", "--kernel-from", "distro", "--out", out)
	if code != 2 {
		t.Errorf("run: exit %d %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"kernel_from": "distro"`) || !strings.Contains(string(b), "debian.binary") {
		t.Errorf("result.json does not say the path and the refusal: %s", b)
	}
}
