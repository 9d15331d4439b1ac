package tree

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/progress"
)

// TestOfflineRefusesDownloads: with Offline, a package not in the cache
// is the environment's error naming it, and apt-get never runs; the
// cache, once filled, serves offline.
func TestOfflineRefusesDownloads(t *testing.T) {
	f := newFakeDebian(t)
	c := &Cache{Dir: t.TempDir(), AptGet: f.aptGet, Offline: true}
	_, err := c.Prepare(context.Background(), &f.kernel)
	if !errors.Is(err, ErrOffline) || errs.Code(err) != errs.ExitEnv || !strings.Contains(err.Error(), "linux-source-9.9=9.9.1-1 is not in the cache") {
		t.Fatalf("offline prepare: %v", err)
	}
	if log, _ := os.ReadFile(f.logFile); len(log) > 0 {
		t.Errorf("apt-get ran offline: %q", log)
	}
	c.Offline = false
	if _, err := c.Prepare(context.Background(), &f.kernel); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(c.PristineDir(&f.kernel))
	os.Remove(c.markerPath(&f.kernel))
	c.Offline = true
	if _, err := c.Prepare(context.Background(), &f.kernel); err != nil {
		t.Errorf("offline with the package cached: %v", err)
	}
	g := &Kernel{Name: "g", Git: &GitSource{URL: "https://example.org/linux.git", Tag: "v9.9"}}
	if _, err := c.Prepare(context.Background(), g); !errors.Is(err, ErrOffline) {
		t.Errorf("offline clone: %v", err)
	}
}

// TestDownloadSaysHowBig: before a download starts, the progress line
// names the package and its size as apt-cache knows it.
func TestDownloadSaysHowBig(t *testing.T) {
	f := newFakeDebian(t)
	os.WriteFile(filepath.Join(filepath.Dir(f.aptGet), "apt-cache"), []byte("#!/bin/sh\nprintf 'Package: linux-source-9.9\\nSize: 153476148\\n'\n"), 0o755)
	var log bytes.Buffer
	c := &Cache{Dir: t.TempDir(), AptGet: f.aptGet, Progress: progress.New(&log)}
	if _, err := c.Prepare(context.Background(), &f.kernel); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "download linux-source-9.9=9.9.1-1 (153 MB) from Debian into ") {
		t.Errorf("progress:\n%s", log.String())
	}
}
