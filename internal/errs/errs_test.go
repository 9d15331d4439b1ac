package errs

import (
	"errors"
	"fmt"
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
