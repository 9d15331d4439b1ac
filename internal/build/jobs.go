package build

import (
	"fmt"

	"github.com/patchctl/patchctl/internal/errs"
)

// MaxJobs bounds -j. GNU make hands out job slots through a jobserver
// pipe, which holds 64 KiB: a -j above 65536 blocks make for ever (issue
// 31, finding 12). 4096 is far more than any machine patchctl builds on
// can use.
const MaxJobs = 4096

// CheckJobs validates a -j value the user gave: 1 to MaxJobs. (Leaving
// -j out means the number of cores.)
func CheckJobs(n int) error {
	if n < 1 || n > MaxJobs {
		return fmt.Errorf("-j %d: want a number of parallel jobs from 1 to %d (leave -j out for the number of cores): %w", n, MaxJobs, errs.ErrUsage)
	}
	return nil
}
