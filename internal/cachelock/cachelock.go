// Package cachelock is the cache folder's named exclusive locks
// (locks/<name> under the cache: "work-6.12" for a kernel's work tree and
// build folders, "tree-6.12" for its pristine tree's preparation,
// "apt-<suite>" for a suite's apt state, ...). A lock is an advisory
// flock on its file, which says who holds it for whoever waits; the
// kernel releases it when the holder dies.
package cachelock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/patchctl/patchctl/internal/progress"
)

// Path is where the lock named name of the cache folder cacheDir lives.
func Path(cacheDir, name string) string { return filepath.Join(cacheDir, "locks", name) }

// Take takes the cache's exclusive lock called name. While another
// process holds it, the wait is said on p's progress line: who holds it
// and since when. The wait ends with ctx. The lock is released by the
// returned function, or by the kernel when the process dies.
func Take(ctx context.Context, cacheDir, name string, p *progress.Reporter) (func(), error) {
	return lockFile(ctx, Path(cacheDir, name), func(holder string) {
		p.Note("%s", waitMessage(name, holder, os.Getpid()))
	})
}

// waitMessage says what a wait for the lock name is waiting for. holder
// is the lock file's "pid N (command) since T"; when N is the waiting
// process itself (another of its tasks holds the lock: on the distro
// path, the download that runs beside the tree's preparation), it says
// so instead of naming itself as the holder.
func waitMessage(name, holder string, self int) string {
	var pid int
	if _, err := fmt.Sscanf(holder, "pid %d", &pid); err == nil && pid == self {
		since := ""
		if _, t, ok := strings.Cut(holder, ") since "); ok {
			since = " since " + t
		}
		return fmt.Sprintf("waiting for the %s lock: another task of this run holds it%s (it is released when that task ends)", name, since)
	}
	return fmt.Sprintf("waiting for the %s lock, held by %s", name, holder)
}

// lockFile takes an exclusive advisory lock on path (made if missing) and
// writes who holds it into the file. A process waiting for the lock polls,
// so that its context can end the wait.
func lockFile(ctx context.Context, path string, waiting func(holder string)) (func(), error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	said := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if !said && waiting != nil {
			said = true
			holder, _ := os.ReadFile(path)
			h := strings.TrimSpace(string(holder))
			if h == "" {
				h = "another process"
			}
			waiting(h)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for %s: %w", filepath.Base(path), ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	// Who holds it, for whoever waits next.
	_ = f.Truncate(0) // the holder line is a hint only
	fmt.Fprintf(f, "pid %d (%s) since %s\n", os.Getpid(), strings.Join(os.Args, " "), time.Now().Format(time.RFC3339))
	return func() {
		_ = f.Truncate(0)
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// TryTake takes the cache's lock called name when no process holds it,
// without waiting: ok is false (and err nil) when another holds it.
func TryTake(cacheDir, name string) (release func(), ok bool, err error) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	release, err = lockFile(ctx, Path(cacheDir, name), nil)
	if errors.Is(err, context.Canceled) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return release, true, nil
}
