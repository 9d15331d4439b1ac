package testenv

import (
	"syscall"
	"testing"
	"time"
)

// CPU measures the CPU time a benchmark costs (patchctl's own and its
// waited-for children's: make, gcc, qemu), beside the wall time the
// benchmark reports: on a shared 2-core machine the wall time is the
// load's, the CPU time is the work's. Stop and Start follow b.StopTimer
// and b.StartTimer; Report, after the loop, adds cpu-s/op.
type CPU struct {
	b       *testing.B
	total   time.Duration
	since   time.Duration
	running bool
}

// MeasureCPU starts measuring.
func MeasureCPU(b *testing.B) *CPU {
	return &CPU{b: b, since: cpuNow(), running: true}
}

// Stop pauses the measurement (with b.StopTimer).
func (c *CPU) Stop() {
	if c.running {
		c.total += cpuNow() - c.since
		c.running = false
	}
}

// Start resumes it (with b.StartTimer).
func (c *CPU) Start() {
	if !c.running {
		c.since = cpuNow()
		c.running = true
	}
}

// Report adds the CPU seconds per operation to the benchmark's result.
func (c *CPU) Report() {
	c.Stop()
	if c.b.N > 0 {
		c.b.ReportMetric(c.total.Seconds()/float64(c.b.N), "cpu-s/op")
	}
}

// cpuNow is user plus system time of this process and of its children
// that have been waited for.
func cpuNow() time.Duration {
	var t time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			t += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return t
}
