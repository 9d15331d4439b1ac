package build

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// BenchmarkProofStamp: listing the default kernel's work tree and a
// proved build folder of it (with and without reading the command
// records) for the up-to-date proof, once the kernel is built. 6.12, 2
// idle cores (2026-12-06): the work tree's 92,000 entries 0.35 s (0.64
// CPU-s), the folder 0.02 s, with its records (60 MB) 0.30 s.
func BenchmarkProofStamp(b *testing.B) {
	if testing.Short() {
		b.Skip("-short: needs a built kernel")
	}
	k, _ := testenv.Kernel(b, testkernel.Default)
	c := testenv.Cache()
	src := c.WorkTreeDir(k)
	dirs, _ := filepath.Glob(filepath.Join(c.Dir, "build", k.Name, "*", upToDateFile))
	if len(dirs) == 0 {
		b.Skip("no proved build folder of " + k.Name + ": build it first")
	}
	obj := filepath.Dir(dirs[0])
	if _, err := os.Stat(src); err != nil {
		b.Skip(err)
	}
	roots := []string{src, obj}
	for _, c := range []struct {
		name    string
		dir     string
		keep    func(string) bool
		records bool
	}{{"source", src, sourceEntry, false}, {"folder", obj, folderEntry, false}, {"folder+records", obj, folderEntry, true}} {
		b.Run(c.name, func(b *testing.B) {
			cpu := testenv.MeasureCPU(b)
			for b.Loop() {
				if _, err := treeStamp(c.dir, c.keep, nil, roots, c.records, time.Now()); err != nil {
					b.Fatal(err)
				}
			}
			cpu.Report()
		})
	}
}
