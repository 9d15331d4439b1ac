package main

import (
	"fmt"
	"path/filepath"

	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/spf13/cobra"
)

// ImportOptions are the inputs of `patchctl import`.
type ImportOptions struct {
	IO                  *IOStreams
	Global              *GlobalOptions
	Paths               []string
	Tree                string
	Out                 string
	JSON                bool
	AllowUnicodeControl bool
}

func newImportCmd(io *IOStreams, g *GlobalOptions) *cobra.Command {
	opts := &ImportOptions{IO: io, Global: g}
	cmd := &cobra.Command{
		Use:   "import [--tree DIR] [--out DIR] [--json] FILE|DIR...",
		Short: "Turn mailing-list copies of patches into clean, git-am-ready patches",
		Long: `Import reads mbox, mboxrd, RFC 2822 mails and bare archive text, repairs
what archives damage (obfuscated addresses, decoded HTML entities in code,
signatures, missing final newlines, mbox escaping) and writes one patch per
message in git format-patch form under --out/<series>/. A folder is one
series, named after the folder. Every repair is listed with its proof;
input that cannot be repaired with proof is refused and nothing is written.`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Paths = args
			return runImport(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Tree, "tree", "", "kernel tree to prove repairs of context and removed lines against")
	cmd.Flags().StringVar(&opts.Out, "out", "", "folder to write the patches into (default: out/import in the repository)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the patches, repairs and warnings as JSON")
	cmd.Flags().BoolVar(&opts.AllowUnicodeControl, "allow-unicode-control", false, "accept Unicode bidirectional control characters")
	return cmd
}

func runImport(opts *ImportOptions) error {
	res, err := pipeline.Import(opts.Paths, opts.Tree, opts.AllowUnicodeControl)
	if err != nil {
		return fmt.Errorf("importing: %w", err)
	}
	// One rule for --out on every verb: relative to the current folder,
	// default under the repository's out/ (./out/import outside one).
	root, def := "", filepath.Join("out", "import")
	if r, err := opts.Global.repoRoot(); err == nil {
		root, def = r, filepath.Join(r, "out", "import")
	}
	out, err := outputDir(opts.Out, def, root)
	if err != nil {
		return err
	}
	opts.Out = out
	outputs, err := res.Write(opts.Out)
	if err != nil {
		return fmt.Errorf("importing: %w", err)
	}
	rep := res.Report(outputs)
	if opts.JSON {
		return writeJSON(opts.IO.Out, rep)
	}
	w := opts.IO.Out
	for _, p := range rep.Patches {
		fmt.Fprintf(w, "%s\n  %s\n  author %s, from %s:%d, %d repairs\n", p.Output, p.Subject, p.Author, p.Source, p.Line, len(p.Repairs))
		for _, r := range p.Repairs {
			fmt.Fprintf(w, "    %s:%d %s: %q -> %q\n", r.File, r.Line, r.Kind, r.Before, r.After)
		}
	}
	for _, wr := range rep.Warnings {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s:%d: %s\n", wr.File, wr.Line, wr.Message)
	}
	fmt.Fprintf(w, "%d patches imported into %s\n", len(rep.Patches), opts.Out)
	return nil
}
