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
