package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/pipeline"
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

// workspace is the repository, its lock and the cache, for the
// pipeline's steps; the cache's progress goes to the verb's stderr (none
// when io is nil).
func (g *GlobalOptions) workspace(io *IOStreams) (*pipeline.Workspace, error) {
	root, err := g.repoRoot()
	if err != nil {
		return nil, err
	}
	lock, err := pipeline.LoadLock(root)
	if err != nil {
		return nil, err
	}
	w := &pipeline.Workspace{Root: root, Lock: lock, CacheDir: g.Cache, Offline: g.Offline}
	if io != nil {
		w.Progress = io.ErrOut
	}
	return w, nil
}

// cacheWorkspace is a workspace of the cache alone, for the steps that
// need no repository (a tree of the user's).
func (g *GlobalOptions) cacheWorkspace(io *IOStreams) *pipeline.Workspace {
	w := &pipeline.Workspace{CacheDir: g.Cache, Offline: g.Offline}
	if io != nil {
		w.Progress = io.ErrOut
	}
	return w
}

// target resolves a kernel name ("" is the lock's default), or a local
// tree when treeDir is set (pipeline.Workspace.Target).
func (g *GlobalOptions) target(ctx context.Context, io *IOStreams, kernel, treeDir string) (*pipeline.Target, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	w, err := g.workspace(io)
	if err != nil {
		return nil, err
	}
	return w.Target(ctx, kernel, treeDir)
}

// outputDir resolves an --out folder before any work is done: given (a
// path relative to the current folder, as every path on the command line)
// or the default under the repository's out/. The folder must pass
// checkOut; it is made, and it must be writable, so that a long run never
// fails at its end for want of a place to put its reports.
func outputDir(given, def, root string) (string, error) {
	out := given
	if out == "" {
		out = def
	}
	abs, err := checkOut(out, root)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(abs); err == nil && !st.IsDir() {
		return "", fmt.Errorf("--out %s is a file, not a folder: %w", out, errs.ErrUsage)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("--out %s cannot be made: %w: %w", out, err, errs.ErrUsage)
	}
	// Made: every component exists now, so the check sees through them all.
	if _, err := checkOut(abs, root); err != nil {
		return "", err
	}
	probe, err := os.CreateTemp(abs, ".patchctl-write-test-")
	if err != nil {
		return "", fmt.Errorf("--out %s cannot be written: %w: %w", out, err, errs.ErrUsage)
	}
	probe.Close()
	os.Remove(probe.Name())
	return abs, nil
}

// checkOut is the one output-folder policy of every verb with --out
// (the root command applies it before any verb runs, outputDir again
// when it makes the folder). The folder, resolved (absolute, every
// symbolic link on its way followed), must not be the file system's
// root, the repository or a folder above it, nor the repository's
// patches/ or series/ (wherever they resolve to), a folder above one of
// them or one inside them: reports written there would replace or mix
// with the inputs. It returns the absolute path as given.
func checkOut(out, root string) (string, error) {
	abs, err := filepath.Abs(out)
	if err != nil {
		return "", fmt.Errorf("--out %s: %w: %w", out, err, errs.ErrUsage)
	}
	res := resolved(abs)
	refuse := func(what string) error {
		via := ""
		if res != abs {
			via = " (it resolves to " + res + ")"
		}
		return fmt.Errorf("--out %s is %s%s: name a folder of its own, such as out/NAME in the repository: %w", out, what, via, errs.ErrUsage)
	}
	if res == "/" {
		return "", refuse("the file system's root")
	}
	if root == "" {
		return abs, nil
	}
	r, err := filepath.Abs(root)
	if err != nil {
		return abs, nil
	}
	r = resolved(r)
	if within(r, res) {
		return "", refuse("the repository " + r + " or a folder above it")
	}
	for _, sub := range []string{"patches", "series"} {
		d := resolved(filepath.Join(r, sub))
		switch {
		case within(d, res):
			return "", refuse("a folder above the repository's " + sub + "/")
		case within(res, d):
			return "", refuse("the repository's " + sub + "/ or a folder in it")
		}
	}
	return abs, nil
}

// resolved is abs with every symbolic link followed: the longest part of
// it that exists resolved, the rest appended.
func resolved(abs string) string {
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if filepath.Dir(p) == p {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// within reports whether p is dir or inside it (both clean and absolute).
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// imageKernel is the kernel an --image names, when no --kernel is given.
func (g *GlobalOptions) imageKernel(io *IOStreams, kernel, treeDir, ref, variant string) string {
	w, err := g.workspace(io)
	if err != nil {
		return kernel
	}
	return w.ImageKernel(kernel, treeDir, ref, variant)
}
