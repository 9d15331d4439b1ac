package apply

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/tree"
)

// TestDamagedTreeIsNotBlamedOnThePatch: with the file a patch touches
// gone from a prepared pristine tree, the apply stage says the tree is
// damaged (exit 3) instead of calling the patch a conflict (exit 1).
func TestDamagedTreeIsNotBlamedOnThePatch(t *testing.T) {
	root, cacheDir := t.TempDir(), t.TempDir()
	k := &tree.Kernel{Name: "9.9", Git: &tree.GitSource{URL: "none", Tag: "fixture"}}
	c := &tree.Cache{Dir: cacheDir}
	w := func(base, p, s string) {
		os.MkdirAll(filepath.Join(base, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(base, p), []byte(s), 0o644)
	}
	src := "int a(void)\n{\n\treturn 0;\n}\n\nint b(void)\n{\n\treturn 0;\n}\n"
	w(c.PristineDir(k), "drivers/x.c", src)
	w(c.PristineDir(k), "drivers/y.c", src)
	if err := c.MarkPrepared(k); err != nil {
		t.Fatal(err)
	}
	w(root, "patches/s/0001.patch", "From: A U Thor <a@example.org>\nSubject: [PATCH] x: return 1\n\n---\n"+
		"diff --git a/drivers/x.c b/drivers/x.c\n--- a/drivers/x.c\n+++ b/drivers/x.c\n@@ -1,5 +1,5 @@\n int a(void)\n {\n-\treturn 0;\n+\treturn 1;\n }\n \n")
	w(root, "series/9.9/manifest.yaml", "kernel: \"9.9\"\npatches:\n  - source: patches/s/0001.patch\n    expect: applies\n")
	in := In{Root: root, Kernel: k, Pristine: c.PristineDir(k), Cache: c}
	if _, err := Run(context.Background(), in); err != nil {
		t.Fatalf("intact tree: %v", err)
	}
	os.Remove(filepath.Join(c.PristineDir(k), "drivers/x.c"))
	_, err := Run(context.Background(), in)
	if !errors.Is(err, errs.ErrEnv) || errors.Is(err, errs.ErrFindings) || !strings.Contains(err.Error(), "drivers/x.c missing") {
		t.Errorf("damaged tree: %v", err)
	}
	// A file beside it gone: the folder's listing no longer matches.
	w(c.PristineDir(k), "drivers/x.c", src)
	os.Remove(filepath.Join(c.PristineDir(k), "drivers/y.c"))
	if _, err := Run(context.Background(), in); !errors.Is(err, errs.ErrEnv) || !strings.Contains(err.Error(), "drivers/y.c missing") {
		t.Errorf("a file of the touched folder gone: %v", err)
	}
}
