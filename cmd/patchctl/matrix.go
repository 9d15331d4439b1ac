package main

import (
	"encoding/json"

	"github.com/patchctl/patchctl/internal/pipeline"

	"github.com/spf13/cobra"
)

// MatrixOptions are the inputs of `patchctl matrix`.
type MatrixOptions struct {
	IO     *IOStreams
	Global *GlobalOptions
}

func newMatrixCmd(io *IOStreams, g *GlobalOptions) *cobra.Command {
	opts := &MatrixOptions{IO: io, Global: g}
	cmd := &cobra.Command{
		Use:   "matrix",
		Short: "Print the kernel matrix as JSON (a GitHub Actions strategy.matrix)",
		Long: `Matrix prints {"include":[{"kernel":...,"source":...,"default":...}]} for the
pinned kernels, the shape GitHub Actions' strategy.matrix takes with
fromJSON(), so CI fans the kernels out as parallel jobs.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error {
			w, err := opts.Global.workspace(nil)
			if err != nil {
				return err
			}
			m := struct {
				Include []pipeline.MatrixEntry `json:"include"`
			}{w.Matrix()}
			return json.NewEncoder(opts.IO.Out).Encode(m)
		},
	}
	// The output is JSON either way (CI reads it with fromJSON); --json
	// is accepted as on every verb with a result.
	var asJSON bool
	cmd.Flags().BoolVar(&asJSON, "json", true, "print JSON (the default and only form: what fromJSON() takes)")
	return cmd
}
