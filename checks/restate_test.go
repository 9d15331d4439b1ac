package checks

import (
	"testing"

	"github.com/patchctl/patchctl/checks/findings"
)

// TestRestateReadsNoMessage: "one defect, one report" decides by the
// findings' Subject alone. Findings whose messages say nothing of their
// request or SGE (and findings whose messages would have named the same
// request, with different subjects) are dropped, or kept, by their
// structured fields.
func TestRestateReadsNoMessage(t *testing.T) {
	addr := &findings.Origin{File: "m/a.c", Line: 7, What: "dma_map_single(...)"}
	mk := func(sev, fn string, line int, msg string, s *findings.Subject) Finding {
		return Finding{Rule: RuleInlineSGE, Severity: sev, File: "m/a.c", Line: line, Function: fn, Message: msg, Subject: s}
	}
	fs := []Finding{
		// 0: an error at a post; 1: a warning about the same request at
		// the same post, worded unlike any message of the rule.
		mk(SevError, "xmit", 40, "first wording", &findings.Subject{WR: "wr", SGE: 0, Defect: findings.DefectDMA, Addr: addr}),
		mk(SevWarning, "xmit", 40, "a reworded warning", &findings.Subject{WR: "wr", SGE: 1, Defect: findings.DefectUnknown}),
		// 2: a helper's exit leaving the same SGE with the same
		// address: evidence of 0.
		mk(SevError, "build", 20, "another wording", &findings.Subject{WR: "req.wr", SGE: 0, Defect: findings.DefectDMA, Exit: true, Addr: &findings.Origin{File: "m/a.c", Line: 7, What: "dma_map_single(...)"}}),
		// 3: a helper's exit whose address came from elsewhere: kept,
		// though its message is 0's word for word.
		mk(SevError, "build2", 25, "first wording", &findings.Subject{WR: "req.wr", SGE: 0, Defect: findings.DefectDMA, Exit: true, Addr: &findings.Origin{File: "m/a.c", Line: 9, What: "dma_map_single(...)"}}),
		// 4: a warning worded as the old rule's warnings, about another
		// request at the same line: kept.
		mk(SevWarning, "xmit", 40, "SGE 0 (sge.addr) of inline work request wr: cannot show this SGE holds a kernel virtual address", &findings.Subject{WR: "other", SGE: 0, Defect: findings.DefectUnplaced}),
		// 5: no subject: never folded.
		mk(SevWarning, "xmit", 40, "SGE 0 (sge.addr) of inline work request wr: cannot show", nil),
	}
	out := dropRestatements(fs)
	var msgs []string
	for _, f := range out {
		msgs = append(msgs, f.Function+":"+f.Message)
	}
	want := []string{"xmit:first wording", "build2:first wording", "xmit:SGE 0 (sge.addr) of inline work request wr: cannot show this SGE holds a kernel virtual address", "xmit:SGE 0 (sge.addr) of inline work request wr: cannot show"}
	if len(msgs) != len(want) {
		t.Fatalf("kept %q, want %q", msgs, want)
	}
	for i := range want {
		if msgs[i] != want[i] {
			t.Fatalf("kept %q, want %q", msgs, want)
		}
	}
	ev := out[0].Evidence
	if len(ev) != 2 || ev[0].Message != "also, on another path: a reworded warning" || ev[1].Message != "the request is built by build(), which leaves it here" || ev[1].Line != 20 {
		t.Errorf("evidence of the kept error: %+v", ev)
	}
}
