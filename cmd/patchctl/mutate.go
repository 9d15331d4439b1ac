package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/vocab"
	"github.com/spf13/cobra"
)

// MutateOptions are the inputs of `patchctl mutate`.
type MutateOptions struct {
	IO     *IOStreams
	Global *GlobalOptions
	SharedOptions
	Series     string
	Max        int
	Operators  []string
	StaticOnly bool
	Jobs       int
	Out        string
	JSON       bool
	// MinScore fails the run (exit 1) when the all-oracles score, in
	// percent, is below it (0: never).
	MinScore float64
}

func newMutateCmd(io *IOStreams, g *GlobalOptions) *cobra.Command {
	opts := &MutateOptions{IO: io, Global: g}
	cmd := &cobra.Command{
		Use:   "mutate [--kernel K] [--series NAME] [--max N] [--operators a,b] [--static-only] [--out DIR]",
		Short: "Mutants of the lines the series adds, judged by the checks and by a boot: the mutation score",
		Long: `Mutate changes one line the series adds at a time, by operator classes that
matter for inline posting and in-capsule data:
  ` + strings.Join(pipeline.MutationOperators(), ", ") + `
and judges each mutant, in its patch's place in the series, by two oracles:
the static checks (killed: an error or warning the unmutated series does not
have) and an incremental build of the patched kernel (one module rebuilt)
booted over rxe and siw (killed: a compile error, or a boot whose verdict,
splats or failed tests differ from the unmutated series'). It prints the
count and a time estimate first, then the kill table, the mutation score of
each oracle and the surviving mutants with their diff. mutate.json and
mutate.txt go to --out, with each mutant's regenerated series and boot logs.
The work tree and the build folder's latest patched image are put back as
they were when it ends, interrupted or not.

Exit status: 0 whatever the score (1 with --min-score P when fewer than P %
of the mutants are killed, or when the unmutated series does not build), 2
usage or input error, 3 the harness could not run or an interrupt.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error {
			if c.Flags().Changed("jobs") {
				if err := pipeline.CheckJobs(opts.Jobs); err != nil {
					return err
				}
			}
			return runMutate(c.Context(), opts)
		},
	}
	opts.register(cmd.Flags(), sharedFlags{kernel: true, tree: true, fragment: true, transport: vocab.AllTransports, accel: true, noCcache: true})
	cmd.Flags().StringVar(&opts.Series, "series", "", "the manifest's series to mutate (a folder name under patches/; default: every series the manifest applies)")
	cmd.Flags().IntVar(&opts.Max, "max", 0, "judge at most N mutants, every operator class before any class's second (0: all)")
	cmd.Flags().StringSliceVar(&opts.Operators, "operators", nil, "operator classes, comma-separated (default: all)")
	cmd.Flags().BoolVar(&opts.StaticOnly, "static-only", false, "judge by the static checks only: no build, no boot")
	cmd.Flags().IntVarP(&opts.Jobs, "jobs", "j", 0, fmt.Sprintf("parallel build jobs, 1 to %d (default: cores)", pipeline.MaxJobs))
	cmd.Flags().StringVar(&opts.Out, "out", "", "folder for mutate.json, mutate.txt and the mutants (default: out/mutate)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the report as JSON (the progress goes to stderr)")
	cmd.Flags().Float64Var(&opts.MinScore, "min-score", 0, "exit 1 when fewer than this percentage of the mutants are killed by any oracle")
	return cmd
}

func runMutate(ctx context.Context, opts *MutateOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	p, err := opts.parse()
	if err != nil {
		return err
	}
	if err := pipeline.CheckMutate(opts.Max, opts.Operators); err != nil {
		return err
	}
	if opts.MinScore < 0 || opts.MinScore > 100 {
		return fmt.Errorf("--min-score %g: want a percentage from 0 to 100: %w", opts.MinScore, errs.ErrUsage)
	}
	w, err := opts.Global.workspace(opts.IO)
	if err != nil {
		return err
	}
	root := w.Root
	out, err := outputDir(opts.Out, filepath.Join(root, "out", "mutate"), root)
	if err != nil {
		return err
	}
	t, err := opts.Global.target(ctx, opts.IO, opts.Kernel, opts.Tree)
	if err != nil {
		return err
	}
	log := opts.IO.Out
	if opts.JSON {
		log = opts.IO.ErrOut
	}
	rep, err := t.Mutate(ctx, pipeline.MutateOptions{Series: opts.Series, Max: opts.Max, Operators: opts.Operators, StaticOnly: opts.StaticOnly,
		Transports: p.Transports, Accel: p.Accel, Fragments: opts.Fragments, Jobs: opts.Jobs, NoCcache: opts.NoCcache, OutDir: out, Log: log})
	if err != nil {
		if rep != nil && len(rep.Mutants) > 0 {
			fmt.Fprintln(log)
			pipeline.WriteMutateTable(log, rep)
		}
		return fmt.Errorf("mutate %s: %w", t.Kernel.Name, err)
	}
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, rep); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(opts.IO.Out)
		pipeline.WriteMutateTable(opts.IO.Out, rep)
		fmt.Fprintf(opts.IO.Out, "reports: %s (mutate.json, mutate.txt)\n", out)
	}
	if score := 100 * rep.Scores.All; opts.MinScore > 0 && score < opts.MinScore {
		return fmt.Errorf("mutation score %.0f %% is below --min-score %g (survivors in %s): %w", score, opts.MinScore, filepath.Join(out, "mutate.txt"), errs.ErrFindings)
	}
	return nil
}
