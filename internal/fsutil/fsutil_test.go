package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
)

// TestCheckBeneath: paths that stay in the folder through real folders pass
// (missing folders too: the write makes them); every other is an input
// error.
func TestCheckBeneath(t *testing.T) {
	root := t.TempDir()
	out := t.TempDir()
	os.MkdirAll(filepath.Join(root, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(root, "a", "f"), nil, 0o644)
	os.Symlink(out, filepath.Join(root, "out"))
	os.Symlink("a", filepath.Join(root, "in"))
	os.Symlink("/nonexistent", filepath.Join(root, "dangling"))
	ok := []string{"a/b/c.c", "a/new/deeper/x", "new", "out", "in", "a/f", "dangling", strings.Repeat("x", 255)}
	bad := []string{"", "/a", "a/../..", "a/./b", "a//b", "out/x", "in/b/c", "dangling/x", "a/f/x", "a\x00b",
		strings.Repeat("x", 256), strings.Repeat("d/", 2048) + "f"}
	for _, p := range ok {
		if err := CheckBeneath(root, p); err != nil {
			t.Errorf("%.40q: %v", p, err)
		}
	}
	for _, p := range bad {
		if err := CheckBeneath(root, p); !errors.Is(err, errs.ErrInput) {
			t.Errorf("%.40q: %v, want an input error", p, err)
		}
	}
}
