package run

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
)

// T is the part of testing.TB the stub needs.
type T interface {
	Helper()
	Errorf(format string, args ...any)
	Cleanup(func())
}

// Stubber answers commands from a table while a test runs.
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
	fn      func(*Cmd) error
	real    bool // run the real program
	used    int
}

var current struct {
	mu sync.Mutex
	s  *Stubber
}

func active() *Stubber {
	current.mu.Lock()
	defer current.mu.Unlock()
	return current.s
}

// Stub makes every command the test runs answer from the table. At the
// end of the test, an expectation that no command met is an error.
// Tests that stub must not run in parallel with each other.
func Stub(t T) *Stubber {
	t.Helper()
	s := &Stubber{t: t}
	current.mu.Lock()
	current.s = s
	current.mu.Unlock()
	t.Cleanup(func() {
		current.mu.Lock()
		current.s = nil
		current.mu.Unlock()
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
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stubs = append(s.stubs, &stub{pattern: regexp.MustCompile(pattern), exit: exit, output: output})
}

// RegisterFunc answers a command line matching pattern by calling fn,
// which may write to the command's Stdout and returns its outcome.
func (s *Stubber) RegisterFunc(pattern string, fn func(*Cmd) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stubs = append(s.stubs, &stub{pattern: regexp.MustCompile(pattern), fn: fn})
}

// Passthrough runs the real program for a command line matching pattern
// (still counted: a passthrough never used is an error too).
func (s *Stubber) Passthrough(pattern string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stubs = append(s.stubs, &stub{pattern: regexp.MustCompile(pattern), real: true})
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

func (s *Stubber) isMissing(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.missing[name]
}

func (s *Stubber) start(ctx context.Context, c *Cmd) (*Process, error) {
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
		return c.startReal(ctx)
	}
	tail := &tailBuffer{n: 8 << 10}
	var err error
	if match.fn != nil {
		err = match.fn(c)
	} else {
		var w io.Writer = tail
		if c.Stdout != nil {
			w = io.MultiWriter(c.Stdout, tail)
		}
		io.Copy(w, strings.NewReader(match.output))
		if match.exit != 0 {
			err = fmt.Errorf("exit status %d", match.exit)
		}
	}
	p := &Process{cmd: c, tail: tail, wait: func() error { return err }}
	if err != nil {
		p.err = &Error{Cmd: line, ExitCode: match.exit, Tail: tail.String(), Err: err}
		p.once.Do(func() {})
	}
	return p, nil
}
