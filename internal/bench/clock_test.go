package bench

import (
	"runtime"
	"testing"
)

// TestHostTSC: the host's TSC frequency, when there is one, is a
// plausible CPU clock and stable between two measurements (within 5 %
// on a loaded host; 5 ppm apart here).
func TestHostTSC(t *testing.T) {
	a, ok := HostTSCkHz()
	if !ok {
		t.Skipf("no constant-rate TSC on this host (%s)", runtime.GOARCH)
	}
	b, _ := HostTSCkHz()
	t.Logf("host TSC: %d kHz, %d kHz", a, b)
	if a < 100_000 || a > 10_000_000 {
		t.Errorf("TSC at %d kHz", a)
	}
	if d := float64(a-b) / float64(a); d > 0.05 || d < -0.05 { // a loaded host preempts between the clock reads
		t.Errorf("two measurements differ by %.2f %%: %d, %d kHz", 100*d, a, b)
	}
	if !coarseClock("refined-jiffies") || !coarseClock("") || coarseClock("tsc") {
		t.Error("coarseClock")
	}
}
