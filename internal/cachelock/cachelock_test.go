package cachelock

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/progress"
)

// TestLockWaitNeverNamesItself: a wait for a lock that another task of
// the same process holds (the distro path's download beside the tree's
// preparation) does not say "held by pid <itself>"; a wait for another
// process's lock names that process.
func TestLockWaitNeverNamesItself(t *testing.T) {
	var log strings.Builder
	dir, p := t.TempDir(), progress.New(&log)
	release, err := Take(context.Background(), dir, "distro-9.9", p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := Take(ctx, dir, "distro-9.9", p); err == nil {
		t.Fatal("took a held lock")
	}
	release()
	got := log.String()
	if strings.Contains(got, "held by pid") || !strings.Contains(got, "another task of this run holds it") {
		t.Errorf("wait message: %q", got)
	}
	other := waitMessage("work-9.9", "pid 1 (patchctl run) since 2026-12-02T01:00:00Z", os.Getpid())
	if other != "waiting for the work-9.9 lock, held by pid 1 (patchctl run) since 2026-12-02T01:00:00Z" {
		t.Errorf("another process's lock: %q", other)
	}
}
