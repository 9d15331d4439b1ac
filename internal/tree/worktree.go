package tree

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
)

// metaDir holds a work tree's state, journal and backups.
const metaDir = ".patchctl"

// WorkTree is a hardlink farm of a pristine tree that patches change.
type WorkTree struct {
	Dir      string
	Pristine string
	// beforeRename, when set, runs before each file replacement (tests
	// inject failures and kills with it).
	beforeRename func(i int, path string) error
}

// State is what a work tree holds beyond its pristine tree.
type State struct {
	PristineKey string   `json:"pristine_key"`
	Applied     []string `json:"applied"` // patch sources, in order
	Touched     []string `json:"touched"` // paths that differ from pristine
}

// Change is one file's new content. Pristine restores the pristine file
// (by link); Delete removes the file; otherwise Content is written.
type Change struct {
	Path     string
	Content  []byte
	Mode     os.FileMode
	Pristine bool
	Delete   bool
}

// TestHookBeforeRename, when set, runs before each file replacement of
// every work tree (tests of other packages inject failures with it;
// patchctl never sets it).
var TestHookBeforeRename func(i int, path string) error

// WorkTreeDir is where k's work tree lives: src beside k's build folders
// (build/K/src; internal/build's folders are build/K/<config hash>), so
// every compile names the sources ../src/..., whatever the kernel's name
// and wherever the cache is, and ccache (base_dir the cache) finds the
// same source's objects from any copy of it: a local tree (--tree) of a
// pinned kernel's source, another cache. The build folders are not
// inside the work tree: resetting or remaking it never touches them.
func (c *Cache) WorkTreeDir(k *Kernel) string { return filepath.Join(c.Dir, "build", k.Name, "src") }

// formerWorkTreeDir is where work trees lived before (work/K).
func (c *Cache) formerWorkTreeDir(k *Kernel) string { return filepath.Join(c.Dir, "work", k.Name) }

// HoldWorkTree takes k's work lock and returns the work tree, making it
// from the pristine tree when it does not exist and rolling back a change
// a kill interrupted. The lock covers the work tree and k's build
// folders: whoever sets the work tree's state and then reads it (a build,
// a check) holds it throughout, so no other process can change the
// sources under it. release gives the lock back.
func (c *Cache) HoldWorkTree(ctx context.Context, k *Kernel) (w *WorkTree, release func(), err error) {
	return c.holdTree(ctx, k, c.WorkTreeDir(k), "work-"+k.Name, "work tree")
}

// CheckTreeDir is where k's check tree lives: a second work tree of the
// same pristine tree that only the check stage sets and reads
// (HoldCheckTree).
func (c *Cache) CheckTreeDir(k *Kernel) string {
	return filepath.Join(c.Dir, "build", k.Name, "check-src")
}

// HoldCheckTree is HoldWorkTree for k's check tree, under a lock of its
// own: a check reads the patched state there while a build has the work
// tree in another state (the patched state with the harness in), so the
// check of a run and its build go on side by side. Nothing compiles in
// the check tree, and no build folder is covered by its lock.
func (c *Cache) HoldCheckTree(ctx context.Context, k *Kernel) (w *WorkTree, release func(), err error) {
	return c.holdTree(ctx, k, c.CheckTreeDir(k), "check-"+k.Name, "check tree")
}

// holdTree takes the lock named lock and returns the work tree at dir,
// made from k's pristine tree when missing or made from another one.
func (c *Cache) holdTree(ctx context.Context, k *Kernel, dir, lock, what string) (w *WorkTree, release func(), err error) {
	if !c.Prepared(k) {
		return nil, nil, fmt.Errorf("kernel %s is not prepared: run 'patchctl tree prepare --kernel %s': %w", k.Name, k.Name, errs.ErrInput)
	}
	unlock, err := c.Lock(ctx, lock)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			unlock()
		}
	}()
	w = &WorkTree{Dir: dir, Pristine: c.PristineDir(k), beforeRename: TestHookBeforeRename}
	st, err := w.State()
	if err == nil && st.PristineKey == k.Key() {
		if err := w.Recover(); err != nil {
			return nil, nil, err
		}
		return w, unlock, nil
	}
	// Missing, or made from another pristine tree: make it anew.
	c.Progress.Start(what + " " + k.Name)
	if err := os.RemoveAll(w.Dir); err != nil {
		return nil, nil, fmt.Errorf("removing old %s: %w", what, err)
	}
	// A work tree of the former layout (work/K), under the same lock.
	if old := c.formerWorkTreeDir(k); dir == c.WorkTreeDir(k) {
		if _, err := os.Stat(filepath.Join(old, metaDir)); err == nil {
			os.RemoveAll(old)
		}
	}
	if err := os.MkdirAll(filepath.Dir(w.Dir), 0o755); err != nil {
		return nil, nil, fmt.Errorf("making the %s of %s: %w", what, k.Name, err)
	}
	tmp := w.Dir + ".tmp"
	os.RemoveAll(tmp)
	n, err := linkFarm(w.Pristine, tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, nil, fmt.Errorf("making the %s of %s: %w", what, k.Name, err)
	}
	if err := os.MkdirAll(filepath.Join(tmp, metaDir), 0o755); err != nil {
		return nil, nil, err
	}
	if err := fsutil.WriteJSON(filepath.Join(tmp, metaDir, "state.json"), State{PristineKey: k.Key()}); err != nil {
		return nil, nil, err
	}
	if err := os.Rename(tmp, w.Dir); err != nil {
		return nil, nil, err
	}
	c.Progress.Done("%d files linked", n)
	return w, unlock, nil
}

