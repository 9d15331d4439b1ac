package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/report"
	"github.com/patchctl/patchctl/internal/vocab"
	"github.com/spf13/cobra"
)

// TryOptions are the inputs of `patchctl try`.
type TryOptions struct {
	IO      *IOStreams
	Global  *GlobalOptions
	Sources []string
	Git     string
	MsgID   string
	Inbox   string
	Lore    string
	SharedOptions
	Out          string
	Allow        []string
	Record       string
	ExpectInline string
	JSON         bool
	// Strip is -pN for plain diffs (-1: found from the tree).
	Strip int
	// HTTP fetches --lore threads (tests point it at their server).
	HTTP *http.Client
}

func newTryCmd(io *IOStreams, g *GlobalOptions) *cobra.Command {
	opts := &TryOptions{IO: io, Global: g}
	cmd := &cobra.Command{
		Use:   "try SOURCE... | --git DIR [RANGE] | --msgid ID (--inbox DIR | --lore URL) [--kernel K... | --tree DIR] [--allow DISPOSITION...] [--record NAME]",
		Short: "The whole pipeline for any patch, series, git range or thread, with no manifest",
		Long: `Try validates patches that are not the series of record: apply (dispositions
computed and reported), check, build baseline and patched, boot both over
rxe and siw, compare, verdict. Nothing in the repository changes unless
--record is given.

SOURCE is a patch file, an mbox (a whole thread too), or a folder of
messages, in every form import reads. --git DIR [RANGE] takes commits of a
local repository as git format-patch writes them (A..B, A.., A, or -N;
default -1). --msgid ID takes a thread from a local public-inbox archive
(--inbox DIR: the inbox, one git/N.git epoch, or a repository with one
message per commit) or from a public-inbox server (--lore URL: fetches
URL/<msgid>/t.mbox.gz as b4 does). From a thread, the newest revision is
taken ([PATCH vN n/m]); older revisions and missing numbers are reported;
Reviewed-by, Acked-by, Tested-by and Reported-by from replies go to the
patch they answer (to all of them for a reply to the cover letter).

The verdict fails when a patch conflicts, is already applied or already
upstream, unless --allow names that disposition. By default the suite's
own tests decide the boots and the inline evidence is reported, not
judged; --expect-inline patched|baseline|both|none judges it.

--record NAME writes patches/NAME/ (the messages as received), an entry
per patch in each kernel's manifest with the disposition it has there
(after the series of record), and refreshes series/<kernel>/, so patchctl
run checks the same thing from then on.

Reports go to --out (default out/try), as for run, and try.json.
Exit status: 0 pass, 1 a stage failed, 2 usage or input error, 3 the
harness could not run.`,
		// Flags are parsed in RunE (parseTryArgs): "-N", a RANGE after
		// --git DIR, is an argument there, not a flag, as README shows.
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			args, help, err := parseTryArgs(c, args)
			if err != nil {
				return err
			}
			if help {
				return c.Help()
			}
			opts.Sources = args
			return runTry(c.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Git, "git", "", "a local git repository: the commits of RANGE (the first argument; default -1)")
	f.StringVar(&opts.MsgID, "msgid", "", "Message-ID of any message of the thread")
	f.StringVar(&opts.Inbox, "inbox", "", "local public-inbox archive to find --msgid in")
	f.StringVar(&opts.Lore, "lore", "", "public-inbox server to fetch --msgid's thread from (https://lore.kernel.org/all)")
	opts.register(f, sharedFlags{kernels: true, tree: true, fragment: true, transport: vocab.AllTransports, accel: true, kernelFrom: true, noCcache: true, dma: true, reproduce: true,
		help: map[string]string{
			"kernels":  "pinned kernels (default: the lock's default); with --tree, the manifest and fragment to use",
			"tree":     "a local kernel tree (git checkout or folder) as the pristine tree, never written to",
			"fragment": "kconfig/ fragments to build with instead of the defaults (e.g. base,rdma-loopback,debug: KASAN, lockdep, KFENCE, UBSAN); the debug kernel is an image of its own",
		}})
	f.StringVar(&opts.Out, "out", "", "folder for the reports (default: out/try)")
	f.StringSliceVar(&opts.Allow, "allow", nil, "dispositions that pass besides applying: already-applied, already-upstream, conflict")
	f.StringVar(&opts.Record, "record", "", "record the patches as series NAME: patches/NAME/, manifests, series/")
	f.StringVar(&opts.ExpectInline, "expect-inline", "", "judge the inline evidence: patched, baseline, both or none (default: reported, not judged)")
	f.BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	f.IntVarP(&opts.Strip, "strip", "p", -1, "plain diffs (no \"diff --git\" line): strip N leading components of their file names, as patch -pN (default: found from the tree)")
	return cmd
}

// rangeMark marks a -N argument while the flags are parsed, so that the
// flag parser takes it as an argument; no command-line argument can hold
// a NUL byte, so no other argument carries it.
const rangeMark = "\x00"

// parseTryArgs parses try's flags (its own and the global ones) and
// returns its arguments. An argument -N (digits only) that is not the
// value of a flag is an argument, not a flag: "try --git DIR -1" works
// as README shows, and so does "try --git DIR -- -1". Whether a -N
// argument makes sense (only with --git) readTryInput says.
func parseTryArgs(c *cobra.Command, args []string) (pos []string, help bool, err error) {
	// takesValue reports whether the flag named so takes a value (so
	// the next argument is it).
	takesValue := func(name string, short bool) bool {
		c.InheritedFlags() // merges the persistent flags into c.Flags()
		f := c.Flags().Lookup(name)
		if short {
			f = c.Flags().ShorthandLookup(name)
		}
		return f != nil && f.NoOptDefVal == ""
	}
	var marked []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			marked = append(marked, args[i:]...)
			i = len(args)
			continue
		case pipeline.IsCountRange(a):
			marked = append(marked, rangeMark+a)
			continue
		}
		marked = append(marked, a)
		next := false // whether the next argument is this flag's value
		switch {
		case strings.HasPrefix(a, "--") && !strings.Contains(a, "="):
			next = takesValue(a[2:], false)
		case strings.HasPrefix(a, "-") && len(a) > 1 && !strings.HasPrefix(a, "--"):
			// -abc: bool shorthands, the first that takes a value takes
			// the rest of the word, or the next argument when none is left.
			for j := 1; j < len(a); j++ {
				if takesValue(a[j:j+1], true) {
					next = j == len(a)-1
					break
				}
			}
		}
		if next && i+1 < len(args) {
			i++
			marked = append(marked, args[i])
		}
	}
	c.DisableFlagParsing = false
	defer func() { c.DisableFlagParsing = true }()
	if err := c.ParseFlags(marked); err != nil {
		return nil, false, c.FlagErrorFunc()(c, err)
	}
	help, _ = c.Flags().GetBool("help")
	for _, a := range c.Flags().Args() {
		pos = append(pos, strings.TrimPrefix(a, rangeMark))
	}
	return pos, help, nil
}

