package guestconf

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Bench makes the agent run patchctl bench's workloads instead of the
// boot tests: the I/O itself, timed in the guest, no fio.
type Bench struct {
	// Latency: random O_DIRECT reads of LatencyBlock bytes at queue
	// depth 1, after WarmupMS of the same, for Reps repetitions of
	// LatencyMS each, at the port's in-capsule size LatencyInline.
	LatencyBlock  int `json:"latency_block"`
	LatencyMS     int `json:"latency_ms"`
	Reps          int `json:"reps"`
	WarmupMS      int `json:"warmup_ms"`
	LatencyInline int `json:"latency_inline"`
	// Sweep (seed 003): each workload at each size for SweepMS per
	// in-capsule size after SweepWarmupMS, QueueDepth I/Os in flight (one
	// goroutine each, with O_DIRECT). Every in-capsule size has its own
	// subsystem and port (param_inline_data_size), all connected at once
	// and exporting the one null_blk, and a point measures them in turns
	// of SliceMS (ABBA), so that they share what the host does meanwhile.
	Workloads     []string `json:"workloads"`
	Sizes         []int    `json:"sizes"`
	InlineSizes   []int    `json:"inline_sizes"`
	SweepMS       int      `json:"sweep_ms"`
	SweepWarmupMS int      `json:"sweep_warmup_ms"`
	SliceMS       int      `json:"slice_ms"`
	QueueDepth    int      `json:"queue_depth"`
	// SelfCheck: SelfCheckSize random writes at queue depth 1 on every
	// in-capsule size in turns of SliceMS, SelfCheckMS each, after
	// SweepWarmupMS: the known effect (with 4K in-capsule data an 8K
	// write makes the target RDMA READ it), measured where nothing but
	// the round trip differs. 0 ms: not measured.
	SelfCheckSize int `json:"self_check_size"`
	SelfCheckMS   int `json:"self_check_ms"`
	// Span is the part of the namespace the random offsets fall in
	// (null_blk is memory-backed: writes allocate guest memory).
	Span int64 `json:"span"`
	Seed int64 `json:"seed"`
}

// Workloads of the in-capsule sweep.
const (
	RandWrite = "randwrite" // random writes
	RandRW70  = "randrw70"  // random, 70 % reads, 30 % writes
)

// ReadPercent is the share of reads of a sweep workload.
func ReadPercent(workload string) (int, error) {
	switch workload {
	case RandWrite:
		return 0, nil
	case RandRW70:
		return 70, nil
	}
	return 0, fmt.Errorf("bench workload %q: want %s or %s", workload, RandWrite, RandRW70)
}

// BenchTag starts the KTAP diagnostic line that carries one measurement
// as JSON: "# patchctl-bench: {...}".
const BenchTag = "patchctl-bench: "

// BenchRecord is one measurement the agent reports.
type BenchRecord struct {
	Kind      string `json:"kind"` // "env", "latency", "sweep" or "selfcheck"
	Transport string `json:"transport"`
	// Env: what the guest sees.
	CPUs        int    `json:"cpus,omitempty"`
	Kernel      string `json:"kernel,omitempty"`
	Clocksource string `json:"clocksource,omitempty"` // what CLOCK_MONOTONIC runs on
	// ClockStepNS is the smallest step the guest saw its monotonic clock
	// take (a jiffies clock steps by milliseconds).
	ClockStepNS int64 `json:"clock_step_ns,omitempty"`
	// InlineDataSize is the port's param_inline_data_size as read back.
	InlineDataSize int `json:"inline_data_size,omitempty"`
	// Latency and sweep.
	Workload string  `json:"workload,omitempty"` // "randread" for latency
	Size     int     `json:"size,omitempty"`
	QD       int     `json:"qd,omitempty"`
	Rep      int     `json:"rep,omitempty"`
	IOs      int     `json:"ios,omitempty"`
	Seconds  float64 `json:"seconds,omitempty"`
	IOPS     float64 `json:"iops,omitempty"`
	MeanUS   float64 `json:"mean_us,omitempty"`
	MedianUS float64 `json:"median_us,omitempty"`
	P99US    float64 `json:"p99_us,omitempty"`
	// Hist counts latencies by Bucket (latency only).
	Hist map[int]int `json:"hist,omitempty"`
}

// Diagnostic is the KTAP diagnostic text (without "# ") carrying r.
func (r *BenchRecord) Diagnostic() string {
	b, _ := json.Marshal(r)
	return BenchTag + string(b)
}

// ParseBench reads a diagnostic that Diagnostic wrote; ok is false for
// any other line, and for a record whose figures are not finite.
func ParseBench(diag string) (*BenchRecord, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(diag), BenchTag)
	if !ok {
		return nil, false
	}
	var r BenchRecord
	if err := json.Unmarshal([]byte(rest), &r); err != nil {
		return nil, false
	}
	for _, f := range []float64{r.Seconds, r.IOPS, r.MeanUS, r.MedianUS, r.P99US} {
		if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return nil, false
		}
	}
	return &r, true
}

// BucketsPerDecade is the latency histogram's resolution: buckets are
// log-spaced, bucket i holding [10^(i/B), 10^((i+1)/B)) microseconds.
const BucketsPerDecade = 20

// Bucket is the histogram bucket of a latency in microseconds (0 for
// anything at or below 1 us).
func Bucket(us float64) int {
	if !(us > 1) {
		return 0
	}
	b := int(math.Floor(math.Log10(us) * BucketsPerDecade))
	return min(b, 10*BucketsPerDecade) // 10^10 us: nothing lasts longer
}

// BucketLower is bucket i's lower edge in microseconds.
func BucketLower(i int) float64 { return math.Pow(10, float64(i)/BucketsPerDecade) }
