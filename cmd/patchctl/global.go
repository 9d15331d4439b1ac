package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/progress"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/spf13/cobra"
)

// GlobalOptions are the flags every verb shares.
type GlobalOptions struct {
	Root  string // repository holding patches/ and series/
	Cache string // cache dir for packages and trees
	// Offline refuses every download (exit 3 naming what is missing).
	Offline bool
}

func addGlobalFlags(root *cobra.Command, g *GlobalOptions) {
	root.PersistentFlags().StringVar(&g.Root, "root", "", "repository with patches/ and series/ (default: found above the current folder)")
	root.PersistentFlags().BoolVar(&g.Offline, "offline", false, "download nothing: a kernel source not in the cache is an error (exit 3) naming it")
	root.PersistentFlags().StringVar(&g.Cache, "cache", "", "cache for packages and kernel trees (default $PATCHCTL_CACHE or ~/.cache/patchctl)")
}

// repoRoot finds the repository: --root, else the first folder above the
// current one that has series/kernels.yaml.
func (g *GlobalOptions) repoRoot() (string, error) {
	if g.Root != "" {
		return g.Root, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "series", "kernels.yaml")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no series/kernels.yaml in %s or above: run patchctl in its repository or pass --root: %w", dir, errs.ErrUsage)
		}
	}
}

func (g *GlobalOptions) lock() (*tree.Lock, string, error) {
	root, err := g.repoRoot()
	if err != nil {
		return nil, "", err
	}
	l, err := tree.LoadLock(filepath.Join(root, "series", "kernels.yaml"))
	return l, root, err
}

func (g *GlobalOptions) cache(io *IOStreams) *tree.Cache {
	dir := g.Cache
	if dir == "" {
		dir = tree.DefaultCacheDir()
	}
	return &tree.Cache{Dir: dir, Progress: progress.New(io.ErrOut), Offline: g.Offline}
}

// target is a pinned kernel with what the verbs need around it.
type target struct {
	root  string
	lock  *tree.Lock
	k     *tree.Kernel
	cache *tree.Cache
}

// target resolves a kernel name ("" is the lock's default).
func (g *GlobalOptions) target(io *IOStreams, kernel string) (*target, error) {
	return g.targetTree(context.Background(), io, kernel, "")
}

// targetTree is target for a local tree when treeDir is set: the tree is
// the pristine tree, kernel (or its Makefile's version) names the
// manifest.
func (g *GlobalOptions) targetTree(ctx context.Context, io *IOStreams, kernel, treeDir string) (*target, error) {
	lock, root, err := g.lock()
	if err != nil {
		return nil, err
	}
	if treeDir != "" {
		var ks []string
		if kernel != "" {
			ks = []string{kernel}
		}
		k, err := g.localKernel(ctx, root, lock, treeDir, ks)
		if err != nil {
			return nil, err
		}
		return &target{root: root, lock: lock, k: k, cache: g.cache(io)}, nil
	}
	k, err := lock.Find(kernel)
	if err != nil {
		return nil, err
	}
	return &target{root: root, lock: lock, k: k, cache: g.cache(io)}, nil
}

// localKernel makes the kernel of a local tree (--tree). At most one
// --kernel may go with it: the manifest and fragment to use; without one,
// the manifest of the Makefile's VERSION.PATCHLEVEL when series/ has it.
func (g *GlobalOptions) localKernel(ctx context.Context, root string, lock *tree.Lock, dir string, kernels []string) (*tree.Kernel, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if len(kernels) > 1 {
		return nil, fmt.Errorf("--tree takes at most one --kernel (the manifest to check the tree against), got %d: %w", len(kernels), errs.ErrUsage)
	}
	series := ""
	if len(kernels) == 1 {
		if _, err := lock.Find(kernels[0]); err != nil {
			return nil, err
		}
		series = kernels[0]
	}
	return g.cache(&IOStreams{ErrOut: io.Discard}).Local(ctx, dir, series, func(name string) bool {
		_, err := os.Stat(filepath.Join(root, "series", name, "manifest.yaml"))
		return err == nil
	})
}

// applied prepares the pristine tree and runs the apply stage on it (the
// manifest's series, or one series, in memory).
func (t *target) applied(ctx context.Context, seriesName string) (*apply.Out, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	pristine, err := t.cache.Prepare(ctx, t.k)
	if err != nil {
		return nil, err
	}
	return apply.Run(ctx, apply.In{Root: t.root, Kernel: t.k, Pristine: pristine, Series: seriesName, Cache: t.cache})
}

// outputDir resolves an --out folder before any work is done: given (a
// path relative to the current folder, as every path on the command line)
// or the default under the repository's out/. It refuses / and the
// repository root (or a folder above it), a file, and a folder that
// cannot be written, so that a long run never fails at its end for want
// of a place to put its reports.
func outputDir(given, def, root string) (string, error) {
	out := given
	if out == "" {
		out = def
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return "", fmt.Errorf("--out %s: %w: %w", out, err, errs.ErrUsage)
	}
	if abs == "/" {
		return "", fmt.Errorf("--out %s is the file system's root: name a folder of its own: %w", out, errs.ErrUsage)
	}
	if r, err := filepath.Abs(root); err == nil && root != "" {
		if rel, err := filepath.Rel(abs, r); err == nil && (rel == "." || !strings.HasPrefix(rel, "..")) {
			return "", fmt.Errorf("--out %s is the repository or a folder above it: name a folder of its own (default %s): %w", out, def, errs.ErrUsage)
		}
	}
	if st, err := os.Stat(abs); err == nil && !st.IsDir() {
		return "", fmt.Errorf("--out %s is a file, not a folder: %w", out, errs.ErrUsage)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("--out %s cannot be made: %w: %w", out, err, errs.ErrUsage)
	}
	probe, err := os.CreateTemp(abs, ".patchctl-write-test-")
	if err != nil {
		return "", fmt.Errorf("--out %s cannot be written: %w: %w", out, err, errs.ErrUsage)
	}
	probe.Close()
	os.Remove(probe.Name())
	return abs, nil
}
