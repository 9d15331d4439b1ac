package debian

import (
	"fmt"
	"path/filepath"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/progress"
)

// Cache is the Debian part of patchctl's cache folder Dir: the apt state
// of each suite (apt/<suite>/) and the downloaded packages (debs/).
type Cache struct {
	Dir      string
	Progress *progress.Reporter
	Programs
	// MinFree, when set, replaces the free-space estimate of an
	// extraction (tests).
	MinFree uint64
	// Offline refuses every download (a package not cached): the
	// environment's error, naming what is missing.
	Offline bool
}

// Programs are the apt programs and the system's apt configuration; ""
// means the system's own.
type Programs struct {
	// AptGet and AptCache are the apt programs (tests put fakes here).
	AptGet   string
	AptCache string
	// AptEtc is the system's apt configuration, read for its Debian
	// mirror and never written (default /etc/apt).
	AptEtc string
}

// ErrOffline is a download that Offline refused (an environment error).
var ErrOffline = fmt.Errorf("offline: nothing is downloaded: %w", errs.ErrEnv)

// PartialDownloads are the downloads of pkg that an interrupted fetch
// left behind (folders under debs/); only the holder of the lock of the
// tree being prepared from pkg may remove them.
func (c *Cache) PartialDownloads(pkg string) []string {
	dl, _ := filepath.Glob(filepath.Join(c.Dir, "debs", ".download-"+pkg+"-*"))
	return dl
}
