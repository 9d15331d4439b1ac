package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/mkthread"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

func TestCheckCLI(t *testing.T) {
	_, pristine := testenv.Kernel(t, testkernel.Default)
	root := testenv.RepoRoot(t)
	// A tree with one DMA address on net/smc's inline path: exit 1.
	tree := t.TempDir()
	ents, _ := os.ReadDir(filepath.Join(pristine, "net/smc"))
	os.MkdirAll(filepath.Join(tree, "net/smc"), 0o755)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(pristine, "net/smc", e.Name()))
		if e.Name() == "smc_tx.c" {
			b = []byte(strings.Replace(string(b), "\t\t\tbase_addr = virt_addr;", "\t\t\tbase_addr = dma_addr;", 1))
		}
		os.WriteFile(filepath.Join(tree, "net/smc", e.Name()), b, 0o644)
	}
	code, out, _ := run(t, "--root", root, "check", "--tree", tree, "--format", "json", "net/smc")
	var rep struct {
		Findings []struct{ Rule, File string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if code != 1 || len(rep.Findings) == 0 || rep.Findings[0].Rule != "inline-sge-addr" || rep.Findings[0].File != "net/smc/smc_tx.c" {
		t.Errorf("mutant: exit %d, %+v", code, rep.Findings)
	}
	// The pristine folder is clean: exit 0.
	if code, out, errOut := run(t, "--root", root, "check", "--tree", pristine, "net/smc", "drivers/nvme"); code != 0 {
		t.Errorf("pristine: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, _ := run(t, "--root", root, "check", "--format", "xml"); code != 2 {
		t.Errorf("bad format: exit %d", code)
	}
}

// A PATH that names nothing is an input error, not a clean pass; a patch
// file goes to checkpatch.
func TestCheckPathsAndPatches(t *testing.T) {
	_, pristine := testenv.Kernel(t, testkernel.Default)
	root := testenv.RepoRoot(t)
	for _, args := range [][]string{
		{"check", "--tree", pristine, "drivers/nvme/host/no-such-file.c"},
		{"check", "--tree", pristine, "net/smc", "nonexistent-folder"},
		{"check", "--tree", pristine, "missing.patch"},
	} {
		if code, out, errOut := run(t, append([]string{"--root", root}, args...)...); code != 2 || !strings.Contains(errOut, "no such file or folder in the tree") {
			t.Errorf("%v: exit %d, want 2\n%s%s", args, code, out, errOut)
		}
	}
	if code, _, errOut := run(t, "--root", root, "check", "--tree", pristine, "../etc"); code != 2 {
		t.Errorf("a PATH out of the tree: exit %d\n%s", code, errOut)
	}
	// A patch with a style error (trailing white space, no sign-off):
	// checkpatch's findings, exit 1; the same patch made clean: exit 0.
	rdma, err := os.ReadFile(filepath.Join(pristine, "drivers/nvme/target/rdma.c"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.patch")
	good := filepath.Join(dir, "good.patch")
	os.WriteFile(bad, []byte(mailWith("nvmet-rdma: a comment", "", mkthread.InsertAfter("drivers/nvme/target/rdma.c", rdma, 20, "/* trailing space */ "))), 0o644)
	os.WriteFile(good, []byte(mailWith("nvmet-rdma: a comment", "Signed-off-by: Pat Developer <pat@example.org>\n", mkthread.InsertAfter("drivers/nvme/target/rdma.c", rdma, 20, "/* a comment */"))), 0o644)
	code, out, errOut := run(t, "--root", root, "check", "--tree", pristine, "--format", "json", bad, "drivers/nvme/target/rdma.c")
	var rep struct {
		Findings []struct{ Rule, Severity, Message string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s%s", err, out, errOut)
	}
	n := 0
	for _, f := range rep.Findings {
		if f.Rule == "checkpatch" && f.Severity == "error" {
			n++
		}
	}
	if code != 1 || n == 0 {
		t.Errorf("bad patch: exit %d, %d checkpatch errors: %+v", code, n, rep.Findings)
	}
	if code, out, errOut := run(t, "--root", root, "check", "--tree", pristine, good, "drivers/nvme/target/rdma.c"); code != 0 {
		t.Errorf("good patch: exit %d\n%s%s", code, out, errOut)
	}
}

// mailWith is a patch mail in git format-patch form.
func mailWith(subject, trailers, diff string) string {
	return "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\nFrom: Pat Developer <pat@example.org>\n" +
		"Date: Fri, 20 Nov 2026 10:00:00 +0000\nSubject: [PATCH] " + subject + "\n\nExplain the change in a sentence.\n\n" + trailers + "---\n" + diff
}

// check --tree judged against --baseline: a copy of nvmet-rdma's
// in-capsule bound in nvmet-tcp is the one new finding (exit 1), the
// known one is pre-existing; the same tree against itself passes.
func TestCheckBaselineCLI(t *testing.T) {
	_, pristine := testenv.Kernel(t, testkernel.Default)
	root := testenv.RepoRoot(t)
	tree := t.TempDir()
	for _, rel := range []string{"drivers/nvme/target/rdma.c", "drivers/nvme/target/tcp.c"} {
		b, err := os.ReadFile(filepath.Join(pristine, rel))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(rel, "tcp.c") {
			b = []byte(strings.Replace(string(b), "static void nvmet_tcp_free_cmd(struct nvmet_tcp_cmd *c)\n{",
				"static u16 nvmet_tcp_map_inline(struct nvmet_tcp_cmd *cmd, u32 size)\n{\n\tu64 off = le64_to_cpu(cmd->req.cmd->common.dptr.sgl.addr);\n\n\tif (off + le32_to_cpu(cmd->req.cmd->common.dptr.sgl.length) > size)\n\t\treturn NVME_SC_SGL_INVALID_OFFSET;\n\treturn 0;\n}\n\nstatic void nvmet_tcp_free_cmd(struct nvmet_tcp_cmd *c)\n{", 1))
		}
		os.MkdirAll(filepath.Join(tree, filepath.Dir(rel)), 0o755)
		os.WriteFile(filepath.Join(tree, rel), b, 0o644)
	}
	code, out, errOut := run(t, "--root", root, "check", "--tree", tree, "--baseline", pristine, "--format", "json", "drivers/nvme/target")
	var rep struct {
		Findings []struct{ Rule, File, Baseline string }
		Baseline struct {
			Against        string
			New, Unchanged int
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s%s", err, out, errOut)
	}
	got := map[string]string{}
	for _, f := range rep.Findings {
		got[f.File] = f.Rule + " " + f.Baseline
	}
	if code != 1 || got["drivers/nvme/target/tcp.c"] != "incapsule-bounds new" || got["drivers/nvme/target/rdma.c"] != "incapsule-bounds unchanged" ||
		rep.Baseline.Against != "pristine tree" || rep.Baseline.New != 1 || rep.Baseline.Unchanged != 1 {
		t.Errorf("exit %d, %v, %+v\n%s", code, got, rep.Baseline, errOut)
	}
	code, out, _ = run(t, "--root", root, "check", "--tree", tree, "--baseline", tree, "drivers/nvme/target")
	if code != 0 || !strings.Contains(out, "[pre-existing]") || !strings.Contains(out, "0 new errors") {
		t.Errorf("against itself: exit %d\n%s", code, out)
	}
	if code, _, _ := run(t, "--root", root, "check", "--baseline", tree); code != 2 {
		t.Errorf("--baseline without --tree: exit %d", code)
	}
}
