package tree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/patchctl/patchctl/internal/cachelock"
	"github.com/patchctl/patchctl/internal/debian"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/progress"
)

// Cache is patchctl's cache folder Dir: the pristine trees (trees/),
// work trees (work/), the locks (locks/, see internal/cachelock) and,
// through Debian, the Debian packages and apt state they come from.
type Cache struct {
	Dir      string
	Progress *progress.Reporter
	// AptGet and AptCache are the apt programs, AptEtc the system's apt
	// configuration (see debian.Programs; tests put fakes here).
	AptGet   string
	AptCache string
	AptEtc   string
	// MinFree, when set, replaces the free-space estimate (tests).
	MinFree uint64
	// Offline refuses every download (a package not cached, a clone):
	// the environment's error, naming what is missing.
	Offline bool
}

// ErrOffline is a download that Offline refused (an environment error).
var ErrOffline = debian.ErrOffline

// Debian is the Debian part of the cache: the suites' apt state and the
// packages the pinned trees come from.
func (c *Cache) Debian() *debian.Cache {
	return &debian.Cache{Dir: c.Dir, Progress: c.Progress, Programs: debian.Programs{AptGet: c.AptGet, AptCache: c.AptCache, AptEtc: c.AptEtc}, MinFree: c.MinFree, Offline: c.Offline}
}

// LockPath is where the lock named name lives in the cache.
func (c *Cache) LockPath(name string) string { return cachelock.Path(c.Dir, name) }

// Lock takes the cache's exclusive lock called name (e.g. "work-6.12":
// the kernel's work tree and build folder); see cachelock.Take.
func (c *Cache) Lock(ctx context.Context, name string) (func(), error) {
	return cachelock.Take(ctx, c.Dir, name, c.Progress)
}

// DefaultCacheDir is $PATCHCTL_CACHE, else patchctl under the user's cache
// dir (~/.cache/patchctl), absolute; "" when neither is known (no HOME):
// there is no fallback to a shared folder such as /tmp.
func DefaultCacheDir() string {
	d, err := CacheDir("")
	if err != nil {
		return ""
	}
	return d
}

// CacheDir is the cache folder, made absolute once (the stages run tools
// in other folders, where a relative path means something else): given
// (--cache) when set, else $PATCHCTL_CACHE, else patchctl under
// $XDG_CACHE_HOME or ~/.cache. With none of them set it is an error that
// says what to set, never a shared folder.
func CacheDir(given string) (string, error) {
	d, what := given, "--cache"
	if d == "" {
		d, what = os.Getenv("PATCHCTL_CACHE"), "PATCHCTL_CACHE"
	}
	if d == "" {
		ucd, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no cache folder: %v: set PATCHCTL_CACHE to a folder of your own (or HOME): %w", err, errs.ErrEnv)
		}
		d, what = filepath.Join(ucd, "patchctl"), "the user's cache folder"
	}
	abs, err := filepath.Abs(d)
	if err != nil {
		return "", fmt.Errorf("cache %s (%s): %w: %w", d, what, err, errs.ErrEnv)
	}
	return abs, nil
}

// OpenCache makes the cache folder dir (see CacheDir) when it does not
// exist, private to the user (0700), and checks one that exists: it must
// be a folder (a symbolic link to one is followed) owned by the user and
// writable by nobody else, for patchctl trusts what it finds there (the
// trees it applies to, the packages it extracts). Errors are the
// environment's and say how to fix it.
func OpenCache(dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("cache %s is not an absolute path: %w", dir, errs.ErrEnv)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("making the cache %s: %w: set PATCHCTL_CACHE to a folder you can write: %w", dir, err, errs.ErrEnv)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("cache %s: %w: %w", dir, err, errs.ErrEnv)
	}
	if !st.IsDir() {
		return fmt.Errorf("cache %s is not a folder: set PATCHCTL_CACHE to a folder of your own: %w", dir, errs.ErrEnv)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("cache %s belongs to user %d, not to you (%d): another user could have planted trees in it; set PATCHCTL_CACHE to a folder of your own: %w", dir, sys.Uid, os.Geteuid(), errs.ErrEnv)
	}
	if m := st.Mode().Perm(); m&0o022 != 0 {
		return fmt.Errorf("cache %s is writable by others (mode %#o): another user could plant trees in it; run 'chmod go-w %s' or set PATCHCTL_CACHE to a folder of your own: %w", dir, m, dir, errs.ErrEnv)
	}
	return nil
}
