package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sync"
	"time"

	"github.com/patchctl/patchctl/internal/guestconf"
	"golang.org/x/sys/unix"
)

// The bench's workloads: the I/O done by the agent itself, timed per I/O
// with Go's monotonic clock (CLOCK_MONOTONIC, read through the vDSO). They
// work on any file or block device, so the tests run them on a local file.

// openIO opens path for the workloads: read-write, O_DIRECT when direct
// (every I/O then reaches the device, as fio's direct=1).
func openIO(path string, direct bool) (int, error) {
	flags := unix.O_RDWR | unix.O_CLOEXEC
	if direct {
		flags |= unix.O_DIRECT
	}
	fd, err := unix.Open(path, flags, 0)
	if err != nil {
		return -1, fmt.Errorf("open %s (direct %v): %w", path, direct, err)
	}
	return fd, nil
}

// alignedBuf is a page-aligned buffer of size bytes (O_DIRECT wants the
// buffer aligned to the logical block), from mmap.
func alignedBuf(size int) ([]byte, func(), error) {
	n := (size + 4095) &^ 4095
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap %d bytes: %w", n, err)
	}
	return b[:size], func() { unix.Munmap(b[:n]) }, nil
}

// randomOffset is a size-aligned offset in [0, span).
func randomOffset(rng *rand.Rand, span int64, size int) int64 {
	return rng.Int63n(span/int64(size)) * int64(size)
}

func checkSpan(span int64, size int) error {
	if size <= 0 || size%512 != 0 {
		return fmt.Errorf("I/O size %d: want a positive multiple of 512", size)
	}
	if span < int64(size) {
		return fmt.Errorf("span %d is smaller than the I/O size %d", span, size)
	}
	return nil
}

// latencyRun reads size bytes at random aligned offsets in [0, span), one
// at a time (queue depth 1), until d has passed, and returns each read's
// latency in microseconds.
func latencyRun(fd int, size int, span int64, d time.Duration, rng *rand.Rand) ([]float64, error) {
	if err := checkSpan(span, size); err != nil {
		return nil, err
	}
	buf, free, err := alignedBuf(size)
	if err != nil {
		return nil, err
	}
	defer free()
	lat := make([]float64, 0, 4096)
	end := time.Now().Add(d)
	for {
		off := randomOffset(rng, span, size)
		t0 := time.Now()
		n, err := unix.Pread(fd, buf, off)
		t1 := time.Now()
		if err != nil || n != size {
			return lat, fmt.Errorf("read %d bytes at %d: n=%d: %w", size, off, n, errOr(err))
		}
		lat = append(lat, float64(t1.Sub(t0).Nanoseconds())/1e3)
		if !t1.Before(end) {
			return lat, nil
		}
	}
}

func errOr(err error) error {
	if err == nil {
		return errors.New("short transfer")
	}
	return err
}

// latencySummary is a sample of per-I/O latencies summarized: mean,
// median (the middle two averaged for an even count), p99 (nearest rank)
// and the log-spaced histogram (guestconf.Bucket).
type latencySummary struct {
	N                 int
	Mean, Median, P99 float64
	Hist              map[int]int
	Sum, Min, Max     float64
}

func summarize(lat []float64) latencySummary {
	s := latencySummary{N: len(lat), Hist: map[int]int{}}
	if len(lat) == 0 {
		return s
	}
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	for _, v := range sorted {
		s.Sum += v
		s.Hist[guestconf.Bucket(v)]++
	}
	n := len(sorted)
	s.Mean = s.Sum / float64(n)
	if n%2 == 1 {
		s.Median = sorted[n/2]
	} else {
		s.Median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	rank := int(math.Ceil(0.99 * float64(n))) // nearest rank, 1-based
	s.P99 = sorted[max(rank, 1)-1]
	s.Min, s.Max = sorted[0], sorted[n-1]
	return s
}

// sweepStats is what one sweep point measured.
type sweepStats struct {
	Reads, Writes int
	Elapsed       time.Duration
	SumUS         float64 // of every I/O's latency
}

// IOs is the number of I/Os done.
func (s sweepStats) IOs() int { return s.Reads + s.Writes }

// IOPS is I/Os per second of wall time.
func (s sweepStats) IOPS() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.IOs()) / s.Elapsed.Seconds()
}