// expectation turns --expect-inline into the boot expectations.
func expectation(s string) (map[string]bool, error) {
	switch s {
	case "":
		return nil, nil
	case vocab.Patched:
		return map[string]bool{vocab.Baseline: false, vocab.Patched: true}, nil
	case vocab.Baseline:
		return map[string]bool{vocab.Baseline: true, vocab.Patched: false}, nil
	case "both":
		return map[string]bool{vocab.Baseline: true, vocab.Patched: true}, nil
	case "none":
		return map[string]bool{vocab.Baseline: false, vocab.Patched: false}, nil
	}
	return nil, fmt.Errorf("--expect-inline %q: want patched, baseline, both or none: %w", s, errs.ErrUsage)
}

// inputOptions are what try takes, for pipeline.ReadTryInput (no
// cache: an inbox's index is built in memory).
func (o *TryOptions) inputOptions() pipeline.TryInputOptions {
	io := pipeline.TryInputOptions{Sources: o.Sources, Git: o.Git, MsgID: o.MsgID, Inbox: o.Inbox, Lore: o.Lore, HTTP: o.HTTP}
	if o.IO != nil {
		io.Notes = o.IO.ErrOut
	}
	return io
}

// readTryInput reads what try takes (pipeline.ReadTryInput).
func readTryInput(ctx context.Context, opts *TryOptions) (*pipeline.TryInput, error) {
	return pipeline.ReadTryInput(ctx, opts.inputOptions())
}

func runTry(ctx context.Context, opts *TryOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	to, err := opts.check()
	if err != nil {
		return err
	}
	ws, err := opts.Global.workspace(opts.IO)
	if err != nil {
		return err
	}
	cache, err := ws.Cache(false)
	if err != nil {
		return err
	}
	out, err := outputDir(opts.Out, filepath.Join(ws.Root, "out", "try"), ws.Root)
	if err != nil {
		return err
	}
	to.Cache, to.Out = cache, out
	// Once, before the run: what was taken (on stdout with the summary
	// that follows; on stderr beside --json's document).
	to.Taken = func(tr *pipeline.TryResult) {
		w := opts.IO.Out
		if opts.JSON {
			w = opts.IO.ErrOut
		}
		printThreads(w, tr.Threads)
		for _, x := range tr.Where {
			fmt.Fprintf(w, "where: %s\n", x)
		}
	}
	tr, err := ws.Try(ctx, to)
	ro := report.Options{Version: versionString(), Root: ws.Root, Cache: cache.Dir}
	if err != nil {
		if _, werr := report.WriteWith(out, tr.Run, ro); werr != nil {
			return errors.Join(err, fmt.Errorf("writing reports: %w", werr))
		}
		if werr := tr.Write(out); werr != nil {
			return errors.Join(err, werr)
		}
		return err
	}
	return finishTry(opts, tr, out, ro)
}

