package main

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/patchctl/patchctl/internal/guestconf"
	"golang.org/x/sys/unix"
)

// benchPlan is the KTAP test list of one bench boot, in order: the link;
// per in-capsule size its target (subsystem and port) and connect; the
// latency workload; one test per sweep point (every in-capsule size in
// turns); the disconnects; the teardown and the dmesg gate.
func benchPlan(b *guestconf.Bench) []string {
	names := []string{"link"}
	for _, in := range b.InlineSizes {
		names = append(names, "target_inline"+sizeName(in), "connect_inline"+sizeName(in))
	}
	names = append(names, "latency_randread_"+sizeName(b.LatencyBlock))
	if b.SelfCheckMS > 0 {
		names = append(names, "selfcheck_randwrite_"+sizeName(b.SelfCheckSize))
	}
	for _, w := range b.Workloads {
		for _, s := range b.Sizes {
			names = append(names, w+"_"+sizeName(s))
		}
	}
	return append(names, "disconnect", "teardown", "dmesg")
}

// benchTarget is one in-capsule size's subsystem, port and controller.
type benchTarget struct {
	inline     int
	nqn, port  string
	svcid      string
	ctrl, dev  string
	fd         int
	configured int // param_inline_data_size as read back
}

// benchRun is one transport's bench, as a KTAP subtest: every
// measurement is a diagnostic carrying a guestconf.BenchRecord.
func benchRun(k *ktap, n int, transport string, cfg *Config) {
	b := cfg.Bench
	begin := time.Now()
	marker := fmt.Sprintf("patchctl: bench %s %d", transport, time.Now().UnixNano())
	_ = writeFile("/dev/kmsg", marker) // a marker in the log, best effort
	names := benchPlan(b)
	k.header(transport, len(names))
	ok := true
	next := 0
	result := func(err error, skip string) {
		if err != nil {
			k.diag("%s: %v", names[next], err)
			ok = false
		}
		k.result(err == nil, names[next], skip)
		next++
	}
	// skipTo marks the tests up to (not including) name as skipped.
	skipTo := func(name, why string) {
		for next < len(names) && names[next] != name {
			result(nil, why)
		}
	}
	env := &guestconf.BenchRecord{Kind: "env", Transport: transport, CPUs: runtime.NumCPU(), Kernel: release(),
		Clocksource: clocksource(), ClockStepNS: clockStep().Nanoseconds()}
	k.diag("%s", env.Diagnostic())

	if err := addRDMALink(transport); err != nil {
		result(err, "")
		skipTo("", "no RDMA link")
		finishParent(k, n, transport, false, begin)
		return
	}
	result(nil, "")
	addr := strings.Split(cfg.Address, "/")[0]
	var targets []*benchTarget
	setup := func() error {
		for i, inline := range b.InlineSizes {
			t := &benchTarget{inline: inline, nqn: fmt.Sprintf("%s-inline%s", cfg.NQN, sizeName(inline)),
				port: strconv.Itoa(i + 1), svcid: strconv.Itoa(4420 + i), fd: -1}
			targets = append(targets, t)
			notes, err := setupTargetAt(t.nqn, addr, t.port, t.svcid, inline)
			for _, note := range notes {
				k.diag("%s", note)
			}
			t.configured = readInline(t.port)
			if err == nil && t.configured != inline {
				err = fmt.Errorf("the port's param_inline_data_size reads %d, not %d: the in-capsule sweep needs the attribute (kernel 4.19 or later)", t.configured, inline)
			}
			result(err, "")
			if err != nil {
				return err
			}
			t.ctrl, t.dev, err = connectAt(t.nqn, addr, t.svcid)
			if err == nil {
				t.fd, err = openIO(t.dev, true)
			}
			result(err, "")
			if err != nil {
				return err
			}
			k.diag("connected %s as %s on port %s: in-capsule data size %d", t.ctrl, t.dev, t.svcid, t.configured)
		}
		return nil
	}
	if err := setup(); err != nil {
		skipTo("disconnect", "no target")
	} else {
		rng := rand.New(rand.NewSource(b.Seed))
		lt := targets[0]
		for _, t := range targets {
			if t.inline == b.LatencyInline {
				lt = t
			}
		}
		result(benchLatency(k, lt.fd, transport, lt.configured, b, rng), "")
		if b.SelfCheckMS > 0 {
			result(benchPoint(k, "selfcheck", targets, transport, guestconf.RandWrite, b.SelfCheckSize, 1, ms(b.SelfCheckMS), b, rng.Int63()), "")
		}
		for _, w := range b.Workloads {
			for _, size := range b.Sizes {
				result(benchPoint(k, "sweep", targets, transport, w, size, b.QueueDepth, ms(b.SweepMS), b, rng.Int63()), "")
			}
		}
	}
	var derr []string
	for _, t := range targets {
		if t.fd >= 0 {
			unix.Close(t.fd)
		}
		if t.ctrl != "" {
			if err := disconnect(t.ctrl); err != nil {
				derr = append(derr, err.Error())
			}
		}
		if err := teardownTargetAt(t.nqn, t.port); err != nil {
			derr = append(derr, err.Error())
		}
	}
	if len(derr) > 0 {
		result(fmt.Errorf("%s", strings.Join(derr, "; ")), "")
	} else {
		result(nil, "")
	}
	var terr []string
	if err := delRDMALink(transport); err != nil {
		terr = append(terr, err.Error())
	}
	if left := settled(5 * time.Second); len(left) > 0 {
		terr = append(terr, "left behind: "+strings.Join(left, ", "))
	}
	if len(terr) > 0 {
		result(fmt.Errorf("%s", strings.Join(terr, "; ")), "")
	} else {
		result(nil, "")
	}
	if bad := dmesgSplats(k, marker, cfg.Known); len(bad) > 0 {
		result(fmt.Errorf("%s", strings.Join(bad, "\n")), "")
	} else {
		result(nil, "")
	}
	finishParent(k, n, transport, ok, begin)
}

