package build

import (
	"errors"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/tree"
)

// -j is 1 to MaxJobs: -1 is not the core count, 65537 does not reach
// make (its jobserver would block for ever), each refused as a usage
// error naming the range (issue 31, finding 12). Checked before anything
// else of a build, so no tree is needed here.
func TestJobsRange(t *testing.T) {
	for _, n := range []int{-1, -65537, MaxJobs + 1, 65537, 1 << 30} {
		_, err := Key(Options{Jobs: n, Kernel: &tree.Kernel{Name: testkernel.Default}})
		if !errors.Is(err, errs.ErrUsage) || !strings.Contains(err.Error(), "from 1 to 4096") {
			t.Errorf("-j %d: %v, want a usage error naming the range", n, err)
		}
	}
	for _, n := range []int{1, 2, MaxJobs} {
		if err := CheckJobs(n); err != nil {
			t.Errorf("-j %d: %v", n, err)
		}
	}
	if err := CheckJobs(0); err == nil {
		t.Error("-j 0 given: accepted")
	}
}
