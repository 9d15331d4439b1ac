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
