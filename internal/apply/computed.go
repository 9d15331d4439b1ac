package apply

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/tree"
)

// Given is a series that no manifest lists (patchctl try): the patches,
// where each came from, and which dispositions besides the applying ones
// are accepted.
type Given struct {
	Kernel   *tree.Kernel
	Pristine string
	Patches  []*mailpatch.Patch
	Sources  []string // one per patch, as the user named it (file, msgid, commit)
	// Allow lists the dispositions accepted besides applies,
	// applies-with-offset and applies-with-fuzz (already-applied,
	// already-upstream, conflict).
	Allow []string
	// Dir is where the regenerated patches are written (Out.Patches
	// point there); the caller writes them (Out.Refreshed.Write(Dir)).
	Dir  string
	Boot series.Boot
	// Strip is -pN for plain diffs (nil: found from the tree).
	Strip *int
}

// CheckAllow refuses a --allow value that is not a disposition.
func CheckAllow(allow []string) error {
	for _, a := range allow {
		ok := false
		for _, d := range series.Dispositions {
			ok = ok || a == d
		}
		if !ok {
			return fmt.Errorf("--allow %q is not a disposition; want any of %s: %w", a, strings.Join(series.Dispositions[3:], ", "), errs.ErrUsage)
		}
	}
	return nil
}

// RunGiven applies a given series to the pristine tree in memory and
// computes each disposition. A disposition that applies, or that Allow
// names, is accepted (the result's Expected is set to it); any other is a
// mismatch, which Out.Mismatch reports and Checkout refuses.
func RunGiven(ctx context.Context, g Given) (*Out, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(g.Patches) != len(g.Sources) {
		return nil, fmt.Errorf("%d patches but %d sources", len(g.Patches), len(g.Sources))
	}
	if err := CheckAllow(g.Allow); err != nil {
		return nil, err
	}
	allowed := map[string]bool{}
	for _, a := range g.Allow {
		allowed[a] = true
	}
	entries := make([]series.Entry, len(g.Patches))
	for i := range g.Patches {
		entries[i] = series.Entry{Source: g.Sources[i], Expect: series.Applies, Strip: g.Strip}
	}
	m := series.New(g.Dir, g.Kernel.Name, g.Boot, entries)
	plan := &Plan{Kernel: g.Kernel.Name, Manifest: m, Entries: entries, Patches: g.Patches}
	res, err := plan.Run(g.Pristine)
	if err != nil {
		return nil, err
	}
	for _, r := range res.Results {
		if series.IsApplied(r.Disposition) || allowed[r.Disposition] {
			r.Expected, r.Match = r.Disposition, true
			r.Entry.Expect = r.Disposition
		} else {
			r.Expected = "applies (or --allow " + r.Disposition + ")"
		}
	}
	out := &Out{Kernel: g.Kernel, Plan: plan, Result: res, Refreshed: Refresh(res), Given: true}
	for _, n := range out.Refreshed.Order {
		out.Patches = append(out.Patches, filepath.Join(g.Dir, n))
	}
	return out, nil
}
