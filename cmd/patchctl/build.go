package main

import (
	"context"
	"fmt"

	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/distro"
	"github.com/spf13/cobra"
)

// BuildOptions are the inputs of `patchctl build`.
type BuildOptions struct {
	IO        *IOStreams
	Global    *GlobalOptions
	Kernel    string
	Tree      string
	Variant   string
	Fragments []string
	Jobs      int
	JSON      bool
	NoCcache  bool
	// KernelFrom: source or distro (internal/distro).
	KernelFrom string
}

func newBuildCmd(io *IOStreams, g *GlobalOptions) *cobra.Command {
	opts := &BuildOptions{IO: io, Global: g}
	cmd := &cobra.Command{
		Use:   "build [--kernel K] [--variant baseline|patched] [--fragment NAME...] [--json]",
		Short: "Configure and build a kernel (verified minimal config, incremental)",
		Long: `Build merges tinyconfig with the kconfig/ fragments (later wins), runs
olddefconfig and checks that every requested symbol landed (naming the unmet
dependency of each that did not), then builds bzImage out of tree in a
folder per kernel, variant and configuration, kept between runs (ccache when
installed). The baseline is compiled once, from the pristine tree only; the
patched variant compiles in a folder of its own seeded from the baseline's
objects, so a series, another series or a revert recompiles only what
changed and never the baseline; each variant's artifacts are kept apart. Every C file the manifest's patches
touch is compiled too. Metadata goes to <build dir>/variants/<variant>/metadata.json.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error {
			if c.Flags().Changed("jobs") {
				if err := build.CheckJobs(opts.Jobs); err != nil {
					return err
				}
			}
			return runBuild(c.Context(), opts)
		},
	}
	kernelFlag(cmd.Flags(), &opts.Kernel, "pinned kernel (default: the lock's default)")
	cmd.Flags().StringVar(&opts.Tree, "tree", "", "a local kernel tree (git checkout or folder) as the pristine tree, never written to; --kernel K picks series/K (default: its Makefile's version)")
	enumFlag(cmd.Flags(), &opts.Variant, "variant", build.Patched, "baseline (pristine) or patched (with the series)")
	cmd.Flags().StringSliceVar(&opts.Fragments, "fragment", nil, "kconfig/ fragments in order (default base,rdma-loopback,compile-test)")
	cmd.Flags().IntVarP(&opts.Jobs, "jobs", "j", 0, fmt.Sprintf("parallel jobs, 1 to %d (default: cores)", build.MaxJobs))
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the build metadata as JSON")
	cmd.Flags().StringVar(&opts.KernelFrom, "kernel-from", build.FromSource, kernelFromHelp)
	cmd.Flags().BoolVar(&opts.NoCcache, "no-ccache", false, "compile without ccache even when it is installed")
	return cmd
}

func runBuild(ctx context.Context, opts *BuildOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	from, err := build.ParseKernelFrom(opts.KernelFrom)
	if err != nil {
		return err
	}
	t, err := opts.Global.targetTree(ctx, opts.IO, opts.Kernel, opts.Tree)
	if err != nil {
		return err
	}
	k, cache := t.k, t.cache
	out, err := t.applied(ctx, "")
	if err != nil {
		return err
	}
	var md *build.Metadata
	if from == build.FromDistro {
		md, err = distro.Build(ctx, distro.Options{Cache: cache, Kernel: k, Apply: out, Variant: opts.Variant, Jobs: opts.Jobs, Progress: cache.Progress})
	} else {
		md, err = build.Build(ctx, build.Options{Root: t.root, Cache: cache, Kernel: k, Apply: out, Variant: opts.Variant,
			Fragments: opts.Fragments, Jobs: opts.Jobs, NoCcache: opts.NoCcache, Progress: cache.Progress})
	}
	if md != nil && opts.JSON {
		if jerr := writeJSON(opts.IO.Out, md); jerr != nil {
			return jerr
		}
	} else if md != nil && err == nil && from == build.FromDistro {
		fmt.Fprintf(opts.IO.Out, "%s %s: Debian %s in %.1fs (%d modules to load, rebuilt: %v)\n  kernel   %s\n  modules  %s\n",
			k.Name, md.Variant, md.KernelRelease, md.Duration, len(md.Modules), md.Rebuilt, md.Artifacts["bzImage"], md.VariantDir)
	} else if md != nil && err == nil {
		state := "built"
		if md.UpToDate {
			state = "up to date"
		}
		fmt.Fprintf(opts.IO.Out, "%s %s: %s %s in %.1fs (%d symbols verified, %d warnings)\n  image    %s (boot --image takes it)\n  bzImage  %s (sha256 %.12s)\n  build    %s\n  compile-tested: %v\n",
			k.Name, md.Variant, md.KernelRelease, state, md.Duration, md.Verified, md.Warnings, md.ID, md.Artifacts["bzImage"], md.SHA256["bzImage"], md.BuildDir, md.CompileTested)
	}
	if err != nil {
		return fmt.Errorf("building %s %s: %w", k.Name, opts.Variant, err)
	}
	return nil
}
