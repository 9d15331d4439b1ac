package guestconf

import (
	"fmt"
	"strings"
	"testing"
)

// lockdepReport is a circular-dependency report of lockdep's shape
// between locks a (held) and b (wanted), timestamps as on a console.
func lockdepReport(a, b string) []string {
	return []string{
		"[  9.1] ======================================================",
		"[  9.1] WARNING: possible circular locking dependency detected",
		"[  9.1] 6.12.0 #1 Not tainted",
		"[  9.1] ------------------------------------------------------",
		"[  9.1] agent/1 is trying to acquire lock:",
		fmt.Sprintf("[  9.1] ffff88800a1b2c30 (%s){+.+.}-{4:4}, at: release+0x2a/0x90", b),
		"[  9.1] but task is already holding lock:",
		fmt.Sprintf("[  9.1] ffffffff83a4e5c0 (%s){++++}-{4:4}, at: drop_link+0x41/0x150", a),
		"[  9.1] which lock already depends on the new lock.",
		"[  9.1] the existing dependency chain (in reverse order) is:",
		fmt.Sprintf("[  9.1] -> #1 (%s){+.+.}-{4:4}:", b),
		"[  9.1]        __mutex_lock+0x10d/0xd70",
		"[  9.1] stack backtrace:",
		"[  9.1] CPU: 0 UID: 0 PID: 1 Comm: agent Not tainted 6.12.0 #1",
		"[  9.1] Call Trace:",
		"[  9.1]  <TASK>",
		"[  9.1]  dump_stack_lvl+0x5b/0x80",
		"[  9.1]  print_circular_bug+0x2a2/0x320",
		"[  9.1]  </TASK>",
	}
}

// TestReports: a log's reports are grouped with their call trace; a
// report holding every string of a known one is marked known, and one of
// the same kind naming other locks is not; a report after a known one is
// its own, and a bare call trace after a report's end is one too.
func TestReports(t *testing.T) {
	known := []KnownReport{{ID: "pair", Match: []string{"possible circular locking dependency", "sem_a", "mutex_b"}}}
	var log []string
	log = append(log, "[  9.0] nvme nvme0: Removing ctrl")
	log = append(log, lockdepReport("sem_a", "&id->mutex_b")...)
	log = append(log, "[  9.2] nvmet: disabling port 1")
	log = append(log, lockdepReport("sem_a", "&other->lock")...)
	log = append(log,
		"[  9.3] BUG: KASAN: slab-out-of-bounds in copy_data+0x12/0x80",
		"[  9.3] Write of size 8 at addr ffff888003c1a000 by task kworker/0:1/30",
		"[  9.3] Call Trace:",
		"[  9.3]  <TASK>",
		"[  9.3]  </TASK>",
		"[  9.3] Allocated by task 1:",
		"[  9.4] Call Trace:",
		"[  9.4]  <TASK>",
		"[  9.4]  </TASK>")
	rs := Reports(log, known)
	var got []string
	for _, r := range rs {
		got = append(got, fmt.Sprintf("%d-%d %s %s", r.Start, r.End, strings.TrimSuffix(r.Kind, ":"), r.Known))
	}
	// Line 1 is the "=====" line before the first WARNING (index 2).
	want := []string{"2-20 WARNING pair", "22-40 WARNING ", "40-45 BUG ", "46-49 Call Trace "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("reports:\n got  %q\n want %q", got, want)
	}
	// Nothing known: the same log fails on every report.
	for _, r := range Reports(log, nil) {
		if r.Known != "" {
			t.Errorf("known without a table: %+v", r)
		}
	}
	// A known report with no strings matches nothing.
	if rs := Reports(log, []KnownReport{{ID: "empty"}}); rs[0].Known != "" {
		t.Errorf("an empty match list matched: %+v", rs[0])
	}
	// A report that never ends is cut at reportLimit lines.
	long := []string{"WARNING: at foo"}
	for i := 0; i < 3*reportLimit; i++ {
		long = append(long, "  frame")
	}
	if rs := Reports(long, nil); len(rs) != 1 || rs[0].End != reportLimit {
		t.Errorf("an endless report: %+v", rs)
	}
}

// TestReportsSkipDiagnostics: the agent's KTAP diagnostics quote the
// kernel's reports; they begin none of their own.
func TestReportsSkipDiagnostics(t *testing.T) {
	log := []string{"    # dmesg: BUG: KASAN: use-after-free in f+0x1/0x2", "not ok 3 dmesg", "[ 1.0] BUG: KASAN: use-after-free in f+0x1/0x2"}
	if rs := Reports(log, nil); len(rs) != 1 || rs[0].Start != 2 {
		t.Errorf("reports: %+v", rs)
	}
}
