package ktap

import "testing"

const console = `[    1.234] Run /init as init process
patchctl-agent: started after 5ms, transports rxe,siw
KTAP version 1
1..2
    KTAP version 1
    # Subtest: rxe
    1..3
    ok 1 link
[    2.100] nvmet: adding nsid 1 to subsystem nqn.patchctl
    # port param_inline_data_size=16384
    ok 2 write_read_16k
    # inline_evidence: expected every capsule SEND inline, 3 were by reference
    not ok 3 inline_evidence
not ok 1 rxe
    KTAP version 1
    # Subtest: siw
    1..3
    ok 1 link
    ok 2 write_read_16k # SKIP not connected
    ok 3 inline_evidence
ok 2 siw
patchctl-agent: done
`

func TestParseNested(t *testing.T) {
	r := Parse(console)
	if r == nil || r.Plan != 2 || len(r.Subtests) != 2 {
		t.Fatalf("root %+v", r)
	}
	rxe := r.Find("rxe")
	if rxe == nil || rxe.OK || rxe.Number != 1 || len(rxe.Subtests) != 3 || rxe.Plan != 3 {
		t.Fatalf("rxe %+v", rxe)
	}
	if d := rxe.Subtests[1].Diagnostics; len(d) != 1 || d[0] != "port param_inline_data_size=16384" {
		t.Errorf("diagnostics of write_read_16k: %q", d)
	}
	if ev := rxe.Find("inline_evidence"); ev.OK || len(ev.Diagnostics) != 1 {
		t.Errorf("inline_evidence %+v", ev)
	}
	siw := r.Find("siw")
	if !siw.OK || !siw.Subtests[1].Skip || siw.Subtests[1].Diagnostics[0] != "not connected" {
		t.Errorf("siw %+v", siw.Subtests[1])
	}
	if c := r.Count(); c != (Counts{Pass: 4, Fail: 1, Skip: 1}) {
		t.Errorf("counts %+v", c)
	}
	if !r.Complete() {
		t.Error("complete document reported incomplete")
	}
}

func TestParseCutShort(t *testing.T) {
	r := Parse("KTAP version 1\n1..2\n    KTAP version 1\n    # Subtest: rxe\n    1..5\n    ok 1 link\n")
	if r == nil || r.Complete() {
		t.Errorf("a cut-short run must be incomplete: %+v", r)
	}
	if Parse("no ktap here\n") != nil {
		t.Error("found KTAP in plain text")
	}
	if r := Parse("KTAP version 1\n1..1\nBail out! network: no eth0\n"); r == nil || r.Bail != "network: no eth0" {
		t.Errorf("bail: %+v", r)
	}
}

// TestNilHasNoTests: a boot whose guest printed no KTAP (the kernel
// panicked before the agent ran) has a nil Test; counting, completeness
// and lookup of it answer instead of dereferencing it (the run's boot
// stage counts every boot's results).
func TestNilHasNoTests(t *testing.T) {
	var none *Test
	if c := none.Count(); c != (Counts{}) {
		t.Errorf("Count of no KTAP: %+v", c)
	}
	if none.Complete() {
		t.Error("no KTAP is complete")
	}
	if none.Find("rxe") != nil {
		t.Error("Find in no KTAP found a test")
	}
}
