package main

import (
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/guestconf"
)

func testConfig() *Config {
	return &Config{CapsuleSize: 64,
		Opcodes: map[string]int{"SEND": 2, "REG_MR": 11, "LOCAL_INV": 10, "RDMA_WRITE": 0, "RDMA_READ": 4},
		Flags:   map[string]int{"INLINE": 8, "SIGNALED": 2}}
}

// A trace as tracefs prints it: the probe's fields for the request and
// the one chained after it.
const trace = `# tracer: nop
#
 kworker/0:1H-52 [000] .....  12.1: post_rxe: (rxe_post_send+0x0/0x5a0) op0=11 fl0=0 n0=0 len0=1012023304 op1=2 fl1=10 n1=1 len1=64
 kworker/0:1H-52 [000] .....  12.2: post_rxe: (rxe_post_send+0x0/0x5a0) op0=2 fl0=2 n0=1 len0=64 op1=7 fl1=99 n1=-3 len1=5
 kworker/0:1H-52 [000] .....  12.3: post_rxe: (rxe_post_send+0x0/0x5a0) op0=2 fl0=2 n0=2 len0=64 op1=0 fl1=0 n1=0 len1=0
 kworker/0:1H-52 [000] .....  12.4: post_siw: (siw_post_send+0x0/0x5a0) op0=2 fl0=10 n0=1 len0=64 op1=0 fl1=0 n1=0 len1=0
 kworker/0:1H-52 [000] .....  12.5: post_rxe: (rxe_post_send+0x0/0x5a0) op0=10 fl0=0 n0=0 len0=77 op1=2 fl1=2 n1=1 len1=64
`

func TestParseTraceAndEvidence(t *testing.T) {
	cfg := testConfig()
	wrs, err := parseTrace(strings.NewReader(trace), cfg, "rxe")
	if err != nil {
		t.Fatal(err)
	}
	// REG_MR and LOCAL_INV chains are followed; a SEND's garbage "next"
	// is not; siw's line is another transport's.
	want := []wr{{11, 0, 0, 0}, {2, 10, 1, 64}, {2, 2, 1, 64}, {2, 2, 2, 64}, {10, 0, 0, 0}, {2, 2, 1, 64}}
	if len(wrs) != len(want) {
		t.Fatalf("got %v, want %v", wrs, want)
	}
	for i := range want {
		if wrs[i] != want[i] {
			t.Errorf("wr %d: got %+v, want %+v", i, wrs[i], want[i])
		}
	}
	ev := evidence(cfg, "rxe", wrs)
	if ev.Inline != 1 || ev.ByRef != 2 {
		t.Errorf("inline %d by reference %d, want 1 and 2 (a 2-SGE SEND carries in-capsule data)", ev.Inline, ev.ByRef)
	}
	for _, w := range ev.WRs {
		if w.NumSGE == 0 && w.Len0 != 0 {
			t.Errorf("a request without SGEs reports len0=%d", w.Len0)
		}
	}
	back, ok := guestconf.ParseEvidence(ev.Diagnostic())
	if !ok || back.Inline != ev.Inline || back.ByRef != ev.ByRef || len(back.WRs) != len(ev.WRs) {
		t.Errorf("round trip: %+v %v", back, ok)
	}
	if err := guestconf.JudgeInline(ev, guestconf.ExpectInline); err == nil {
		t.Error("a mix of inline and by-reference SENDs passed as all inline")
	}
	if err := guestconf.JudgeInline(ev, guestconf.ExpectNone); err == nil {
		t.Error("an inline SEND passed as none inline")
	}
	if err := guestconf.JudgeInline(&guestconf.Evidence{}, guestconf.ExpectNone); err == nil {
		t.Error("no SEND at all passed")
	}
	if err := guestconf.JudgeInline(&guestconf.Evidence{Inline: 3}, guestconf.ExpectInline); err != nil {
		t.Error(err)
	}
}

// kernelConfigs are the opcode and send-flag enums wrLayout reads from a
// build's DWARF: enum ib_wr_opcode follows the uapi's ib_uverbs_wr_opcode
// on both kernels (internal/boot's TestRealEnumNames checks these values
// against the 6.12 build).
func kernelConfigs() map[string]*Config {
	ops := map[string]int{"RDMA_WRITE": 0, "RDMA_WRITE_WITH_IMM": 1, "SEND": 2, "SEND_WITH_IMM": 3, "RDMA_READ": 4,
		"ATOMIC_CMP_AND_SWP": 5, "ATOMIC_FETCH_AND_ADD": 6, "BIND_MW": 8, "LSO": 10, "SEND_WITH_INV": 9,
		"RDMA_READ_WITH_INV": 11, "LOCAL_INV": 7, "MASKED_ATOMIC_CMP_AND_SWP": 12, "MASKED_ATOMIC_FETCH_AND_ADD": 13,
		"REG_MR": 0x20, "REG_MR_INTEGRITY": 0x21}
	fl := map[string]int{"FENCE": 1, "SIGNALED": 2, "SOLICITED": 4, "INLINE": 8, "IP_CSUM": 16}
	// 6.12 itself: traces recorded on these kernels
	return map[string]*Config{"6.12": {CapsuleSize: 64, Opcodes: ops, Flags: fl}, "6.1": {CapsuleSize: 64, Opcodes: ops, Flags: fl}}
}

