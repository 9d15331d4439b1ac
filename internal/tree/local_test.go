package tree

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/progress"
)

func fakeKernel(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"Makefile":                 "# SPDX-License-Identifier: GPL-2.0\nVERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 117\nEXTRAVERSION = -rc1\nNAME = Baby Opossum Posse\n",
		"drivers/nvme/host/rdma.c": "int x;\n",
		".gitignore":               "*.o\n",
	}
	for p, c := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func gitCmd(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=T", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// The identity of a local tree changes with what the build sees and only
// with that: commits, uncommitted edits, untracked files, not ignored
// files; a plain folder by content.
func TestLocalIdentity(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := context.Background()
	dir := t.TempDir()
	fakeKernel(t, dir)
	key := func() *Kernel {
		t.Helper()
		// 6.12 itself: the fixture's Makefile version
		k, err := Local(ctx, dir, "", func(s string) bool { return s == "6.12" })
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	plain := key()
	// 6.12 itself: the fixture's Makefile version
	if plain.Local.Head != "" || plain.Local.Content == "" || plain.Local.Release != "6.12.117-rc1" || plain.Local.Series != "6.12" {
		t.Fatalf("plain folder: %+v", plain.Local)
	}
	os.WriteFile(filepath.Join(dir, "drivers/nvme/host/rdma.c"), []byte("int y;\n"), 0o644)
	if key().Key() == plain.Key() {
		t.Error("a plain folder's identity did not change with its content")
	}

	gitCmd(t, dir, "init", "-q")
	gitCmd(t, dir, "add", "-A")
	gitCmd(t, dir, "commit", "-q", "-m", "base")
	clean := key()
	if clean.Local.Head == "" || clean.Local.Dirty != "" || clean.Name != plain.Name {
		t.Fatalf("git tree: %+v (name %s, was %s)", clean.Local, clean.Name, plain.Name)
	}
	os.WriteFile(filepath.Join(dir, "drivers/nvme/host/rdma.o"), []byte("object"), 0o644)
	if key().Key() != clean.Key() {
		t.Error("an ignored file changed the identity")
	}
	os.WriteFile(filepath.Join(dir, "drivers/nvme/host/rdma.c"), []byte("int z;\n"), 0o644)
	edited := key()
	if edited.Local.Dirty == "" || edited.Key() == clean.Key() {
		t.Error("an uncommitted edit did not change the identity")
	}
	os.WriteFile(filepath.Join(dir, "new.c"), []byte("int n;\n"), 0o644)
	untracked := key()
	if untracked.Key() == edited.Key() {
		t.Error("an untracked file did not change the identity")
	}
	gitCmd(t, dir, "add", "-A")
	gitCmd(t, dir, "commit", "-q", "-m", "more")
	if k := key(); k.Local.Dirty != "" || k.Local.Head == clean.Local.Head {
		t.Errorf("after a commit: %+v", k.Local)
	}

	if _, err := Local(ctx, t.TempDir(), "", nil); !errors.Is(err, errs.ErrInput) {
		t.Errorf("no Makefile: %v", err)
	}
	if _, err := Local(ctx, filepath.Join(dir, "Makefile"), "", nil); !errors.Is(err, errs.ErrInput) {
		t.Errorf("a file: %v", err)
	}
}

// A local tree is the pristine tree of its work tree and is never
// written: changes go to the work tree by rename.
func TestLocalWorkTreeNeverWritesTheTree(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fakeKernel(t, dir)
	k, err := Local(ctx, dir, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &Cache{Dir: t.TempDir(), Progress: progress.New(io.Discard)}
	if p, err := c.Prepare(ctx, k); err != nil || p != k.Local.Dir {
		t.Fatalf("prepare: %s %v", p, err)
	}
	wt, release, err := c.HoldWorkTree(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := wt.Commit([]Change{{Path: "drivers/nvme/host/rdma.c", Content: []byte("patched\n"), Mode: 0o644}}, State{PristineKey: k.Key(), Touched: []string{"drivers/nvme/host/rdma.c"}}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(wt.Dir, "drivers/nvme/host/rdma.c"))
	orig, _ := os.ReadFile(filepath.Join(dir, "drivers/nvme/host/rdma.c"))
	if string(got) != "patched\n" || string(orig) != "int x;\n" {
		t.Errorf("work tree %q, local tree %q", got, orig)
	}
	if wt.Dir != filepath.Join(c.Dir, "build", k.Name, "src") {
		t.Errorf("work tree outside the cache: %s", wt.Dir)
	}
}
