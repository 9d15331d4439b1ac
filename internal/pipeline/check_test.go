package pipeline_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/checks"
	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/report"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
)

// A fixture kernel tree: nvmet-rdma's in-capsule bound as the pinned
// kernels have it (the known finding), an nvmet-tcp file without it, and
// a checkpatch.pl that finds nothing (the fixture's own script).
const fixtureRdma = `// SPDX-License-Identifier: GPL-2.0
struct nvmet_rdma_rsp;

static u16 nvmet_rdma_map_sgl_inline(struct nvmet_rdma_rsp *rsp)
{
	struct nvme_sgl_desc *sgl = &rsp->req.cmd->common.dptr.sgl;
	u64 off = le64_to_cpu(sgl->addr);
	u32 len = le32_to_cpu(sgl->length);

	if (off + len > rsp->queue->dev->inline_data_size) {
		pr_err("invalid inline data offset!\n");
		return NVME_SC_SGL_INVALID_OFFSET | NVME_STATUS_DNR;
	}
	if (!len)
		return 0;
	rsp->req.transfer_len += len;
	return 0;
}
`

const fixtureTcp = `// SPDX-License-Identifier: GPL-2.0
struct nvmet_tcp_cmd;

static void nvmet_tcp_free_cmd(struct nvmet_tcp_cmd *c)
{
	kfree(c->iov);
}
`

// The copy of the pattern a patch adds to nvmet-tcp.
const tcpCopy = `
static u16 nvmet_tcp_map_inline(struct nvmet_tcp_cmd *cmd, u32 size)
{
	struct nvme_sgl_desc *sgl = &cmd->req.cmd->common.dptr.sgl;
	u64 off = le64_to_cpu(sgl->addr);
	u32 len = le32_to_cpu(sgl->length);

	if (off + len > size)
		return NVME_SC_SGL_INVALID_OFFSET;
	return 0;
}
`

