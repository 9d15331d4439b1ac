package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/checks"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
)

// CheckOptions say what the check verb checks: the series of record on
// a pinned kernel (Kernel, "" the lock's default), or a tree of the
// user's (Tree); Args are its paths and patch files, mixed.
type CheckOptions struct {
	Tree, Kernel string
	Args         []string
	// Baseline is a tree to judge Tree's findings against (the tree
	// before the patch); without it, the known findings.
	Baseline string
	// Preprocess analyses the translation units the compiler sees;
	// BuildDir is Tree's kbuild output folder for their flags.
	Preprocess bool
	BuildDir   string
	// Version is patchctl's, for the SARIF document.
	Version string
}

// Checked is the check verb's report, judged, and what its SARIF form
// names (repository, tree, patches, kernel).
type Checked struct {
	Report *checks.Report
	SARIF  checks.SARIFOptions
}

// Check runs the check verb's checks: checkpatch on the patch files
// among o.Args and the static rules on the tree they are for; or the
// check stage on the kernel's series of record, judged against its
// pristine tree; or the rules on o.Tree, judged against o.Baseline or
// the known findings. w needs its repository only without o.Tree (a
// workspace of the cache alone serves a tree).
func (w *Workspace) Check(ctx context.Context, o CheckOptions) (*Checked, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	patches, paths := splitCheckArgs(o.Args)
	switch {
	case len(patches) > 0:
		return w.checkPatches(ctx, o, patches, paths)
	case o.Tree == "":
		return w.checkKernel(ctx, o, paths)
	}
	return w.checkTree(ctx, o, paths)
}

// checkPatches runs checkpatch on the given patches and the static rules
// on the tree they are for (the pristine tree of o.Kernel, or o.Tree).
func (w *Workspace) checkPatches(ctx context.Context, o CheckOptions, patches, paths []string) (*Checked, error) {
	so := checks.SARIFOptions{Version: o.Version}
	dir, cpTree := o.Tree, ""
	if dir == "" {
		t, err := w.Target(ctx, o.Kernel, "")
		if err != nil {
			return nil, err
		}
		if dir, err = t.Cache.Prepare(ctx, t.Kernel); err != nil {
			return nil, err
		}
		if cpTree, err = CheckpatchTree(ctx, t.Cache, t.Lock, t.Kernel, patches...); err != nil {
			return nil, err
		}
		so.Repo, so.Kernel = t.Root, t.Kernel.Name
	}
	if err := checkPaths(dir, paths); err != nil {
		return nil, err
	}
	co := checks.Options{Tree: dir, Paths: paths, Patches: patches, CheckpatchTree: cpTree}
	if c, err := w.Cache(true); err == nil {
		co = reusing(co, c.Dir)
	}
	rep, err := checks.Run(co)
	if err != nil {
		return nil, fmt.Errorf("checking %s: %w", dir, err)
	}
	rep.JudgeKnown()
	so.Tree, so.Patches = dir, patches
	return &Checked{Report: rep, SARIF: so}, nil
}

// checkKernel runs the check stage on the kernel's series of record
// (its work tree's patched state), judged against its pristine tree.
func (w *Workspace) checkKernel(ctx context.Context, o CheckOptions, paths []string) (*Checked, error) {
	t, err := w.Target(ctx, o.Kernel, "")
	if err != nil {
		return nil, err
	}
	out, err := t.Applied(ctx, "")
	if err != nil {
		return nil, err
	}
	if err := checkPaths(t.Cache.PristineDir(t.Kernel), paths); err != nil {
		return nil, err
	}
	in := CheckStageIn{Cache: t.Cache, Apply: out, Paths: paths, Preprocess: o.Preprocess}
	if in.CheckpatchTree, err = CheckpatchTree(ctx, t.Cache, t.Lock, t.Kernel); err != nil {
		return nil, err
	}
	if dir, err := t.BuildFolder(out); err == nil {
		if _, err := os.Stat(filepath.Join(dir, "vmlinux")); err == nil {
			in.BuildDir = dir
		}
	}
	if in.Pristine, err = RunCheckPristine(ctx, in); err != nil {
		return nil, err
	}
	rep, err := RunCheckStage(ctx, in)
	if err != nil {
		return nil, err
	}
	so := checks.SARIFOptions{Version: o.Version, Repo: t.Root, Kernel: t.Kernel.Name, Tree: in.CheckedTree(), Patches: out.Patches}
	return &Checked{Report: rep, SARIF: so}, nil
}