// check checks try's options before any work (every error a usage
// error) and turns them into the pipeline's.
func (opts *TryOptions) check() (pipeline.TryOptions, error) {
	p, err := opts.parse()
	if err != nil {
		return pipeline.TryOptions{}, err
	}
	expect, err := expectation(opts.ExpectInline)
	if err != nil {
		return pipeline.TryOptions{}, err
	}
	if err := pipeline.CheckAllow(opts.Allow); err != nil {
		return pipeline.TryOptions{}, err
	}
	if opts.Record != "" {
		if err := pipeline.CheckRecordName(opts.Record); err != nil {
			return pipeline.TryOptions{}, err
		}
	}
	return pipeline.TryOptions{Input: opts.inputOptions(), Where: pipeline.TryWhere{Tree: opts.Tree, Git: opts.Git, Kernels: opts.Kernels},
		Transports: p.Transports, Accel: p.Accel, KernelFrom: p.KernelFrom, NoCcache: opts.NoCcache, Fragments: opts.Fragments, DMA: p.DMA, Reproduce: p.Reproduce,
		Allow: opts.Allow, ExpectInline: expect, Strip: opts.strip(), Record: opts.Record}, nil
}

// finishTry writes the reports and try.json of a run into out, prints
// the verdict, and returns what failed: the reports, the record, the
// run.
func finishTry(opts *TryOptions, tr *pipeline.TryResult, out string, ro report.Options) error {
	res := tr.Run
	files, werr := report.WriteWith(out, res, ro)
	if werr == nil {
		werr = tr.Write(out)
	}
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, tr); err != nil {
			return err
		}
	} else {
		report.Summary(opts.IO.Out, res)
		for _, e := range tr.Elsewhere {
			fmt.Fprintf(opts.IO.Out, "elsewhere: %s\n", e)
		}
		printImages(opts.IO.Out, res, out)
		for _, r := range tr.Record {
			fmt.Fprintf(opts.IO.Out, "recorded %s\n", r)
		}
		fmt.Fprintf(opts.IO.Out, "reports: %s (%d files)\n", out, len(files))
	}
	if werr != nil {
		return fmt.Errorf("writing reports: %w", errors.Join(werr, res.Err()))
	}
	if tr.RecordErr != nil {
		return tr.RecordErr
	}
	if err := res.Err(); err != nil {
		return fmt.Errorf("the patches did not pass (see %s): %w", filepath.Join(out, "summary.txt"), err)
	}
	return nil
}

// printImages names the images a run built, and how to boot them.
func printImages(w io.Writer, res *pipeline.Result, out string) {
	n := 0
	for _, k := range res.Kernels {
		for _, v := range []string{vocab.Baseline, vocab.Patched} {
			if md := k.Builds[v]; md != nil && md.Status == vocab.Pass && md.ID != "" {
				fmt.Fprintf(w, "image %s %s: %s (sha256 %.12s)\n", k.Name, v, md.ID, md.SHA256["bzImage"])
				n++
			}
		}
	}
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "boot or bench them: patchctl boot --image %s [--variant baseline]; patchctl bench --image %s\n", out, out)
}

// printThreads says what was taken from each source and what was not.
func printThreads(w io.Writer, threads []*pipeline.TryThread) {
	for _, t := range threads {
		fmt.Fprintf(w, "%s: series %s, v%d, %d patches\n", t.Source, t.Series, t.Version, len(t.Patches))
		if t.Cover != nil {
			fmt.Fprintf(w, "  cover letter: %s\n", t.Cover.Subject)
		}
		for _, s := range t.Subjects {
			fmt.Fprintf(w, "  taken: %s\n", s)
		}
		for _, r := range t.Skipped {
			fmt.Fprintf(w, "  skipped v%d (an older revision): %s\n", r.Version, strings.Join(r.Patches, "; "))
			for _, m := range r.Malformed {
				fmt.Fprintf(w, "    does not read (not taken, so not a failure): %s\n", m)
			}
		}
		if len(t.Missing) > 0 {
			fmt.Fprintf(w, "  missing from the thread: %s\n", strings.Join(t.Missing, ", "))
		}
		for _, a := range t.Added {
			fmt.Fprintf(w, "  trailer %s (from %s) added to %s\n", a.Line, a.From, a.To)
		}
		for _, a := range t.Ignored {
			fmt.Fprintf(w, "  trailer %s (from %s) not added: it answers %s\n", a.Line, a.From, a.To)
		}
		for _, x := range t.Warn {
			fmt.Fprintf(w, "  warning: %s\n", x.Message)
		}
		if t.Replies > 0 {
			fmt.Fprintf(w, "  %d replies read\n", t.Replies)
		}
	}
}

// strip is --strip as the apply stage takes it (nil: found).
func (o *TryOptions) strip() *int {
	if o.Strip < 0 {
		return nil
	}
	n := o.Strip
	return &n
}
