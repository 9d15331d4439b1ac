package tree

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// hashTree hashes every path, mode and content under dir (the meta folder
// aside): equal hashes mean byte-identical trees.
func hashTree(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	var paths []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == metaDir && d.IsDir() {
			return filepath.SkipDir
		}
		paths = append(paths, rel)
		return nil
	})
	sort.Strings(paths)
	for _, rel := range paths {
		p := filepath.Join(dir, rel)
		st, _ := os.Lstat(p)
		fmt.Fprintf(h, "%s %v\n", rel, st.Mode())
		if st.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// fixtureWorkTree makes a pristine tree and its work tree.
func fixtureWorkTree(t *testing.T) (*Cache, *Kernel, *WorkTree) {
	t.Helper()
	c := &Cache{Dir: t.TempDir()}
	k := &Kernel{Name: "fx", Git: &GitSource{URL: "none", Tag: "fixture"}}
	pristine := c.PristineDir(k)
	for i := 0; i < 20; i++ {
		p := filepath.Join(pristine, "drivers", fmt.Sprintf("d%d", i%4), fmt.Sprintf("f%d.c", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf("file %d\n", i)), 0o644)
	}
	os.WriteFile(c.markerPath(k), []byte(k.Key()+"\n"), 0o644)
	return c, k, hold(t, c, k)
}

// hold takes the work tree for the rest of the test.
func hold(t *testing.T, c *Cache, k *Kernel) *WorkTree {
	t.Helper()
	wt, release, err := c.HoldWorkTree(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return wt
}

func someChanges() []Change {
	return []Change{
		{Path: "drivers/d0/f0.c", Content: []byte("changed 0\n")},
		{Path: "drivers/d1/f1.c", Content: []byte("changed 1\n")},
		{Path: "drivers/d2/f2.c", Delete: true},
		{Path: "drivers/new/added.c", Content: []byte("new\n")},
		{Path: "drivers/d3/f3.c", Content: []byte("changed 3\n")},
	}
}

func TestCommitAndReset(t *testing.T) {
	_, _, wt := fixtureWorkTree(t)
	pristineHash := hashTree(t, wt.Pristine)
	if err := wt.Commit(someChanges(), State{Touched: []string{"drivers/d0/f0.c", "drivers/d1/f1.c", "drivers/d2/f2.c", "drivers/d3/f3.c", "drivers/new/added.c"}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(wt.Dir, "drivers/d0/f0.c")); string(b) != "changed 0\n" {
		t.Errorf("change not written: %q", b)
	}
	if _, err := os.Stat(filepath.Join(wt.Dir, "drivers/d2/f2.c")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("delete not done")
	}
	if hashTree(t, wt.Pristine) != pristineHash {
		t.Fatal("the pristine tree changed through a hardlink")
	}
	// Reset every touched path to pristine: the work tree equals pristine.
	var reset []Change
	for _, c := range someChanges() {
		reset = append(reset, Change{Path: c.Path, Pristine: true})
	}
	if err := wt.Commit(reset, State{}); err != nil {
		t.Fatal(err)
	}
	if hashTree(t, wt.Dir) != pristineHash {
		t.Error("reset work tree differs from pristine")
	}
}

func TestCommitFailureRollsBack(t *testing.T) {
	// The last position is after the new state is written, before the
	// journal goes: the state must come back too.
	for fail := 0; fail <= len(someChanges()); fail++ {
		_, _, wt := fixtureWorkTree(t)
		// Start from a changed state, not pristine.
		if err := wt.Commit([]Change{{Path: "drivers/d1/f1.c", Content: []byte("earlier\n")}}, State{Touched: []string{"drivers/d1/f1.c"}}); err != nil {
			t.Fatal(err)
		}
		before := hashTree(t, wt.Dir)
		stBefore, _ := wt.State()
		wt.beforeRename = func(i int, p string) error {
			if i == fail {
				return fmt.Errorf("injected failure at %s", p)
			}
			return nil
		}
		err := wt.Commit(someChanges(), State{Touched: []string{"x"}})
		if err == nil {
			t.Fatal("commit succeeded despite the injected failure")
		}
		if got := hashTree(t, wt.Dir); got != before {
			t.Errorf("failure at change %d left the work tree changed", fail)
		}
		if st, _ := wt.State(); len(st.Touched) != len(stBefore.Touched) || st.Touched[0] != stBefore.Touched[0] {
			t.Errorf("state changed: %+v", st)
		}
		if _, err := os.Stat(wt.meta("journal.json")); !errors.Is(err, fs.ErrNotExist) {
			t.Error("journal left after rollback")
		}
	}
}

// TestCommitKilled kills a real process in the middle of a commit and
// checks that the next use of the work tree restores it byte for byte.
func TestCommitKilled(t *testing.T) {
	if os.Getenv("PATCHCTL_KILL_CHILD") != "" {
		at, _ := strconv.Atoi(os.Getenv("PATCHCTL_KILL_CHILD"))
		wt := &WorkTree{Dir: os.Getenv("PATCHCTL_KILL_DIR"), Pristine: os.Getenv("PATCHCTL_KILL_PRISTINE")}
		wt.beforeRename = func(i int, p string) error {
			if i == at {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
			return nil
		}
		wt.Commit(someChanges(), State{Touched: []string{"x"}})
		os.Exit(0) // not reached
	}
	// Killed in the middle of the files, and after the new state was
	// written but before the journal was removed.
	for _, at := range []int{3, len(someChanges())} {
		c := &Cache{Dir: t.TempDir()}
		k := &Kernel{Name: "fx", Git: &GitSource{URL: "none", Tag: "fixture"}}
		pristine := c.PristineDir(k)
		for i := 0; i < 8; i++ {
			p := filepath.Join(pristine, "drivers", fmt.Sprintf("d%d", i%4), fmt.Sprintf("f%d.c", i))
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(fmt.Sprintf("file %d\n", i)), 0o644)
		}
		os.WriteFile(c.markerPath(k), []byte(k.Key()+"\n"), 0o644)
		wt, release, err := c.HoldWorkTree(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		before := hashTree(t, wt.Dir)
		stBefore, _ := wt.State()
		cmd := exec.Command(os.Args[0], "-test.run", "^TestCommitKilled$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("PATCHCTL_KILL_CHILD=%d", at), "PATCHCTL_KILL_DIR="+wt.Dir, "PATCHCTL_KILL_PRISTINE="+wt.Pristine)
		err = cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("child was not killed: %v", err)
		}
		if hashTree(t, wt.Dir) == before {
			t.Fatal("the kill came before any change: the test proves nothing")
		}
		if _, err := os.Stat(wt.meta("journal.json")); err != nil {
			t.Fatal("no journal after the kill")
		}
		release()
		// The next user of the work tree recovers it, state included.
		wt2 := hold(t, c, k)
		if got := hashTree(t, wt2.Dir); got != before {
			t.Errorf("kill at %d: work tree not restored", at)
		}
		if st, _ := wt2.State(); len(st.Touched) != len(stBefore.Touched) {
			t.Errorf("kill at %d: the state of the interrupted commit was kept: %+v", at, st)
		}
	}
}

func TestCommitKeepsUnchangedFiles(t *testing.T) {
	_, _, wt := fixtureWorkTree(t)
	ch := []Change{{Path: "drivers/d0/f0.c", Content: []byte("changed 0\n")}}
	if err := wt.Commit(ch, State{Touched: []string{"drivers/d0/f0.c"}}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(wt.Dir, "drivers/d0/f0.c")
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	if err := wt.Commit(ch, State{Touched: []string{"drivers/d0/f0.c"}}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); !st.ModTime().Equal(old) {
		t.Error("an unchanged file was rewritten (its mtime moved): builds would redo it")
	}
	// Resetting a file that is pristine already keeps the link.
	q := filepath.Join(wt.Dir, "drivers/d1/f1.c")
	before, _ := os.Stat(q)
	if err := wt.Commit([]Change{{Path: "drivers/d1/f1.c", Pristine: true}}, State{}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(q); !os.SameFile(before, after) {
		t.Error("a pristine file was replaced")
	}
}

// TestCommitModeOnly: a change of mode alone (git's old mode/new mode)
// reaches the work tree, and never the pristine file it is linked to.
func TestCommitModeOnly(t *testing.T) {
	_, _, wt := fixtureWorkTree(t)
	p := filepath.Join(wt.Dir, "drivers/d0/f0.c")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.Commit([]Change{{Path: "drivers/d0/f0.c", Content: b, Mode: 0o755}}, State{Touched: []string{"drivers/d0/f0.c"}}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o755 {
		t.Errorf("mode %o after a mode-only change to 0755", st.Mode().Perm())
	}
	if st, _ := os.Stat(filepath.Join(wt.Pristine, "drivers/d0/f0.c")); st.Mode().Perm()&0o111 != 0 {
		t.Errorf("the pristine file's mode changed (%o)", st.Mode().Perm())
	}
}
