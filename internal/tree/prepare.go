package tree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
)

// PristineDir is where kernel k's pristine tree lives once prepared.
// A local tree is its own pristine tree.
func (c *Cache) PristineDir(k *Kernel) string {
	if k.Local != nil {
		return k.Local.Dir
	}
	return filepath.Join(c.Dir, "trees", k.Name)
}

func (c *Cache) markerPath(k *Kernel) string {
	return filepath.Join(c.Dir, "trees", k.Name+".prepared")
}

// Prepared reports whether k's pristine tree is complete and from k's source.
func (c *Cache) Prepared(k *Kernel) bool {
	if k.Local != nil {
		_, err := os.Stat(filepath.Join(k.Local.Dir, "Makefile"))
		return err == nil
	}
	b, err := os.ReadFile(c.markerPath(k))
	if err != nil || strings.TrimSpace(string(b)) != k.Key() {
		return false
	}
	_, err = os.Stat(c.PristineDir(k))
	return err == nil
}

// Prepare makes k's pristine tree. A prepared tree is a no-op; a tree from
// another source or left incomplete is replaced, but only once its
// successor is complete: a failed download leaves what was there. The
// tree appears under its final name only when complete and verified, with
// its manifest (every file's size and hash).
func (c *Cache) Prepare(ctx context.Context, k *Kernel) (string, error) {
	return c.prepare(ctx, k, false)
}

// Reprepare extracts k's tree again even when it is prepared (to repair a
// damaged one); the old tree stays until the new one is complete.
func (c *Cache) Reprepare(ctx context.Context, k *Kernel) (string, error) {
	return c.prepare(ctx, k, true)
}

func (c *Cache) prepare(ctx context.Context, k *Kernel, force bool) (_ string, err error) {
	// An interrupt reads as one, whatever step it stopped (a download,
	// dpkg-deb, tar, the lock wait), not as that step's failure.
	defer func() {
		if err != nil && ctx.Err() != nil {
			err = fmt.Errorf("preparing %s: interrupted; the partial tree is removed (the next prepare starts it again): %w: %w", k.Name, ctx.Err(), errs.ErrEnv)
		}
	}()
	dir := c.PristineDir(k)
	if !force && c.Prepared(k) {
		return dir, nil
	}
	if k.Local != nil {
		return "", fmt.Errorf("local tree %s has no Makefile any more: %w", k.Local.Dir, errs.ErrInput)
	}
	unlock, err := c.Lock(ctx, "tree-"+k.Name)
	if err != nil {
		return "", fmt.Errorf("preparing %s: %w", k.Name, err)
	}
	defer unlock()
	// What an interrupted prepare of this kernel left: under the lock,
	// nobody is using it.
	c.removeStale(k)
	if !force && c.Prepared(k) { // another process finished it while we waited
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("preparing %s: %w", k.Name, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+k.Name+".tmp-")
	if err != nil {
		return "", fmt.Errorf("preparing %s: %w", k.Name, err)
	}
	defer os.RemoveAll(tmp)
	top, m, err := c.fetchTree(ctx, k, tmp)
	if err != nil {
		return "", fmt.Errorf("preparing %s: %w", k.Name, err)
	}
	if err := c.replaceTree(k, top, tmp, m); err != nil {
		return "", err
	}
	if force {
		// The work tree links into the old tree's files: make it anew.
		if err := c.dropWorkTree(ctx, k); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// fetchTree puts k's source into the folder tmp (from its Debian
// package or its git repository), verified, and records its manifest. It
// returns the tree's top folder.
func (c *Cache) fetchTree(ctx context.Context, k *Kernel, tmp string) (string, *manifest, error) {
	var top string
	var err error
	switch {
	case k.Debian != nil:
		top, err = c.Debian().ExtractSource(ctx, k.Name, k.Debian, tmp)
	case k.Git != nil:
		top, err = c.prepareGit(ctx, k, tmp)
	}
	if err != nil {
		return "", nil, err
	}
	c.Progress.Start("manifest " + k.Name)
	m, err := makeManifest(top, k.Key())
	if err != nil {
		return "", nil, err
	}
	c.Progress.Done("%d files recorded", len(m.Files))
	return top, m, nil
}

// replaceTree makes the complete tree top k's pristine tree, with its
// manifest m and marker: only now does the old one go (aside into tmp,
// removed with it).
func (c *Cache) replaceTree(k *Kernel, top, tmp string, m *manifest) error {
	os.Remove(c.markerPath(k))
	if err := os.Rename(c.PristineDir(k), filepath.Join(tmp, "old")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("preparing %s: moving the old tree aside: %w", k.Name, err)
	}
	if err := os.Rename(top, c.PristineDir(k)); err != nil {
		return fmt.Errorf("preparing %s: %w", k.Name, err)
	}
	if err := writeManifest(c.manifestPath(k), m); err != nil {
		return fmt.Errorf("preparing %s: %w", k.Name, err)
	}
	if err := fsutil.WriteFile(c.markerPath(k), []byte(k.Key()+"\n"), 0o644); err != nil {
		return fmt.Errorf("preparing %s: %w", k.Name, err)
	}
	return nil
}

// dropWorkTree removes k's work tree and check tree, each under its lock
// (their files link into a pristine tree that was replaced).
func (c *Cache) dropWorkTree(ctx context.Context, k *Kernel) error {
	for _, t := range []struct{ lock, dir, what string }{
		{"work-" + k.Name, c.WorkTreeDir(k), "work tree"},
		{"check-" + k.Name, c.CheckTreeDir(k), "check tree"},
	} {
		release, err := c.Lock(ctx, t.lock)
		if err != nil {
			return err
		}
		err = os.RemoveAll(t.dir)
		release()
		if err != nil {
			return fmt.Errorf("preparing %s: removing the %s: %w", k.Name, t.what, err)
		}
	}
	return nil
}

// removeStale removes the temporary trees and downloads that an
// interrupted prepare of k left behind; the caller holds k's tree lock.
func (c *Cache) removeStale(k *Kernel) {
	stale, _ := filepath.Glob(filepath.Join(c.Dir, "trees", "."+k.Name+".tmp-*"))
	if k.Debian != nil {
		stale = append(stale, c.Debian().PartialDownloads(k.Debian.Package)...)
	}
	for _, p := range stale {
		c.Progress.Note("removing %s, left by an interrupted prepare", p)
		os.RemoveAll(p)
	}
}
