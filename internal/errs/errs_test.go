package errs

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCode(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{fmt.Errorf("check: 3 findings: %w", ErrFindings), ExitFindings},
		{fmt.Errorf("importing a.patch: %w", ErrInput), ExitInput},
		{fmt.Errorf("flag: %w", ErrUsage), ExitInput},
		{errors.New("disk full"), ExitEnv},
		{fmt.Errorf("qemu missing: %w", ErrEnv), ExitEnv},
	}
	for _, c := range cases {
		if got := Code(c.err); got != c.want {
			t.Errorf("Code(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

func TestMessage(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%s: %w", Count(1, "finding"), ErrFindings), "1 finding"},
		{fmt.Errorf("6.12 check: %s, %s: %w", Count(0, "error"), Count(2, "finding"), ErrFindings), "6.12 check: 0 errors, 2 findings"},
		{fmt.Errorf("no qemu: %w", ErrEnv), "no qemu: environment error"},
		{ErrFindings, "findings"},
	} {
		if got := Message(c.err); got != c.want {
			t.Errorf("Message(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

// TestMessageSaysItOnce: every sentinel, wrapped twice or three times in
// the ways stages and the command line wrap (a stage's error wrapped by
// its caller, an interrupt wrapping an environment error, a usage error
// around an input error), is said once; for findings not at all at the
// end (the exit status says it). The exit status is unchanged.
func TestMessageSaysItOnce(t *testing.T) {
	sentinels := []error{ErrInput, ErrUsage, ErrFindings, ErrEnv}
	wraps := []func(s error) error{
		func(s error) error { return fmt.Errorf("a: %w", fmt.Errorf("b: %w", s)) },
		func(s error) error { return fmt.Errorf("a: %w: %w", fmt.Errorf("b: %w", s), s) },
		func(s error) error {
			return fmt.Errorf("interrupted: %w: %w", fmt.Errorf("a: %w: %w", errors.New("b"), s), s)
		},
		func(s error) error { return fmt.Errorf("%w: a: %w", s, fmt.Errorf("b: %w", s)) },
		func(s error) error { return fmt.Errorf("a: %v: %w", fmt.Errorf("b: %w", s), s) },
		func(s error) error { return fmt.Errorf("a: %w", fmt.Errorf("b: %w: %w", s, fmt.Errorf("c: %w", s))) },
	}
	n := 0
	for _, s := range sentinels {
		for i, w := range wraps {
			n++
			err := w(s)
			msg := Message(err)
			want := 1
			if errors.Is(s, ErrFindings) {
				want = 0
			}
			if got := strings.Count(msg, s.Error()); got != want {
				t.Errorf("%s, wrap %d: %q says %q %d times, want %d", s, i, msg, s, got, want)
			}
			for _, part := range []string{"a", "b"} {
				if !strings.Contains(msg, part) {
					t.Errorf("%s, wrap %d: %q lost %q", s, i, msg, part)
				}
			}
			if Code(err) != Code(s) {
				t.Errorf("%s, wrap %d: exit %d, want %d", s, i, Code(err), Code(s))
			}
		}
	}
	// Two classes: both said, once each.
	if got := Message(fmt.Errorf("%w: a: %w: %w", ErrUsage, fmt.Errorf("b: %w", ErrInput), ErrInput)); got != "usage error: a: b: input error" {
		t.Errorf("two classes: %q", got)
	}
	t.Logf("%d wrapped errors", n)
}