// fixtureLinux writes the fixture kernel tree and returns its folder.
func fixtureLinux(t *testing.T) string {
	t.Helper()
	linux := filepath.Join(t.TempDir(), "linux")
	writeFiles(t, linux, map[string]string{
		"Makefile":                    "VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 0\nEXTRAVERSION =\n",
		"scripts/checkpatch.pl":       "exit 0;\n",
		"drivers/nvme/target/rdma.c":  fixtureRdma,
		"drivers/nvme/target/tcp.c":   fixtureTcp,
		"drivers/nvme/target/Kconfig": "",
	})
	return linux
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, s := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// mailPatch makes a git format-patch mail of the edits (old -> new, each
// occurring once in its file of pristine) with git diff, and imports it.
func mailPatch(t *testing.T, pristine, subject string, edits map[string][2]string) []*mailpatch.Patch {
	t.Helper()
	work := t.TempDir()
	git := func(args ...string) []byte {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "core.autocrlf=false"}, args...)...)
		cmd.Dir = work
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return out
	}
	git("init", "-q")
	after := map[string]string{}
	for rel, e := range edits {
		b, err := os.ReadFile(filepath.Join(pristine, rel))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(string(b), e[0]) != 1 {
			t.Fatalf("%s: edit anchor found %d times", rel, strings.Count(string(b), e[0]))
		}
		writeFiles(t, work, map[string]string{rel: string(b)})
		after[rel] = strings.Replace(string(b), e[0], e[1], 1)
	}
	git("add", "-A")
	git("commit", "-qm", "pristine")
	writeFiles(t, work, after)
	diff := git("diff", "--no-color", "--full-index")
	mail := fmt.Sprintf("From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\nFrom: A U Thor <author@example.org>\nDate: Tue, 1 Dec 2026 10:00:00 +0000\nSubject: [PATCH] %s\n\n%s\n\nSigned-off-by: A U Thor <author@example.org>\n---\n%s-- \n2.39.5\n", subject, subject, diff)
	p := filepath.Join(work, "mail.patch")
	if err := os.WriteFile(p, []byte(mail), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err := mailpatch.ImportFile(p, "", mailpatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// checkRun runs the check stage of a patch on a kernel and writes the
// reports of the run it makes.
func checkRun(t *testing.T, c *tree.Cache, k *tree.Kernel, pristine string, ps []*mailpatch.Patch, paths ...string) (*pipeline.Kernel, string) {
	t.Helper()
	ctx := context.Background()
	sdir := filepath.Join(t.TempDir(), "series")
	sources := make([]string, len(ps))
	for i := range ps {
		sources[i] = fmt.Sprintf("try/%04d", i+1)
	}
	out, err := apply.RunGiven(ctx, apply.Given{Kernel: k, Pristine: pristine, Patches: ps, Sources: sources, Dir: sdir})
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Refreshed.Write(sdir); err != nil {
		t.Fatal(err)
	}
	kr := pipeline.CheckStage(ctx, pipeline.Options{Cache: c}, k, out, paths)
	res := &pipeline.Result{Kernels: []*pipeline.Kernel{kr}, Verdict: kr.Verdict}
	dir := t.TempDir()
	if _, err := report.WriteWith(dir, res, report.Options{Version: "test", Cache: c.Dir}); err != nil {
		t.Fatal(err)
	}
	return kr, dir
}

type junitDoc struct {
	Suites []struct {
		Cases []struct {
			Name      string    `xml:"name,attr"`
			Failure   *struct{} `xml:"failure"`
			SystemOut string    `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

type sarifDoc struct {
	Runs []struct {
		Results []struct {
			RuleID        string `json:"ruleId"`
			BaselineState string `json:"baselineState"`
			Locations     []struct {
				PhysicalLocation struct {
					ArtifactLocation struct{ URI string }
				}
			}
		}
	}
}

// reportsSay reads the run's reports and returns, per file of the
// incapsule-bounds findings, what text, SARIF and JUnit say of it.
func reportsSay(t *testing.T, dir string, kr *pipeline.Kernel) map[string]string {
	t.Helper()
	say := map[string]string{}
	sum, err := os.ReadFile(filepath.Join(dir, "summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(sum), "\n") {
		if strings.Contains(l, " incapsule-bounds ") {
			f := strings.Fields(l)
			place := f[len(f)-1]
			for _, w := range f {
				if strings.HasPrefix(w, "drivers/") {
					place = strings.SplitN(w, ":", 2)[0]
				}
			}
			say[place] += "text:" + map[bool]string{true: "pre-existing", false: "new"}[strings.Contains(l, "(pre-existing)")] + " "
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "check-"+kr.Name+".sarif"))
	if err != nil {
		t.Fatal(err)
	}
	var s sarifDoc
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Runs[0].Results {
		if r.RuleID == checks.RuleIncapsule {
			say[r.Locations[0].PhysicalLocation.ArtifactLocation.URI] += "sarif:" + r.BaselineState + " "
		}
	}
	b, err = os.ReadFile(filepath.Join(dir, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var j junitDoc
	if err := xml.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	for _, c := range j.Suites[0].Cases {
		if rest, ok := strings.CutPrefix(c.Name, "check.incapsule-bounds:"); ok {
			st := "pass"
			if c.Failure != nil {
				st = "failure"
			}
			say[strings.SplitN(rest, ":", 2)[0]] += "junit:" + st + " "
		}
	}
	b, err = os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rj struct {
		Kernels []struct {
			Check struct {
				Findings []checks.Finding
			}
		}
	}
	if err := json.Unmarshal(b, &rj); err != nil {
		t.Fatal(err)
	}
	for _, f := range rj.Kernels[0].Check.Findings {
		if f.Rule == checks.RuleIncapsule {
			say[f.File] += "json:" + f.Baseline
		}
	}
	return say
}

func checkStage(kr *pipeline.Kernel) *pipeline.Stage {
	for _, s := range kr.Stages {
		if s.Name == pipeline.StageCheck {
			return s
		}
	}
	return nil
}

const (
	sayPre = "text:pre-existing sarif:unchanged junit:pass json:unchanged"
	sayNew = "text:new sarif:new junit:failure json:new"
)

// TestCheckStageJudgesNewFindings runs the check stage of the pipeline on
// a fixture tree (no kernel tree needed) with two patches: one that only
// moves the known finding (lines added above it) passes, with the finding
// pre-existing in every report; one that copies the pattern into nvmet-tcp
// fails, the copy new in every report, the known finding still
// pre-existing. The second run of each reuses the recorded check; a
// different pristine result is a different key.
func TestCheckStageJudgesNewFindings(t *testing.T) {
	linux := fixtureLinux(t)
	c := &tree.Cache{Dir: t.TempDir()}
	k, err := c.Local(context.Background(), linux, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	shift := mailPatch(t, linux, "nvmet-rdma: comment the inline mapping", map[string][2]string{
		"drivers/nvme/target/rdma.c": {"struct nvmet_rdma_rsp;\n", "struct nvmet_rdma_rsp;\n\n/*\n * In-capsule data: the SGL from the command.\n */\n"}})
	kr, dir := checkRun(t, c, k, linux, shift, "drivers/nvme")
	if s := checkStage(kr); s == nil || s.Status != vocab.Pass || kr.Verdict != vocab.Pass {
		t.Fatalf("a patch that only moves the known finding: check %+v, verdict %s", s, kr.Verdict)
	}
	if f := kr.Check.Findings; len(f) != 1 || f[0].Line != 14 || !f[0].PreExisting() {
		t.Errorf("findings %v: want the known one, moved to line 14, pre-existing", f)
	}
	say := reportsSay(t, dir, kr)
	if got := strings.TrimSpace(say["drivers/nvme/target/rdma.c"]); got != sayPre || len(say) != 1 {
		t.Errorf("reports say %q, want rdma.c: %q", say, sayPre)
	}
	again, _ := checkRun(t, c, k, linux, shift, "drivers/nvme")
	if s := checkStage(again); !s.Reused {
		t.Errorf("the second check was redone: %s", s.Redone)
	}

	copyIn := mailPatch(t, linux, "nvmet-tcp: map inline data", map[string][2]string{
		"drivers/nvme/target/tcp.c": {"struct nvmet_tcp_cmd;\n", "struct nvmet_tcp_cmd;\n" + tcpCopy}})
	kr, dir = checkRun(t, c, k, linux, copyIn, "drivers/nvme")
	if s := checkStage(kr); s == nil || s.Status != vocab.Fail || kr.Verdict != vocab.Fail || !strings.Contains(s.Detail, "1 new error") {
		t.Fatalf("a patch that adds a finding: check %+v, verdict %s", s, kr.Verdict)
	}
	say = reportsSay(t, dir, kr)
	if got := strings.TrimSpace(say["drivers/nvme/target/rdma.c"]); got != sayPre {
		t.Errorf("rdma.c: reports say %q, want %q", got, sayPre)
	}
	if got := strings.TrimSpace(say["drivers/nvme/target/tcp.c"]); got != sayNew {
		t.Errorf("tcp.c: reports say %q, want %q", got, sayNew)
	}

	// The judged check's key covers the baseline's findings.
	out, err := apply.RunGiven(context.Background(), apply.Given{Kernel: k, Pristine: linux, Patches: copyIn, Sources: []string{"x"}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	in := pipeline.CheckStageIn{Cache: c, Apply: out, Pristine: &checks.Report{Findings: []checks.Finding{}}}
	k1, err1 := pipeline.CheckStageKey(in)
	in.Pristine = kr.Check
	k2, err2 := pipeline.CheckStageKey(in)
	in.Pristine = nil
	k3, err3 := pipeline.CheckStageKey(in)
	if err1 != nil || err2 != nil || err3 != nil || k1 == k2 || k2 == k3 || k1 == k3 {
		t.Errorf("keys for different baselines: %s %s %s (%v %v %v)", k1, k2, k3, err1, err2, err3)
	}

	// With --preprocess the keys follow the build folder's configuration
	// (the flags and #if arms the units were made with); without it they
	// do not read it.
	bd := t.TempDir()
	keys := func() (string, string) {
		t.Helper()
		a, err := pipeline.CheckStageKey(in)
		if err != nil {
			t.Fatal(err)
		}
		b, err := pipeline.CheckPristineKey(in)
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
	in.BuildDir = bd
	os.WriteFile(filepath.Join(bd, ".config"), []byte("CONFIG_A=y\n"), 0o644)
	plainA, plainP := keys()
	os.WriteFile(filepath.Join(bd, ".config"), []byte("CONFIG_A=n\n"), 0o644)
	if a, p := keys(); a != plainA || p != plainP {
		t.Error("without --preprocess the check's keys read the build folder's .config")
	}
	in.Preprocess = true
	ppA, ppP := keys()
	os.WriteFile(filepath.Join(bd, ".config"), []byte("CONFIG_A=y\n"), 0o644)
	if a, p := keys(); a == ppA || p == ppP || a == plainA {
		t.Error("with --preprocess the check's keys miss the build folder's configuration")
	}
}

// TestCheckStageRealTree: the same on the 6.12 tree, with the series of
// record (seed 000) plus a patch that copies the in-capsule pattern into
// nvmet-tcp: the known nvmet-rdma finding stays pre-existing, the copy is
// the one new error, and the check fails. It puts the shared 6.12 work
// tree into that state (as patchctl try does), so not under -short.
func TestCheckStageRealTree(t *testing.T) {
	k, pristine := testenv.Kernel(t, testkernel.Default)
	if testing.Short() {
		t.Skip("-short: changes the 6.12 work tree")
	}
	root := testenv.RepoRoot(t)
	seed, err := mailpatch.ImportFile(filepath.Join(root, "patches/nvme-rdma-inline-capsule/000_97dfe90d7f7f5563.txt"), "", mailpatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := testenv.Cache()
	kr, dir := checkRun(t, c, k, pristine, seed)
	if s := checkStage(kr); s == nil || s.Status != vocab.Pass {
		t.Fatalf("the seed: check %+v", s)
	}
	if got := strings.TrimSpace(reportsSay(t, dir, kr)["drivers/nvme/target/rdma.c"]); got != sayPre {
		t.Errorf("the seed: nvmet-rdma's finding: reports say %q, want %q", got, sayPre)
	}
	tcp := mailPatch(t, pristine, "nvmet-tcp: map inline data", map[string][2]string{
		"drivers/nvme/target/tcp.c": {"static void nvmet_tcp_free_cmd(struct nvmet_tcp_cmd *c)\n{", strings.TrimPrefix(tcpCopy, "\n") + "\nstatic void nvmet_tcp_free_cmd(struct nvmet_tcp_cmd *c)\n{"}})
	kr, dir = checkRun(t, c, k, pristine, append(seed, tcp...))
	if s := checkStage(kr); s == nil || s.Status != vocab.Fail || kr.Verdict != vocab.Fail {
		t.Fatalf("the seed and a new finding: check %+v", s)
	}
	say := reportsSay(t, dir, kr)
	if got := strings.TrimSpace(say["drivers/nvme/target/rdma.c"]); got != sayPre {
		t.Errorf("rdma.c: reports say %q, want %q", got, sayPre)
	}
	if got := strings.TrimSpace(say["drivers/nvme/target/tcp.c"]); got != sayNew {
		t.Errorf("tcp.c: reports say %q, want %q", got, sayNew)
	}
	if n := kr.Check.Errors(); n != 1 {
		t.Errorf("%d new errors, want 1: %v", n, kr.Check.Findings)
	}
}

// TestCheckBesideTheWorkTree: the check stage reads its own tree (the
// check tree), not the work tree builds compile. While another holder
// keeps the work tree locked and in another state (as a patched build
// with the harness in does), the check of a patch runs to its verdict on
// the patched state, and leaves the work tree as it was.
func TestCheckBesideTheWorkTree(t *testing.T) {
	linux := fixtureLinux(t)
	c := &tree.Cache{Dir: t.TempDir()}
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		// A check that waited for the work tree would wait for ever: fail
		// before go test's own timeout, with this test's name.
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-30*time.Second))
		defer cancel()
	}
	k, err := c.Local(ctx, linux, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	copyIn := mailPatch(t, linux, "nvmet-tcp: map inline data", map[string][2]string{
		"drivers/nvme/target/tcp.c": {"struct nvmet_tcp_cmd;\n", "struct nvmet_tcp_cmd;\n" + tcpCopy}})
	out, err := apply.RunGiven(ctx, apply.Given{Kernel: k, Pristine: linux, Patches: copyIn, Sources: []string{"try/0001"}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// The work tree held, with a state of its own.
	wt, release, err := c.HoldWorkTree(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	other := []tree.Change{{Path: "drivers/nvme/target/tcp.c", Content: []byte(fixtureTcp + "/* the harness */\n"), Mode: 0o644}}
	if err := wt.Commit(other, tree.State{PristineKey: k.Key(), Touched: []string{"drivers/nvme/target/tcp.c"}}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(wt.Dir, "drivers/nvme/target/tcp.c"))

	in := pipeline.CheckStageIn{Cache: c, Apply: out, Paths: []string{"drivers/nvme"}}
	rep, err := pipeline.RunCheckStage(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors() != 1 {
		t.Errorf("the check of the patched state found %d new errors, want the copy's 1: %+v", rep.Errors(), rep.Findings)
	}
	if got := in.CheckedTree(); got != c.CheckTreeDir(k) || got == wt.Dir {
		t.Errorf("checked %s: want the check tree %s", got, c.CheckTreeDir(k))
	}
	after, _ := os.ReadFile(filepath.Join(wt.Dir, "drivers/nvme/target/tcp.c"))
	if string(after) != string(before) {
		t.Error("the check changed the work tree")
	}
	patched, _ := os.ReadFile(filepath.Join(c.CheckTreeDir(k), "drivers/nvme/target/tcp.c"))
	if !strings.Contains(string(patched), "nvmet_tcp_map_inline") {
		t.Error("the check tree does not hold the patched state")
	}
	if pristine, _ := os.ReadFile(filepath.Join(linux, "drivers/nvme/target/tcp.c")); string(pristine) != fixtureTcp {
		t.Error("the pristine tree changed")
	}
}
