package tree_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/tree"
)

// BenchmarkPrepareWarm: prepare of a prepared tree (target ≤ 5 s; it is a
// marker check).
func BenchmarkPrepareWarm(b *testing.B) {
	k, _ := testenv.Kernel(b, testkernel.Default)
	c := testenv.Cache()
	cpu := testenv.MeasureCPU(b)
	for b.Loop() {
		if _, err := c.Prepare(context.Background(), k); err != nil {
			b.Fatal(err)
		}
	}
	cpu.Report()
}

// BenchmarkPrepareCold: verify and extract 6.12 from the cached package
// into an empty cache (the download itself is not timed).
func BenchmarkPrepareCold(b *testing.B) {
	k, _ := testenv.Kernel(b, testkernel.Default)
	shared := testenv.Cache()
	cpu := testenv.MeasureCPU(b)
	defer cpu.Report()
	for b.Loop() {
		b.StopTimer()
		cpu.Stop()
		c := &tree.Cache{Dir: b.TempDir()}
		os.MkdirAll(filepath.Join(c.Dir, "debs"), 0o755)
		if err := os.Link(shared.Debian().DebPath(k.Debian), c.Debian().DebPath(k.Debian)); err != nil {
			b.Fatal(err)
		}
		cpu.Start()
		b.StartTimer()
		if _, err := c.Prepare(context.Background(), k); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify: the pristine default tree checked against its
// manifest as a build checks it (every file present at its size, none
// added: 6.12's 86k files) and as the apply stage checks a series'
// folders, the manifest read once per process (as each stage of a run
// finds it).
func BenchmarkVerify(b *testing.B) {
	k, _ := testenv.Kernel(b, testkernel.Default)
	c := testenv.Cache()
	for _, s := range []struct {
		name   string
		scopes []string
	}{{"whole", []string{"."}}, {"folders", []string{"drivers/nvme/host", "drivers/infiniband/core", "include/rdma"}}} {
		b.Run(s.name, func(b *testing.B) {
			if err := c.Verify(k, s.scopes, nil); err != nil {
				b.Fatal(err)
			}
			cpu := testenv.MeasureCPU(b)
			for b.Loop() {
				if err := c.Verify(k, s.scopes, nil); err != nil {
					b.Fatal(err)
				}
			}
			cpu.Report()
		})
	}
}
