package main

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/patchctl/patchctl/internal/testenv"
)

// TestNoBuildOutputsTracked: git tracks no built program (an ELF file)
// and nothing over 1 MiB. Kernel trees, builds, packages and binaries
// live in the cache or bin/, never in the repository.
func TestNoBuildOutputsTracked(t *testing.T) {
	root := testenv.RepoRoot(t)
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout)", err)
	}
	for _, f := range bytes.Split(bytes.TrimRight(out, "\x00"), []byte{0}) {
		p := filepath.Join(root, string(f))
		st, err := os.Lstat(p)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if st.Size() > 1<<20 {
			t.Errorf("%s is tracked and %d bytes: build outputs and downloads stay out of git", f, st.Size())
		}
		if e, err := elf.Open(p); err == nil {
			e.Close()
			t.Errorf("%s is a tracked ELF file: built programs stay out of git", f)
		}
	}
}
