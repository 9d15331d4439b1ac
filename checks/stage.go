package checks

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/stage"
	"github.com/patchctl/patchctl/internal/tree"
)

// StageIn is the check stage's input: the apply stage's output (whose
// patched state is checked, and whose regenerated patches go to
// checkpatch) and, optionally, a build with debug info for layouts.
type StageIn struct {
	Cache *tree.Cache
	Apply *apply.Out
	// BuildDir is a build folder of the kernel (DWARF layouts), and
	// BuildID names its content (the build stage's key); both optional.
	BuildDir, BuildID string
	Paths             []string
	// CheckpatchTree is a pristine tree whose checkpatch.pl runs instead
	// of the kernel's own (tree.Lock.Checkpatch); optional.
	CheckpatchTree string
}

// StageKey names what the check's report depends on: the patched tree's
// content, the patches checkpatch reads, the build whose layouts it
// reads, and patchctl's own code (the rules).
func StageKey(in StageIn) (string, error) {
	k := stage.NewKey("check").Code().Add("state", in.Apply.State(apply.Patched)).File(in.Apply.Patches...).
		Add("build", in.BuildID).Add("paths", in.Paths...)
	if in.CheckpatchTree != "" {
		k = k.File(filepath.Join(in.CheckpatchTree, "scripts", "checkpatch.pl"), filepath.Join(in.CheckpatchTree, "scripts", "spelling.txt"))
	}
	return k.Sum()
}

// RunStage puts the kernel's work tree into its patched state and checks
// it, holding the work tree throughout: no build or apply of another
// process can change the files under the check.
func RunStage(ctx context.Context, in StageIn) (*Report, error) {
	wt, release, err := in.Cache.HoldWorkTree(ctx, in.Apply.Kernel)
	if err != nil {
		return nil, err
	}
	defer release()
	scopes := in.Paths
	if len(scopes) == 0 {
		scopes = DefaultPaths
	}
	if err := in.Cache.Verify(in.Apply.Kernel, scopes, nil); err != nil {
		return nil, err
	}
	if err := apply.Checkout(wt, in.Apply, apply.Patched); err != nil {
		return nil, err
	}
	rep, err := Run(Options{Tree: wt.Dir, Paths: in.Paths, BuildDir: in.BuildDir, Patches: in.Apply.Patches, CheckpatchTree: in.CheckpatchTree})
	if err != nil {
		return nil, fmt.Errorf("checking %s: %w", in.Apply.Kernel.Name, err)
	}
	return rep, nil
}

// CheckpatchTree is the pristine tree whose checkpatch.pl judges k's
// patches when the lock names another kernel for it (prepared when
// needed), or "" for k's own.
func CheckpatchTree(ctx context.Context, c *tree.Cache, l *tree.Lock, k *tree.Kernel) (string, error) {
	ck, err := l.CheckpatchKernel(k)
	if err != nil || ck == nil {
		return "", err
	}
	dir, err := c.Prepare(ctx, ck)
	if err != nil {
		return "", fmt.Errorf("preparing %s, whose checkpatch.pl judges the patches (checkpatch: in series/kernels.yaml): %w", ck.Name, err)
	}
	return dir, nil
}