// traces are what the probes record on each kernel: on 6.1 over siw the
// REG_MR requests have no SGE and the probe reads garbage where one would
// be (len0=1012023304).
var traces = map[string]string{
	// 6.12 itself: a trace recorded on it
	"6.12": ` kworker/0:1H-52 [000] ..... 12.1: post_rxe: (rxe_post_send+0x0/0x5a0) op0=32 fl0=0 n0=0 len0=0 op1=2 fl1=10 n1=1 len1=64
 kworker/0:1H-52 [000] ..... 12.2: post_rxe: (rxe_post_send+0x0/0x5a0) op0=2 fl0=10 n0=1 len0=64 op1=0 fl1=0 n1=0 len1=0
 kworker/0:1H-52 [000] ..... 12.3: post_rxe: (rxe_post_send+0x0/0x5a0) op0=2 fl0=10 n0=2 len0=64 op1=0 fl1=0 n1=0 len1=0
 kworker/0:1H-52 [000] ..... 12.4: post_rxe: (rxe_post_send+0x0/0x5a0) op0=7 fl0=2 n0=0 len0=0 op1=2 fl1=10 n1=1 len1=64
`,
	"6.1": ` kworker/0:1H-52 [000] ..... 12.1: post_siw: (siw_post_send+0x0/0x5a0) op0=32 fl0=0 n0=0 len0=1012023304 op1=2 fl1=2 n1=1 len1=64
 kworker/0:1H-52 [000] ..... 12.2: post_siw: (siw_post_send+0x0/0x5a0) op0=32 fl0=0 n0=0 len0=1012023304 op1=2 fl1=2 n1=1 len1=64
 kworker/0:1H-52 [000] ..... 12.3: post_siw: (siw_post_send+0x0/0x5a0) op0=2 fl0=3 n0=1 len0=64 op1=0 fl1=0 n1=0 len1=0
 kworker/0:1H-52 [000] ..... 12.4: post_siw: (siw_post_send+0x0/0x5a0) op0=99 fl0=64 n0=1 len0=4096 op1=0 fl1=0 n1=0 len1=0
`,
}

// TestEvidenceNamesOn612And61: the evidence lines name opcodes and flags
// (unknown ones stay numeric), mark the host's command capsules, and a
// request without SGEs prints no length, on both kernels' traces.
func TestEvidenceNamesOn612And61(t *testing.T) {
	want := map[string][]string{
		// 6.12 itself: a trace recorded on it
		"6.12": {
			"LOCAL_INV flags=IB_SEND_SIGNALED sge=0 count=1",
			"REG_MR    flags=0 sge=0 count=1",
			"SEND      flags=IB_SEND_SIGNALED|IB_SEND_INLINE sge=1 len0=64 count=3  <- the host's command capsules",
			"SEND      flags=IB_SEND_SIGNALED|IB_SEND_INLINE sge=2 len0=64 count=1",
		},
		"6.1": {
			"REG_MR    flags=0 sge=0 count=2",
			"SEND      flags=IB_SEND_SIGNALED sge=1 len0=64 count=2  <- the host's command capsules",
			"SEND      flags=IB_SEND_FENCE|IB_SEND_SIGNALED sge=1 len0=64 count=1  <- the host's command capsules",
			"op99      flags=0x40 sge=1 len0=4096 count=1",
		},
	}
	for k, cfg := range kernelConfigs() {
		// 6.12 itself: the traces' providers
		tr := map[string]string{"6.12": "rxe", "6.1": "siw"}[k]
		wrs, err := parseTrace(strings.NewReader(traces[k]), cfg, tr)
		if err != nil {
			t.Fatal(err)
		}
		ev := evidence(cfg, tr, wrs)
		var got []string
		for _, w := range ev.WRs {
			got = append(got, w.String())
			if strings.Contains(w.String(), "1012023304") {
				t.Errorf("%s: an impossible length printed: %s", k, w)
			}
		}
		if strings.Join(got, "\n") != strings.Join(want[k], "\n") {
			t.Errorf("%s evidence:\n%s\nwant:\n%s", k, strings.Join(got, "\n"), strings.Join(want[k], "\n"))
		}
	}
}

// TestNewDevice: the configfs null_blk disk is the one new nullb disk
// (5.10 names it nullb<N>, later kernels after the configfs folder);
// none or several is no answer.
func TestNewDevice(t *testing.T) {
	before := map[string]bool{"nullb0": true, "vda": true}
	for _, c := range []struct {
		after []string
		want  string
	}{
		{[]string{"nullb0", "vda", "nullb1"}, "nullb1"},
		{[]string{"nullb0", "vda", "patchctl"}, "patchctl"},
		{[]string{"nullb0", "vda"}, ""},
		{[]string{"nullb0", "vda", "nullb1", "nullb2"}, ""},
		{[]string{"nullb0", "vda", "loop0"}, ""},
	} {
		after := map[string]bool{}
		for _, n := range c.after {
			after[n] = true
		}
		if got := newDevice(before, after); got != c.want {
			t.Errorf("after %v: %q, want %q", c.after, got, c.want)
		}
	}
}
