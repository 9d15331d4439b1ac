package boot

import (
	"os"
	"testing"
	"time"
)

func TestAccelProbeIsBounded(t *testing.T) {
	start := time.Now()
	a := Accel()
	if a != "kvm" && a != "tcg" {
		t.Fatalf("accel %q", a)
	}
	if _, err := os.Stat("/dev/kvm"); err != nil && a != "tcg" {
		t.Error("kvm chosen without /dev/kvm")
	}
	if time.Since(start) > kvmProbeTimeout+time.Second {
		t.Error("the KVM probe is not bounded")
	}
	t.Logf("accel here: %s", a)
}
