package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/checks"
	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/boot"
	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/ktap"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/vocab"
)

// The fixtures are synthetic pipeline results shaped like a real run's:
// a repository with series/<kernel>/ patches, build folders with logs and
// configs under a cache, consoles in the guest agent's KTAP (durations,
// nested transports, kernel messages in between), check findings in the
// tree and in a patch.

const fixturePatch = `From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: A U Thor <author@example.org>
Subject: [PATCH 1/1] nvme-rdma: example

+this line of the message is no diff
---
 drivers/nvme/host/rdma.c | 3 ++-
 1 file changed, 2 insertions(+), 1 deletion(-)

diff --git a/drivers/nvme/host/rdma.c b/drivers/nvme/host/rdma.c
--- a/drivers/nvme/host/rdma.c
+++ b/drivers/nvme/host/rdma.c
@@ -10,3 +10,4 @@ static int nvme_rdma_post_send(void)
 	int ret;
-	wr.send_flags = IB_SEND_SIGNALED;
+	wr.send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE;
+	sge.addr = qe->dma;
 	return ret;
`

// consoleText is a boot's console in the agent's KTAP. failLeaf makes
// write_read_16k fail on siw; crash cuts rxe short after two results
// with "not ok" on the parent (a guest that died mid-run).
func consoleText(failLeaf, crash bool) string {
	var b strings.Builder
	b.WriteString("[    0.000000] Linux version 6.12.117 (gcc 12.2.0)\n[    1.611001] Run /init as init process\n\npatchctl-agent: started after 3ms, transports rxe,siw\n")
	b.WriteString("KTAP version 1\n1..2\n")
	leaves := []string{"link", "target", "connect", "write_read_16k", "inline_evidence", "teardown", "dmesg"}
	for i, tr := range []string{"rxe", "siw"} {
		fmt.Fprintf(&b, "    KTAP version 1\n    # Subtest: %s\n    1..%d\n", tr, len(leaves))
		parentOK := true
		for j, l := range leaves {
			if crash && tr == "rxe" && j == 2 {
				parentOK = false
				break
			}
			ok := "ok"
			if failLeaf && tr == "siw" && l == "write_read_16k" {
				ok = "not ok"
				parentOK = false
				b.WriteString("    # write_read_16k: data mismatch at byte 4096\n")
			}
			if l == "inline_evidence" {
				b.WriteString("    # capsule sends without in-capsule data: 12 inline, 0 by reference\n")
			}
			fmt.Fprintf(&b, "    # duration: 0.%03d s\n    %s %d %s\n", 100+j, ok, j+1, l)
			if j == 1 {
				b.WriteString("[    2.004411] nvmet: adding nsid 1 to subsystem nqn.2026-11.dev.patchctl:loopback\n")
			}
		}
		ok := "ok"
		if !parentOK {
			ok = "not ok"
		}
		fmt.Fprintf(&b, "# duration: 1.%03d s\n%s %d %s\n", 200+i, ok, i+1, tr)
	}
	b.WriteString("patchctl-agent: done after 2.5s\n[    4.101000] reboot: Restarting system\n")
	return b.String()
}

// fixtureVersions are the Debian versions of the fixture's kernels: a
// stable update and a mainline release candidate.
// 6.12 itself: each pin's package version
var fixtureVersions = map[string]string{"6.12": "6.12.117-1~deb12u1", "7.3": "7.3~rc7-1~exp1", "5.10": "5.10.223-1", "6.1": "6.1.192-3", "7.2": "7.2.13-1"}

type fixtureOpts struct {
	start          time.Time
	failLeaf       bool
	crash          bool
	kernels        []string
	checkFinding   bool // an error finding on a line the patch adds
	bailBaseline   bool // the baseline guest could not set up
	patchContent   string
	withoutConsole bool
}

