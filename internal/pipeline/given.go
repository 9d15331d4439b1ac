package pipeline

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/tree"
)

// GivenOptions say how try's patches are applied to each kernel.
type GivenOptions struct {
	Root string
	// Dir is where each kernel's regenerated patches go: Dir/<kernel>.
	Dir     string
	Patches []*mailpatch.Patch
	Sources []string // each patch's name in the reports
	// Allow are the dispositions that pass besides applying.
	Allow []string
	// ExpectInline judges the boots' inline evidence per variant (nil:
	// reported, not judged).
	ExpectInline map[string]bool
	Strip        *int // -pN for plain diffs (nil: found from the tree)
}

// ApplyGiven is the apply stage of patches given without a manifest
// (patchctl try), for Options.Apply: the dispositions computed, the
// manifest's in-capsule size kept when the kernel has one, the
// regenerated patches written to Dir/<kernel>.
func ApplyGiven(g GivenOptions) func(ctx context.Context, k *tree.Kernel, pristine string) (*apply.Out, error) {
	return func(ctx context.Context, k *tree.Kernel, pristine string) (*apply.Out, error) {
		dir := filepath.Join(g.Dir, k.Name)
		b := series.Boot{ExpectInline: g.ExpectInline}
		if m, err := series.Load(series.ManifestPath(g.Root, k.SeriesName())); err == nil && k.SeriesName() != "" {
			b.InlineDataSize = m.Boot.InlineDataSize
		}
		o, err := apply.RunGiven(ctx, apply.Given{Kernel: k, Pristine: pristine, Patches: g.Patches, Sources: g.Sources,
			Allow: g.Allow, Dir: dir, Boot: b, Strip: g.Strip})
		if err != nil {
			return nil, err
		}
		if err := o.Refreshed.Write(dir); err != nil {
			return nil, fmt.Errorf("writing the regenerated patches to %s: %w", dir, err)
		}
		return o, nil
	}
}

// CheckAllow checks --allow's dispositions (apply.CheckAllow).
func CheckAllow(allow []string) error { return apply.CheckAllow(allow) }
