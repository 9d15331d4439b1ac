package boot

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/vocab"
)

// reproRun is a passing run followed by the reproducer's test, its
// console markers and what the kernel logged in between.
func reproRun(outcome string, kernel ...string) string {
	r := &guestconf.Repro{Name: guestconf.ReproTest, Transport: "rxe", Outcome: outcome, Sent: true, Write: "write 4096 bytes: n=-1 input/output error"}
	ok := "ok"
	if !r.OK() {
		ok = "not ok"
	}
	if outcome == guestconf.ReproShown {
		r.Splat = "[   7.2] BUG: KASAN: wild-memory-access in nvmet_rdma_use_inline_sg+0x1a/0x2c0 [nvmet_rdma]"
	}
	run := strings.Replace(passingRun, "KTAP version 1\n1..1\n", "KTAP version 1\n1..2\n", 1)
	run = strings.Replace(run, "patchctl-agent: done", guestconf.ReproBeginLine+" incapsule over rxe\n[   7.1] nvme_rdma: patchctl-repro: in-capsule write with SGL offset 0xfffffffffffff000, length 4096: off + len wraps to 0\n"+
		strings.Join(kernel, "\n")+"\n# "+r.Line()+"\n"+ok+" 2 "+guestconf.ReproTest+"\n"+guestconf.ReproEndLine+"\npatchctl-agent: done", 1)
	return run
}

// TestReproducerOutcomes: the kernel's report inside the reproducer's
// markers is its outcome (the known pre-existing defect), not the boot's
// failure; the same report outside them still fails the boot; a target
// that rejected the offset passes; a reproducer that tested nothing
// fails; and one the image cannot run is refused before booting.
func TestReproducerOutcomes(t *testing.T) {
	ctx := context.Background()
	kasan := []string{"[   7.2] ==================================================================", "[   7.2] BUG: KASAN: wild-memory-access in nvmet_rdma_use_inline_sg+0x1a/0x2c0 [nvmet_rdma]", "[   7.2] Write of size 4 at addr 1fff888104a1e208 by task kworker/0:2/95"}
	o := func(script string) Options {
		x := opts(t, fakeQEMU(t, script))
		x.Harness, x.Reproduce = []string{"dma-faithful/ib_virt_dma_to_ptr", "incapsule-wrap/nvme-rdma-wrap-icdoff"}, vocab.ReproIncapsule
		return x
	}
	res, err := Run(ctx, o(reproRun(guestconf.ReproShown, kasan...)))
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != vocab.Pass || len(res.Splats) != 0 || len(res.KnownSplats) != 1 || res.Repro == nil || res.Repro.Outcome != guestconf.ReproShown ||
		!strings.Contains(res.Reason, "known pre-existing defect") || !strings.Contains(res.Reason, "nvmet_rdma_use_inline_sg") {
		t.Errorf("defect shown: %s %q splats %v known %v", res.Verdict, res.Reason, res.Splats, res.KnownSplats)
	}
	// The same report before the reproducer began fails the boot.
	early := strings.Replace(reproRun(guestconf.ReproShown), "patchctl-agent: started after 3ms, transports rxe", "patchctl-agent: started after 3ms, transports rxe\n"+strings.Join(kasan, "\n"), 1)
	if res, err = Run(ctx, o(early)); err != nil {
		t.Fatal(err)
	}
	if res.Verdict != vocab.Fail || len(res.Splats) != 1 {
		t.Errorf("a report outside the reproducer: %s %q", res.Verdict, res.Reason)
	}
	if res, err = Run(ctx, o(reproRun(guestconf.ReproRejected))); err != nil {
		t.Fatal(err)
	}
	if res.Verdict != vocab.Pass || !strings.Contains(res.Reason, "the bounds check holds") {
		t.Errorf("rejected: %s %q", res.Verdict, res.Reason)
	}
	if res, err = Run(ctx, o(reproRun(guestconf.ReproNotReached))); err != nil {
		t.Fatal(err)
	}
	if res.Verdict != vocab.Fail || !strings.Contains(res.Reason, "did not test the check") {
		t.Errorf("not reached: %s %q", res.Verdict, res.Reason)
	}
	// An image without the host switch cannot run it.
	x := o(passingRun)
	x.Harness = []string{"dma-faithful/ib_virt_dma_to_ptr"}
	if _, err := Prepare(ctx, x); !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "incapsule-wrap") {
		t.Errorf("no host switch: %v", err)
	}
	x.Reproduce = "everything"
	if _, err := Prepare(ctx, x); !errors.Is(err, errs.ErrUsage) {
		t.Errorf("an unknown reproducer: %v", err)
	}
}

// TestKnownKernelReport: a kernel report the known-reports table names
// (both locks of a lockdep pair) is reported in the reason and the
// result, and the boot passes; the same kind of report naming another
// lock fails the boot; without the table it fails too; the table is part
// of the boot's key (the guest is told).
func TestKnownKernelReport(t *testing.T) {
	ctx := context.Background()
	lockdep := func(wanted string) string {
		return strings.Join([]string{
			"[   8.0] ======================================================",
			"[   8.0] WARNING: possible circular locking dependency detected",
			"[   8.0] agent/1 is trying to acquire lock:",
			"[   8.0] ffff888000000000 (" + wanted + "){+.+.}-{4:4}, at: rdma_destroy_id+0x1/0x2",
			"[   8.0] but task is already holding lock:",
			"[   8.0] ffffffff80000000 (nvmet_config_sem){++++}-{4:4}, at: nvmet_port_subsys_drop_link+0x1/0x2",
			"[   8.0] Call Trace:", "[   8.0]  <TASK>", "[   8.0]  </TASK>"}, "\n")
	}
	known := []guestconf.KnownReport{{ID: "cfg-sem-vs-handler-mutex", Match: []string{"possible circular locking dependency", "nvmet_config_sem", "id_priv->handler_mutex"}}}
	run := func(wanted string, table []guestconf.KnownReport) *Result {
		t.Helper()
		x := opts(t, fakeQEMU(t, strings.Replace(passingRun, "patchctl-agent: done", lockdep(wanted)+"\npatchctl-agent: done", 1)))
		x.Known = table
		res, err := Run(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run("&id_priv->handler_mutex", known)
	if res.Verdict != vocab.Pass || len(res.Splats) != 0 || len(res.KnownSplats) != 1 || res.KnownSplats[0].Known != "cfg-sem-vs-handler-mutex" ||
		!strings.Contains(res.Reason, "known pre-existing kernel report cfg-sem-vs-handler-mutex") {
		t.Errorf("known report: %s %q splats %v known %v", res.Verdict, res.Reason, res.Splats, res.KnownSplats)
	}
	if res := run("&queue->state_lock", known); res.Verdict != vocab.Fail || len(res.Splats) != 1 || len(res.KnownSplats) != 0 {
		t.Errorf("another lock pair: %s %q", res.Verdict, res.Reason)
	}
	if res := run("&id_priv->handler_mutex", nil); res.Verdict != vocab.Fail {
		t.Errorf("no table: %s %q", res.Verdict, res.Reason)
	}
	a, b := opts(t, fakeQEMU(t, passingRun)), opts(t, fakeQEMU(t, passingRun))
	b.Known = known
	pa, err := Prepare(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := Prepare(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if pa.Key() == pb.Key() {
		t.Error("the known-reports table is not part of the boot's key")
	}
}