// fixtureRun builds a pipeline result over a temporary repository and
// cache; it returns the result and the repository root.
func fixtureRun(t *testing.T, o fixtureOpts) (*pipeline.Result, string, string) {
	t.Helper()
	if o.start.IsZero() {
		o.start = time.Date(2026, 12, 1, 7, 29, 10, 123456789, time.UTC)
	}
	if len(o.kernels) == 0 {
		o.kernels = []string{testkernel.Default}
	}
	if o.patchContent == "" {
		o.patchContent = fixturePatch
	}
	root, cache := filepath.Join(t.TempDir(), "repo"), filepath.Join(t.TempDir(), "cache")
	write := func(p, s string) string {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(filepath.Join(root, "series", "kernels.yaml"), "default: \"6.12\"\n")
	res := &pipeline.Result{Verdict: vocab.Pass, Duration: 481.701514792}
	for ki, name := range o.kernels {
		start := o.start.Add(time.Duration(ki) * time.Second)
		patch := write(filepath.Join(root, "series", name, "0001-nvme-rdma-example.patch"), o.patchContent)
		k := &pipeline.Kernel{Name: name, Source: "debian linux-source-" + name + "=" + fixtureVersions[name] + " deb:" + cache + " tar:0", Verdict: vocab.Pass, Start: start,
			Patches: []string{patch}, Builds: map[string]*build.Metadata{}, Boots: map[string]*boot.Result{}, Duration: 300.123456}
		at := start
		stage := func(n string, d float64, st string) *pipeline.Stage {
			s := &pipeline.Stage{Name: n, Status: st, Start: at, Duration: d}
			at = at.Add(time.Duration(d * float64(time.Second)))
			k.Stages = append(k.Stages, s)
			return s
		}
		stage("prepare", 0.000123, vocab.Pass)
		stage("apply", 0.2034, vocab.Pass).Detail = "1 of 1 patches apply"
		k.Apply = []*apply.Result{{Entry: series.Entry{Source: "patches/s/p.txt", Expect: series.Applies}, Source: filepath.Join(root, "patches/s/p.txt"),
			Disposition: series.Applies, Expected: series.Applies, Match: true}}
		for _, v := range []string{"baseline", "patched"} {
			bdir := filepath.Join(cache, "build", name, "abcdef012345")
			vdir := filepath.Join(bdir, "variants", v)
			stage("build-"+v, 12.345678, vocab.Pass)
			k.Builds[v] = &build.Metadata{Kernel: name, Variant: v, Status: "PASS", ConfigHash: strings.Repeat("a", 64), Fragments: []string{"base", "rdma-loopback"},
				Duration: 12.345678, Compiler: "gcc (Debian 12.2.0-14) 12.2.0", KernelRelease: name + ".117", Jobs: 2, Ccache: true, Verified: 40,
				BuildDir: bdir, VariantDir: vdir, SourceDir: filepath.Join(cache, "work", name), Log: write(filepath.Join(vdir, "build.log"), "  CC      drivers/nvme/host/rdma.o\n"),
				Artifacts: map[string]string{"bzImage": write(filepath.Join(vdir, "bzImage"), "MZ"), "config": write(filepath.Join(vdir, ".config"), "CONFIG_NVME_RDMA=y\n")}}
			if v == "baseline" {
				s := stage("check", 0.7012345, vocab.Pass)
				k.Check = &checks.Report{Files: 3, Functions: 40, Findings: []checks.Finding{
					{Rule: checks.RuleCheckpatch, Severity: "warning", File: patch, Line: 15, Message: "LONG_LINE: line length of 101 exceeds 100 columns"},
					{Rule: checks.RuleInlineSize, Severity: "note", File: "drivers/nvme/host/rdma.c", Line: 40, Function: "nvme_rdma_create_qp", Message: "note only"}}}
				if o.checkFinding {
					k.Check.Findings = append(k.Check.Findings, checks.Finding{Rule: checks.RuleInlineSGE, Severity: "error", File: "drivers/nvme/host/rdma.c", Line: 12,
						Function: "nvme_rdma_post_send", Message: "SGE 0 of wr holds a DMA address (qe->dma) on the inline path",
						Evidence: []checks.Evidence{{File: "drivers/nvme/host/rdma.c", Line: 11, Message: "IB_SEND_INLINE set on this path"}}})
					s.Status = vocab.Fail
				}
			}
		}
		for _, v := range []string{"baseline", "patched"} {
			text := consoleText(o.failLeaf && v == "patched", o.crash && v == "patched")
			if o.bailBaseline && v == "baseline" {
				text = "KTAP version 1\n1..1\nnot ok 1 agent_setup # ERROR network: no eth0\n"
			}
			s := stage("boot-"+v, 5.5, vocab.Pass)
			console := filepath.Join(cache, "runs", name, "boot-"+v, "console.log")
			if !o.withoutConsole {
				write(console, text)
			}
			doc := ktap.Parse(text)
			br := &boot.Result{Kernel: name, Variant: v, Accel: "tcg", ConsoleLog: console, KTAP: doc, Verdict: vocab.Pass, Duration: 5.4}
			if c := doc.Count(); c.Fail > 0 || !doc.Complete() || doc.Bail != "" {
				br.Verdict, s.Status = vocab.Fail, vocab.Fail
			}
			k.Boots[v] = br
		}
		stage("compare", 0, vocab.Pass)
		for _, s := range k.Stages {
			if s.Status != vocab.Pass {
				k.Verdict = vocab.Fail
				res.Verdict = vocab.Fail
			}
		}
		res.Kernels = append(res.Kernels, k)
	}
	return res, root, cache
}