// MeanUS is the mean latency of one I/O in microseconds.
func (s sweepStats) MeanUS() float64 {
	if s.IOs() == 0 {
		return 0
	}
	return s.SumUS / float64(s.IOs())
}

// sweepRun keeps qd I/Os of size bytes in flight on fd (one goroutine
// each: pread and pwrite block their thread, so the kernel holds qd
// requests) for d: readPct percent reads, the rest writes of random data,
// at random aligned offsets in [0, span). Every goroutine has its own
// buffer and random source (seeded from seed), so a run is repeatable in
// what it asks for.
func sweepRun(fd int, size, qd, readPct int, span int64, d time.Duration, seed int64) (sweepStats, error) {
	if err := checkSpan(span, size); err != nil {
		return sweepStats{}, err
	}
	if qd < 1 || readPct < 0 || readPct > 100 {
		return sweepStats{}, fmt.Errorf("queue depth %d, reads %d %%: want a depth of 1 or more and 0-100 %%", qd, readPct)
	}
	type part struct {
		s   sweepStats
		err error
	}
	parts := make([]part, qd)
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	for w := 0; w < qd; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			p := &parts[w]
			buf, free, err := alignedBuf(size)
			if err != nil {
				p.err = err
				return
			}
			defer free()
			rng := rand.New(rand.NewSource(seed + int64(w)*7919))
			rng.Read(buf)
			for {
				off := randomOffset(rng, span, size)
				read := rng.Intn(100) < readPct
				t0 := time.Now()
				var n int
				if read {
					n, err = unix.Pread(fd, buf, off)
				} else {
					n, err = unix.Pwrite(fd, buf, off)
				}
				t1 := time.Now()
				if err != nil || n != size {
					op := "write"
					if read {
						op = "read"
					}
					p.err = fmt.Errorf("%s %d bytes at %d: n=%d: %w", op, size, off, n, errOr(err))
					return
				}
				p.s.SumUS += float64(t1.Sub(t0).Nanoseconds()) / 1e3
				if read {
					p.s.Reads++
				} else {
					p.s.Writes++
				}
				if !t1.Before(end) {
					return
				}
			}
		}(w)
	}
	wg.Wait()
	var tot sweepStats
	tot.Elapsed = time.Since(start)
	for _, p := range parts {
		if p.err != nil {
			return tot, p.err
		}
		tot.Reads += p.s.Reads
		tot.Writes += p.s.Writes
		tot.SumUS += p.s.SumUS
	}
	return tot, nil
}

// interleaved measures one sweep point on several devices at once, in
// turns of slice: device 0, 1, ..., then the reverse (ABBA), until each
// had d, so that what changes on the host during the point (its load, the
// other VMs) falls on every device alike. It returns each device's
// totals.
func interleaved(fds []int, d, slice time.Duration, run func(fd int, d time.Duration, turn int) (sweepStats, error)) ([]sweepStats, error) {
	out := make([]sweepStats, len(fds))
	if slice <= 0 || slice > d {
		slice = d
	}
	turns := int((d + slice - 1) / slice)
	for t := 0; t < turns; t++ {
		for j := range fds {
			i := j
			if t%2 == 1 {
				i = len(fds) - 1 - j
			}
			s, err := run(fds[i], slice, t)
			if err != nil {
				return out, err
			}
			out[i].Reads += s.Reads
			out[i].Writes += s.Writes
			out[i].Elapsed += s.Elapsed
			out[i].SumUS += s.SumUS
		}
	}
	return out, nil
}
