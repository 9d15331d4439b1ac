package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/report"
	"github.com/spf13/cobra"
)

// ApplyOptions are the inputs of `patchctl apply`.
type ApplyOptions struct {
	IO     *IOStreams
	Global *GlobalOptions
	Kernel string
	Tree   string
	Series string
	JSON   bool
	DryRun bool
}

func newApplyCmd(io *IOStreams, g *GlobalOptions) *cobra.Command {
	opts := &ApplyOptions{IO: io, Global: g}
	cmd := &cobra.Command{
		Use:   "apply [--kernel K] [--series NAME] [--json] [--dry-run]",
		Short: "Apply the manifest's patches to a kernel's work tree, with dispositions",
		Long: `Apply imports the patches that series/<kernel>/manifest.yaml lists, applies
them in memory to the pristine tree (offset and fuzz as GNU patch: up to two
outer context lines), computes each patch's disposition (applies, with
offset, with fuzz, already applied, already upstream, conflict), and
compares it with the manifest. When all match, the work tree is reset and
the series written to it, all or nothing. A mismatch exits 1 and leaves the
work tree as it was.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error { return runApply(c.Context(), opts) },
	}
	kernelFlag(cmd.Flags(), &opts.Kernel, "pinned kernel (default: the lock's default)")
	cmd.Flags().StringVar(&opts.Tree, "tree", "", "a local kernel tree (git checkout or folder) as the pristine tree, never written to; --kernel K picks series/K (default: its Makefile's version)")
	cmd.Flags().StringVar(&opts.Series, "series", "", "only this series (a folder under patches/)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print dispositions and hunks as JSON")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "compute and report, leave the work tree alone")
	return cmd
}

func runApply(ctx context.Context, opts *ApplyOptions) error {
	t, err := opts.Global.target(ctx, opts.IO, opts.Kernel, opts.Tree)
	if err != nil {
		return err
	}
	out, err := t.Applied(ctx, opts.Series)
	if err != nil {
		return err
	}
	plan, res := out.Plan, out.Result
	k, root := t.Kernel, t.Root
	rep := &report.Apply{Kernel: k.Name, Source: pipeline.SourceOf(k), Patches: res.Results, Changed: res.Touched()}
	mismatches := res.Mismatches()
	if len(mismatches) == 0 && !opts.DryRun {
		if rep.WorkTree, err = t.WriteWorkTree(ctx, out); err != nil {
			return err
		}
		rep.Written = true
	}
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, rep); err != nil {
			return err
		}
	} else {
		report.ApplyText(opts.IO.Out, rep, plan.Manifest.Path(), root)
	}
	if len(mismatches) > 0 {
		var names []string
		for _, m := range mismatches {
			names = append(names, fmt.Sprintf("%s is %s, manifest expects %s", m.Source, m.Disposition, m.Expected))
		}
		return fmt.Errorf("%s: %s; the work tree was not changed: %w", k.Name, strings.Join(names, "; "), errs.ErrFindings)
	}
	return nil
}
