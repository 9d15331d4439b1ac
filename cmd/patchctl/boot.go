package main

import (
	"context"

	"fmt"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/report"
	"path/filepath"
	"strings"
	"time"

	"github.com/patchctl/patchctl/internal/errs"

	"github.com/patchctl/patchctl/internal/vocab"
	"github.com/spf13/cobra"
)

// BootOptions are the inputs of `patchctl boot`.
type BootOptions struct {
	IO     *IOStreams
	Global *GlobalOptions
	SharedOptions
	Variant     string
	Out         string
	JSON        bool
	Cmdline     string
	BootTimeout time.Duration
	TestTimeout time.Duration
	Shell       bool
	Keep        bool
	PrintQEMU   bool
	Image       string
}

func newBootCmd(io *IOStreams, g *GlobalOptions) *cobra.Command {
	opts := &BootOptions{IO: io, Global: g}
	cmd := &cobra.Command{
		Use:   "boot [--kernel K] [--variant baseline|patched] [--transport rxe|siw|all] [--json]",
		Short: "Boot the built kernel in QEMU and run the nvmet-rdma loopback tests",
		Long: `Boot puts the guest agent (a static Go PID 1) in an initramfs and boots the
kernel that patchctl build made, under KVM when /dev/kvm is usable and TCG
otherwise, with no network beyond the VM. In the guest: a soft-RoCE (rxe)
or soft-iWARP (siw) link, a memory-backed null_blk namespace exported by
nvmet over RDMA with param_inline_data_size set, the host connected to it,
O_DIRECT writes and reads from 512 B to 32 KiB with every byte compared,
kprobe evidence of IB_SEND_INLINE on the host's command SENDs (expected per
variant in series/<kernel>/manifest.yaml), a teardown that must leave
nothing behind, and a dmesg gate. Results come back as KTAP.

Exit status: 0 pass, 1 a test failed (a crashed kernel included), 2 usage
or input error, 3 the harness could not run (no qemu, a hang, a timeout).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error { return runBoot(c.Context(), opts) },
	}
	opts.register(cmd.Flags(), sharedFlags{kernel: true, tree: true, fragment: true, transport: vocab.AllTransports, accel: true, kernelFrom: true, dma: true, reproduce: true,
		help: map[string]string{"fragment": "the fragments the kernel was built with (default as build)"}})
	enumFlag(cmd.Flags(), &opts.Variant, "variant", vocab.Patched, "baseline or patched")
	cmd.Flags().StringVar(&opts.Out, "out", "", "folder for the console log and results (default: out/boot/<kernel>-<variant>)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	cmd.Flags().StringVar(&opts.Cmdline, "cmdline", "", "append to the kernel command line")
	cmd.Flags().DurationVar(&opts.BootTimeout, "boot-timeout", 0, "longest wait for the guest agent to start (default 90s)")
	cmd.Flags().DurationVar(&opts.TestTimeout, "test-timeout", 0, "longest wait between two results (default 90s)")
	cmd.Flags().BoolVar(&opts.Shell, "shell", false, "set up the first transport (link, target, connect), then an interactive shell in the guest (busybox-static)")
	cmd.Flags().BoolVar(&opts.Keep, "keep", false, "after the tests the guest stays up (with a shell) until you quit QEMU: Ctrl-A x")
	cmd.Flags().BoolVar(&opts.PrintQEMU, "print-qemu", false, "write the kernel image and initramfs to --out and print the QEMU command line, without running it")
	cmd.Flags().StringVar(&opts.Image, "image", "", imageHelp)
	return cmd
}

func runBoot(ctx context.Context, opts *BootOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	sh, err := opts.parse()
	if err != nil {
		return err
	}
	if opts.Shell && opts.JSON {
		return fmt.Errorf("--shell and --json exclude each other (the console is the shell's): %w", errs.ErrUsage)
	}
	if opts.BootTimeout < 0 || opts.TestTimeout < 0 {
		return fmt.Errorf("timeouts must be positive: %w", errs.ErrUsage)
	}
	t, err := opts.Global.target(ctx, opts.IO, opts.Global.imageKernel(opts.IO, opts.Kernel, opts.Tree, opts.Image, opts.Variant), opts.Tree)
	if err != nil {
		return err
	}
	t.DMA = sh.DMA
	k, root := t.Kernel, t.Root
	m, err := t.Manifest()
	if err != nil {
		return err
	}
	img, err := t.Image(ctx, opts.Image, opts.Variant, sh.KernelFrom, opts.Fragments, buildCommand(opts))
	if err != nil {
		return err
	}
	out, err := outputDir(opts.Out, filepath.Join(root, "out", "boot", k.Name+"-"+opts.Variant), root)
	if err != nil {
		return err
	}
	pipeline.Describe(opts.IO.ErrOut, img.Metadata)
	p, err := t.PrepareBoot(ctx, m, img, pipeline.BootOptions{Variant: opts.Variant, OutDir: out, Transports: sh.Transports,
		Cmdline: opts.Cmdline, BootTimeout: opts.BootTimeout, TestTimeout: opts.TestTimeout, Accel: sh.Accel,
		Shell: opts.Shell, Keep: opts.Keep, Stdin: opts.IO.In, Console: opts.IO.Out, BuildCommand: buildCommand(opts), Reproduce: sh.Reproduce})
	if err != nil {
		return fmt.Errorf("booting %s %s: %w", k.Name, opts.Variant, err)
	}
	if opts.PrintQEMU {
		cmd, err := p.Stage(out)
		if err != nil {
			return fmt.Errorf("booting %s %s: %w", k.Name, opts.Variant, err)
		}
		fmt.Fprintln(opts.IO.Out, pipeline.Quote(cmd))
		return nil
	}
	res, err := p.Run(ctx, out)
	if err != nil {
		return fmt.Errorf("booting %s %s: %w", k.Name, opts.Variant, err)
	}
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, res); err != nil {
			return err
		}
	} else {
		report.Boot(opts.IO.Out, res)
	}
	switch res.Verdict {
	case vocab.Pass:
		return nil
	case vocab.Fail:
		return fmt.Errorf("%s %s: %s: %w", k.Name, opts.Variant, res.Reason, errs.ErrFindings)
	}
	return fmt.Errorf("%s %s: the harness could not finish: %s (console: %s): %w", k.Name, opts.Variant, res.Reason, res.ConsoleLog, errs.ErrEnv)
}

// buildCommand is the build that makes the kernel this boot wants, as
// the user types it.
func buildCommand(opts *BootOptions) string {
	args := []string{"patchctl"}
	if opts.Global.Root != "" {
		args = append(args, "--root", opts.Global.Root)
	}
	if opts.Global.Cache != "" {
		args = append(args, "--cache", opts.Global.Cache)
	}
	args = append(args, "build")
	if opts.Kernel != "" {
		args = append(args, "--kernel", opts.Kernel)
	}
	args = append(args, "--variant", opts.Variant)
	if opts.DMA == vocab.DMAPlain {
		args = append(args, "--dma", vocab.DMAPlain)
	}
	if len(opts.Fragments) > 0 {
		args = append(args, "--fragment", strings.Join(opts.Fragments, ","))
	}
	return pipeline.Quote(args)
}

// imageHelp is the --image flag's help, on boot and bench.
const imageHelp = "the image to boot: an image id (as build, run and try print it), an image folder, or a run's or try's output folder (default: the build of the series of record)"
