package pipeline

import (
	"context"
	"path/filepath"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/boot"
	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/stagecache"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
)

// CheckStage runs a kernel's check stage alone, as Run does after the
// apply stage (tests without a kernel build), on paths of the tree ("":
// the default).
func CheckStage(ctx context.Context, o Options, k *tree.Kernel, out *apply.Out, paths []string) *Kernel {
	r := &kernelRun{o: o, k: k, jobs: 1, store: &stagecache.Store{Dir: filepath.Join(o.Cache.Dir, "runs")},
		kr: &Kernel{Name: k.Name, Source: k.Key(), Builds: map[string]*build.Metadata{}, Boots: map[string]*boot.Result{}, Verdict: vocab.Pass, KernelFrom: vocab.FromSource}}
	r.paths = paths
	<-r.goCheck(ctx, out)
	return r.kr
}
