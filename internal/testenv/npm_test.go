package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeNPM puts an npm first in PATH that logs each install to calls and
// writes its package's two files a pause apart (the window in which a
// second install, or a test, would see half a tree), failing before the
// second when FAKE_NPM_FAIL is set.
func fakeNPM(t *testing.T, calls string) {
	t.Helper()
	bin := t.TempDir()
	script := `#!/bin/sh
prefix=
prev=
for a in "$@"; do [ "$prev" = --prefix ] && prefix=$a; prev=$a; done
echo "$*" >> ` + calls + `
mkdir -p "$prefix/node_modules/pkg"
echo a > "$prefix/node_modules/pkg/a"
sleep 0.3
[ -n "${FAKE_NPM_FAIL:-}" ] && exit 1
echo b > "$prefix/node_modules/pkg/b"
`
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestNPMToolHelper is a process of TestNPMToolAcrossProcesses.
func TestNPMToolHelper(t *testing.T) {
	tools := os.Getenv("NPMTOOL_HELPER_TOOLS")
	if tools == "" {
		t.Skip("run by TestNPMToolAcrossProcesses")
	}
	dir, err := npmInstall(tools, "tool", "pkg@1")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"a", "b"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "pkg", f)); err != nil {
			t.Fatalf("the tool was handed over half installed: %v", err)
		}
	}
}

// TestNPMToolAcrossProcesses: test binaries installing one tool at once
// run npm once, and each gets the whole tree; a failed install leaves no
// folder a later test takes for installed; a folder without the mark of
// a finished install, or marked with another version, is installed again.
func TestNPMToolAcrossProcesses(t *testing.T) {
	tools := t.TempDir()
	calls := filepath.Join(t.TempDir(), "calls")
	fakeNPM(t, calls)
	count := func() int {
		b, _ := os.ReadFile(calls)
		return strings.Count(string(b), "\n")
	}

	// An install that fails midway.
	t.Setenv("FAKE_NPM_FAIL", "1")
	if _, err := npmInstall(tools, "tool", "pkg@1"); err == nil {
		t.Fatal("a failed npm install was taken for an installed tool")
	}
	if _, err := os.Stat(filepath.Join(tools, "tool")); err == nil {
		t.Fatal("a failed install left the tool's folder")
	}
	os.Unsetenv("FAKE_NPM_FAIL")

	// Three processes at once.
	var procs []*exec.Cmd
	for range 3 {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestNPMToolHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), "NPMTOOL_HELPER_TOOLS="+tools)
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
	}
	for i, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, fmt.Sprint(p.Stdout))
		}
	}
	if n := count(); n != 2 {
		t.Fatalf("npm ran %d times in all, want 2 (the failed install and one of the three)", n)
	}

	// A folder from before the mark: installed again, once.
	if err := os.Remove(filepath.Join(tools, "tool", npmComplete)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := npmInstall(tools, "tool", "pkg@1"); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(); n != 3 {
		t.Fatalf("npm ran %d times in all, want 3", n)
	}

	// Another version pinned: installed again, once, and marked with it.
	for range 2 {
		if _, err := npmInstall(tools, "tool", "pkg@2"); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(); n != 4 {
		t.Fatalf("npm ran %d times in all, want 4: the folder of pkg@1 was taken for pkg@2", n)
	}
	if b, err := os.ReadFile(filepath.Join(tools, "tool", npmComplete)); err != nil || string(b) != "pkg@2\n" {
		t.Fatalf("the mark after installing pkg@2: %q %v", b, err)
	}
	left, _ := filepath.Glob(filepath.Join(tools, ".tool.install-*"))
	if len(left) > 0 {
		t.Fatalf("install folders left: %v", left)
	}
}
