package main

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/guestconf"
	"golang.org/x/sys/unix"
)

// testFile is a zero-filled file of size bytes opened as the workloads
// open a namespace: O_DIRECT where the file system allows it (tmpfs may
// refuse), buffered otherwise.
func testFile(t *testing.T, size int64) (string, int) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "ns")
	if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := openIO(path, true)
	if err == nil {
		buf, free, _ := alignedBuf(4096)
		_, err = unix.Pread(fd, buf, 0)
		free()
		if err != nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		t.Logf("O_DIRECT not available on %s (%v): buffered I/O", dir, err)
		if fd, err = openIO(path, false); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { unix.Close(fd) })
	return path, fd
}

func TestLatencyRunOnFile(t *testing.T) {
	_, fd := testFile(t, 4<<20)
	start := time.Now()
	lat, err := latencyRun(fd, 4096, 4<<20, 50*time.Millisecond, rand.New(rand.NewSource(1)))
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if len(lat) == 0 || took < 50*time.Millisecond {
		t.Fatalf("%d reads in %s", len(lat), took)
	}
	sum := 0.0
	for _, l := range lat {
		if !(l > 0) {
			t.Fatalf("a read took %v us", l)
		}
		sum += l
	}
	if sum > float64(took.Microseconds()) { // the reads happen within the call, one at a time
		t.Errorf("reads add up to %.0f us in a call of %s", sum, took)
	}
	s := summarize(lat)
	if s.N != len(lat) || s.Min > s.Median || s.Median > s.P99 || s.P99 > s.Max || s.Mean < s.Min || s.Mean > s.Max {
		t.Errorf("summary out of order: %+v", s)
	}
	n := 0
	for _, c := range s.Hist {
		n += c
	}
	if n != len(lat) {
		t.Errorf("histogram holds %d of %d", n, len(lat))
	}
	if _, err := latencyRun(fd, 4096, 1024, time.Millisecond, rand.New(rand.NewSource(1))); err == nil {
		t.Error("a span smaller than the block was accepted")
	}
	if _, err := latencyRun(fd, 1000, 4<<20, time.Millisecond, rand.New(rand.NewSource(1))); err == nil {
		t.Error("a size that is not a multiple of 512 was accepted")
	}
	if _, err := latencyRun(-1, 4096, 4<<20, time.Millisecond, rand.New(rand.NewSource(1))); err == nil {
		t.Error("a bad descriptor read")
	}
}

// TestSummarizeKnown: 1..100 has mean and median 50.5 and p99 (nearest
// rank) 99; an odd count's median is its middle.
func TestSummarizeKnown(t *testing.T) {
	var xs []float64
	for i := 100; i >= 1; i-- {
		xs = append(xs, float64(i))
	}
	s := summarize(xs)
	if s.Mean != 50.5 || s.Median != 50.5 || s.P99 != 99 || s.Min != 1 || s.Max != 100 {
		t.Errorf("%+v", s)
	}
	if s := summarize([]float64{3, 1, 2}); s.Median != 2 || s.P99 != 3 {
		t.Errorf("%+v", s)
	}
	if s := summarize(nil); s.N != 0 || s.Mean != 0 {
		t.Errorf("empty: %+v", s)
	}
	if s := summarize([]float64{0.5, 5, 500}); s.Hist[guestconf.Bucket(0.5)] != 1 || s.Hist[guestconf.Bucket(500)] != 1 || guestconf.BucketLower(guestconf.Bucket(500)) > 500 || guestconf.BucketLower(guestconf.Bucket(500)+1) <= 500 {
		t.Errorf("buckets: %+v", s.Hist)
	}
}

