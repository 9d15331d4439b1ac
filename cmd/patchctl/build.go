package main

import (
	"context"
	"fmt"

	"github.com/patchctl/patchctl/internal/pipeline"

	"github.com/patchctl/patchctl/internal/vocab"
	"github.com/spf13/cobra"
)

// BuildOptions are the inputs of `patchctl build`.
type BuildOptions struct {
	IO     *IOStreams
	Global *GlobalOptions
	SharedOptions
	Variant string
	Jobs    int
	JSON    bool
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
				if err := pipeline.CheckJobs(opts.Jobs); err != nil {
					return err
				}
			}
			return runBuild(c.Context(), opts)
		},
	}
	opts.register(cmd.Flags(), sharedFlags{kernel: true, tree: true, fragment: true, kernelFrom: true, noCcache: true, dma: true})
	enumFlag(cmd.Flags(), &opts.Variant, "variant", vocab.Patched, "baseline (pristine) or patched (with the series)")
	cmd.Flags().IntVarP(&opts.Jobs, "jobs", "j", 0, fmt.Sprintf("parallel jobs, 1 to %d (default: cores)", pipeline.MaxJobs))
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the build metadata as JSON")
	return cmd
}

func runBuild(ctx context.Context, opts *BuildOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	p, err := opts.parse()
	if err != nil {
		return err
	}
	from := p.KernelFrom
	t, err := opts.Global.target(ctx, opts.IO, opts.Kernel, opts.Tree)
	if err != nil {
		return err
	}
	k := t.Kernel
	out, err := t.Applied(ctx, "")
	if err != nil {
		return err
	}
	md, err := t.Build(ctx, out, pipeline.BuildOptions{Variant: opts.Variant, From: from, Fragments: opts.Fragments, Jobs: opts.Jobs, NoCcache: opts.NoCcache, DMA: p.DMA})
	if md != nil && opts.JSON {
		if jerr := writeJSON(opts.IO.Out, md); jerr != nil {
			return jerr
		}
	} else if md != nil && err == nil && from == vocab.FromDistro {
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
