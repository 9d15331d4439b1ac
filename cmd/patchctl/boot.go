package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/patchctl/patchctl/internal/boot"
	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/ktap"
	runner "github.com/patchctl/patchctl/internal/run"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/spf13/cobra"
)

// BootOptions are the inputs of `patchctl boot`.
type BootOptions struct {
	IO          *IOStreams
	Global      *GlobalOptions
	Kernel      string
	Tree        string
	Variant     string
	Transport   string
	Fragments   []string
	Out         string
	JSON        bool
	Cmdline     string
	BootTimeout time.Duration
	TestTimeout time.Duration
	Accel       string
	KernelFrom  string
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
	kernelFlag(cmd.Flags(), &opts.Kernel, "pinned kernel (default: the lock's default)")
	cmd.Flags().StringVar(&opts.Tree, "tree", "", "a local kernel tree (git checkout or folder) as the pristine tree, never written to; --kernel K picks series/K (default: its Makefile's version)")
	enumFlag(cmd.Flags(), &opts.Variant, "variant", build.Patched, "baseline or patched")
	enumFlag(cmd.Flags(), &opts.Transport, "transport", "all", "rxe, siw or all")
	cmd.Flags().StringSliceVar(&opts.Fragments, "fragment", nil, "the fragments the kernel was built with (default as build)")
	cmd.Flags().StringVar(&opts.Out, "out", "", "folder for the console log and results (default: out/boot/<kernel>-<variant>)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	cmd.Flags().StringVar(&opts.Cmdline, "cmdline", "", "append to the kernel command line")
	cmd.Flags().DurationVar(&opts.BootTimeout, "boot-timeout", 0, "longest wait for the guest agent to start (default 90s)")
	cmd.Flags().DurationVar(&opts.TestTimeout, "test-timeout", 0, "longest wait between two results (default 90s)")
	cmd.Flags().StringVar(&opts.KernelFrom, "kernel-from", build.FromSource, kernelFromHelp)
	cmd.Flags().BoolVar(&opts.Shell, "shell", false, "set up the first transport (link, target, connect), then an interactive shell in the guest (busybox-static)")
	cmd.Flags().BoolVar(&opts.Keep, "keep", false, "after the tests the guest stays up (with a shell) until you quit QEMU: Ctrl-A x")
	cmd.Flags().BoolVar(&opts.PrintQEMU, "print-qemu", false, "write the kernel image and initramfs to --out and print the QEMU command line, without running it")
	enumFlag(cmd.Flags(), &opts.Accel, "accel", "auto", "auto (KVM when it runs guest code here, else TCG), kvm or tcg")
	cmd.Flags().StringVar(&opts.Image, "image", "", imageHelp)
	return cmd
}

// imageKernel is the kernel an --image names, when no --kernel is given.
func imageKernel(g *GlobalOptions, io *IOStreams, kernel, treeDir, ref, variant string) string {
	if ref == "" || kernel != "" || treeDir != "" {
		return kernel
	}
	cache, err := g.cache(io)
	if err != nil {
		return kernel
	}
	if md, err := build.ResolveImage(cache.Dir, ref, "", variant); err == nil {
		return md.Kernel
	}
	return kernel
}

func transports(s string) ([]string, error) {
	switch s {
	case "all", "":
		return []string{"rxe", "siw"}, nil
	case "rxe", "siw":
		return []string{s}, nil
	}
	return nil, fmt.Errorf("transport %q: want rxe, siw or all: %w", s, errs.ErrUsage)
}

func runBoot(ctx context.Context, opts *BootOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	trs, err := transports(opts.Transport)
	if err != nil {
		return err
	}
	accel, err := boot.ParseAccel(opts.Accel)
	if err != nil {
		return err
	}
	if opts.Shell && opts.JSON {
		return fmt.Errorf("--shell and --json exclude each other (the console is the shell's): %w", errs.ErrUsage)
	}
	if opts.BootTimeout < 0 || opts.TestTimeout < 0 {
		return fmt.Errorf("timeouts must be positive: %w", errs.ErrUsage)
	}
	from, err := build.ParseKernelFrom(opts.KernelFrom)
	if err != nil {
		return err
	}
	t, err := opts.Global.targetTree(ctx, opts.IO, imageKernel(opts.Global, opts.IO, opts.Kernel, opts.Tree, opts.Image, opts.Variant), opts.Tree)
	if err != nil {
		return err
	}
	k, root := t.k, t.root
	m, err := series.Load(series.ManifestPath(root, k.Name))
	if err != nil {
		return err
	}
	cache := t.cache
	img, err := t.image(ctx, opts.Image, opts.Variant, from, opts.Fragments, buildCommand(opts))
	if err != nil {
		return err
	}
	out, err := outputDir(opts.Out, filepath.Join(root, "out", "boot", k.Name+"-"+opts.Variant), root)
	if err != nil {
		return err
	}
	md := img.md
	build.Describe(opts.IO.ErrOut, md)
	expect := m.Boot.Expect(opts.Variant)
	if !img.ofRecord {
		// The manifest's expectations are about its own series.
		expect = guestconf.ExpectReport
	}
	bo := boot.Options{Root: root, Kernel: k.Name, Variant: opts.Variant,
		BzImage: md.Artifacts["bzImage"], BzImageSHA256: md.SHA256["bzImage"], BuildDir: md.BuildDir, Modules: md.Modules, OutDir: out, Transports: trs,
		InlineDataSize: m.Boot.InlineDataSize, ExpectInline: expect,
		Cmdline: opts.Cmdline, BootTimeout: opts.BootTimeout, TestTimeout: opts.TestTimeout, Accel: accel, Progress: cache.Progress,
		Shell: opts.Shell, Keep: opts.Keep, BuildCommand: buildCommand(opts)}
	if bo.Interactive() {
		bo.Stdin, bo.Console = opts.IO.In, opts.IO.Out
	}
	p, err := boot.Prepare(ctx, bo)
	if err != nil {
		return fmt.Errorf("booting %s %s: %w", k.Name, opts.Variant, err)
	}
	if opts.PrintQEMU {
		cmd, err := p.Stage(out)
		if err != nil {
			return fmt.Errorf("booting %s %s: %w", k.Name, opts.Variant, err)
		}
		fmt.Fprintln(opts.IO.Out, runner.Quote(cmd))
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
		printBoot(opts.IO.Out, res)
	}
	switch res.Verdict {
	case boot.Pass:
		return nil
	case boot.Fail:
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
	if len(opts.Fragments) > 0 {
		args = append(args, "--fragment", strings.Join(opts.Fragments, ","))
	}
	return runner.Quote(args)
}

func printBoot(w io.Writer, r *boot.Result) {
	fmt.Fprintf(w, "qemu (%s): %s\n", r.Accel, runner.Quote(r.Command))
	if r.KTAP != nil {
		for _, t := range r.KTAP.Subtests {
			printKTAP(w, t, "")
		}
	}
	for _, s := range r.Splats {
		fmt.Fprintf(w, "kernel splat %q at console line %d:\n    %s\n", s.Kind, s.Line, strings.Join(s.Excerpt, "\n    "))
	}
	if r.Verdict != boot.Pass && len(r.Tail) > 0 {
		fmt.Fprintf(w, "console tail:\n    %s\n", strings.Join(r.Tail, "\n    "))
	}
	fmt.Fprintf(w, "%s %s: %s: %s (%.1fs, console %s)\n", r.Kernel, r.Variant, r.Verdict, r.Reason, r.Duration, r.ConsoleLog)
}

func printKTAP(w io.Writer, t *ktap.Test, indent string) {
	status := "ok"
	switch {
	case t.Skip:
		status = "skip"
	case !t.OK:
		status = "FAIL"
	}
	fmt.Fprintf(w, "%s%-4s %s\n", indent, status, t.Name)
	for _, d := range t.Diagnostics {
		if e, ok := guestconf.ParseEvidence(d); ok {
			fmt.Fprintf(w, "%s       # capsule SENDs without in-capsule data: %d inline, %d by reference\n", indent, e.Inline, e.ByRef)
			continue
		}
		if strings.HasPrefix(d, "wr ") || !t.OK {
			fmt.Fprintf(w, "%s       # %s\n", indent, d)
		}
	}
	for _, s := range t.Subtests {
		printKTAP(w, s, indent+"  ")
	}
}
