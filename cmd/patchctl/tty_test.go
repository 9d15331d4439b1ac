package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestShellOnATerminal: patchctl boot --shell on a terminal (a pty that
// script(1) makes, driven through a pipe): QEMU gets the terminal as its
// foreground (not stopped by SIGTTIN/SIGTTOU), the prompt answers, and
// patchctl reports the setup once the shell exits. The real 6.12 build.
func TestShellOnATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: boots a kernel")
	}
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script (util-linux) not installed")
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		t.Skip("busybox-static not installed")
	}
	bin := filepath.Join(t.TempDir(), "patchctl")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v %s", err, out)
	}
	root, _ := filepath.Abs("../..")
	out := t.TempDir()
	cmd := exec.Command(script, "-qfec", bin+" --root "+root+" boot --kernel 6.12 --shell --transport rxe --out "+out, "/dev/null")
	in, _ := cmd.StdinPipe()
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); pw.Close() }()
	r := bufio.NewReader(pr)
	var got strings.Builder
	waitFor := func(s string) {
		t.Helper()
		for !strings.Contains(got.String(), s) {
			b, err := r.ReadByte()
			if err != nil {
				t.Fatalf("output ended before %q: %v\n%s", s, err, got.String())
			}
			got.WriteByte(b)
		}
	}
	waitFor("patchctl-vm# ")
	if strings.Contains(got.String(), "not built yet") {
		t.Skip("6.12 not built")
	}
	io.WriteString(in, "echo on-a-tty-$((3*3))\n")
	waitFor("on-a-tty-9")
	io.WriteString(in, "exit\n")
	waitFor("6.12 patched: PASS: 3 tests passed")
	go io.Copy(io.Discard, r)
	if err := <-done; err != nil {
		t.Errorf("patchctl under script: %v\n%s", err, got.String())
	}
}