// TestSweepRunOnFile: random writes write random data (the file is no
// longer zeros), a 70/30 mix reads about 70 % of the time, and every
// worker's I/Os are counted.
func TestSweepRunOnFile(t *testing.T) {
	path, fd := testFile(t, 8<<20)
	s, err := sweepRun(fd, 8192, 4, 0, 8<<20, 60*time.Millisecond, 7)
	if err != nil {
		t.Fatal(err)
	}
	if s.Reads != 0 || s.Writes < 4 || !(s.IOPS() > 0) || !(s.MeanUS() > 0) || s.Elapsed < 60*time.Millisecond {
		t.Errorf("randwrite: %+v, %v IOPS", s, s.IOPS())
	}
	unix.Fsync(fd)
	// The writes landed: some 8K blocks now hold data, no more blocks
	// than writes, each filled by a whole write (random data has a zero
	// byte only one time in 256).
	b, _ := os.ReadFile(path)
	written := 0
	for off := 0; off+8192 <= len(b); off += 8192 {
		blk := b[off : off+8192]
		if z := bytes.Count(blk, []byte{0}); z < len(blk) {
			written++
			if z > len(blk)/16 {
				t.Errorf("the block at %d is partly written: %d zero bytes", off, z)
			}
		}
	}
	if written == 0 || written > s.Writes {
		t.Errorf("%d blocks written by %d writes", written, s.Writes)
	}
	// At least 400 I/Os of the mix, however slow the machine: reads
	// within 0.6-0.8 is 4 standard deviations of a binomial at 0.7.
	var mix sweepStats
	for seed := int64(8); mix.IOs() < 400 && seed < 1000; seed++ {
		s, err := sweepRun(fd, 4096, 3, 70, 8<<20, 50*time.Millisecond, seed)
		if err != nil {
			t.Fatal(err)
		}
		mix.Reads, mix.Writes = mix.Reads+s.Reads, mix.Writes+s.Writes
	}
	if r := float64(mix.Reads) / float64(mix.IOs()); mix.IOs() < 400 || r < 0.6 || r > 0.8 {
		t.Errorf("70/30 mix: %d reads of %d", mix.Reads, mix.IOs())
	}
	for _, bad := range []struct{ qd, pct int }{{0, 0}, {2, 101}, {2, -1}} {
		if _, err := sweepRun(fd, 4096, bad.qd, bad.pct, 8<<20, time.Millisecond, 1); err == nil {
			t.Errorf("qd %d, %d %% reads accepted", bad.qd, bad.pct)
		}
	}
	if _, err := sweepRun(-1, 4096, 2, 50, 8<<20, time.Millisecond, 1); err == nil || !strings.Contains(err.Error(), "bytes at") {
		t.Errorf("a bad descriptor: %v", err)
	}
}

// TestInterleavedABBA: turns go 0 1 2, 2 1 0, ... until each device had
// its time, and the totals are each device's own.
func TestInterleavedABBA(t *testing.T) {
	var order []int
	got, err := interleaved([]int{10, 11, 12}, 40*time.Millisecond, 10*time.Millisecond, func(fd int, d time.Duration, turn int) (sweepStats, error) {
		order = append(order, fd)
		return sweepStats{Reads: fd, Writes: 1, Elapsed: d, SumUS: float64(fd)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []int{10, 11, 12, 12, 11, 10, 10, 11, 12, 12, 11, 10}
	if len(order) != len(want) {
		t.Fatalf("order %v", order)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v, want %v", order, want)
		}
	}
	for i, s := range got {
		if s.Reads != 4*(10+i) || s.Writes != 4 || s.Elapsed != 40*time.Millisecond {
			t.Errorf("device %d: %+v", i, s)
		}
	}
	boom := errors.New("boom")
	if _, err := interleaved([]int{1, 2}, time.Second, 0, func(int, time.Duration, int) (sweepStats, error) { return sweepStats{}, boom }); !errors.Is(err, boom) {
		t.Errorf("error lost: %v", err)
	}
}

// TestBenchPlan: the plan names every test the bench boot reports, each
// once, in the order the agent runs them.
func TestBenchPlan(t *testing.T) {
	b := &guestconf.Bench{LatencyBlock: 4096, InlineSizes: []int{16384, 4096}, Workloads: []string{guestconf.RandWrite, guestconf.RandRW70},
		Sizes: []int{512, 8192}, SelfCheckMS: 100, SelfCheckSize: 8192}
	got := strings.Join(benchPlan(b), " ")
	want := "link target_inline16k connect_inline16k target_inline4k connect_inline4k latency_randread_4k selfcheck_randwrite_8k " +
		"randwrite_512 randwrite_8k randrw70_512 randrw70_8k disconnect teardown dmesg"
	if got != want {
		t.Errorf("plan:\n%s\nwant:\n%s", got, want)
	}
	b.SelfCheckMS = 0
	if strings.Contains(strings.Join(benchPlan(b), " "), "selfcheck") {
		t.Error("a self-check of 0 ms is planned")
	}
}

// TestBenchRecordRoundTrip: what the agent prints, the host reads back.
func TestBenchRecordRoundTrip(t *testing.T) {
	r := latencyRecord("rxe", 16384, 4096, 0, []float64{100, 200, 300}, 0.5, true)
	back, ok := guestconf.ParseBench(r.Diagnostic())
	if !ok || back.MeanUS != 200 || back.MedianUS != 200 || back.P99US != 300 || back.IOs != 3 || back.IOPS != 6 || len(back.Hist) == 0 {
		t.Errorf("%+v %v", back, ok)
	}
	if _, ok := guestconf.ParseBench(`patchctl-bench: {"kind":"latency","mean_us":-1}`); ok {
		t.Error("a negative latency was read")
	}
	if _, ok := guestconf.ParseBench("patchctl-evidence: {}"); ok {
		t.Error("another diagnostic was read as a bench record")
	}
}
