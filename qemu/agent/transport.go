package main

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"time"

	"github.com/patchctl/patchctl/internal/guestconf"
	"golang.org/x/sys/unix"
)

// runTransport runs every test over one transport as a KTAP subtest.
func runTransport(k *ktap, n int, transport string, cfg *Config) {
	begin := time.Now()
	parentOK := true
	marker := fmt.Sprintf("patchctl: begin %s %d", transport, time.Now().UnixNano())
	_ = writeFile("/dev/kmsg", marker) // a marker in the log, best effort
	names := []string{"link", "target", "connect"}
	for _, size := range cfg.Sizes {
		names = append(names, "write_read_"+sizeName(size))
	}
	names = append(names, "inline_evidence", "teardown", "dmesg")
	total := len(names)
	k.header(transport, total)
	fail := func(name string, err error) {
		k.diag("%s: %v", name, err)
		k.result(false, name, "")
		parentOK = false
	}
	// abort ends the transport after a failed setup step: undo what was
	// set up, mark the remaining tests skipped, fail the parent.
	abort := func(step int, name string, err error, why string, undo ...func()) {
		fail(name, err)
		for _, u := range undo {
			u()
		}
		for i := step + 1; i <= total; i++ {
			k.result(true, names[i-1], why)
		}
		finishParent(k, n, transport, false, begin)
	}
	undoTarget := func() { _ = teardownTarget(cfg.NQN) }
	undoLink := func() { _ = delRDMALink(transport) }

	// 1. link
	if err := addRDMALink(transport); err != nil {
		abort(1, "link", err, "no RDMA link")
		return
	}
	k.result(true, "link", "")
	addr := strings.Split(cfg.Address, "/")[0]
	// 2. target
	notes, err := setupTarget(cfg.NQN, addr, cfg.InlineDataSize)
	for _, note := range notes {
		k.diag("%s", note)
	}
	if err != nil {
		abort(2, "target", err, "no target", undoTarget, undoLink)
		return
	}
	k.result(true, "target", "")
	probeErr := addProbe(cfg, transport)
	if probeErr != nil {
		k.diag("kprobe: %v", probeErr)
	}
	// 3. connect
	ctrl, dev, err := connect(cfg.NQN, addr)
	if err != nil {
		abort(3, "connect", err, "not connected", undoTarget, undoLink)
		return
	}
	k.diag("connected %s as %s", ctrl, dev)
	k.result(true, "connect", "")
	// 4.. data-verified I/O per size
	rng := rand.New(rand.NewSource(cfg.Seed + int64(n)))
	for _, size := range cfg.Sizes {
		name := "write_read_" + sizeName(size)
		start := time.Now()
		if err := ioTest(dev, size, cfg.Iterations, rng); err != nil {
			fail(name, err)
			continue
		}
		k.diag("%s: %d blocks written and read back in %s", name, cfg.Iterations, time.Since(start).Round(time.Millisecond))
		k.result(true, name, "")
	}
	// inline evidence
	if probeErr != nil {
		fail("inline_evidence", probeErr)
	} else {
		wrs, err := readEvidence(cfg, transport)
		removeProbe(transport)
		if err != nil {
			fail("inline_evidence", err)
		} else {
			ev := evidence(cfg, transport, wrs)
			for _, w := range ev.WRs {
				k.diag("wr %s", w)
			}
			k.diag("%s", ev.Diagnostic())
			if err := guestconf.JudgeInline(ev, cfg.ExpectInline); err != nil {
				fail("inline_evidence", err)
			} else {
				k.result(true, "inline_evidence", "")
			}
		}
	}
	// teardown: each step waits for what it removed to be gone, and
	// no longer (a fixed pause cost every boot 0.4 s per transport)
	var terr []string
	if err := disconnect(ctrl); err != nil {
		terr = append(terr, err.Error())
	}
	if err := teardownTarget(cfg.NQN); err != nil {
		terr = append(terr, err.Error())
	}
	if err := delRDMALink(transport); err != nil {
		terr = append(terr, err.Error())
	}
	if left := settled(5 * time.Second); len(left) > 0 {
		terr = append(terr, "left behind: "+strings.Join(left, ", "))
	}
	if len(terr) > 0 {
		fail("teardown", fmt.Errorf("%s", strings.Join(terr, "; ")))
	} else {
		k.result(true, "teardown", "")
	}
	// dmesg gate
	if bad := dmesgSplats(k, marker, cfg.Known); len(bad) > 0 {
		fail("dmesg", fmt.Errorf("%s", strings.Join(bad, "\n")))
	} else {
		k.result(true, "dmesg", "")
	}
	finishParent(k, n, transport, parentOK, begin)
}

func finishParent(k *ktap, n int, transport string, ok bool, begin time.Time) {
	parent := &ktap{out: k.out, indent: k.indent[:len(k.indent)-4], n: n - 1, last: begin}
	parent.result(ok, transport, "")
}

// dmesgSplats returns the lines that begin the kernel's reports logged
// after marker, but for reports known as pre-existing defects of this
// kernel (cfg.Known), which k states as diagnostics.
func dmesgSplats(k *ktap, marker string, known []guestconf.KnownReport) []string {
	buf := make([]byte, 1<<20)
	n, err := unix.Klogctl(unix.SYSLOG_ACTION_READ_ALL, buf)
	if err != nil {
		return []string{"reading dmesg: " + err.Error()}
	}
	log := buf[:n]
	if i := bytes.Index(log, []byte(marker)); i >= 0 {
		log = log[i:]
	}
	bad, seen := gateReports(strings.Split(string(log), "\n"), known)
	for _, s := range seen {
		k.diag("known pre-existing kernel report (%s), not failed: %s", s[0], s[1])
	}
	return bad
}

// gateReports splits a log's reports into the lines that fail the gate
// (at most 20) and the known ones ({id, first line}).
func gateReports(lines []string, known []guestconf.KnownReport) (bad []string, seen [][2]string) {
	for _, r := range guestconf.Reports(lines, known) {
		first := strings.TrimSpace(lines[r.Start])
		if r.Known != "" {
			seen = append(seen, [2]string{r.Known, first})
			continue
		}
		bad = append(bad, first)
	}
	if len(bad) > 20 {
		bad = bad[:20]
	}
	return bad, seen
}
