package bench

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// The guest's clock. Under TCG the kernel cannot calibrate its TSC
// against the emulated PIT ("tsc: Unable to calibrate against PIT") and,
// with no ACPI, has no HPET or PM timer either: CLOCK_MONOTONIC then
// runs on jiffies, 4 ms steps at HZ=250, and per-I/O latencies of a few
// hundred microseconds read as 0 or 4000. TCG's RDTSC returns the host's
// TSC, so the bench tells the guest kernel the host's TSC frequency
// (tsc_early_khz) and to trust it (tsc=reliable, clocksource=tsc).
// Measured here: the guest's and the host's clocks agreed within 0.4 %
// over a boot (README, patchctl bench).

// HostTSCkHz is the host's TSC frequency in kHz, measured against the
// monotonic clock (the median of three 100 ms windows); ok is false when
// the host has no constant-rate TSC (cpuinfo's constant_tsc) or is not
// amd64.
func HostTSCkHz() (khz int64, ok bool) {
	if !haveTSC {
		return 0, false
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err != nil || !strings.Contains(string(b), "constant_tsc") {
		return 0, false
	}
	var est []float64
	for i := 0; i < 3; i++ {
		t0, c0 := time.Now(), rdtsc()
		time.Sleep(100 * time.Millisecond)
		c1, d := rdtsc(), time.Since(t0)
		if c1 <= c0 || d <= 0 {
			return 0, false
		}
		est = append(est, float64(c1-c0)/float64(d.Nanoseconds())*1e6)
	}
	slices.Sort(est)
	return int64(est[1] + 0.5), est[1] > 0
}

// TCGClockCmdline is the kernel command line that gives a TCG guest a
// fine clock, or "" when the host's TSC cannot be measured.
func TCGClockCmdline() string {
	khz, ok := HostTSCkHz()
	if !ok {
		return ""
	}
	return fmt.Sprintf("tsc_early_khz=%d tsc=reliable clocksource=tsc", khz)
}

// coarseClock is whether a guest clocksource cannot time one I/O.
func coarseClock(cs string) bool { return cs == "" || strings.Contains(cs, "jiffies") }
