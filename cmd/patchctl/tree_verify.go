package main

import (
	"fmt"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/vocab"
	"github.com/spf13/cobra"
)

// TreeVerifyOptions are the inputs of `patchctl tree verify`.
type TreeVerifyOptions struct {
	IO      *IOStreams
	Global  *GlobalOptions
	Kernels []string
	All     bool
	JSON    bool
}

func newTreeVerifyCmd(io *IOStreams, g *GlobalOptions) *cobra.Command {
	opts := &TreeVerifyOptions{IO: io, Global: g}
	cmd := &cobra.Command{
		Use:   "verify [--kernel K...] [--all]",
		Short: "Check prepared trees against their manifests, every file's content",
		Long: `Verify reads every file of each prepared pristine tree and compares it with
the manifest recorded when the tree was extracted (size and sha256): a file
missing, added or changed is named. The stages check only what they read
(the files a series touches and their folders every time); this checks all.

Exit status: 0 intact, 1 damaged (repair: patchctl tree prepare --force),
2 usage or input error, 3 the environment cannot run this.`,
		Example: `  patchctl tree verify
  patchctl tree verify --all`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error {
			w, err := g.workspace(io)
			if err != nil {
				return err
			}
			names := w.SelectKernels(opts.Kernels, opts.All)
			damaged := 0
			res, err := w.VerifyTrees(names, func(v pipeline.VerifiedTree) {
				switch {
				case v.Status != vocab.Pass:
					damaged++
					if !opts.JSON {
						fmt.Fprintf(io.Out, "%s: DAMAGED: %v\n", v.Kernel, v.Err)
					}
				case !opts.JSON:
					fmt.Fprintf(io.Out, "%s: intact (%.1fs)\n", v.Kernel, v.Seconds)
				}
			})
			if err != nil {
				return err
			}
			if opts.JSON {
				if err := writeJSON(io.Out, res); err != nil {
					return err
				}
			}
			if damaged > 0 {
				return fmt.Errorf("%d of %d trees damaged: %w", damaged, len(names), errs.ErrFindings)
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&opts.Kernels, "kernel", nil, "kernel to verify (default: the lock's default)")
	cmd.Flags().BoolVar(&opts.All, "all", false, "verify every pinned kernel")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print each tree's status as JSON")
	return cmd
}
