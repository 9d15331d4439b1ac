// Package command is the one place patchctl starts other programs. Every
// child runs in its own process group, dies with patchctl where Linux
// allows (Pdeathsig), and is killed as a group when its context ends, so
// an interrupted patchctl leaves no compiler or VM behind. Errors carry
// the tail of what the program printed.
//
// Programs start through a Runner: Exec, the default, runs the real
// ones; code that runs programs takes a Runner in its Options, and its
// tests give it another one (runtest.Stub: a strict table of expected
// commands that fails on a command nobody expected and on an expectation
// never met, after cli/cli's internal/run). Nothing here is global
// but the list of running children KillAll ends.
package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/patchctl/patchctl/internal/errs"
	"golang.org/x/sys/unix"
)

// Cmd is a program to run.
type Cmd struct {
	Name   string
	Args   []string
	Dir    string
	Env    []string // added to the environment
	Stdin  io.Reader
	Stdout io.Writer // where output streams to; nil: captured only
	// Stderr, when nil, goes where Stdout goes.
	Stderr io.Writer
	// Signal is what the group gets when the context ends (default
	// SIGTERM); SIGKILL follows after WaitDelay.
	Signal    syscall.Signal
	WaitDelay time.Duration
	// Foreground, when Stdin is a terminal, makes the child's process
	// group the terminal's foreground group while it runs, and
	// patchctl's again when it ends: an interactive program (QEMU's
	// console) in a group of its own would otherwise be stopped
	// (SIGTTIN, SIGTTOU) the moment it reads or sets up the terminal.
	Foreground bool
	// Runner starts it; nil: Exec, the real program.
	Runner Runner
}

// Runner starts programs and finds them on PATH. Code that runs
// programs takes one in its Options (nil meaning Exec); tests pass their
// own (internal/command/runtest).
type Runner interface {
	Start(ctx context.Context, c *Cmd) (*Process, error)
	LookPath(name string) (string, error)
}

// Exec is the Runner of the real programs.
type Exec struct{}

// Start starts the real program: see Cmd.Start.
func (Exec) Start(ctx context.Context, c *Cmd) (*Process, error) { return c.startReal(ctx) }

// LookPath finds an installed program.
func (Exec) LookPath(name string) (string, error) { return LookPath(name) }

// Or is r, or Exec when r is nil.
func Or(r Runner) Runner {
	if r == nil {
		return Exec{}
	}
	return r
}

// Command makes a Cmd.
func Command(name string, args ...string) *Cmd { return &Cmd{Name: name, Args: args} }

// String is the command as a shell would take it.
func (c *Cmd) String() string { return Quote(append([]string{c.Name}, c.Args...)) }

