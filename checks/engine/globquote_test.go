package engine

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLayoutsOfATreeWithGlobCharacters: a tree whose folder name holds
// glob characters reads its own headers, not a folder the name matches
// as a pattern.
func TestLayoutsOfATreeWithGlobCharacters(t *testing.T) {
	base := t.TempDir()
	write := func(tree, src string) {
		t.Helper()
		p := filepath.Join(base, tree, "include", "linux", "x.h")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("linux[2]", "struct wanted { int a; int b; };\n")
	write("linux2", "struct wanted { char a; };\n")
	for _, tree := range []string{"linux[2]", "linux*", "linux?"} {
		if err := os.MkdirAll(filepath.Join(base, tree), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	db, err := LoadLayouts(filepath.Join(base, "linux[2]"), []string{"include/linux"}, "wanted")
	if err != nil {
		t.Fatal(err)
	}
	if s, _, err := db.Sizeof("struct wanted", 0); err != nil || s != 8 {
		t.Errorf("sizeof(struct wanted) in linux[2] = %d (%v), want 8 (its own header)", s, err)
	}
	for _, tree := range []string{"linux*", "linux?"} {
		db, err := LoadLayouts(filepath.Join(base, tree), []string{"include/linux"}, "wanted")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.Sizeof("struct wanted", 0); err == nil {
			t.Errorf("%s has no headers, yet struct wanted was found", tree)
		}
	}
}