// benchLatency is the latency workload: warm-up, then Reps repetitions
// of QD1 random reads; one record per repetition and one (Rep 0, with
// the histogram) over all of them.
func benchLatency(k *ktap, fd int, transport string, inline int, b *guestconf.Bench, rng *rand.Rand) error {
	if _, err := latencyRun(fd, b.LatencyBlock, b.Span, ms(b.WarmupMS), rng); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	var all []float64
	var secs float64
	for r := 1; r <= b.Reps; r++ {
		t0 := time.Now()
		lat, err := latencyRun(fd, b.LatencyBlock, b.Span, ms(b.LatencyMS), rng)
		if err != nil {
			return err
		}
		d := time.Since(t0).Seconds()
		secs += d
		all = append(all, lat...)
		k.diag("%s", latencyRecord(transport, inline, b.LatencyBlock, r, lat, d, false).Diagnostic())
	}
	k.diag("%s", latencyRecord(transport, inline, b.LatencyBlock, 0, all, secs, true).Diagnostic())
	return nil
}

func latencyRecord(transport string, inline, size, rep int, lat []float64, secs float64, hist bool) *guestconf.BenchRecord {
	s := summarize(lat)
	r := &guestconf.BenchRecord{Kind: "latency", Transport: transport, InlineDataSize: inline, Workload: "randread", Size: size, QD: 1,
		Rep: rep, IOs: s.N, Seconds: secs, MeanUS: s.Mean, MedianUS: s.Median, P99US: s.P99}
	if secs > 0 {
		r.IOPS = float64(s.N) / secs
	}
	if hist {
		r.Hist = s.Hist
	}
	return r
}

// benchPoint is one sweep point (or the self-check's) on every
// in-capsule size: a warm-up on each, then d on each in turns of
// SliceMS (interleaved); one record of kind per in-capsule size.
func benchPoint(k *ktap, kind string, targets []*benchTarget, transport, workload string, size, qd int, d time.Duration, b *guestconf.Bench, seed int64) error {
	pct, err := guestconf.ReadPercent(workload)
	if err != nil {
		return err
	}
	var fds []int
	for i, t := range targets {
		if _, err := sweepRun(t.fd, size, qd, pct, b.Span, ms(b.SweepWarmupMS), seed+int64(i)); err != nil {
			return fmt.Errorf("warm-up at in-capsule size %d: %w", t.inline, err)
		}
		fds = append(fds, t.fd)
	}
	stats, err := interleaved(fds, d, ms(b.SliceMS), func(fd int, d time.Duration, turn int) (sweepStats, error) {
		return sweepRun(fd, size, qd, pct, b.Span, d, seed+int64(1000*turn+fd))
	})
	if err != nil {
		return err
	}
	for i, t := range targets {
		s := stats[i]
		r := &guestconf.BenchRecord{Kind: kind, Transport: transport, InlineDataSize: t.configured, Workload: workload, Size: size, QD: qd,
			IOs: s.IOs(), Seconds: s.Elapsed.Seconds(), IOPS: s.IOPS(), MeanUS: s.MeanUS()}
		k.diag("%s", r.Diagnostic())
	}
	return nil
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// readInline is the port's param_inline_data_size as the kernel reads it
// back (0 when there is none).
func readInline(port string) int {
	b, err := os.ReadFile(filepath.Join(nvmetDir, "ports", port, "param_inline_data_size"))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

func release() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

// clocksource is the kernel's current clocksource (tsc, kvm-clock,
// refined-jiffies, ...).
func clocksource() string {
	b, _ := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	return strings.TrimSpace(string(b))
}

// clockStep is the smallest nonzero step of the monotonic clock seen in
// up to 20 ms of reading it.
func clockStep() time.Duration {
	best := time.Duration(0)
	start := time.Now()
	prev := start
	for {
		now := time.Now()
		if d := now.Sub(prev); d > 0 && (best == 0 || d < best) {
			best = d
		}
		prev = now
		if now.Sub(start) > 20*time.Millisecond {
			return best
		}
	}
}
