package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/spf13/cobra"
)

// IOStreams are the streams a command reads and writes; tests pass buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

func stdIO() *IOStreams { return &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr} }

// version is set by the linker (-X main.version=...); otherwise the VCS
// revision from the build info is used.
var version = ""

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", ""
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "-dirty"
				}
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			return "0.0.0-" + rev + dirty
		}
	}
	return "0.0.0-dev"
}

// newRootCmd builds the command tree.
func newRootCmd(io *IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   "patchctl",
		Short: "Validate Linux kernel RDMA and NVMe-oF patches end to end",
		Long: `patchctl turns patches from mailing-list archives into clean patches,
applies them to pinned kernel trees, checks them statically, builds the
kernels and boots them in QEMU with soft-RoCE to run nvmet-rdma tests.

Exit status: 0 ok, 1 findings or failed tests, 2 usage or input error,
3 the environment cannot run this (a missing tool, no space, no network,
an interrupt, a harness fault).`,
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w: %v (see '%s --help')", errs.ErrUsage, err, c.CommandPath())
	})
	g := &GlobalOptions{}
	addGlobalFlags(root, g)
	// One output-folder policy for every verb that has --out, applied
	// before the verb does anything (the verbs apply it again when they
	// make the folder, default included).
	root.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		f := c.Flags().Lookup("out")
		if f == nil || !f.Changed {
			return nil
		}
		r, _ := g.repoRoot()
		_, err := checkOut(f.Value.String(), r)
		return err
	}
	root.AddCommand(newImportCmd(io, g), newTreeCmd(io, g), newApplyCmd(io, g), newRefreshCmd(io, g), newBuildCmd(io, g), newBootCmd(io, g), newCheckCmd(io, g), newRunCmd(io, g), newTryCmd(io, g), newBenchCmd(io, g), newMatrixCmd(io, g), newB4CheckCmd(io, g), newMutateCmd(io, g))
	registerCompletions(root, g)
	addHelp(root)
	return root
}

// execute runs the command line and maps the result to an exit status. It
// is the one place where errors become exit codes (see internal/errs).
func execute(args []string, io *IOStreams) int {
	return executeContext(context.Background(), args, io)
}

// executeContext runs the command line under ctx, which SIGINT and
// SIGTERM cancel: the stages stop, their children are killed (process
// groups), their locks released and their trees rolled back, and only
// then patchctl exits. A second signal kills the children at once.
func executeContext(ctx context.Context, args []string, io *IOStreams) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // the next signal is the default: death; children follow by Pdeathsig
	}()
	defer pipeline.KillAll()
	root := newRootCmd(io)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil && strings.HasPrefix(err.Error(), "unknown command") {
		err = fmt.Errorf("%w: %v", errs.ErrUsage, err)
	}
	if err != nil && ctx.Err() != nil && !errors.Is(err, context.Canceled) {
		err = fmt.Errorf("interrupted: %w: %w", err, errs.ErrEnv)
	}
	if err != nil {
		fmt.Fprintf(io.ErrOut, "patchctl: %s\n", errs.Message(err))
	}
	return errs.Code(err)
}

// usageArgs wraps a cobra positional-argument validator so its errors are
// usage errors.
func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := v(c, args); err != nil {
			return fmt.Errorf("%w: %v (see '%s --help')", errs.ErrUsage, err, c.CommandPath())
		}
		return nil
	}
}

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
