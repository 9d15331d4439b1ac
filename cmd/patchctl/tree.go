package main

import (
	"context"
	"fmt"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/spf13/cobra"
)

// TreeOptions are the inputs of `patchctl tree prepare`.
type TreeOptions struct {
	IO      *IOStreams
	Global  *GlobalOptions
	Kernels []string
	All     bool
	JSON    bool
	Force   bool
}

func newTreeCmd(io *IOStreams, g *GlobalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tree",
		Short: "Prepare the pinned kernel trees",
	}
	opts := &TreeOptions{IO: io, Global: g}
	prepare := &cobra.Command{
		Use:   "prepare [--kernel K...] [--all]",
		Short: "Fetch, verify and extract pinned kernel trees into the cache",
		Long: `Prepare puts each kernel's pristine tree under the cache: the exact Debian
linux-source package from series/kernels.yaml (apt-get download), its .deb
and source tarball checked against the pinned sha256, extracted in one pass.
A prepared tree is a no-op. A tree appears only complete and verified,
with a manifest of every file (size and sha256) that later stages check
what they read against (patchctl tree verify checks all of it).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error { return runTreePrepare(c.Context(), opts) },
	}
	prepare.Flags().StringSliceVar(&opts.Kernels, "kernel", nil, "kernel to prepare (default: the lock's default)")
	prepare.Flags().BoolVar(&opts.All, "all", false, "prepare every pinned kernel")
	prepare.Flags().BoolVar(&opts.JSON, "json", false, "print the prepared trees as JSON")
	prepare.Flags().BoolVar(&opts.Force, "force", false, "extract again even when prepared (repairs a damaged tree; the old one stays until the new one is complete)")
	cmd.AddCommand(prepare, newTreeListCmd(io, g), newTreeVerifyCmd(io, g), newTreePinCmd(io, g))
	return cmd
}

// newTreeListCmd is tree list.
func newTreeListCmd(io *IOStreams, g *GlobalOptions) *cobra.Command {
	var listJSON bool
	list := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the pinned kernels and whether they are prepared",
		Example: `  patchctl tree list
  patchctl tree list --json | jq -r '.[] | select(.prepared | not) | .kernel'`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error { return runTreeList(io, g, listJSON) },
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print the kernels as JSON")
	return list
}

// runTreeList prints the pinned kernels and whether they are prepared.
func runTreeList(io *IOStreams, g *GlobalOptions, asJSON bool) error {
	w, err := g.workspace(io)
	if err != nil {
		return err
	}
	out, err := w.ListTrees()
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(io.Out, out)
	}
	for _, e := range out {
		state := "not prepared"
		if e.Prepared {
			state = e.Dir
		}
		def := ""
		if e.Default {
			def = " (default)"
		}
		fmt.Fprintf(io.Out, "%s%s\t%s\t%s\n", e.Kernel, def, e.Source, state)
	}
	return nil
}

// newTreePinCmd is tree pin.
func newTreePinCmd(io *IOStreams, g *GlobalOptions) *cobra.Command {
	pin := &PinOptions{IO: io, Global: g}
	pinCmd := &cobra.Command{
		Use:   "pin [--kernel K... | --all] [--check]",
		Short: "Re-pin Debian kernels to what their suite serves now",
		Long: `Pin asks each kernel's Debian suite (through patchctl's own apt state under
the cache; the system's apt configuration is never changed) which version of
its linux-source package it serves now. With --check it only compares and
exits 1 when a pin is stale, saying what is current. Without --check it
downloads what is served, computes the .deb's sha256 (which must equal the
index's) and the source tarball's sha256 from the download, rewrites the
kernel's entry in series/kernels.yaml and prints the old and new pins. A new
pin changes the kernel's source key: every cached stage of that kernel
(tree, builds, boots) is redone on the next run. A binary kernel pinned beside
the source (binary:, for --kernel-from distro) moves with it: its packages,
named after the upstream version, are looked up at the new version in the
same suite and pinned with the index's sums; one the suite does not serve
under that name is an error, and the entry is left as it was. Default: every
kernel that pins a suite.`,
		Example: `  patchctl tree pin --check              # exit 1 when a pin is stale (a scheduled CI job)
  patchctl tree pin --kernel 7.3         # re-pin mainline rc to what experimental serves now
  patchctl tree pin --all --json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error { return runTreePin(c.Context(), pin) },
	}
	pinCmd.Flags().StringSliceVar(&pin.Kernels, "kernel", nil, "kernel to re-pin (default: all that pin a suite)")
	pinCmd.Flags().BoolVar(&pin.All, "all", false, "every kernel that pins a suite")
	pinCmd.Flags().BoolVar(&pin.Check, "check", false, "only compare; exit 1 when a pin is stale")
	pinCmd.Flags().BoolVar(&pin.JSON, "json", false, "print the pins as JSON")
	return pinCmd
}

// PinOptions are the inputs of `patchctl tree pin`.
type PinOptions struct {
	IO      *IOStreams
	Global  *GlobalOptions
	Kernels []string
	All     bool
	Check   bool
	JSON    bool
}

func runTreePin(ctx context.Context, opts *PinOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	w, err := opts.Global.workspace(opts.IO)
	if err != nil {
		return err
	}
	out, stale, err := w.Pins(ctx, pipeline.PinOptions{Kernels: opts.Kernels, All: opts.All, Check: opts.Check})
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, out); err != nil {
			return err
		}
	} else {
		for _, st := range out {
			p := st.Pinned
			switch {
			case st.Stale == "":
				fmt.Fprintf(opts.IO.Out, "%s: %s=%s is what %s serves (current)\n", st.Kernel, p.Package, p.Version, p.Suite)
			case opts.Check:
				fmt.Fprintf(opts.IO.Out, "%s: stale: %s; re-pin with: patchctl tree pin --kernel %s\n", st.Kernel, st.Stale, st.Kernel)
			default:
				n := st.New
				fmt.Fprintf(opts.IO.Out, "%s: re-pinned (%s)\n  old: %s=%s deb_sha256 %s tarball_sha256 %s\n  new: %s=%s deb_sha256 %s tarball_sha256 %s\n",
					st.Kernel, st.Stale, p.Package, p.Version, p.DebSHA256, p.TarballSHA256, n.Package, n.Version, n.DebSHA256, n.TarballSHA256)
				if ob, nb := p.Binary, n.Binary; ob != nil && nb != nil {
					fmt.Fprintf(opts.IO.Out, "  binary kernel: %s %s -> %s %s\n", ob.Release, ob.Version, nb.Release, nb.Version)
					np := nb.Packages()
					for i, op := range ob.Packages() {
						if i < len(np) && (op.Package != np[i].Package || op.SHA256 != np[i].SHA256) {
							fmt.Fprintf(opts.IO.Out, "    %s sha256 %s -> %s sha256 %s\n", op.Package, op.SHA256, np[i].Package, np[i].SHA256)
						}
					}
				}
			}
		}
	}
	if opts.Check && stale > 0 {
		return fmt.Errorf("%d of %d pins stale (patchctl tree pin rewrites them): %w", stale, len(out), errs.ErrFindings)
	}
	return nil
}

func runTreePrepare(ctx context.Context, opts *TreeOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	w, err := opts.Global.workspace(opts.IO)
	if err != nil {
		return err
	}
	out, err := w.PrepareTrees(ctx, w.SelectKernels(opts.Kernels, opts.All), opts.Force)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, out)
	}
	for _, p := range out {
		fmt.Fprintf(opts.IO.Out, "%s: %s ready at %s (%.1fs)\n", p.Kernel, p.Source, p.Dir, p.Seconds)
	}
	return nil
}
