package apply

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
)

// In is what the apply stage reads: the repository's manifest and patches
// of record for a kernel, and that kernel's pristine tree.
type In struct {
	Root     string // repository: patches/ and series/
	Kernel   *tree.Kernel
	Pristine string // the prepared pristine tree
	Series   string // only this series ("" for all)
	// Cache, when set, holds the pristine tree's manifest: the files the
	// series reads, and their folders, are checked against it first, so
	// that a damaged tree is not blamed on a patch.
	Cache *tree.Cache
}

// Out is the apply stage's output: the series applied in memory, with
// dispositions and regenerated patches. It is the input of the check and
// build stages, which put a work tree into one of its two states.
type Out struct {
	Kernel    *tree.Kernel
	Plan      *Plan
	Result    *SeriesResult
	Refreshed *Refreshed
	// Patches are the regenerated patch files under series/<kernel>/, in
	// git am order.
	Patches []string
	// Given: no manifest lists the series (patchctl try); dispositions
	// were computed (see RunGiven).
	Given bool
}

// Run applies the manifest's series to the pristine tree, in memory. It
// changes no file.
func Run(ctx context.Context, in In) (*Out, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name := in.Kernel.SeriesName()
	if name == "" {
		return nil, fmt.Errorf("local tree %s (release %s) has no manifest: series/ has none for its version; pass --kernel K to check it against series/K, or use patchctl try: %w",
			in.Kernel.Local.Dir, in.Kernel.Local.Release, errs.ErrUsage)
	}
	plan, err := LoadPlan(in.Root, name, in.Series)
	if err != nil {
		return nil, err
	}
	if in.Cache != nil {
		touched := (&Out{Plan: plan}).Touched()
		if err := in.Cache.Verify(in.Kernel, tree.Dirs(touched), touched); err != nil {
			return nil, err
		}
	}
	res, err := plan.Run(in.Pristine)
	if err != nil {
		return nil, err
	}
	out := &Out{Kernel: in.Kernel, Plan: plan, Result: res, Refreshed: Refresh(res)}
	for _, n := range out.Refreshed.Order {
		out.Patches = append(out.Patches, filepath.Join(plan.Manifest.Dir(), n))
	}
	return out, nil
}

// Mismatch is nil when every disposition is what the manifest expects;
// otherwise an ErrFindings error naming them.
func (o *Out) Mismatch() error {
	mm := o.Result.Mismatches()
	if len(mm) == 0 {
		return nil
	}
	var s []string
	for _, m := range mm {
		why := ""
		if ex := m.Explain(); len(ex) > 0 {
			if len(ex) > 4 {
				ex = append(ex[:4], fmt.Sprintf("and %d more", len(ex)-4))
			}
			why = " [" + strings.Join(ex, "; ") + "]"
		}
		if o.Given {
			s = append(s, fmt.Sprintf("%s is %s%s (pass --allow %s to accept it)", m.Source, m.Disposition, why, m.Disposition))
			continue
		}
		s = append(s, fmt.Sprintf("%s is %s, the manifest expects %s%s", m.Source, m.Disposition, m.Expected, why))
	}
	if o.Given {
		return fmt.Errorf("%s: %s: %w", o.Kernel.Name, strings.Join(s, "; "), errs.ErrFindings)
	}
	return fmt.Errorf("%s: %s (see patchctl apply --kernel %s): %w", o.Kernel.Name, strings.Join(s, "; "), o.Kernel.Name, errs.ErrFindings)
}

// Causes says, for each patch that does not apply and whose disposition
// was accepted (--allow, or as the manifest expects), why and where: the
// hunks already in the tree with the line their reverse matches, the
// failing hunks with their nearest place, the already-upstream evidence.
// Mismatch says the same for the patches not accepted.
func (o *Out) Causes() []string {
	var out []string
	for _, r := range o.Result.Results {
		if series.IsApplied(r.Disposition) || !r.Match {
			continue
		}
		ex := r.Explain()
		if len(ex) == 0 {
			continue
		}
		if len(ex) > 4 {
			ex = append(ex[:4], fmt.Sprintf("and %d more", len(ex)-4))
		}
		out = append(out, fmt.Sprintf("%s is %s [%s]", r.Source, r.Disposition, strings.Join(ex, "; ")))
	}
	return out
}

// Stale lists the files of series/<kernel>/ that differ from what refresh
// generates.
func (o *Out) Stale() []string { return o.Refreshed.Diff(o.Plan.Manifest.Dir()) }

// Applied lists the sources of the patches that apply, in order.
func (o *Out) Applied() []string {
	var a []string
	for _, r := range o.Result.Results {
		if series.IsApplied(r.Disposition) {
			a = append(a, r.Source)
		}
	}
	return a
}

// Touched lists every path the manifest's patches name (applied or not),
// sorted: the files whose objects a build compile-tests.
func (o *Out) Touched() []string {
	seen := map[string]bool{}
	var touched []string
	for _, p := range o.Plan.Patches {
		for _, f := range p.Files {
			for _, n := range []string{f.OldName, f.NewName} {
				if n != "" && !seen[n] {
					seen[n] = true
					touched = append(touched, n)
				}
			}
		}
	}
	sort.Strings(touched)
	return touched
}

// State names the content of the tree in a variant: the pristine source
// and, patched, every changed file's bytes. Two Outs with the same State
// put a work tree into the same content.
func (o *Out) State(variant string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s\n", o.Kernel.Key(), variant)
	fmt.Fprintf(&b, "touched %s\n", strings.Join(o.Touched(), " "))
	if variant == vocab.Patched {
		for _, p := range o.Result.Touched() {
			c := o.Result.Files[p]
			sum := "deleted"
			if c != nil {
				sum = fsutil.Hash(c)
			}
			fmt.Fprintf(&b, "%s %s %o\n", p, sum, o.Result.Modes[p])
		}
	}
	return fsutil.Hash([]byte(b.String()))
}

// Checkout puts the held work tree into the variant's state: pristine for
// baseline, the series for patched (refused when a disposition differs
// from the manifest). All or nothing. It is the one way the series gets
// into a work tree.
func Checkout(wt *tree.WorkTree, o *Out, variant string) error {
	res := o.Result
	switch variant {
	case vocab.Baseline:
		res = &SeriesResult{Files: map[string][]byte{}}
	case vocab.Patched:
		if err := o.Mismatch(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("variant %q: want baseline or patched: %w", variant, errs.ErrUsage)
	}
	if err := Commit(wt, res); err != nil {
		return fmt.Errorf("putting the %s work tree into the %s state (left as it was): %w", o.Kernel.Name, variant, err)
	}
	return nil
}
