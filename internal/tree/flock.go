package tree

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Exclusive takes an exclusive advisory lock on path (see lockFile).
func Exclusive(path string) (func(), error) { return lockFile(path) }

// LockPath is where the lock named name lives in the cache.
func (c *Cache) LockPath(name string) string { return filepath.Join(c.Dir, "locks", name) }

// lockFile takes an exclusive advisory lock on path (made if missing) and
// returns its release. Two patchctl processes (or test binaries run in
// parallel) preparing the same tree wait for each other.
func lockFile(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