// linkFarm recreates src's folders under dst and hardlinks its files.
// The walk makes the folders (each before what is in it); the links, a
// system call per file (86k on 6.12), are made by workers beside it.
func linkFarm(src, dst string) (int, error) {
	type job struct {
		from, to string
		d        fs.DirEntry
	}
	jobs := make(chan job, 256)
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	for range max(2, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				err := os.Link(j.from, j.to)
				if err != nil && isCrossDevice(err) {
					// A local tree on another file system than the
					// cache: copy (files are only ever replaced by
					// rename, so a copy behaves as a link does).
					err = copyFile(j.from, j.to, j.d)
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	n := 0
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == ".git" && d.IsDir() {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, target)
		default:
			n++
			jobs <- job{p, target, d}
			return nil
		}
	})
	close(jobs)
	wg.Wait()
	return n, errors.Join(err, firstErr)
}

// State reads the work tree's state.
func (w *WorkTree) State() (*State, error) {
	var st State
	b, err := os.ReadFile(filepath.Join(w.Dir, metaDir, "state.json"))
	if err != nil {
		return nil, err
	}
	return &st, json.Unmarshal(b, &st)
}

// journal records how to undo a commit in progress: the files it
// replaces and the state it overwrites.
type journal struct {
	Entries []journalEntry `json:"entries"`
	// State is the backup of state.json ("" when there was none).
	State string `json:"state,omitempty"`
}

type journalEntry struct {
	Path   string `json:"path"`
	Backup string `json:"backup,omitempty"` // "" when the file did not exist
}

func (w *WorkTree) meta(p ...string) string {
	return filepath.Join(append([]string{w.Dir, metaDir}, p...)...)
}

// Commit makes changes and records st, all or nothing; the caller holds
// the work tree (HoldWorkTree). Before anything changes, every file to be
// replaced and state.json are hardlinked into a backup folder and a
// journal is written; a failure rolls back at once, and a kill is rolled
// back by the next Recover, state included.
func (w *WorkTree) Commit(changes []Change, st State) (err error) {
	if err := w.Recover(); err != nil {
		return err
	}
	// Every path is checked before anything changes: a hostile one (into
	// patchctl's own folder, through a symbolic link or a file, a name too
	// long) is the input's fault and leaves the tree as it was.
	for _, c := range changes {
		if err := w.checkPath(c); err != nil {
			return err
		}
	}
	changes = w.pending(changes)
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	if err := w.writeJournal(changes); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			if rerr := w.rollback(); rerr != nil {
				err = fmt.Errorf("%w; rolling back also failed: %v", err, rerr)
			}
		}
	}()
	for i, c := range changes {
		p := filepath.Join(w.Dir, filepath.FromSlash(c.Path))
		if w.beforeRename != nil {
			if err := w.beforeRename(i, c.Path); err != nil {
				return err
			}
		}
		if err := w.replace(p, c); err != nil {
			return fmt.Errorf("writing %s: %w", c.Path, err)
		}
	}
	if err := fsutil.WriteJSON(w.meta("state.json"), st); err != nil {
		return err
	}
	// The state is new, the journal still there: a kill from here on is
	// rolled back, state included.
	if w.beforeRename != nil {
		if err := w.beforeRename(len(changes), metaDir+"/state.json"); err != nil {
			return err
		}
	}
	if err := os.Remove(w.meta("journal.json")); err != nil {
		return err
	}
	return os.RemoveAll(w.meta("backup"))
}

// writeJournal hardlinks every file that changes will replace, and
// state.json, into a fresh backup folder and writes the journal that
// says how to put them back: from here on a failure or a kill is rolled
// back.
func (w *WorkTree) writeJournal(changes []Change) error {
	backup := w.meta("backup")
	os.RemoveAll(backup)
	if err := os.MkdirAll(backup, 0o755); err != nil {
		return err
	}
	var j journal
	for i, c := range changes {
		e := journalEntry{Path: c.Path}
		p := filepath.Join(w.Dir, filepath.FromSlash(c.Path))
		if _, err := os.Lstat(p); err == nil {
			e.Backup = fmt.Sprintf("%d", i)
			if err := os.Link(p, filepath.Join(backup, e.Backup)); err != nil {
				return fmt.Errorf("backing up %s: %w", c.Path, err)
			}
		}
		j.Entries = append(j.Entries, e)
	}
	if _, err := os.Stat(w.meta("state.json")); err == nil {
		j.State = "state.json"
		if err := os.Link(w.meta("state.json"), filepath.Join(backup, j.State)); err != nil {
			return fmt.Errorf("backing up the work tree state: %w", err)
		}
	}
	return fsutil.WriteJSON(w.meta("journal.json"), j)
}

