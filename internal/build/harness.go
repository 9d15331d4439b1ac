package build

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
	"github.com/patchctl/patchctl/qemu/harness"
)

// State names what a build of out's variant compiles: the variant's
// source state (apply.Out.State) and the harness patches of the DMA mode
// (vocab.DMAFaithful or vocab.DMAPlain; "" is faithful), by their
// content. Snapshots (StateDir) are named by it.
func State(out *apply.Out, variant, dma string) (string, error) {
	mode, err := vocab.ParseDMA(dma)
	if err != nil {
		return "", err
	}
	hk, err := harness.Key(harness.ForMode(mode))
	if err != nil {
		return "", fmt.Errorf("the harness patches: %w", err)
	}
	return fsutil.Hash([]byte(out.State(variant) + "\nharness " + mode + " " + hk + "\n")), nil
}

// harnessPlan applies the DMA mode's harnesses (qemu/harness) on top of
// the variant's state: the pristine tree for the baseline, the series'
// files over it for the patched build.
func harnessPlan(o *Options, pristine string) (*harness.Plan, error) {
	readPristine := func(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(pristine, filepath.FromSlash(rel))) }
	state := readPristine
	if o.Variant == vocab.Patched {
		state = func(rel string) ([]byte, error) {
			if b, ok := o.Apply.Result.Files[rel]; ok {
				if b == nil {
					return nil, fs.ErrNotExist
				}
				return b, nil
			}
			return readPristine(rel)
		}
	}
	p, err := harness.ForBuild(harness.ForMode(o.DMA), readPristine, state)
	if errors.Is(err, harness.ErrConflict) {
		return nil, fmt.Errorf("%s %s: %w: %w", o.Kernel.Name, o.Variant, err, errs.ErrFindings)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: the harness patches: %w", o.Kernel.Name, o.Variant, err)
	}
	return p, nil
}

// checkoutHarness puts the held work tree into the variant's state with
// the harness on top (all or nothing, as apply.Checkout). The files the
// harness writes get their pristine file's time: whether make recompiles
// what includes them is decided by the build folder's source record
// (syncSources, which names them), not by the time of the write, so a
// work tree that went back to the state without the harness in between
// (check, apply, the other variant) costs no rebuild.
func checkoutHarness(wt *tree.WorkTree, o *Options, plan *harness.Plan) error {
	if len(plan.Files) == 0 {
		return apply.Checkout(wt, o.Apply, o.Variant)
	}
	res := &apply.SeriesResult{Files: map[string][]byte{}, Modes: map[string]os.FileMode{}}
	if o.Variant == vocab.Patched {
		if err := o.Apply.Mismatch(); err != nil {
			return err
		}
		res.Results = o.Apply.Result.Results
		for p, b := range o.Apply.Result.Files {
			res.Files[p] = b
		}
		for p, m := range o.Apply.Result.Modes {
			res.Modes[p] = m
		}
	}
	for p, b := range plan.Files {
		res.Files[p] = b
	}
	if err := apply.Commit(wt, res); err != nil {
		return fmt.Errorf("putting the %s work tree into the %s state with the harness (left as it was): %w", o.Kernel.Name, o.Variant, err)
	}
	for _, p := range plan.Paths() {
		st, err := os.Stat(filepath.Join(wt.Pristine, filepath.FromSlash(p)))
		if err != nil {
			continue
		}
		if err := os.Chtimes(filepath.Join(wt.Dir, filepath.FromSlash(p)), st.ModTime(), st.ModTime()); err != nil {
			return fmt.Errorf("setting the time of the harness's %s: %w", p, err)
		}
	}
	return nil
}
