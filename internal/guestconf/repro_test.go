package guestconf

import "testing"

// TestJudgeRepro: the outcome comes from the log after the switch was
// armed and the write's result; the typed line round-trips.
func TestJudgeRepro(t *testing.T) {
	sent := "[  7.1] nvme_rdma: patchctl-repro: in-capsule write with SGL offset 0xfffffffffffff000, length 4096: off + len wraps to 0"
	for _, c := range []struct {
		name     string
		log      []string
		writeErr string
		want     string
	}{
		{"KASAN report", []string{sent, "[  7.2] BUG: KASAN: wild-memory-access in nvmet_rdma_use_inline_sg+0x1a/0x2c0"}, "no completion within 20s", ReproShown},
		{"fault without KASAN", []string{sent, "[  7.2] general protection fault, probably for non-canonical address 0xdffffc0000000000"}, "no completion within 20s", ReproShown},
		{"fix: rejected", []string{sent, "[  7.2] nvmet_rdma: invalid inline data offset!"}, "write 4096 bytes: n=-1 input/output error", ReproRejected},
		{"write went through", []string{sent}, "", ReproNotReached},
		{"switch never fired", nil, "write 4096 bytes: n=-1 input/output error", ReproNotReached},
	} {
		r := JudgeRepro(c.log, c.writeErr)
		if r.Outcome != c.want {
			t.Errorf("%s: outcome %s, want %s", c.name, r.Outcome, c.want)
		}
		if r.OK() != (c.want != ReproNotReached) {
			t.Errorf("%s: OK %v", c.name, r.OK())
		}
		back, ok := ParseRepro("    # " + r.Line())
		if !ok || *back != *r {
			t.Errorf("%s: %q read back as %+v", c.name, r.Line(), back)
		}
	}
	// The log buffer's level prefix is not part of the report's words.
	r := JudgeRepro([]string{sent, "<3>[    5.996323] UBSAN: array-index-out-of-bounds in drivers/nvme/target/rdma.c:839:27"}, "")
	if r.Outcome != ReproShown || r.Splat != "[    5.996323] UBSAN: array-index-out-of-bounds in drivers/nvme/target/rdma.c:839:27" {
		t.Errorf("splat %q", r.Splat)
	}
	if _, ok := ParseRepro("# patchctl-evidence: {}"); ok {
		t.Error("another typed line read as the reproducer's")
	}
}
