package checks

import (
	"testing"

	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// BenchmarkWholeTree: every RDMA user of pristine 6.12 (target ≤ 2 s).
func BenchmarkWholeTree(b *testing.B) {
	_, dir := testenv.Kernel(b, testkernel.Default)
	cpu := testenv.MeasureCPU(b)
	for b.Loop() {
		if _, err := Run(Options{Tree: dir}); err != nil {
			b.Fatal(err)
		}
	}
	cpu.Report()
}
