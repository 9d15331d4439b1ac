package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/report"
	"github.com/patchctl/patchctl/internal/vocab"
	"github.com/spf13/cobra"
)

// B4CheckOptions are the inputs of `patchctl b4-check`.
type B4CheckOptions struct {
	IO        *IOStreams
	Global    *GlobalOptions
	PerPatch  bool
	PerSeries bool
	Kernel    string
	Format    string
	Out       string
	Lore      string
	Inbox     string
}

func newB4CheckCmd(io *IOStreams, g *GlobalOptions) *cobra.Command {
	opts := &B4CheckOptions{IO: io, Global: g}
	cmd := &cobra.Command{
		Use:   "b4-check (--per-patch | --per-series) [--kernel K] [--format json|checkpatch] < MESSAGE",
		Short: "b4's external check: one RFC 2822 message on stdin, the verdict on stdout",
		Long: `B4-check reads one email message on stdin, as b4 pipes it to its check
commands, and prints what patchctl says about it.

--per-patch (b4.review-perpatch-check-cmd, b4.am-perpatch-check-cmd,
b4.prep-perpatch-check-cmd, git send-email's sendemail-validate hook): the
static checks on the kernel the patch is for (--kernel, default the lock's
default), fast and without a build: the files the patch touches are
copied beside the pristine tree, the patch applied to them, the rules run
there and on the pristine files, and only what the patch introduces
judged. checkpatch.pl (the lock's checkpatch kernel when it is prepared)
runs on the patch.

--per-series (b4.review-series-check-cmd): the whole try verdict (apply,
check, builds, boots) on the series: the patches in the message, or the
thread of its Message-ID (--lore URL or --inbox DIR). Its url is the
report folder (--out, relative to the current folder; default
out/b4/<message-id> in the repository).

--format json (default) prints b4's JSON array of {tool, status
(pass|warn|fail), summary, url, details} and exits 0 when it could judge;
--format checkpatch prints checkpatch --terse style lines (FILE:LINE:
ERROR|WARNING: ...), nothing when clean, and exits 1 on a new error.

Exit status: 0 judged (json) or clean (checkpatch), 1 a new error
(checkpatch), 2 usage or input error, 3 the harness could not run.`,
		Example: `  patchctl b4-check --per-patch < 0001-nvme-rdma-fix.patch        # b4's JSON for one patch
  patchctl b4-check --per-patch --format checkpatch --kernel 7.3 < msg.eml
  patchctl b4-check --per-series --lore https://lore.kernel.org/all < cover.eml
  # in git config (b4 pipes each message):
  #   b4.review-perpatch-check-cmd = patchctl b4-check --per-patch
  #   b4.am-perpatch-check-cmd = patchctl b4-check --per-patch --format checkpatch`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error {
			return runB4Check(c.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.PerPatch, "per-patch", false, "the static checks on the patch (b4's per-patch commands)")
	f.BoolVar(&opts.PerSeries, "per-series", false, "the whole try verdict on the series (b4's per-series command)")
	kernelFlag(f, &opts.Kernel, "the pinned kernel the patch is for (default: the lock's default)")
	f.StringVar(&opts.Format, "format", "json", "json (b4 review) or checkpatch (b4 am/prep --check, sendemail-validate)")
	f.StringVar(&opts.Out, "out", "", "--per-series: folder for the reports (default: out/b4/<message-id>)")
	f.StringVar(&opts.Lore, "lore", "", "--per-series: public-inbox server to fetch the thread of a cover letter from")
	f.StringVar(&opts.Inbox, "inbox", "", "--per-series: local public-inbox archive to find the thread of a cover letter in")
	return cmd
}

func runB4Check(ctx context.Context, opts *B4CheckOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.PerPatch == opts.PerSeries {
		return fmt.Errorf("give exactly one of --per-patch and --per-series: %w", errs.ErrUsage)
	}
	if opts.Format != "json" && opts.Format != "checkpatch" {
		return fmt.Errorf("--format %q: want json or checkpatch: %w", opts.Format, errs.ErrUsage)
	}
	msg, err := io.ReadAll(opts.IO.In)
	if err != nil {
		return fmt.Errorf("reading the message on stdin: %w", errs.ErrInput)
	}
	if len(bytes.TrimSpace(msg)) == 0 {
		return fmt.Errorf("no message on stdin: b4 (or git send-email's hook) pipes one RFC 2822 message: %w", errs.ErrInput)
	}
	tmp, err := os.MkdirTemp("", "patchctl-b4-")
	if err != nil {
		return fmt.Errorf("creating a temporary folder: %v: %w", err, errs.ErrEnv)
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, "message.eml")
	if err := os.WriteFile(file, msg, 0o644); err != nil {
		return fmt.Errorf("writing %s: %v: %w", file, err, errs.ErrEnv)
	}
	var results []report.B4Result
	var pc *pipeline.PatchCheck
	if opts.PerPatch {
		results, pc, err = b4PerPatch(ctx, opts, tmp, file)
	} else {
		results, err = b4PerSeries(ctx, opts, file, msg)
	}
	if err != nil {
		return err
	}
	if opts.Format == "checkpatch" {
		if n := report.B4Checkpatch(opts.IO.Out, pc, results); n > 0 {
			return fmt.Errorf("%s: %w", errs.Count(n, "new error"), errs.ErrFindings)
		}
		return nil
	}
	if results == nil {
		results = []report.B4Result{}
	}
	return writeJSON(opts.IO.Out, results)
}

// b4PerPatch runs the static checks on the patch in file against its
// kernel's pristine tree, in an overlay of the folders it touches
// (pipeline.Target.CheckPatch).
func b4PerPatch(ctx context.Context, opts *B4CheckOptions, tmp, file string) ([]report.B4Result, *pipeline.PatchCheck, error) {
	in, err := readTryInput(ctx, &TryOptions{Sources: []string{file}})
	if err != nil {
		return nil, nil, err
	}
	if len(in.Patches) != 1 {
		return nil, nil, fmt.Errorf("the message on stdin has %d patches: --per-patch takes one (b4 pipes one message per patch): %w", len(in.Patches), errs.ErrInput)
	}
	t, err := opts.Global.target(ctx, opts.IO, opts.Kernel, "")
	if err != nil {
		return nil, nil, err
	}
	pc, err := t.CheckPatch(ctx, in.Patches[0], tmp)
	if err != nil {
		return nil, nil, err
	}
	return report.B4PerPatch(t.Kernel.Name, pc), pc, nil
}

// b4PerSeries is the whole try verdict on the series of the message.
func b4PerSeries(ctx context.Context, opts *B4CheckOptions, file string, msg []byte) ([]report.B4Result, error) {
	to := &TryOptions{IO: &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: opts.IO.ErrOut}, Global: opts.Global, SharedOptions: SharedOptions{Transport: vocab.AllTransports, Accel: vocab.AccelAuto}}
	if opts.Kernel != "" {
		to.Kernels = []string{opts.Kernel}
	}
	in, err := readTryInput(ctx, &TryOptions{Sources: []string{file}})
	switch {
	case err == nil && len(in.Patches) > 0:
		to.Sources = []string{file}
	case opts.Lore != "" || opts.Inbox != "":
		id := messageID(msg)
		if id == "" {
			return nil, fmt.Errorf("the message has no Message-ID to find its thread by: %w", errs.ErrInput)
		}
		to.MsgID, to.Lore, to.Inbox = id, opts.Lore, opts.Inbox
	default:
		return []report.B4Result{{Tool: "patchctl try", Status: "warn", Summary: "no patches in the message (a cover letter): give --lore URL or --inbox DIR to fetch its thread"}}, nil
	}
	ws, err := opts.Global.workspace(nil)
	if err != nil {
		return nil, err
	}
	root := ws.Root
	to.Out = opts.Out
	if to.Out == "" {
		name := messageID(msg)
		if name == "" {
			name = "message"
		}
		to.Out = filepath.Join(root, "out", "b4", sanitize(name))
	}
	terr := runTry(ctx, to)
	var tr pipeline.TryResult
	if data, err := os.ReadFile(filepath.Join(to.Out, "try.json")); err == nil {
		_ = json.Unmarshal(data, &tr)
	}
	return []report.B4Result{report.B4Series(tr.Run, to.Out, terr)}, nil
}

// messageID is the Message-ID header of a message, without brackets.
func messageID(msg []byte) string {
	head, _, _ := bytes.Cut(msg, []byte("\n\n"))
	for _, l := range strings.Split(string(head), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), "message-id") {
			return strings.Trim(strings.TrimSpace(v), "<>")
		}
	}
	return ""
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}
