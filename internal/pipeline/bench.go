package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/patchctl/patchctl/internal/bench"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/vocab"
)

// BenchWorkload is a bench's shape as the bench verb's flags give it:
// boots per variant, the provider, and the guest workload's knobs.
type BenchWorkload struct {
	Boots       int
	Transport   string // rxe or siw
	LatencyTime time.Duration
	Reps        int
	SweepTime   time.Duration
	QueueDepth  int
}

// DefaultBenchWorkload is the bench's default shape
// (bench.DefaultWorkload, bench.DefaultBoots, over rxe).
func DefaultBenchWorkload() BenchWorkload {
	w := bench.DefaultWorkload()
	return BenchWorkload{Boots: bench.DefaultBoots, Transport: vocab.RXE, LatencyTime: time.Duration(w.LatencyMS) * time.Millisecond, Reps: w.Reps,
		SweepTime: time.Duration(w.SweepMS) * time.Millisecond, QueueDepth: w.QueueDepth}
}

// Options are the bench's options for b, checked (a usage error names
// the flag).
func (b BenchWorkload) Options() (bench.Options, error) {
	w := bench.DefaultWorkload()
	w.LatencyMS, w.Reps = int(b.LatencyTime/time.Millisecond), b.Reps
	w.SweepMS, w.QueueDepth = int(b.SweepTime/time.Millisecond), b.QueueDepth
	o := bench.Options{Boots: b.Boots, Workload: w}
	if !vocab.IsTransport(b.Transport) {
		return o, fmt.Errorf("bench --transport %q: one provider per bench, rxe or siw: %w", b.Transport, errs.ErrUsage)
	}
	o.Transport = b.Transport
	return o, bench.Check(&o.Workload, o.Boots)
}

// Bench readies both variants' boots (BenchBoots) and runs the bench o
// of the target into b.OutDir, saying on b.Log what it runs and about
// how long it takes.
func (t *Target) Bench(ctx context.Context, o bench.Options, b BenchBootOptions) (*bench.Result, error) {
	if err := t.BenchBoots(ctx, &o, b); err != nil {
		return nil, err
	}
	o.Kernel, o.OutDir, o.Log = t.Kernel.Name, b.OutDir, b.Log
	fmt.Fprintf(b.Log, "bench: %s over %s, %d boots per variant, about %s (measured here: see README)\n",
		t.Kernel.Name, o.Transport, o.Boots, bench.Estimate(&o.Workload, o.Boots).Round(time.Second))
	return bench.Run(ctx, o)
}
