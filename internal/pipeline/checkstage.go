package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/patchctl/patchctl/checks"
	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/preproc"
	"github.com/patchctl/patchctl/internal/stagecache"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
)

// CheckStageIn is the check stage's input: the apply stage's output (whose
// patched state is checked, and whose regenerated patches go to
// checkpatch) and, optionally, a build with debug info for layouts.
type CheckStageIn struct {
	Cache *tree.Cache
	Apply *apply.Out
	// BuildDir is a build folder of the kernel (DWARF layouts), and
	// BuildID names its content (the build stage's key); both optional.
	BuildDir, BuildID string
	Paths             []string
	// CheckpatchTree is a pristine tree whose checkpatch.pl runs instead
	// of the kernel's own (tree.Lock.Checkpatch); optional.
	CheckpatchTree string
	// Preprocess analyses each .c file as the compiler sees it: its
	// kbuild flags from BuildDir's .o.cmd files (raw C where a file has
	// none, and the report says which).
	Preprocess bool
	// Pristine is the same check of the pristine tree (RunCheckPristine): the
	// patched tree's findings are judged against it. Without it they are
	// judged against the known findings of the pinned kernels.
	Pristine *checks.Report
}

// CheckPristineKey names what the pristine tree's check depends on: the
// pristine tree's content, the build whose layouts it reads, the paths
// and patchctl's own code.
func CheckPristineKey(in CheckStageIn) (string, error) {
	k := stagecache.NewKey("check-pristine").Code().Add("state", in.Apply.State(vocab.Baseline)).
		Add("build", in.BuildID).Add("paths", in.Paths...).Add("preprocess", fmt.Sprint(in.Preprocess))
	if in.Preprocess && in.BuildDir != "" {
		k = k.File(filepath.Join(in.BuildDir, ".config"))
	}
	return k.Sum()
}

// CheckStageKey names what the check's report depends on: the patched tree's
// content, the patches checkpatch reads, the build whose layouts it
// reads, patchctl's own code (the rules) and the baseline it is judged
// against (the pristine tree's findings).
func CheckStageKey(in CheckStageIn) (string, error) {
	base := "known"
	if in.Pristine != nil {
		base = in.Pristine.FindingsHash()
	}
	k := stagecache.NewKey("check").Code().Add("state", in.Apply.State(vocab.Patched)).File(in.Apply.Patches...).
		Add("build", in.BuildID).Add("paths", in.Paths...).Add("baseline", base).Add("preprocess", fmt.Sprint(in.Preprocess))
	if in.Preprocess && in.BuildDir != "" {
		// The preprocessed units follow the build folder's configuration.
		k = k.File(filepath.Join(in.BuildDir, ".config"))
	}
	if in.CheckpatchTree != "" {
		k = k.File(filepath.Join(in.CheckpatchTree, "scripts", "checkpatch.pl"), filepath.Join(in.CheckpatchTree, "scripts", "spelling.txt"))
	}
	return k.Sum()
}

// reusing sets where checks keep their reports for reuse (the cache's
// checks folder) and the code that makes them (the running program).
func reusing(co checks.Options, cacheDir string) checks.Options {
	if code, err := stagecache.Self(); err == nil && cacheDir != "" {
		co.Cache, co.Code = filepath.Join(cacheDir, "checks"), code
	}
	return co
}

// RunCheckPristine checks the kernel's pristine tree (read only: nothing
// writes into it), the baseline a patch is judged against. Checkpatch
// has nothing to read there.
func RunCheckPristine(ctx context.Context, in CheckStageIn) (*checks.Report, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	scopes := in.Paths
	if len(scopes) == 0 {
		scopes = checks.DefaultPaths
	}
	if err := in.Cache.Verify(in.Apply.Kernel, scopes, nil); err != nil {
		return nil, err
	}
	dir := in.Cache.PristineDir(in.Apply.Kernel)
	pp, err := in.preprocessor(ctx, dir)
	if err != nil {
		return nil, err
	}
	rep, err := checks.Run(reusing(checks.Options{Tree: dir, Paths: in.Paths, BuildDir: in.BuildDir, Preprocessor: pp}, in.Cache.Dir))
	if err != nil {
		return nil, fmt.Errorf("checking the pristine tree of %s (%s), the baseline of the patches: %w", in.Apply.Kernel.Name, dir, err)
	}
	return rep, nil
}

// CheckedTree is the folder RunCheckStage checks for in: the kernel's
// check tree, or with Preprocess its work tree (the compile flags of the
// build folder name the work tree's files).
func (in CheckStageIn) CheckedTree() string {
	if in.Preprocess {
		return in.Cache.WorkTreeDir(in.Apply.Kernel)
	}
	return in.Cache.CheckTreeDir(in.Apply.Kernel)
}

