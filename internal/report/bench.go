package report

import (
	"io"

	"github.com/patchctl/patchctl/internal/bench"
)

// BenchText writes a bench's result for people: seed 000's latency
// table, seed 003's sweep tables, the self-check and what soft-RoCE
// cannot show (bench.Text).
func BenchText(w io.Writer, r *bench.Result) { bench.Text(w, r) }
