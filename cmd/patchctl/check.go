package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/patchctl/patchctl/checks"
	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/errs"
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
With no PATH: every RDMA user (drivers/infiniband, drivers/nvme, net, fs).

Exit status: 0 no errors (checkpatch warnings do not fail unless --strict),
1 findings, 2 usage or input error.`,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Paths = args
			return runCheck(c.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Tree, "tree", "", "a kernel tree to check")
	cmd.Flags().StringVar(&opts.Kernel, "kernel", "", "a pinned kernel: its work tree with the series applied")
	cmd.Flags().StringVar(&opts.Format, "format", "text", "text, json or sarif")
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "warnings fail too")
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
	var rep *checks.Report
	so := checks.SARIFOptions{Version: versionString()}
	if opts.Tree == "" {
		t, err := opts.Global.target(opts.IO, opts.Kernel)
		if err != nil {
			return err
		}
		out, err := t.applied(ctx, "")
		if err != nil {
			return err
		}
		in := checks.StageIn{Cache: t.cache, Apply: out, Paths: opts.Paths}
		if dir, err := build.Locate(t.root, t.cache, t.k, out, nil); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "vmlinux")); err == nil {
				in.BuildDir = dir
			}
		}
		if rep, err = checks.RunStage(ctx, in); err != nil {
			return err
		}
		so.Repo, so.Kernel = t.root, t.k.Name
		so.Tree, so.Patches = t.cache.WorkTreeDir(t.k), out.Patches
	} else {
		if st, err := os.Stat(opts.Tree); err != nil || !st.IsDir() {
			return fmt.Errorf("--tree %s is not a folder: %w", opts.Tree, errs.ErrInput)
		}
		var err error
		if rep, err = checks.Run(checks.Options{Tree: opts.Tree, Paths: opts.Paths}); err != nil {
			return fmt.Errorf("checking %s: %w", opts.Tree, err)
		}
		so.Tree = opts.Tree
	}
	var err error
	switch opts.Format {
	case "json":
		err = rep.WriteJSON(opts.IO.Out)
	case "sarif":
		err = rep.WriteSARIFWith(opts.IO.Out, so)
	default:
		rep.WriteText(opts.IO.Out)
	}
	if err != nil {
		return err
	}
	n := rep.Errors()
	if opts.Strict {
		n = 0
		for _, f := range rep.Findings {
			if f.Severity != checks.SevNote {
				n++
			}
		}
	}
	if n > 0 {
		return fmt.Errorf("%d findings: %w", n, errs.ErrFindings)
	}
	return nil
}
