package main

import (
	"context"
	"fmt"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/spf13/cobra"
)

// CheckOptions are the inputs of `patchctl check`.
type CheckOptions struct {
	IO     *IOStreams
	Global *GlobalOptions
	Tree   string
	Kernel string
	Format string
	Paths  []string
	Strict bool
	// Baseline is a tree to judge --tree's findings against (the tree
	// before the patch); without it, the known findings.
	Baseline string
	// Preprocess analyses the translation units the compiler sees;
	// BuildDir is --tree's kbuild output folder for their flags.
	Preprocess bool
	BuildDir   string
}

func newCheckCmd(io *IOStreams, g *GlobalOptions) *cobra.Command {
	opts := &CheckOptions{IO: io, Global: g}
	cmd := &cobra.Command{
		Use:   "check [--tree DIR | --kernel K] [--format text|json|sarif] [PATH...]",
		Short: "Static checks for RDMA inline sends",
		Long: `Check analyses the tree's C (tree-sitter, path by path) for:
  inline-sge-addr         an SGE of an IB_SEND_INLINE work request that is not shown to hold a
                          kernel virtual address on a path that reaches the post
  inline-on-registration  IB_SEND_INLINE on a REG_MR or LOCAL_INV request
  inline-size             the requested inline size, the guard before IB_SEND_INLINE, and what
                          a failed QP creation records
  checkpatch              the tree's checkpatch.pl on the kernel's regenerated patches
and prints what each provider in the tree grants for a requested inline size.
With --kernel, the kernel's work tree is put into its patched state first
(patchctl apply) and the patches under series/<kernel>/ go to checkpatch.
  incapsule-bounds        an NVMe-oF in-capsule bound check that adds a 64-bit wire value and can wrap
A patch is judged by what it introduces: with --kernel the same check runs
on the pristine tree, and a finding it has too is reported as pre-existing
(text [pre-existing], JSON "baseline": "unchanged", SARIF baselineState
unchanged) and does not fail; --tree DIR is judged against --baseline DIR2
(the tree before the patch), or without it against the known findings of
the pinned kernels (nvmet-rdma's in-capsule bound).
With no PATH: every RDMA user (drivers/infiniband, drivers/nvme, net, fs).
A PATH is a file or folder of the tree; one that names nothing there is an
input error. A PATH that is a patch file (*.patch, *.diff, *.mbox, *.eml)
goes to checkpatch instead, with the tree's (--tree, or --kernel's
pristine tree) scripts/checkpatch.pl.

Exit status: 0 no new errors (warnings do not fail unless --strict),
1 findings, 2 usage or input error.`,
		Example: `  patchctl check --kernel 6.12                      # the series of record, judged against pristine 6.12
  patchctl check --tree ~/linux --baseline ~/linux-orig drivers/nvme
  patchctl check --kernel 6.12 --format sarif > check.sarif`,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Paths = args
			return runCheck(c.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Tree, "tree", "", "a kernel tree to check")
	kernelFlag(cmd.Flags(), &opts.Kernel, "a pinned kernel: its work tree with the series applied")
	enumFlag(cmd.Flags(), &opts.Format, "format", "text", "text, json or sarif")
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "new warnings fail too")
	cmd.Flags().StringVar(&opts.Baseline, "baseline", "", "with --tree: the tree before the patch, whose findings are pre-existing")
	cmd.Flags().BoolVar(&opts.Preprocess, "preprocess", false, "analyse each .c file as the compiler sees it (kbuild's flags from the build folder; raw C where a file has none)")
	cmd.Flags().StringVar(&opts.BuildDir, "build-dir", "", "with --tree --preprocess: the tree's kbuild output folder (O=; default: the tree itself)")
	return cmd
}

func runCheck(ctx context.Context, opts *CheckOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.Format != "text" && opts.Format != "json" && opts.Format != "sarif" {
		return fmt.Errorf("--format %q: want text, json or sarif: %w", opts.Format, errs.ErrUsage)
	}
	if opts.Tree != "" && opts.Kernel != "" {
		return fmt.Errorf("--tree and --kernel exclude each other: %w", errs.ErrUsage)
	}
	if opts.BuildDir != "" && (opts.Tree == "" || !opts.Preprocess) {
		return fmt.Errorf("--build-dir goes with --tree and --preprocess (--kernel uses its own build folder): %w", errs.ErrUsage)
	}
	if opts.Baseline != "" && opts.Tree == "" {
		return fmt.Errorf("--baseline goes with --tree (--kernel compares with its pristine tree itself): %w", errs.ErrUsage)
	}
	// Only a pinned kernel needs the repository; a tree of the user's
	// needs at most the cache.
	ws := opts.Global.cacheWorkspace(opts.IO)
	if opts.Tree == "" {
		var err error
		if ws, err = opts.Global.workspace(opts.IO); err != nil {
			return err
		}
	}
	res, err := ws.Check(ctx, pipeline.CheckOptions{Tree: opts.Tree, Kernel: opts.Kernel, Args: opts.Paths, Baseline: opts.Baseline,
		Preprocess: opts.Preprocess, BuildDir: opts.BuildDir, Version: versionString()})
	if err != nil {
		return err
	}
	rep := res.Report
	switch opts.Format {
	case "json":
		err = rep.WriteJSON(opts.IO.Out)
	case "sarif":
		err = rep.WriteSARIFWith(opts.IO.Out, res.SARIF)
	default:
		rep.WriteText(opts.IO.Out)
	}
	if err != nil {
		return err
	}
	if n := rep.Failing(opts.Strict); n > 0 {
		return fmt.Errorf("%s: %w", errs.Count(n, "new finding"), errs.ErrFindings)
	}
	return nil
}
