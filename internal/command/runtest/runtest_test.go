package runtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/errs"
)

func TestStubIsStrict(t *testing.T) {
	ft := &fakeT{}
	s := Stub(ft)
	s.Register(`^gcc --version$`, 0, "gcc 12\n")
	s.Register(`^make -C`, 2, "make: *** [x] Error 1\n")
	s.Register(`^never`, 0, "")
	out, err := (&command.Cmd{Name: "gcc", Args: []string{"--version"}, Runner: s}).Output(context.Background())
	if err != nil || string(out) != "gcc 12\n" {
		t.Errorf("stubbed output %q %v", out, err)
	}
	var buf bytes.Buffer
	c := &command.Cmd{Name: "make", Args: []string{"-C", "x"}, Stdout: &buf, Runner: s}
	var re *command.Error
	if err := c.Run(context.Background()); !errors.As(err, &re) || re.ExitCode != 2 || buf.String() == "" || !strings.Contains(re.Tail, "Error 1") {
		t.Errorf("stubbed failure %v %q", err, buf.String())
	}
	if err := (&command.Cmd{Name: "rm", Args: []string{"-rf", "/"}, Runner: s}).Run(context.Background()); err == nil {
		t.Error("an unexpected command ran")
	}
	for _, f := range ft.cleanup {
		f()
	}
	if len(ft.errs) != 2 || !strings.Contains(ft.errs[0], "unexpected command rm") || !strings.Contains(ft.errs[1], "never") {
		t.Errorf("stub complaints %q", ft.errs)
	}
}

// TestFuncPassthroughMissing: RegisterFunc's outcome is the command's,
// Passthrough runs the real program, Missing hides a program from this
// stub's LookPath only.
func TestFuncPassthroughMissing(t *testing.T) {
	s := Stub(t)
	s.RegisterFunc(`^git version$`, func(c *command.Cmd) error {
		fmt.Fprintln(c.Stdout, "git version 2.0")
		return errors.New("exit status 3")
	})
	s.Passthrough(`^echo real$`)
	s.Missing("ccache")
	out, err := (&command.Cmd{Name: "git", Args: []string{"version"}, Runner: s}).Output(context.Background())
	var re *command.Error
	if string(out) != "git version 2.0\n" || !errors.As(err, &re) || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("func stub: %q %v", out, err)
	}
	if out, err := (&command.Cmd{Name: "echo", Args: []string{"real"}, Runner: s}).Output(context.Background()); err != nil || string(out) != "real\n" {
		t.Errorf("passthrough: %q %v", out, err)
	}
	if _, err := s.LookPath("ccache"); !errors.Is(err, errs.ErrEnv) {
		t.Errorf("missing ccache: %v", err)
	}
	if p, err := s.LookPath("gcc"); err != nil || p != "gcc" {
		t.Errorf("gcc under the stub: %q %v", p, err)
	}
	if _, err := (command.Exec{}).LookPath("sh"); err != nil {
		t.Errorf("the real runner does not find sh: %v", err)
	}
}

// TestStubsAreIndependent: two stubs used at once each answer only the
// commands given to them (no global state: tests that stub may run in
// parallel), and a command without a Runner runs the real program.
func TestStubsAreIndependent(t *testing.T) {
	a, b := Stub(t), Stub(t)
	a.Register(`^tool$`, 0, "a\n")
	b.Register(`^tool$`, 0, "b\n")
	b.Missing("tool")
	var wg sync.WaitGroup
	got := make([]string, 2)
	for i, r := range []command.Runner{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := (&command.Cmd{Name: "tool", Runner: r}).Output(context.Background())
			if err != nil {
				t.Error(err)
			}
			got[i] = string(out)
		}()
	}
	wg.Wait()
	if got[0] != "a\n" || got[1] != "b\n" {
		t.Errorf("outputs %q", got)
	}
	if _, err := a.LookPath("tool"); err != nil {
		t.Errorf("b's Missing leaked into a: %v", err)
	}
	if out, err := command.Command("echo", "real").Output(context.Background()); err != nil || string(out) != "real\n" {
		t.Errorf("a command without a Runner is stubbed: %q %v", out, err)
	}
}

// TestOutputToAPipe: a stub's output reaches a pipe whose reader starts
// after Start, as make's output does in the build, and its failure
// carries the stub's exit status and the tail of what it printed.
func TestOutputToAPipe(t *testing.T) {
	s := Stub(t)
	s.Register(`^make x$`, 2, "a.c:1:1: error: boom\n")
	pr, pw := io.Pipe()
	p, err := (&command.Cmd{Name: "make", Args: []string{"x"}, Stdout: pw, Runner: s}).Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() { b, _ := io.ReadAll(pr); got <- string(b) }()
	err = p.Wait()
	pw.Close()
	if out := <-got; out != "a.c:1:1: error: boom\n" {
		t.Errorf("read from the pipe: %q", out)
	}
	var re *command.Error
	if !errors.As(err, &re) || re.ExitCode != 2 || !strings.Contains(re.Tail, "boom") {
		t.Errorf("failure %#v", err)
	}
}

type fakeT struct {
	errs    []string
	cleanup []func()
}

func (f *fakeT) Helper()                   {}
func (f *fakeT) Cleanup(fn func())         { f.cleanup = append(f.cleanup, fn) }
func (f *fakeT) Errorf(s string, a ...any) { f.errs = append(f.errs, fmt.Sprintf(s, a...)) }
