package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/vocab"
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

type applyReport struct {
	Kernel   string          `json:"kernel"`
	Source   string          `json:"source"`
	WorkTree string          `json:"work_tree,omitempty"`
	Patches  []*apply.Result `json:"patches"`
	Changed  []string        `json:"changed_files"`
	Written  bool            `json:"written"`
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
	k, cache, root := t.Kernel, t.Cache, t.Root
	rep := applyReport{Kernel: k.Name, Source: describe(k), Patches: res.Results, Changed: res.Touched()}
	mismatches := res.Mismatches()
	if len(mismatches) == 0 && !opts.DryRun {
		wt, release, err := cache.HoldWorkTree(ctx, k)
		if err != nil {
			return err
		}
		err = apply.Checkout(wt, out, vocab.Patched)
		release()
		if err != nil {
			return err
		}
		rep.WorkTree, rep.Written = wt.Dir, true
	}
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, rep); err != nil {
			return err
		}
	} else {
		printApply(opts.IO.Out, rep, plan.Manifest.Path(), root)
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

func printApply(w io.Writer, rep applyReport, manifest, root string) {
	rel, err := filepath.Rel(root, manifest)
	if err != nil {
		rel = manifest
	}
	fmt.Fprintf(w, "kernel %s: %s\n\n", rep.Kernel, rep.Source)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PATCH\tDISPOSITION\tEXPECTED\t")
	for _, r := range rep.Patches {
		verdict := "ok"
		if !r.Match {
			verdict = "MISMATCH"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", strings.TrimPrefix(r.Source, "patches/"), r.Disposition, r.Expected, verdict)
	}
	tw.Flush()
	for _, r := range rep.Patches {
		fmt.Fprintf(w, "\n%s\n  %s\n", strings.TrimPrefix(r.Source, "patches/"), r.Subject)
		if len(r.Hunks) > 0 && r.Disposition != series.AlreadyUpstream {
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "  \tFILE\tHUNK\tSTATED\tLANDED\tOFFSET\tFUZZ\t\t")
			for _, h := range r.Hunks {
				switch {
				case h.Applied && h.ReversedAt > 0:
					fmt.Fprintf(tw, "  \t%s\t%d\t%d\t%d\t%+d\t%d\t\t  its reverse matches at %d: check it is not applied twice\n", h.File, h.Index, h.Stated, h.Landed, h.Offset, h.Fuzz, h.ReversedAt)
				case h.Applied:
					fmt.Fprintf(tw, "  \t%s\t%d\t%d\t%d\t%+d\t%d\t\t\n", h.File, h.Index, h.Stated, h.Landed, h.Offset, h.Fuzz)
				case h.Reversed && h.Landed > 0:
					fmt.Fprintf(tw, "  \t%s\t%d\t%d\t%d\t%+d\t%d\t\t  REVERSED: previously applied (the reverse applies here)\n", h.File, h.Index, h.Stated, h.Landed, h.Offset, h.Fuzz)
				case h.Reversed:
					fmt.Fprintf(tw, "  \t%s\t%d\t%d\t-\t-\t-\t\t  REVERSED: previously applied (%s)\n", h.File, h.Index, h.Stated, map[bool]string{true: "the file is gone", false: "the file is there"}[h.MissingFile])
				default:
					near := fmt.Sprintf("closest at %d: %d of %d lines", h.Nearest, h.NearMatched, h.NearTotal)
					if h.MissingFile {
						near = "file missing"
					}
					if h.Why != "" {
						near = h.Why
					}
					fmt.Fprintf(tw, "  \t%s\t%d\t%d\t-\t-\t-\t\t  FAILED, %s\n", h.File, h.Index, h.Stated, near)
				}
			}
			tw.Flush()
		}
		for _, l := range r.Explain() {
			fmt.Fprintf(w, "  %s\n", l)
		}
		if u := r.Upstream; u != nil && (r.Disposition == series.AlreadyUpstream || r.Disposition == series.Conflict) {
			printNames(w, u)
		}
		if r.Disposition == series.Conflict {
			for _, h := range r.Hunks {
				if !h.Applied {
					fmt.Fprintf(w, "  first failing hunk (%s hunk %d):\n", h.File, h.Index)
					for _, l := range strings.Split(strings.TrimRight(h.Text, "\n"), "\n") {
						fmt.Fprintf(w, "    %s\n", l)
					}
					break
				}
			}
		}
		if r.Reason != "" {
			fmt.Fprintf(w, "  reason: %s\n", r.Reason)
		}
	}
	fmt.Fprintln(w)
	applied := 0
	for _, r := range rep.Patches {
		if series.IsApplied(r.Disposition) {
			applied++
		}
	}
	switch {
	case rep.Written:
		fmt.Fprintf(w, "%d of %d patches applied to %s (files changed: %d); dispositions match %s\n", applied, len(rep.Patches), rep.WorkTree, len(rep.Changed), rel)
	default:
		fmt.Fprintf(w, "%d of %d patches apply; work tree not written\n", applied, len(rep.Patches))
	}
}

// printNames says which names the patch introduces are in the tree and
// where, which are not, and which it only uses (its pre-image has them).
func printNames(w io.Writer, u *apply.UpstreamMatch) {
	list := func(ns []apply.NameAt) string {
		var out []string
		for _, n := range ns {
			out = append(out, n.String())
		}
		return strings.Join(out, ", ")
	}
	if len(u.NamesFound) > 0 {
		fmt.Fprintf(w, "  names it introduces found in the tree: %s\n", list(u.NamesFound))
	}
	if len(u.NamesMissing) > 0 {
		fmt.Fprintf(w, "  names it introduces not in the tree: %s\n", strings.Join(u.NamesMissing, ", "))
	}
	if len(u.NamesInPreimage) > 0 {
		fmt.Fprintf(w, "  names it adds that the touched files already use (not evidence): %s\n", list(u.NamesInPreimage))
	}
}
