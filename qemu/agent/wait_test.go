package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWaits: the teardown's waits return as soon as what they wait for
// holds (a file made or removed by another goroutine after a while), not
// after a fixed pause, and report failure at their deadline.
func TestWaits(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ctrl")
	after := func(d time.Duration, fn func()) { go func() { time.Sleep(d); fn() }() }

	after(30*time.Millisecond, func() { os.WriteFile(p, nil, 0o644) })
	start := time.Now()
	if err := waitFor(p, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("waitFor returned after %s, before the file was made", d)
	}

	after(30*time.Millisecond, func() { os.Remove(p) })
	if err := waitGone(p, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("waitGone returned with %s still there", p)
	}

	// At the deadline: an error naming the path, and until says false.
	if err := waitFor(p, 25*time.Millisecond); err == nil {
		t.Errorf("waitFor of a file nobody makes: no error")
	}
	os.WriteFile(p, nil, 0o644)
	if err := waitGone(p, 25*time.Millisecond); err == nil {
		t.Errorf("waitGone of a file nobody removes: no error")
	}
	calls := 0
	if until(25*time.Millisecond, func() bool { calls++; return false }) {
		t.Errorf("until: true for a condition that never holds")
	}
	if calls < 2 {
		t.Errorf("until asked %d times in 25 ms, polling every %s", calls, pollEvery)
	}
	calls = 0
	if !until(time.Second, func() bool { calls++; return calls == 3 }) || calls != 3 {
		t.Errorf("until: a condition true on the third look was asked %d times", calls)
	}
}
