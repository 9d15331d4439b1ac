package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestPlainLines(t *testing.T) {
	var b bytes.Buffer
	r := New(&b)
	clock := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	r.now = func() time.Time { return clock }
	r.Start("extract 6.12")
	r.Update("1000 files") // too soon: not printed
	clock = clock.Add(11 * time.Second)
	r.Update("5000 files")
	clock = clock.Add(time.Second)
	r.Done("86629 files")
	got := b.String()
	for _, want := range []string{"10:00:00 extract 6.12: started\n", "10:00:11 extract 6.12: 5000 files (11s)\n", "10:00:12 extract 6.12: 86629 files (12s)\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "1000 files") || strings.Contains(got, "\r") {
		t.Errorf("plain mode printed a live update:\n%q", got)
	}
}

// TestBeside: a task beside the one shown prints its step's end and its
// notes as lines of their own, and the shown step keeps its name and
// start: its end is reported as its own.
func TestBeside(t *testing.T) {
	for _, tty := range []bool{false, true} {
		var b bytes.Buffer
		r := New(&b)
		r.tty = tty
		clock := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
		r.now = func() time.Time { return clock }
		side := r.Beside()
		r.Start("build 6.12 patched")
		clock = clock.Add(time.Second)
		side.Start("check tree 6.12")
		side.Update("linking")
		clock = clock.Add(2 * time.Second)
		side.Done("86629 files linked")
		side.Note("waiting for the lock check-6.12")
		r.Update("CC drivers/nvme/host/rdma.o")
		clock = clock.Add(2 * time.Second)
		r.Done("built")
		got := b.String()
		for _, want := range []string{"check tree 6.12: 86629 files linked (2s)\n", "waiting for the lock check-6.12\n", "build 6.12 patched: built (5s)\n"} {
			if !strings.Contains(got, want) {
				t.Errorf("tty %v: missing %q in\n%q", tty, want, got)
			}
		}
		if strings.Contains(got, "linking") || strings.Contains(got, "check tree 6.12: started") {
			t.Errorf("tty %v: the task beside took the live line:\n%q", tty, got)
		}
	}
}
