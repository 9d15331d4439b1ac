// Package runtest is the test Runner of internal/command: a strict table of
// expected commands that fails the test on a command nobody expected and
// on an expectation never met (the model is cli/cli's internal/run). A
// test gives it to the code under test through that code's Options, so
// tests that stub can run in parallel. Only tests import this package.
package runtest

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/errs"
)

// T is the part of testing.TB the stub needs.
type T interface {
	Helper()
	Errorf(format string, args ...any)
	Cleanup(func())
}

// Stubber answers commands from a table; it is a run.Runner.
type Stubber struct {
	t       T
	mu      sync.Mutex
	stubs   []*stub
	missing map[string]bool
}

type stub struct {
	pattern *regexp.Regexp
	exit    int
	output  string
	fn      func(*command.Cmd) error
	real    bool // run the real program
	used    int
}

var _ command.Runner = (*Stubber)(nil)

// Stub makes a Runner that answers every command from the table. At the
// end of the test, an expectation that no command met is an error.
func Stub(t T) *Stubber {
	t.Helper()
	s := &Stubber{t: t}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, st := range s.stubs {
			if st.used == 0 {
				t.Errorf("run: no command matched the stub %q", st.pattern)
			}
		}
	})
	return s
}

// Register answers a command line matching pattern (a regexp over the
// shell-quoted line) with output and an exit status.
func (s *Stubber) Register(pattern string, exit int, output string) {
	s.add(&stub{pattern: regexp.MustCompile(pattern), exit: exit, output: output})
}

// RegisterFunc answers a command line matching pattern by calling fn
// (when the command is waited for), which may write to the command's
// Stdout and returns its outcome (a failure: exit status 1).
func (s *Stubber) RegisterFunc(pattern string, fn func(*command.Cmd) error) {
	s.add(&stub{pattern: regexp.MustCompile(pattern), fn: fn})
}

// Passthrough runs the real program for a command line matching pattern
// (still counted: a passthrough never used is an error too).
func (s *Stubber) Passthrough(pattern string) {
	s.add(&stub{pattern: regexp.MustCompile(pattern), real: true})
}

func (s *Stubber) add(st *stub) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stubs = append(s.stubs, st)
}

// Missing makes LookPath say these programs are not installed.
func (s *Stubber) Missing(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.missing == nil {
		s.missing = map[string]bool{}
	}
	for _, n := range names {
		s.missing[n] = true
	}
}

// LookPath finds every program but those Missing names: the stub decides
// what runs.
func (s *Stubber) LookPath(name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.missing[name] {
		return "", fmt.Errorf("%s is not installed: %w", name, errs.ErrEnv)
	}
	return name, nil
}

// Start answers the command from the first entry of the table its line
// matches; a command no entry matches fails, and fails the test.
func (s *Stubber) Start(ctx context.Context, c *command.Cmd) (*command.Process, error) {
	line := c.String()
	s.mu.Lock()
	var match *stub
	for _, st := range s.stubs {
		if st.pattern.MatchString(line) {
			match = st
			break
		}
	}
	if match != nil {
		match.used++
	}
	s.mu.Unlock()
	if match == nil {
		s.t.Errorf("run: unexpected command %s", line)
		return nil, fmt.Errorf("unexpected command %s", line)
	}
	if match.real {
		return command.Exec{}.Start(ctx, c)
	}
	if match.fn != nil {
		return command.Stubbed(c, 1, func(io.Writer) error { return match.fn(c) }), nil
	}
	return command.Stubbed(c, match.exit, func(tail io.Writer) error {
		w := tail
		if c.Stdout != nil {
			w = io.MultiWriter(c.Stdout, tail)
		}
		io.Copy(w, strings.NewReader(match.output))
		if match.exit != 0 {
			return fmt.Errorf("exit status %d", match.exit)
		}
		return nil
	}), nil
}