// checkTree runs the rules on o.Tree, judged against o.Baseline or the
// known findings.
func (w *Workspace) checkTree(ctx context.Context, o CheckOptions, paths []string) (*Checked, error) {
	if st, err := os.Stat(o.Tree); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--tree %s is not a folder: %w", o.Tree, errs.ErrInput)
	}
	if err := checkPaths(o.Tree, paths); err != nil {
		return nil, err
	}
	// Without a cache (none can be opened) nothing is reused.
	var cacheDir string
	if c, err := w.Cache(true); err == nil {
		cacheDir = c.Dir
	}
	co := reusing(checks.Options{Tree: o.Tree, Paths: paths}, cacheDir)
	if o.Preprocess {
		bd := o.BuildDir
		if bd == "" {
			bd = o.Tree
		}
		c, err := w.Cache(false)
		if err != nil {
			return nil, err
		}
		pp, err := NewPreprocessor(ctx, o.Tree, bd, c.Dir)
		if err != nil {
			return nil, err
		}
		co.Preprocessor = pp
	}
	rep, err := checks.Run(co)
	if err != nil {
		return nil, fmt.Errorf("checking %s: %w", o.Tree, err)
	}
	if err := judgeAgainst(rep, o.Baseline, paths, cacheDir); err != nil {
		return nil, err
	}
	return &Checked{Report: rep, SARIF: checks.SARIFOptions{Version: o.Version, Tree: o.Tree}}, nil
}

// judgeAgainst judges a --tree check against the same check of the
// baseline tree, or the known findings when there is none.
func judgeAgainst(rep *checks.Report, baseline string, paths []string, cacheDir string) error {
	if baseline == "" {
		rep.JudgeKnown()
		return nil
	}
	if st, err := os.Stat(baseline); err != nil || !st.IsDir() {
		return fmt.Errorf("--baseline %s is not a folder: give the tree before the patch: %w", baseline, errs.ErrInput)
	}
	if err := checkPaths(baseline, paths); err != nil {
		return err
	}
	base, err := checks.Run(reusing(checks.Options{Tree: baseline, Paths: paths}, cacheDir))
	if err != nil {
		return fmt.Errorf("checking the baseline %s: %w", baseline, err)
	}
	rep.Judge(base)
	return nil
}

// splitCheckArgs separates the patch files among check's arguments (an
// existing file named *.patch, *.diff, *.mbox or *.eml: checkpatch's
// input) from the tree paths.
func splitCheckArgs(args []string) (patches, paths []string) {
	for _, a := range args {
		ext := strings.ToLower(filepath.Ext(a))
		if st, err := os.Stat(a); err == nil && st.Mode().IsRegular() && (ext == ".patch" || ext == ".diff" || ext == ".mbox" || ext == ".eml") {
			patches = append(patches, a)
			continue
		}
		paths = append(paths, a)
	}
	return patches, paths
}

// checkPaths refuses a PATH that names nothing in the tree: checking
// nothing is not a clean pass.
func checkPaths(dir string, paths []string) error {
	var missing []string
	for _, p := range paths {
		if err := fsutil.ValidRel(filepath.ToSlash(filepath.Clean(p))); err != nil {
			return fmt.Errorf("PATH %s: %v: a PATH is a file or folder of the kernel tree, relative to it: %w", p, err, errs.ErrUsage)
		}
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: no such file or folder in the tree %s (a PATH is relative to the tree; a patch to checkpatch is a file named *.patch, *.diff, *.mbox or *.eml): %w",
			strings.Join(missing, ", "), dir, errs.ErrInput)
	}
	return nil
}