// RunCheckStage puts the kernel's check tree into its patched state and
// checks it, holding the check tree throughout: no other check can change
// the files under it. The check tree is not the work tree builds compile,
// so a build of the same kernel (another state: the harness in) goes on
// beside the check. With Preprocess the work tree is checked and held
// instead, as the build folder's flags name its files. The findings are
// judged against in.Pristine (or the known findings without it).
func RunCheckStage(ctx context.Context, in CheckStageIn) (*checks.Report, error) {
	hold := in.Cache.HoldCheckTree
	if in.Preprocess {
		hold = in.Cache.HoldWorkTree
	}
	wt, release, err := hold(ctx, in.Apply.Kernel)
	if err != nil {
		return nil, err
	}
	defer release()
	layouts, err := buildStamp(in.BuildDir)
	if err != nil {
		return nil, err
	}
	scopes := in.Paths
	if len(scopes) == 0 {
		scopes = checks.DefaultPaths
	}
	if err := in.Cache.Verify(in.Apply.Kernel, scopes, nil); err != nil {
		return nil, err
	}
	if err := apply.Checkout(wt, in.Apply, vocab.Patched); err != nil {
		return nil, err
	}
	pp, err := in.preprocessor(ctx, wt.Dir)
	if err != nil {
		return nil, err
	}
	if err := tree.StubNamed(in.CheckpatchTree, in.Apply.Patches); err != nil {
		return nil, err
	}
	rep, err := checks.Run(reusing(checks.Options{Tree: wt.Dir, Paths: in.Paths, BuildDir: in.BuildDir, Patches: in.Apply.Patches, CheckpatchTree: in.CheckpatchTree, Preprocessor: pp}, in.Cache.Dir))
	if err != nil {
		return nil, fmt.Errorf("checking %s: %w", in.Apply.Kernel.Name, err)
	}
	// The build folder's layouts were read without its lock (a build of
	// the work tree may hold that): a build of the folder while the check
	// read it makes the report unsure.
	if now, err := buildStamp(in.BuildDir); err != nil || now != layouts {
		return nil, fmt.Errorf("checking %s: the build folder %s changed while the check read its layouts (another build of it ran): run again: %w", in.Apply.Kernel.Name, in.BuildDir, errs.ErrEnv)
	}
	if in.Pristine != nil {
		rep.Judge(in.Pristine)
	} else {
		rep.JudgeKnown()
	}
	return rep, nil
}

// CheckpatchTree is the folder whose checkpatch.pl judges k's patches
// when the lock names another kernel for it, or "" for k's own: that
// kernel's pristine tree when prepared, else only the files checkpatch
// reads, extracted from its package (tree.Cache.CheckpatchFiles). The
// paths patches names are made to exist there as in the whole tree
// (tree.StubNamed); RunCheckStage does it for the apply stage's patches.
func CheckpatchTree(ctx context.Context, c *tree.Cache, l *tree.Lock, k *tree.Kernel, patches ...string) (string, error) {
	ck, err := l.CheckpatchKernel(k)
	if err != nil || ck == nil {
		return "", err
	}
	dir, err := c.CheckpatchFiles(ctx, ck)
	if err != nil {
		return "", fmt.Errorf("preparing %s, whose checkpatch.pl judges the patches (checkpatch: in series/kernels.yaml): %w", ck.Name, err)
	}
	if err := tree.StubNamed(dir, patches); err != nil {
		return "", err
	}
	return dir, nil
}

// preprocessor is the check's Preprocessor for tree (nil: raw C).
func (in CheckStageIn) preprocessor(ctx context.Context, tree string) (checks.Preprocessor, error) {
	if !in.Preprocess {
		return nil, nil
	}
	if in.BuildDir == "" {
		return nil, fmt.Errorf("--preprocess needs the kernel's build folder for its compile flags, and %s has none yet: run patchctl build --kernel %s first: %w", in.Apply.Kernel.Name, in.Apply.Kernel.Name, errs.ErrInput)
	}
	return NewPreprocessor(ctx, tree, in.BuildDir, in.Cache.Dir)
}

// NewPreprocessor gives the checks the translation units the compiler
// sees for the files of tree, with the flags kbuild recorded in buildDir
// (a tree's own O= folder, or the tree itself), cached under cacheDir.
func NewPreprocessor(ctx context.Context, tree, buildDir, cacheDir string) (checks.Preprocessor, error) {
	s, err := preproc.New(preproc.Options{Tree: tree, BuildDir: buildDir, CacheDir: cacheDir})
	if err != nil {
		return nil, err
	}
	return checks.NewPreprocessor(ctx, s), nil
}

// buildStamp names the state of a build folder's vmlinux, whose DWARF
// the checks read for layouts: its size and time ("" without a folder).
func buildStamp(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	st, err := os.Stat(filepath.Join(dir, "vmlinux"))
	if errors.Is(err, fs.ErrNotExist) {
		return "none", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the build folder's vmlinux for layouts: %w", err)
	}
	return fmt.Sprintf("%d %d", st.Size(), st.ModTime().UnixNano()), nil
}
