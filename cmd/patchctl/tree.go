package main

import (
	"context"
	"fmt"
	"time"

	"github.com/patchctl/patchctl/internal/tree"
	"github.com/spf13/cobra"
)

// TreeOptions are the inputs of `patchctl tree prepare`.
type TreeOptions struct {
	IO      *IOStreams
	Global  *GlobalOptions
	Kernels []string
	All     bool
	JSON    bool
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
A prepared tree is a no-op. A tree appears only complete and verified.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error { return runTreePrepare(c.Context(), opts) },
	}
	prepare.Flags().StringSliceVar(&opts.Kernels, "kernel", nil, "kernel to prepare (default: the lock's default)")
	prepare.Flags().BoolVar(&opts.All, "all", false, "prepare every pinned kernel")
	prepare.Flags().BoolVar(&opts.JSON, "json", false, "print the prepared trees as JSON")
	list := &cobra.Command{
		Use:   "list",
		Short: "List the pinned kernels and whether they are prepared",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error {
			lock, _, err := g.lock()
			if err != nil {
				return err
			}
			cache := g.cache(io)
			for _, k := range lock.Kernels {
				state := "not prepared"
				if cache.Prepared(&k) {
					state = cache.PristineDir(&k)
				}
				def := ""
				if k.Name == lock.Default {
					def = " (default)"
				}
				fmt.Fprintf(io.Out, "%s%s\t%s\t%s\n", k.Name, def, describe(&k), state)
			}
			return nil
		},
	}
	cmd.AddCommand(prepare, list)
	return cmd
}

func describe(k *tree.Kernel) string {
	switch {
	case k.Debian != nil:
		return "debian " + k.Debian.Package + "=" + k.Debian.Version
	case k.Git != nil:
		return "git " + k.Git.URL + " " + firstNonEmpty(k.Git.Tag, k.Git.Commit)
	case k.Local != nil:
		return "local " + k.Local.Dir + " (" + k.Local.Release + ", " + k.Local.Identity() + ")"
	}
	return k.Key()
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

type preparedTree struct {
	Kernel  string  `json:"kernel"`
	Source  string  `json:"source"`
	Dir     string  `json:"dir"`
	Seconds float64 `json:"seconds"`
}

func runTreePrepare(ctx context.Context, opts *TreeOptions) error {
	lock, _, err := opts.Global.lock()
	if err != nil {
		return err
	}
	names := opts.Kernels
	if opts.All {
		names = lock.Names()
	}
	if len(names) == 0 {
		names = []string{lock.Default}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	cache := opts.Global.cache(opts.IO)
	var out []preparedTree
	for _, n := range names {
		k, err := lock.Find(n)
		if err != nil {
			return err
		}
		start := time.Now()
		dir, err := cache.Prepare(ctx, k)
		if err != nil {
			return err
		}
		out = append(out, preparedTree{k.Name, describe(k), dir, time.Since(start).Seconds()})
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, out)
	}
	for _, p := range out {
		fmt.Fprintf(opts.IO.Out, "%s: %s ready at %s (%.1fs)\n", p.Kernel, p.Source, p.Dir, p.Seconds)
	}
	return nil
}
