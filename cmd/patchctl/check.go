package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/checks"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
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
	var rep *checks.Report
	so := checks.SARIFOptions{Version: versionString()}
	patches, paths := splitCheckArgs(opts.Paths)
	opts.Paths = paths
	if len(patches) > 0 {
		// checkpatch on the given patches, the static rules on the tree
		// they are for (the pristine tree of --kernel, or --tree).
		dir, cpTree := opts.Tree, ""
		if dir == "" {
			t, err := opts.Global.target(ctx, opts.IO, opts.Kernel, "")
			if err != nil {
				return err
			}
			if dir, err = t.Cache.Prepare(ctx, t.Kernel); err != nil {
				return err
			}
			if cpTree, err = pipeline.CheckpatchTree(ctx, t.Cache, t.Lock, t.Kernel, patches...); err != nil {
				return err
			}
			so.Repo, so.Kernel = t.Root, t.Kernel.Name
		}
		if err := checkPaths(dir, paths); err != nil {
			return err
		}
		var err error
		if rep, err = checks.Run(checks.Options{Tree: dir, Paths: paths, Patches: patches, CheckpatchTree: cpTree}); err != nil {
			return fmt.Errorf("checking %s: %w", dir, err)
		}
		rep.JudgeKnown()
		so.Tree, so.Patches = dir, patches
	} else if opts.Tree == "" {
		t, err := opts.Global.target(ctx, opts.IO, opts.Kernel, "")
		if err != nil {
			return err
		}
		out, err := t.Applied(ctx, "")
		if err != nil {
			return err
		}
		if err := checkPaths(t.Cache.PristineDir(t.Kernel), opts.Paths); err != nil {
			return err
		}
		in := pipeline.CheckStageIn{Cache: t.Cache, Apply: out, Paths: opts.Paths, Preprocess: opts.Preprocess}
		if in.CheckpatchTree, err = pipeline.CheckpatchTree(ctx, t.Cache, t.Lock, t.Kernel); err != nil {
			return err
		}
		if dir, err := t.BuildFolder(out); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "vmlinux")); err == nil {
				in.BuildDir = dir
			}
		}
		if in.Pristine, err = pipeline.RunCheckPristine(ctx, in); err != nil {
			return err
		}
		if rep, err = pipeline.RunCheckStage(ctx, in); err != nil {
			return err
		}
		so.Repo, so.Kernel = t.Root, t.Kernel.Name
		so.Tree, so.Patches = t.Cache.WorkTreeDir(t.Kernel), out.Patches
	} else {
		if st, err := os.Stat(opts.Tree); err != nil || !st.IsDir() {
			return fmt.Errorf("--tree %s is not a folder: %w", opts.Tree, errs.ErrInput)
		}
		if err := checkPaths(opts.Tree, opts.Paths); err != nil {
			return err
		}
		co := checks.Options{Tree: opts.Tree, Paths: opts.Paths}
		if opts.Preprocess {
			bd := opts.BuildDir
			if bd == "" {
				bd = opts.Tree
			}
			c, err := opts.Global.cache(opts.IO)
			if err != nil {
				return err
			}
			pp, err := pipeline.NewPreprocessor(ctx, opts.Tree, bd, c.Dir)
			if err != nil {
				return err
			}
			co.Preprocessor = pp
		}
		var err error
		if rep, err = checks.Run(co); err != nil {
			return fmt.Errorf("checking %s: %w", opts.Tree, err)
		}
		if err := judgeAgainst(rep, opts.Baseline, opts.Paths); err != nil {
			return err
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
	if n := rep.Failing(opts.Strict); n > 0 {
		return fmt.Errorf("%s: %w", errs.Count(n, "new finding"), errs.ErrFindings)
	}
	return nil
}

// judgeAgainst judges a --tree check against the same check of the
// baseline tree, or the known findings when there is none.
func judgeAgainst(rep *checks.Report, baseline string, paths []string) error {
	if baseline == "" {
		rep.JudgeKnown()
		return nil
	}
	if st, err := os.Stat(baseline); err != nil || !st.IsDir() {
		return fmt.Errorf("--baseline %s is not a folder: give the tree before the patch: %w", baseline, errs.ErrInput)
	}
	if err := checkPaths(baseline, paths); err != nil {
		return err
	}
	base, err := checks.Run(checks.Options{Tree: baseline, Paths: paths})
	if err != nil {
		return fmt.Errorf("checking the baseline %s: %w", baseline, err)
	}
	rep.Judge(base)
	return nil
}

// splitCheckArgs separates the patch files among check's arguments (an
// existing file named *.patch, *.diff, *.mbox or *.eml: checkpatch's
// input) from the tree paths.
func splitCheckArgs(args []string) (patches, paths []string) {
	for _, a := range args {
		ext := strings.ToLower(filepath.Ext(a))
		if st, err := os.Stat(a); err == nil && st.Mode().IsRegular() && (ext == ".patch" || ext == ".diff" || ext == ".mbox" || ext == ".eml") {
			patches = append(patches, a)
			continue
		}
		paths = append(paths, a)
	}
	return patches, paths
}

// checkPaths refuses a PATH that names nothing in the tree: checking
// nothing is not a clean pass.
func checkPaths(dir string, paths []string) error {
	var missing []string
	for _, p := range paths {
		if err := fsutil.ValidRel(filepath.ToSlash(filepath.Clean(p))); err != nil {
			return fmt.Errorf("PATH %s: %v: a PATH is a file or folder of the kernel tree, relative to it: %w", p, err, errs.ErrUsage)
		}
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: no such file or folder in the tree %s (a PATH is relative to the tree; a patch to checkpatch is a file named *.patch, *.diff, *.mbox or *.eml): %w",
			strings.Join(missing, ", "), dir, errs.ErrInput)
	}
	return nil
}
