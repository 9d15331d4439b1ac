package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/report"
	"github.com/patchctl/patchctl/internal/vocab"
	"github.com/spf13/cobra"
)

// BenchOptions are the inputs of `patchctl bench`.
type BenchOptions struct {
	IO     *IOStreams
	Global *GlobalOptions
	SharedOptions
	Boots int
	Out   string
	JSON  bool
	// Image names the patched image (both, for a run's or try's output
	// folder); BaselineImage the baseline's.
	Image, BaselineImage string
	// The workload's knobs (defaults: pipeline.DefaultBenchWorkload).
	LatencyTime time.Duration
	Reps        int
	SweepTime   time.Duration
	QueueDepth  int
}

func newBenchCmd(io *IOStreams, g *GlobalOptions) *cobra.Command {
	opts := &BenchOptions{IO: io, Global: g}
	w := pipeline.DefaultBenchWorkload()
	cmd := &cobra.Command{
		Use:   "bench [--kernel K] [--transport rxe|siw] [--boots N] [--json] [--out DIR]",
		Short: "A/B benchmark of the baseline and patched kernels: latency and IOPS with 95% intervals",
		Long: `Bench boots the baseline and patched kernels that patchctl build made,
alternately (A B A B, --boots times each), and in each boot the guest agent
measures, after a warm-up: 4 KiB random O_DIRECT reads at queue depth 1,
each timed (mean, median, p99: seed 000's workload), and seed 003's
in-capsule sweep: random writes and a 70/30 read/write mix from 512 B to
32 KiB, --qd I/Os in flight, IOPS and mean latency, with the nvmet port's
param_inline_data_size at 16384 and at 4096 (one port each, both
connected, measured in turns so that both see the same host).

Each boot is one sample: every figure is a mean over boots with a 95 %
interval (Student's t), every difference (patched - baseline) has Welch's
interval, and the verdict is faster, slower or no difference at 95 %.
A self-check looks for a known effect: with 4K in-capsule data the target
must RDMA READ an 8K write's data, which 16K avoids (8K writes at queue
depth 1, both sizes in turns, the per-boot latency ratio); when it is not
found, the A/B figures cannot be trusted (exit 3).

It prints seed 000's latency table and seed 003's sweep tables, the
accelerator (TCG or KVM), the provider and the vCPUs, and what soft-RoCE
cannot show; bench.json, bench.svg (latency distribution, IOPS by size)
and each boot's console log go to --out. A verdict is reported, not
judged: a slower patched kernel exits 0. Under TCG the guest kernel is
given the host's TSC frequency (tsc_early_khz): without it the guest's
clock steps by 4 ms and cannot time one I/O.

With the defaults a bench of one kernel takes about 4-5 minutes here
(2 cores, TCG): 10 boots of about 25 s.

Exit status: 0 the bench ran, 1 a boot failed its checks, 2 usage or input
error, 3 the harness could not run or the self-check failed.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error { return runBench(c.Context(), opts) },
	}
	opts.register(cmd.Flags(), sharedFlags{kernel: true, tree: true, fragment: true, transport: vocab.RXE, accel: true, dma: true,
		help: map[string]string{"transport": "rxe or siw (one provider per bench)", "fragment": "the fragments the kernels were built with (default as build)"}})
	cmd.Flags().IntVar(&opts.Boots, "boots", w.Boots, "boots per variant (2 or more for an interval)")
	cmd.Flags().StringVar(&opts.Out, "out", "", "folder for bench.json, bench.svg and the boots' logs (default: out/bench/<kernel>-<transport>)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result (bench.json) on stdout")
	cmd.Flags().StringVar(&opts.Image, "image", "", "the patched image: an image id, an image folder, or a run's or try's output folder (then both images) (default: the build of the series of record)")
	cmd.Flags().StringVar(&opts.BaselineImage, "baseline-image", "", "the baseline image (default: --image's output folder's, else the series of record's)")
	cmd.Flags().DurationVar(&opts.LatencyTime, "latency-time", w.LatencyTime, "length of one repetition of the QD1 read workload")
	cmd.Flags().IntVar(&opts.Reps, "reps", w.Reps, "repetitions of the QD1 read workload per boot")
	cmd.Flags().DurationVar(&opts.SweepTime, "sweep-time", w.SweepTime, "length of one in-capsule sweep point")
	cmd.Flags().IntVar(&opts.QueueDepth, "qd", w.QueueDepth, "I/Os in flight in the sweep")
	return cmd
}

// workload is the bench's shape from the flags.
func (opts *BenchOptions) workload() pipeline.BenchWorkload {
	return pipeline.BenchWorkload{Boots: opts.Boots, Transport: opts.Transport, LatencyTime: opts.LatencyTime, Reps: opts.Reps,
		SweepTime: opts.SweepTime, QueueDepth: opts.QueueDepth}
}

func runBench(ctx context.Context, opts *BenchOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	bo, err := opts.workload().Options()
	if err != nil {
		return err
	}
	p, err := opts.parse()
	if err != nil {
		return err
	}
	t, err := opts.Global.target(ctx, opts.IO, opts.Global.imageKernel(opts.IO, opts.Kernel, opts.Tree, opts.Image, vocab.Patched), opts.Tree)
	if err != nil {
		return err
	}
	t.DMA = p.DMA
	k, root := t.Kernel, t.Root
	out, err := outputDir(opts.Out, filepath.Join(root, "out", "bench", k.Name+"-"+bo.Transport), root)
	if err != nil {
		return err
	}
	refs := map[string]string{vocab.Patched: opts.Image, vocab.Baseline: opts.BaselineImage}
	if refs[vocab.Baseline] == "" && opts.Image != "" {
		if _, err := os.Stat(filepath.Join(opts.Image, "result.json")); err == nil {
			refs[vocab.Baseline] = opts.Image // a run's or try's output folder: both its images
		}
	}
	buildCmd := func(variant string) string {
		return buildCommand(&BootOptions{Global: opts.Global, SharedOptions: SharedOptions{Kernel: opts.Kernel, Fragments: opts.Fragments}, Variant: variant})
	}
	res, err := t.Bench(ctx, bo, pipeline.BenchBootOptions{Images: refs, Fragments: opts.Fragments, Accel: p.Accel, OutDir: out, Log: opts.IO.ErrOut, BuildCommand: buildCmd})
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, res); err != nil {
			return err
		}
	} else {
		report.BenchText(opts.IO.Out, res)
		fmt.Fprintf(opts.IO.Out, "\nbench.json, bench.svg and the boots' console logs: %s\n", out)
	}
	if !res.SelfCheck.Pass {
		return fmt.Errorf("bench: the self-check failed (%s): %w", res.SelfCheck.Reason, errs.ErrEnv)
	}
	return nil
}
