package main

import (
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
)

// build -j outside 1..4096 is a usage error naming the range, before any
// work (the root here holds nothing, so nothing could be built anyway).
func TestBuildJobsFlag(t *testing.T) {
	for _, args := range [][]string{{"-j", "-1"}, {"-j", "0"}, {"-j", "65537"}, {"--jobs=4097"}, {"-j", "1000000"}} {
		code, _, stderr := run(t, append([]string{"--root", t.TempDir(), "build"}, args...)...)
		if code != errs.ExitInput || !strings.Contains(stderr, "from 1 to 4096") {
			t.Errorf("build %q: exit %d: %s", args, code, stderr)
		}
	}
}