// Error is a program that ran and failed.
type Error struct {
	Cmd      string
	ExitCode int    // -1 when killed by a signal
	Tail     string // the last lines it printed
	Err      error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %v", e.Cmd, e.Err)
	if e.Tail != "" {
		s += "\n" + e.Tail
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// tailBuffer keeps the last n bytes written.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	n   int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.n {
		t.buf = t.buf[len(t.buf)-t.n:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimRight(string(t.buf), "\n"), "\n")
	if len(lines) > 12 {
		lines = lines[len(lines)-12:]
	}
	return strings.Join(lines, "\n")
}

// Run runs the command to its end.
func (c *Cmd) Run(ctx context.Context) error {
	p, err := c.Start(ctx)
	if err != nil {
		return err
	}
	return p.Wait()
}

// Output runs the command and returns its standard output.
func (c *Cmd) Output(ctx context.Context) ([]byte, error) {
	var out bytes.Buffer
	cc := *c
	cc.Stdout = &out
	if cc.Stderr == nil {
		cc.Stderr = io.Discard
	}
	err := cc.Run(ctx)
	return out.Bytes(), err
}

// Process is a started command.
type Process struct {
	cmd  *Cmd
	x    *exec.Cmd
	tail *tailBuffer
	wait func() error
	exit int // a stubbed process's exit status
	once sync.Once
	err  error
}

// Pid is the process id (0 for a stub).
func (p *Process) Pid() int {
	if p.x != nil && p.x.Process != nil {
		return p.x.Process.Pid
	}
	return 0
}

// Kill kills the whole process group at once.
func (p *Process) Kill() {
	if pid := p.Pid(); pid > 0 {
		syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// Wait waits for the command and, when it failed, returns an *Error with
// the tail of its output.
func (p *Process) Wait() error {
	p.once.Do(func() {
		err := p.wait()
		// The group may outlive its leader (a daemonized grandchild):
		// nothing of it may run on.
		if pid := p.Pid(); pid > 0 {
			syscall.Kill(-pid, syscall.SIGKILL)
		}
		if err == nil {
			return
		}
		e := &Error{Cmd: p.cmd.String(), ExitCode: -1, Tail: p.tail.String(), Err: err}
		if p.x == nil {
			e.ExitCode = p.exit
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			e.ExitCode = ee.ExitCode()
		}
		p.err = e
	})
	return p.err
}

// supervise runs the command in the background of a shell that, on
// SIGTERM, kills its process group; otherwise it exits with the
// command's status. The command's standard input is passed on (a
// background job's would be /dev/null).
const supervise = `exec 3<&0; trap 'kill -KILL 0' TERM; "$@" <&3 3<&- & exec 3<&-; wait $!`

// Start starts the command through its Runner. A program that is not
// installed is an environment error (errs.ErrEnv) naming it.
func (c *Cmd) Start(ctx context.Context) (*Process, error) {
	return Or(c.Runner).Start(ctx, c)
}

// Stubbed is a process of a Runner that starts none (a test's): it runs
// in Wait, where do writes what it prints (to the command's Stdout, as
// the program would, and to tail, which an error carries) and returns
// its outcome; Wait returns a failure as an *Error with exitCode. Output
// written in Wait, not Start, reaches a reader the caller starts after
// Start (a pipe), as a real program's does.
func Stubbed(c *Cmd, exitCode int, do func(tail io.Writer) error) *Process {
	p := &Process{cmd: c, tail: &tailBuffer{n: 8 << 10}, exit: exitCode}
	p.wait = func() error { return do(p.tail) }
	return p
}

func (c *Cmd) startReal(ctx context.Context) (*Process, error) {
	if _, err := exec.LookPath(c.Name); err != nil {
		return nil, fmt.Errorf("%s is not installed (run make deps): %w", c.Name, errs.ErrEnv)
	}
	// A shell leads the child's process group and outlives nothing: when
	// patchctl dies, even by SIGKILL, the kernel sends the shell SIGTERM
	// (Pdeathsig), and it kills the whole group, grandchildren included
	// (make's sub-makes and compilers).
	x := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", supervise, "patchctl-child", c.Name}, c.Args...)...)
	x.Dir = c.Dir
	// An inherited MAKEFLAGS cleaned (makeflags.go), then the command's
	// own settings, which win.
	if env := append(MakeflagsEnv(), c.Env...); len(env) > 0 {
		x.Env = append(os.Environ(), env...)
	}
	stdin := c.Stdin
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	// A reader that is not a file (a pipe a test drives, a person's
	// console relayed) is copied into a pipe of our own, which closes
	// when the program exits: os/exec would wait for a reader that never
	// ends (an interactive console) before Wait returns.
	var stdinR, stdinW *os.File
	if _, isFile := stdin.(*os.File); isFile || c.Stdin == nil {
		x.Stdin = stdin
	} else {
		var err error
		if stdinR, stdinW, err = os.Pipe(); err != nil {
			return nil, fmt.Errorf("starting %s: %w: %w", c.Name, err, errs.ErrEnv)
		}
		x.Stdin = stdinR
		go func() { io.Copy(stdinW, stdin); stdinW.Close() }()
	}
	tail := &tailBuffer{n: 8 << 10}
	var stdout io.Writer = tail
	if c.Stdout != nil {
		stdout = io.MultiWriter(c.Stdout, tail)
	}
	stderr := stdout
	if c.Stderr != nil {
		stderr = io.MultiWriter(c.Stderr, tail)
	}
	x.Stdout, x.Stderr = stdout, stderr
	x.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	tty := -1
	if f, ok := c.Stdin.(*os.File); ok && c.Foreground && isTerminal(f) {
		tty = int(f.Fd())
		x.SysProcAttr.Foreground, x.SysProcAttr.Ctty = true, tty
	}
	sig := c.Signal
	if sig == 0 {
		sig = syscall.SIGTERM
	}
	x.Cancel = func() error { return syscall.Kill(-x.Process.Pid, sig) }
	x.WaitDelay = c.WaitDelay
	if x.WaitDelay == 0 {
		x.WaitDelay = 10 * time.Second
	}
	err := x.Start()
	if stdinR != nil {
		stdinR.Close() // the child has its copy
	}
	if err != nil {
		if stdinW != nil {
			stdinW.Close()
		}
		return nil, fmt.Errorf("starting %s: %w: %w", c.Name, err, errs.ErrEnv)
	}
	track(x.Process.Pid)
	p := &Process{cmd: c, x: x, tail: tail}
	p.wait = func() error {
		defer untrack(x.Process.Pid)
		err := x.Wait()
		if tty >= 0 {
			takeTerminal(tty)
		}
		if stdinW != nil {
			stdinW.Close() // the copy stops at the reader's next bytes
		}
		return err
	}
	return p, nil
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// takeTerminal makes patchctl's process group the terminal's foreground
// group again (from the background, where SIGTTOU would stop it).
func takeTerminal(fd int) {
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, syscall.Getpgrp())
}

// LookPath finds an installed program; not installed is an environment
// error (errs.ErrEnv).
func LookPath(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s is not installed: %w", name, errs.ErrEnv)
	}
	return p, nil
}

// Quote joins args into a line a POSIX shell reads back as the same args.
func Quote(args []string) string {
	var q []string
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n\"'$`\\|&;<>()*?[]#~=%!{}") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q = append(q, a)
	}
	return strings.Join(q, " ")
}

// The running children, so that a signal to patchctl can take their
// groups down before it exits.
var children struct {
	mu   sync.Mutex
	pids map[int]bool
}

func track(pid int) {
	children.mu.Lock()
	defer children.mu.Unlock()
	if children.pids == nil {
		children.pids = map[int]bool{}
	}
	children.pids[pid] = true
}

func untrack(pid int) {
	children.mu.Lock()
	defer children.mu.Unlock()
	delete(children.pids, pid)
}

// KillAll kills the process group of every running child.
func KillAll() {
	children.mu.Lock()
	defer children.mu.Unlock()
	for pid := range children.pids {
		syscall.Kill(-pid, syscall.SIGKILL)
	}
}
