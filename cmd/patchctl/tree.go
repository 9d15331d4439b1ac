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
	var listJSON bool
	list := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the pinned kernels and whether they are prepared",
		Example: `  patchctl tree list
  patchctl tree list --json | jq -r '.[] | select(.prepared | not) | .kernel'`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error {
			lock, _, err := g.lock()
			if err != nil {
				return err
			}
			cache := g.cache(io)
			var out []listedTree
			for _, k := range lock.Kernels {
				e := listedTree{Kernel: k.Name, Source: describe(&k), Default: k.Name == lock.Default, Prepared: cache.Prepared(&k)}
				if e.Prepared {
					e.Dir = cache.PristineDir(&k)
				}
				out = append(out, e)
			}
			if listJSON {
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
		},
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print the kernels as JSON")
	cmd.AddCommand(prepare, list, newTreeVerifyCmd(io, g))
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

// listedTree is one line of tree list.
type listedTree struct {
	Kernel   string `json:"kernel"`
	Source   string `json:"source"`
	Default  bool   `json:"default"`
	Prepared bool   `json:"prepared"`
	Dir      string `json:"dir,omitempty"`
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
	names := selectKernels(lock, opts.Kernels, opts.All)
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
		prep := cache.Prepare
		if opts.Force {
			prep = cache.Reprepare
		}
		dir, err := prep(ctx, k)
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

// selectKernels is what --kernel K... and --all name: the lock's default
// when neither is given.
func selectKernels(lock *tree.Lock, names []string, all bool) []string {
	if all {
		return lock.Names()
	}
	if len(names) == 0 {
		return []string{lock.Default}
	}
	return names
}
