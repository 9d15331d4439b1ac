package checks

import (
	"testing"

	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// BenchmarkWholeTree: every RDMA user of pristine 6.12 (target ≤ 2 s
// warm). "reused" is a warm run as the CLI and the pipeline make it: the
// report kept by an earlier run, every file it read verified by content
// (reuse.go). "analysed" analyses every time, with the files' parses
// kept in the process from the first iteration (a new process parses
// them again: the CLI's cold figure is in docs/checks.md).
func BenchmarkWholeTree(b *testing.B) {
	_, dir := testenv.Kernel(b, testkernel.Default)
	b.Run("reused", func(b *testing.B) {
		opts := Options{Tree: dir, Cache: b.TempDir(), Code: "BenchmarkWholeTree"}
		if _, err := Run(opts); err != nil {
			b.Fatal(err)
		}
		cpu := testenv.MeasureCPU(b)
		for b.Loop() {
			rep, err := Run(opts)
			if err != nil {
				b.Fatal(err)
			}
			if !rep.Reused {
				b.Fatal("the tree did not change and the report was not reused")
			}
		}
		cpu.Report()
	})
	b.Run("analysed", func(b *testing.B) {
		if _, err := Run(Options{Tree: dir}); err != nil {
			b.Fatal(err)
		}
		cpu := testenv.MeasureCPU(b)
		for b.Loop() {
			if _, err := Run(Options{Tree: dir}); err != nil {
				b.Fatal(err)
			}
		}
		cpu.Report()
	})
}
