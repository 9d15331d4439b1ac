package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// slowMakefile is a kernel tree's Makefile whose bzImage never finishes:
// a sub-make starts a grandchild that ignores SIGTERM and records its pid.
const slowMakefile = `O ?= $(CURDIR)
.PHONY: tinyconfig olddefconfig bzImage slow
tinyconfig:
	@printf 'CONFIG_A=y\n' > $(O)/.config
olddefconfig:
	@true
bzImage:
	@$(MAKE) --no-print-directory -f $(CURDIR)/Makefile slow
slow:
	@sh -c 'trap "" TERM; echo $$$$ > $(O)/sleeper.pid; exec sleep 300'
`

// slowProject makes a fake kernel (a git repository) pinned in a project
// of its own, whose build hangs.
func slowProject(t *testing.T) (root, cache string) {
	t.Helper()
	for _, tool := range []string{"git", "make", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "Makefile"), []byte(slowMakefile), 0o644)
	os.WriteFile(filepath.Join(src, "Kconfig"), []byte("config A\n\tbool \"a\"\n"), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "slow kernel"}, {"tag", "v9.9"}} {
		g := exec.Command("git", args...)
		g.Dir = src
		g.Env = append(os.Environ(), "HOME="+src, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org")
		if out, err := g.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	root = t.TempDir()
	w := func(p, s string) {
		os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(root, p), []byte(s), 0o644)
	}
	w("series/kernels.yaml", fmt.Sprintf("default: \"9.9\"\nkernels:\n  - name: \"9.9\"\n    git: {url: %q, tag: v9.9}\n", src))
	w("series/9.9/manifest.yaml", "kernel: \"9.9\"\npatches: []\n")
	w("kconfig/base.config", "CONFIG_A=y\n")
	w("kconfig/rdma-loopback.config", "CONFIG_A=y\n")
	w("kconfig/compile-test.config", "CONFIG_A=y\n")
	return root, t.TempDir()
}

// buildPatchctl builds the real binary once per test run.
func buildPatchctl(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "patchctl")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(b), ") Z ")
}

// TestInterruptLeavesNothingRunning sends SIGINT, SIGTERM and SIGKILL to
// a real patchctl whose build hangs in a grandchild that ignores SIGTERM:
// the grandchild dies with it, and the kernel's work lock is free again.
func TestInterruptLeavesNothingRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds patchctl")
	}
	bin := buildPatchctl(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			root, cache := slowProject(t)
			cmd := exec.Command(bin, "--root", root, "--cache", cache, "build", "--kernel", "9.9", "--variant", "baseline", "--no-ccache")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var pid int
			for i := 0; i < 600 && pid == 0; i++ {
				matches, _ := filepath.Glob(filepath.Join(cache, "build", "9.9", "*", "sleeper.pid"))
				if len(matches) == 1 {
					b, _ := os.ReadFile(matches[0])
					pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
				}
				time.Sleep(50 * time.Millisecond)
			}
			if pid == 0 {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the build never reached its grandchild:\n%s", stderr.String())
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("patchctl exited with %v", err)
			}
			if sig != syscall.SIGKILL && ee.ExitCode() != 3 {
				t.Errorf("exit %d after %s, want 3 (interrupted)\n%s", ee.ExitCode(), sig, stderr.String())
			}
			for i := 0; i < 100 && alive(pid); i++ {
				time.Sleep(50 * time.Millisecond)
			}
			if alive(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("after %s, the build's grandchild %d still runs", sig, pid)
			}
			// The lock is free: taking it does not wait.
			f, err := os.OpenFile(filepath.Join(cache, "locks", "work-9.9"), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
				t.Errorf("after %s the work lock is still held: %v", sig, err)
			}
		})
	}
}
