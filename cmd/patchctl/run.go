package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/report"

	"github.com/patchctl/patchctl/internal/vocab"
	"github.com/spf13/cobra"
)

// RunOptions are the inputs of `patchctl run`.
type RunOptions struct {
	IO     *IOStreams
	Global *GlobalOptions
	SharedOptions
	Out  string
	JSON bool
}

func newRunCmd(io *IOStreams, g *GlobalOptions) *cobra.Command {
	opts := &RunOptions{IO: io, Global: g}
	cmd := &cobra.Command{
		Use:   "run [--kernel K...] [--out DIR] [--url-base URL] [--json]",
		Short: "The whole pipeline over the kernel matrix, with reports CI systems read",
		Long: `Run does, per kernel: prepare the tree, apply the series (dispositions must
match the manifest, regenerated patches must match series/<kernel>/), the
static checks, build baseline and patched, boot both over rxe and siw,
compare (the patched kernel shows the inline path, the baseline does not),
verdict. Stages whose inputs did not change since their last successful run
(content hashes) are reused. Reports go to --out: summary.txt, junit.xml,
kcidb.json (KCIDB v5.3), check-<kernel>.sarif, build metadata, console logs,
result.json; --url-base makes KCIDB's and SARIF's links point where the
folder will be published.

Exit status: 0 every kernel passed, 1 a stage failed, 2 usage or input
error, 3 the harness could not run.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error { return runRun(c.Context(), opts) },
	}
	opts.register(cmd.Flags(), sharedFlags{kernels: true, tree: true, transport: vocab.AllTransports, accel: true, kernelFrom: true, noCcache: true, urlBase: true, dma: true, reproduce: true})
	cmd.Flags().StringVar(&opts.Out, "out", "", "folder for the reports (default: out/run)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	return cmd
}

func runRun(ctx context.Context, opts *RunOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	p, err := opts.parse()
	if err != nil {
		return err
	}
	w, err := opts.Global.workspace(opts.IO)
	if err != nil {
		return err
	}
	root := w.Root
	out, err := outputDir(opts.Out, filepath.Join(root, "out", "run"), root)
	if err != nil {
		return err
	}
	cache, err := w.Cache(false)
	if err != nil {
		return err
	}
	po := pipeline.Options{Root: root, Cache: cache, Lock: w.Lock, Kernels: opts.Kernels, Transports: p.Transports, Progress: cache.Progress,
		Accel: p.Accel, NoCcache: opts.NoCcache, KernelFrom: p.KernelFrom, DMA: p.DMA, Reproduce: p.Reproduce}
	res, err := func() (*pipeline.Result, error) {
		for _, k := range opts.Kernels {
			if _, err := w.Lock.Find(k); err != nil {
				return nil, err
			}
		}
		if opts.Tree != "" {
			k, err := w.LocalKernel(ctx, opts.Tree, opts.Kernels)
			if err != nil {
				return nil, err
			}
			po.Targets = append(po.Targets, k)
		}
		return pipeline.Run(ctx, po)
	}()
	if err != nil {
		// The run did not start: the reports still say so, and why.
		failed := pipeline.NotRun(err)
		if _, werr := report.WriteWith(out, failed, report.Options{Version: versionString(), Root: root, Cache: cache.Dir, URLBase: opts.URLBase}); werr != nil {
			return errors.Join(err, fmt.Errorf("writing reports: %w", werr))
		}
		return err
	}
	files, err := report.WriteWith(out, res, report.Options{Version: versionString(), Root: root, Cache: cache.Dir, URLBase: opts.URLBase})
	if err != nil {
		return fmt.Errorf("writing reports: %w", errors.Join(err, res.Err()))
	}
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, res); err != nil {
			return err
		}
	} else {
		report.Summary(opts.IO.Out, res)
		printImages(opts.IO.Out, res, out)
		fmt.Fprintf(opts.IO.Out, "reports: %s (%d files)\n", out, len(files))
	}
	if err := res.Err(); err != nil {
		return fmt.Errorf("the pipeline did not pass (see %s): %w", filepath.Join(out, "summary.txt"), err)
	}
	return nil
}
