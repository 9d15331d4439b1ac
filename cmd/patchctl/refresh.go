package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/spf13/cobra"
)

// RefreshOptions are the inputs of `patchctl refresh`.
type RefreshOptions struct {
	IO     *IOStreams
	Global *GlobalOptions
	Kernel string
	Check  bool
	JSON   bool
}

func newRefreshCmd(io *IOStreams, g *GlobalOptions) *cobra.Command {
	opts := &RefreshOptions{IO: io, Global: g}
	cmd := &cobra.Command{
		Use:   "refresh [--kernel K] [--check]",
		Short: "Regenerate the per-kernel patches under series/<kernel>/",
		Long: `Refresh writes, for every patch that applies to the kernel, the patch
regenerated for it: original header and trailers, exact line numbers, the
file's own context (no fuzz), correct index lines; and a quilt series file.
git am applies them to the pristine tree with no offset and no fuzz.
--check writes nothing and exits 1 when the committed files differ.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error { return runRefresh(c.Context(), opts) },
	}
	kernelFlag(cmd.Flags(), &opts.Kernel, "pinned kernel (default: the lock's default)")
	cmd.Flags().BoolVar(&opts.Check, "check", false, "only compare with the committed files")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the regenerated patches and the files that differ as JSON")
	return cmd
}

// refreshResult is refresh --json.
type refreshResult struct {
	Kernel  string   `json:"kernel"`
	Dir     string   `json:"dir"`
	Patches []string `json:"patches"`
	// Differ are the files that differed from what refresh generates
	// (written unless check).
	Differ []string `json:"differ"`
	Check  bool     `json:"check"`
}

func runRefresh(ctx context.Context, opts *RefreshOptions) error {
	t, err := opts.Global.target(ctx, opts.IO, opts.Kernel, "")
	if err != nil {
		return err
	}
	out, err := t.Applied(ctx, "")
	if err != nil {
		return err
	}
	k := t.Kernel
	ref := out.Refreshed
	dir := out.Plan.Manifest.Dir()
	diffs := ref.Diff(dir)
	if opts.JSON {
		r := refreshResult{Kernel: k.Name, Dir: dir, Patches: ref.Order, Differ: diffs, Check: opts.Check}
		if r.Differ == nil {
			r.Differ = []string{}
		}
		if err := writeJSON(opts.IO.Out, r); err != nil {
			return err
		}
	}
	if opts.Check {
		if len(diffs) > 0 {
			return fmt.Errorf("series/%s differs from what refresh generates: %s (run patchctl refresh --kernel %s): %w", k.Name, strings.Join(diffs, ", "), k.Name, errs.ErrFindings)
		}
		if !opts.JSON {
			fmt.Fprintf(opts.IO.Out, "series/%s is current (%d patches)\n", k.Name, len(ref.Order))
		}
		return nil
	}
	if err := ref.Write(dir); err != nil {
		return fmt.Errorf("writing series/%s: %w", k.Name, err)
	}
	if opts.JSON {
		return nil
	}
	for _, n := range ref.Order {
		fmt.Fprintf(opts.IO.Out, "series/%s/%s\n", k.Name, n)
	}
	fmt.Fprintf(opts.IO.Out, "%d patches regenerated for %s (files updated: %d)\n", len(ref.Order), k.Name, len(diffs))
	return nil
}
