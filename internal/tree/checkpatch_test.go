package tree

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStubNamed: every path of the tree's list that a patch names (a
// changed file, a suffix of a changelog path, line numbers stripped) gets
// an empty file in the kit; a path the tree lacks never does, a file the
// kit holds keeps its content, and a folder without a list (a whole tree)
// is left alone.
func TestStubNamed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kit")
	if err := os.MkdirAll(filepath.Join(dir, "include", "linux"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "include", "linux", "x.h"), []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	list := "drivers/a/b.c\ndrivers/c/d.c\ninclude/linux/x.h\nnet/e.c\nfs/never.c\n"
	if err := os.WriteFile(dir+".files", []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	patch := filepath.Join(t.TempDir(), "p.patch")
	body := "Subject: x\n\nSee /home/me/linux/drivers/c/d.c:12: and .../net/e.c\n---\n" +
		"diff --git a/drivers/a/b.c b/drivers/a/b.c\n--- a/drivers/a/b.c\n+++ b/drivers/a/b.c\n" +
		"--- a/include/linux/x.h\n+++ b/include/linux/x.h\n+++ b/drivers/new/n.c\n"
	if err := os.WriteFile(patch, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := StubNamed(dir, []string{patch}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"drivers/a/b.c", "drivers/c/d.c", "net/e.c"} {
		if st, err := os.Stat(filepath.Join(dir, p)); err != nil || st.Size() != 0 {
			t.Errorf("%s: want an empty stub, got %v", p, err)
		}
	}
	for _, p := range []string{"fs/never.c", "drivers/new/n.c", "home/me/linux/drivers/c/d.c"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s: stubbed, but the tree lacks it or the patch does not name it", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "include", "linux", "x.h")); string(b) != "kept\n" {
		t.Errorf("include/linux/x.h = %q, want its content kept", b)
	}
	whole := t.TempDir()
	if err := StubNamed(whole, []string{patch}); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(whole); len(ents) != 0 {
		t.Errorf("a whole tree got stubs: %v", ents)
	}
}

// TestWantForCheckpatch: what the kit holds with content.
func TestWantForCheckpatch(t *testing.T) {
	for p, want := range map[string]bool{
		"MAINTAINERS": true, ".mailmap": true, "scripts/checkpatch.pl": true, "scripts/spelling.txt": true,
		"scripts/const_structs.checkpatch": true, "scripts/get_maintainer.pl": true,
		"include/linux/uaccess.h":                                true,
		"Documentation/devicetree/bindings/vendor-prefixes.yaml": true,
		"drivers/nvme/host/rdma.c":                               false, "scripts/Makefile": false, "Documentation/process/howto.rst": false,
	} {
		if got := wantForCheckpatch(p); got != want {
			t.Errorf("wantForCheckpatch(%q) = %v, want %v", p, got, want)
		}
	}
}
