package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/mkthread"
)

// try --inbox indexes the archive under --cache, and a Message-ID that is
// not there or a damaged archive stops it with exit 2 before any kernel
// work.
func TestTryInboxIndexAndErrors(t *testing.T) {
	root := testenv.RepoRoot(t)
	inbox, cache := t.TempDir(), t.TempDir()
	one := mkthread.Unrelated(mkthread.InsertAfter("a.c", []byte("a\nb\nc\nd\n"), 2, "x"))
	if err := mkthread.Inbox(inbox, []mkthread.Msg{one}); err != nil {
		t.Fatal(err)
	}
	try := func(args ...string) (int, string) {
		t.Helper()
		code, stdout, stderr := run(t, append([]string{"--root", root, "--cache", cache, "try", "--out", filepath.Join(t.TempDir(), "out")}, args...)...)
		return code, stdout + stderr
	}
	if code, out := try("--msgid", "nobody@example.org", "--inbox", inbox); code != 2 || !strings.Contains(out, "is not in the archive") {
		t.Errorf("a Message-ID not archived: exit %d\n%s", code, out)
	}
	if idx, _ := filepath.Glob(filepath.Join(cache, "inbox", "*.idx")); len(idx) != 1 {
		t.Errorf("index files under --cache: %v", idx)
	}
	head, err := os.ReadFile(filepath.Join(inbox, "git", "0.git", "refs", "heads", "master"))
	if err != nil {
		t.Fatal(err)
	}
	oid := strings.TrimSpace(string(head))
	if err := os.Remove(filepath.Join(inbox, "git", "0.git", "objects", oid[:2], oid[2:])); err != nil {
		t.Fatal(err)
	}
	if code, out := try("--msgid", "nobody@example.org", "--inbox", inbox); code != 2 || !strings.Contains(out, "damaged") {
		t.Errorf("a damaged archive: exit %d\n%s", code, out)
	}
}
