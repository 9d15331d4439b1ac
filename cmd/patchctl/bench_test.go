package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// TestBenchFlags: the bench's command line is checked before any work:
// one provider, a positive number of boots and times (exit 2, naming
// what is wrong).
func TestBenchFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--transport", "all"}, "one provider per bench, rxe or siw"},
		{[]string{"--transport", "ib"}, `"ib" is not a transport`},
		{[]string{"--boots", "0"}, "--boots 0: want 1 to 1000"},
		{[]string{"--boots", "x"}, "invalid argument"},
		{[]string{"--latency-time", "0s"}, "times must be positive"},
		{[]string{"--sweep-time", "-1s"}, "times must be positive"},
		{[]string{"--reps", "0"}, "times must be positive"},
		{[]string{"--qd", "0"}, "queue depth 0"},
		{[]string{"--qd", "1000"}, "queue depth 1000"},
		{[]string{"--accel", "xen"}, `"xen" is not a accel`},
		{[]string{"--kernel", testkernel.Default, "--kernel", "6.1"}, "--kernel given twice"},
		{[]string{"extra"}, "unknown command"},
	} {
		code, _, errOut := run(t, append([]string{"--root", "../..", "--cache", t.TempDir(), "bench"}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("bench %v: exit %d %s\nwant %q", c.args, code, errOut, c.want)
		}
	}
}

// TestBenchBeforeBuild: a bench of kernels that were not built names the
// build command (exit 2), before any boot.
func TestBenchBeforeBuild(t *testing.T) {
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 not installed")
	}
	// The shared cache's 6.1 tree (a fresh cache would download and
	// extract it for this one message), with fragments no build uses.
	testenv.KernelIfTested(t, "6.1")
	cache := testenv.Cache().Dir
	code, _, errOut := run(t, "--root", "../..", "--cache", cache, "bench", "--kernel", "6.1", "--fragment", "base,debug", "--out", t.TempDir())
	want := "run `patchctl --root ../.. --cache " + cache + " build --kernel 6.1 --variant baseline --fragment base,debug` first"
	if code != 2 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d: %s\nwant %s", code, errOut, want)
	}
}
