package tree

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestDropWorkTreeDropsBoth: a pristine tree extracted again leaves no
// tree that links into the old one: the work tree and the check tree go.
func TestDropWorkTreeDropsBoth(t *testing.T) {
	c := &Cache{Dir: t.TempDir()}
	k := &Kernel{Name: "9.9"}
	for _, d := range []string{c.WorkTreeDir(k), c.CheckTreeDir(k)} {
		if err := os.MkdirAll(filepath.Join(d, metaDir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.dropWorkTree(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{c.WorkTreeDir(k), c.CheckTreeDir(k)} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", d, err)
		}
	}
}
