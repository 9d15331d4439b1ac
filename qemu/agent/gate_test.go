package main

import (
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/guestconf"
)

// TestGateReports: the guest's dmesg gate fails on every report but the
// known ones, which it names; a lockdep report of the same kind naming
// other locks still fails.
func TestGateReports(t *testing.T) {
	known := []guestconf.KnownReport{{ID: "cfg-vs-handler", Match: []string{"possible circular locking dependency", "cfg_sem", "handler_mutex"}}}
	report := func(held, wanted string) []string {
		return []string{
			"WARNING: possible circular locking dependency detected",
			"agent/1 is trying to acquire lock:",
			"ffff888000000000 (" + wanted + "){+.+.}-{4:4}, at: destroy+0x1/0x2",
			"but task is already holding lock:",
			"ffffffff80000000 (" + held + "){++++}-{4:4}, at: unlink+0x1/0x2",
			"Call Trace:", " <TASK>", " </TASK>",
		}
	}
	log := append(report("cfg_sem", "&id->handler_mutex"), "nvmet: port disabled")
	bad, seen := gateReports(log, known)
	if len(bad) != 0 || len(seen) != 1 || seen[0][0] != "cfg-vs-handler" || !strings.Contains(seen[0][1], "circular locking") {
		t.Errorf("known report: bad %q seen %q", bad, seen)
	}
	log = append(log, report("cfg_sem", "&q->state_lock")...)
	log = append(log, "BUG: KASAN: use-after-free in f+0x1/0x2")
	bad, seen = gateReports(log, known)
	if len(bad) != 2 || len(seen) != 1 || !strings.Contains(bad[1], "KASAN") {
		t.Errorf("other reports: bad %q seen %q", bad, seen)
	}
	if bad, _ := gateReports(log, nil); len(bad) != 3 {
		t.Errorf("no table: %q", bad)
	}
}