// pending drops the changes that are already in place, so files keep
// their modification times and incremental builds stay incremental.
func (w *WorkTree) pending(changes []Change) []Change {
	var out []Change
	for _, c := range changes {
		p := filepath.Join(w.Dir, filepath.FromSlash(c.Path))
		cur, err := os.Lstat(p)
		exists := err == nil
		switch {
		case c.Delete:
			if !exists {
				continue
			}
		case c.Pristine:
			src, err := os.Lstat(filepath.Join(w.Pristine, filepath.FromSlash(c.Path)))
			if exists && err == nil && os.SameFile(cur, src) || !exists && err != nil {
				continue
			}
		default:
			// Same bytes and (when the change sets one) the same mode:
			// a mode-only change is a change.
			if exists && cur.Mode().IsRegular() && cur.Size() == int64(len(c.Content)) && (c.Mode == 0 || cur.Mode().Perm() == c.Mode.Perm()) {
				if b, err := os.ReadFile(p); err == nil && bytes.Equal(b, c.Content) {
					continue
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// replace puts c in place at p by rename, never writing into an existing
// (possibly pristine-linked) file.
func (w *WorkTree) replace(p string, c Change) error {
	switch {
	case c.Delete:
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	case c.Pristine:
		src := filepath.Join(w.Pristine, filepath.FromSlash(c.Path))
		if _, err := os.Lstat(src); errors.Is(err, fs.ErrNotExist) {
			// Created by a patch: not in pristine.
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			w.removeEmptyParents(c.Path)
			return nil
		}
		tmp := p + ".patchctl-tmp"
		os.Remove(tmp)
		if err := os.Link(src, tmp); err != nil {
			return err
		}
		return os.Rename(tmp, p)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	mode := c.Mode
	if mode == 0 {
		mode = 0o644
	}
	tmp := p + ".patchctl-tmp"
	if err := os.WriteFile(tmp, c.Content, mode); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, mode); err != nil { // the umask may have cut it
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, p)
}

// Recover rolls back a commit that a kill interrupted, if any.
func (w *WorkTree) Recover() error {
	if _, err := os.Stat(w.meta("journal.json")); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return w.rollback()
}

func (w *WorkTree) rollback() error {
	b, err := os.ReadFile(w.meta("journal.json"))
	if err != nil {
		return fmt.Errorf("reading journal: %w", err)
	}
	var j journal
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("reading journal: %w", err)
	}
	for _, e := range j.Entries {
		p := filepath.Join(w.Dir, filepath.FromSlash(e.Path))
		os.Remove(p + ".patchctl-tmp")
		if e.Backup == "" {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			w.removeEmptyParents(e.Path)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.Rename(w.meta("backup", e.Backup), p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if j.State != "" {
		if err := os.Rename(w.meta("backup", j.State), w.meta("state.json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := os.Remove(w.meta("journal.json")); err != nil {
		return err
	}
	return os.RemoveAll(w.meta("backup"))
}

// removeEmptyParents removes the folders above rel that are empty and that
// the pristine tree does not have (a patch made them).
func (w *WorkTree) removeEmptyParents(rel string) {
	for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
		if _, err := os.Stat(filepath.Join(w.Pristine, filepath.FromSlash(d))); err == nil {
			return
		}
		if os.Remove(filepath.Join(w.Dir, filepath.FromSlash(d))) != nil {
			return // not empty
		}
	}
}

// checkPath refuses a change that would write outside the work tree or
// into its own state: a path that is not a plain relative path, one under
// .patchctl (the journal, the backups, the state), one through a symbolic
// link or a file, a name too long for the file system, or a file where a
// folder is. Errors wrap errs.ErrInput.
func (w *WorkTree) checkPath(c Change) error {
	p := c.Path
	if p == metaDir || strings.HasPrefix(p, metaDir+"/") {
		return fmt.Errorf("a patch writes %q, in %s/ where patchctl keeps the work tree's state: refused (a kernel tree has no such file): %w", p, metaDir, errs.ErrInput)
	}
	if err := fsutil.CheckBeneath(w.Dir, p); err != nil {
		return fmt.Errorf("refusing to write into the work tree of %s: %w", filepath.Base(w.Dir), err)
	}
	if st, err := os.Lstat(filepath.Join(w.Dir, filepath.FromSlash(p))); err == nil && st.IsDir() {
		return fmt.Errorf("a patch writes %q, which is a folder in the tree, as a file: %w", p, errs.ErrInput)
	}
	return nil
}

func copyFile(src, dst string, d fs.DirEntry) error {
	info, err := d.Info()
	if err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
