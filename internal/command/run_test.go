package command

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/errs"
)

func TestRunOutputAndErrors(t *testing.T) {
	ctx := context.Background()
	out, err := Command("sh", "-c", "echo hello; read x; echo got $x").Output(ctx)
	if err != nil || string(out) != "hello\ngot\n" {
		t.Fatalf("output %q, %v", out, err)
	}
	c := Command("sh", "-c", "read x; echo in=$x")
	c.Stdin = strings.NewReader("abc\n")
	if out, err := c.Output(ctx); err != nil || string(out) != "in=abc\n" {
		t.Errorf("stdin not passed: %q %v", out, err)
	}
	err = Command("sh", "-c", "echo first; echo last words >&2; exit 7").Run(ctx)
	var re *Error
	if !errors.As(err, &re) || re.ExitCode != 7 || !strings.Contains(re.Tail, "last words") {
		t.Errorf("error %#v", err)
	}
	if err := Command("no-such-program-patchctl").Run(ctx); !errors.Is(err, errs.ErrEnv) {
		t.Errorf("a missing program is %v, want an environment error", err)
	}
}

// waitGone waits until the process pid no longer exists.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for i := 0; i < 100; i++ {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		// A zombie whose parent has not reaped it yet is dead too.
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && strings.Contains(string(b), ") Z ") {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("process %d still runs", pid)
}

func TestCancelKillsGrandchildren(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	// The grandchild ignores SIGTERM: only the group kill ends it.
	c := Command("sh", "-c", "sh -c 'trap \"\" TERM; echo $$ > "+pidFile+"; exec sleep 300' & wait")
	p, err := c.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	for i := 0; i < 100 && pid == 0; i++ {
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		time.Sleep(20 * time.Millisecond)
	}
	if pid == 0 {
		t.Fatal("the grandchild never started")
	}
	cancel()
	if err := p.Wait(); err == nil {
		t.Error("a cancelled command succeeded")
	}
	waitGone(t, pid)
}

// TestStdinReaderThatNeverEnds: a program that exits while its standard
// input (a pipe that is not a file) is still open returns from Wait.
func TestStdinReaderThatNeverEnds(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	var out strings.Builder
	p, err := (&Cmd{Name: "sh", Args: []string{"-c", "read line; echo got $line"}, Stdin: r, Stdout: &out}).Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "hello\n")
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if out.String() != "got hello\n" {
		t.Errorf("output %q", out.String())
	}
}
