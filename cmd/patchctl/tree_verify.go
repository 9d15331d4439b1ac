package main

import (
	"fmt"
	"time"

	"github.com/patchctl/patchctl/internal/errs"
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

// verifiedTree is one kernel of tree verify --json.
type verifiedTree struct {
	Kernel  string  `json:"kernel"`
	Status  string  `json:"status"` // PASS (intact) or FAIL (damaged)
	Problem string  `json:"problem,omitempty"`
	Seconds float64 `json:"seconds"`
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
			lock, _, err := g.lock()
			if err != nil {
				return err
			}
			names := selectKernels(lock, opts.Kernels, opts.All)
			cache, err := g.cache(io)
			if err != nil {
				return err
			}
			damaged := 0
			var res []verifiedTree
			for _, n := range names {
				k, err := lock.Find(n)
				if err != nil {
					return err
				}
				start := time.Now()
				if err := cache.VerifyAll(k); err != nil {
					if !errs.IsEnv(err) {
						return err
					}
					damaged++
					res = append(res, verifiedTree{Kernel: k.Name, Status: vocab.Fail, Problem: errs.Message(err), Seconds: time.Since(start).Seconds()})
					if !opts.JSON {
						fmt.Fprintf(io.Out, "%s: DAMAGED: %v\n", k.Name, err)
					}
					continue
				}
				res = append(res, verifiedTree{Kernel: k.Name, Status: vocab.Pass, Seconds: time.Since(start).Seconds()})
				if !opts.JSON {
					fmt.Fprintf(io.Out, "%s: intact (%.1fs)\n", k.Name, time.Since(start).Seconds())
				}
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
