package checks

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/tree"
)

// patchedFiles returns 6.12's files with the manifest's series applied.
func patchedFiles(t *testing.T) (pristine string, patched map[string][]byte) {
	t.Helper()
	_, pristine = testenv.Kernel(t, testkernel.Default)
	plan, err := apply.LoadPlan(testenv.RepoRoot(t), testkernel.Default, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := plan.Run(pristine)
	if err != nil {
		t.Fatal(err)
	}
	return pristine, res.Files
}

// mutant is one way to get a rule wrong, and where it must be reported.
type mutant struct {
	name       string
	file       string
	edits      [][2]string // old -> new, each must occur once
	rule       string      // "" = must stay clean
	at         string      // the reported line holds this text
	occurrence int         // which occurrence of at (0 = first after the edit site's function start)
}

const rdma = "drivers/nvme/host/rdma.c"

var nvmeMutants = []mutant{
	{name: "dma address on the inline path", file: rdma,
		edits: [][2]string{{"sge->addr = (uintptr_t)qe->data;", "sge->addr = qe->dma;"}},
		rule:  RuleInlineSGE, at: "ret = ib_post_send(queue->qp, first, NULL);"},
	{name: "a cast keeps the DMA kind", file: rdma,
		edits: [][2]string{{"sge->addr = (uintptr_t)qe->data;", "sge->addr = (u64)qe->dma;"}},
		rule:  RuleInlineSGE, at: "ret = ib_post_send(queue->qp, first, NULL);"},
	{name: "through a local variable", file: rdma,
		edits: [][2]string{{"sge->addr = (uintptr_t)qe->data;", "u64 a = qe->dma + 0;\n\t\tsge->addr = a;"}},
		rule:  RuleInlineSGE, at: "ret = ib_post_send(queue->qp, first, NULL);"},
	{name: "a ternary with a DMA arm", file: rdma,
		edits: [][2]string{{"sge->addr = (uintptr_t)qe->data;", "sge->addr = queue->pi_support ? (uintptr_t)qe->data : qe->dma;"}},
		rule:  RuleInlineSGE, at: "ret = ib_post_send(queue->qp, first, NULL);"},
	{name: "num_sge not bounded", file: rdma,
		edits: [][2]string{{"if (num_sge == 1 && sge->length <= queue->max_inline_data) {", "if (sge->length <= queue->max_inline_data) {"}},
		rule:  RuleInlineSGE, at: "ret = ib_post_send(queue->qp, first, NULL);"},
	{name: "flag set on every path, address re-pointed on one", file: rdma,
		edits: [][2]string{{"wr.send_flags = IB_SEND_SIGNALED;", "wr.send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE;"}},
		rule:  RuleInlineSGE, at: "ret = ib_post_send(queue->qp, first, NULL);"},
	{name: "flag and address on different branches", file: rdma,
		edits: [][2]string{{"\t\tsge->addr = (uintptr_t)qe->data;\n\t\twr.send_flags |= IB_SEND_INLINE;\n\t}", "\t\twr.send_flags |= IB_SEND_INLINE;\n\t} else {\n\t\tsge->addr = (uintptr_t)qe->data;\n\t}"}},
		rule:  RuleInlineSGE, at: "ret = ib_post_send(queue->qp, first, NULL);"},
	{name: "reassigned after the virtual address", file: rdma,
		edits: [][2]string{{"sge->addr = (uintptr_t)qe->data;", "sge->addr = (uintptr_t)qe->data;\n\t\tsge->addr = qe->dma;"}},
		rule:  RuleInlineSGE, at: "ret = ib_post_send(queue->qp, first, NULL);"},
	{name: "address set after the post", file: rdma,
		edits: [][2]string{{"\t\tsge->addr = (uintptr_t)qe->data;\n", ""}, {"ret = ib_post_send(queue->qp, first, NULL);", "ret = ib_post_send(queue->qp, first, NULL);\n\tsge->addr = (uintptr_t)qe->data;"}},
		rule:  RuleInlineSGE, at: "ret = ib_post_send(queue->qp, first, NULL);"},
	{name: "statement order inside the branch does not matter", file: rdma,
		edits: [][2]string{{"\t\tsge->addr = (uintptr_t)qe->data;\n\t\twr.send_flags |= IB_SEND_INLINE;", "\t\twr.send_flags |= IB_SEND_INLINE;\n\t\tsge->addr = (uintptr_t)qe->data;"}},
		rule:  ""},
	{name: "inline on the REG_MR request", file: rdma,
		edits: [][2]string{{"\treq->reg_wr.wr.num_sge = 0;\n", "\treq->reg_wr.wr.num_sge = 0;\n\treq->reg_wr.wr.send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE;\n"}},
		rule:  RuleInlineReg, at: "return 0;"},
}

var sizeMutants = []mutant{
	{name: "size: the request does not cover the capsule", file: rdma,
		edits: [][2]string{{"attr.cap.max_inline_data = sizeof(struct nvme_command);", "attr.cap.max_inline_data = 32;"}},
		rule:  RuleInlineSize, at: "attr.cap.max_inline_data = 32;"},
	{name: "size: the guard compares with the requested constant", file: rdma,
		edits: [][2]string{{"sge->length <= queue->max_inline_data) {", "sge->length <= sizeof(struct nvme_command)) {"}},
		rule:  RuleInlineSize, at: "wr.send_flags |= IB_SEND_INLINE;"},
	{name: "size: caps recorded whether or not creation failed", file: rdma,
		edits: [][2]string{{"queue->max_inline_data = ret ? 0 : attr.cap.max_inline_data;", "queue->max_inline_data = attr.cap.max_inline_data;"}},
		rule:  RuleInlineSize, at: "queue->max_inline_data = attr.cap.max_inline_data;"},
	{name: "size: the failing path records the caps", file: rdma,
		edits: [][2]string{{"queue->max_inline_data = ret ? 0 : attr.cap.max_inline_data;", "queue->max_inline_data = ret ? attr.cap.max_inline_data : 0;"}},
		rule:  RuleInlineSize, at: "queue->max_inline_data = ret ? attr.cap.max_inline_data : 0;"},
	{name: "size: read before the QP is created", file: rdma,
		edits: [][2]string{{"\tqueue->max_inline_data = ret ? 0 : attr.cap.max_inline_data;\n", ""},
			{"attr.cap.max_inline_data = sizeof(struct nvme_command);", "attr.cap.max_inline_data = sizeof(struct nvme_command);\n\tqueue->max_inline_data = attr.cap.max_inline_data;"}},
		rule: RuleInlineSize, at: "wr.send_flags |= IB_SEND_INLINE;"},
}

var smcMutants = []mutant{
	{name: "smc size: guard against a constant", file: "net/smc/smc_tx.c",
		edits: [][2]string{{"if (dst_len < link->qp_attr.cap.max_inline_data) {", "if (dst_len < SMC_WR_TX_SIZE) {"}},
		rule:  RuleInlineSize, at: "wr->wr.send_flags |= IB_SEND_INLINE;"},
	{name: "smc: virtual and DMA swapped in the ternary", file: "net/smc/smc_wr.c",
		edits: [][2]string{{"lnk->wr_tx_sges[i].addr = send_inline ? (uintptr_t)(&lnk->wr_tx_bufs[i]) :\n\t\t\tlnk->wr_tx_dma_addr + i * SMC_WR_BUF_SIZE;",
			"lnk->wr_tx_sges[i].addr = send_inline ? lnk->wr_tx_dma_addr + i * SMC_WR_BUF_SIZE :\n\t\t\t(uintptr_t)(&lnk->wr_tx_bufs[i]);"}},
		rule: RuleInlineSGE, at: "static void smc_wr_init_sge(struct smc_link *lnk)"},
	{name: "smc: inline flag on the wrong branch", file: "net/smc/smc_wr.c",
		edits: [][2]string{{"\t\tif (send_inline)\n\t\t\tlnk->wr_tx_ibs[i].send_flags |= IB_SEND_INLINE;", "\t\tif (!send_inline)\n\t\t\tlnk->wr_tx_ibs[i].send_flags |= IB_SEND_INLINE;"}},
		rule:  RuleInlineSGE, at: "static void smc_wr_init_sge(struct smc_link *lnk)"},
	{name: "smc: inline on the registration request", file: "net/smc/smc_wr.c",
		edits: [][2]string{{"\tlnk->wr_reg.wr.send_flags = IB_SEND_SIGNALED;", "\tlnk->wr_reg.wr.send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE;"}},
		rule:  RuleInlineReg, at: "static void smc_wr_init_sge(struct smc_link *lnk)"},
	{name: "smc: DMA base on the inline branch", file: "net/smc/smc_tx.c",
		edits: [][2]string{{"\t\t\tbase_addr = virt_addr;", "\t\t\tbase_addr = dma_addr;"}},
		rule:  RuleInlineSGE, at: "rc = smc_tx_rdma_write(conn, dst_off, num_sges, wr);"},
	{name: "smc: stale inline flag with DMA addresses", file: "net/smc/smc_tx.c",
		edits: [][2]string{{"\t\t} else {\n\t\t\twr->wr.send_flags &= ~IB_SEND_INLINE;\n\t\t}", "\t\t}"}},
		rule:  RuleInlineSGE, at: "rc = smc_tx_rdma_write(conn, dst_off, num_sges, wr);"},
}

// mutate writes a tree holding dir's files with the mutant's edits.
func mutate(t *testing.T, files map[string][]byte, m mutant) (string, string) {
	t.Helper()
	tree := t.TempDir()
	for rel, b := range files {
		os.MkdirAll(filepath.Join(tree, filepath.Dir(rel)), 0o755)
		os.WriteFile(filepath.Join(tree, rel), b, 0o644)
	}
	src := string(files[m.file])
	for _, e := range m.edits {
		if strings.Count(src, e[0]) != 1 {
			t.Fatalf("%s: edit anchor found %d times: %q", m.name, strings.Count(src, e[0]), e[0])
		}
		src = strings.Replace(src, e[0], e[1], 1)
	}
	os.WriteFile(filepath.Join(tree, m.file), []byte(src), 0o644)
	return tree, src
}

// lineOf returns the line of the n-th occurrence of text after the first
// edit.
func lineOf(src, editNew, text string, n int) int {
	if strings.HasPrefix(text, "static ") {
		// function-exit findings are reported at the closing brace
		fn := strings.Index(src, text)
		end := strings.Index(src[fn:], "\n}\n")
		return strings.Count(src[:fn+end+2], "\n") + 1
	}
	start := strings.Index(src, editNew)
	off := start
	for i := 0; i <= n; i++ {
		j := strings.Index(src[off:], text)
		if j < 0 {
			return -1
		}
		if i < n {
			off += j + len(text)
			continue
		}
		off += j
	}
	return strings.Count(src[:off], "\n") + 1
}

func runMutants(t *testing.T, files map[string][]byte, dir string, ms []mutant) {
	for _, m := range ms {
		t.Run(m.name, func(t *testing.T) {
			tree, src := mutate(t, files, m)
			rep, err := Run(Options{Tree: tree, Paths: []string{dir}})
			if err != nil {
				t.Fatal(err)
			}
			var errs []Finding
			for _, f := range rep.Findings {
				if f.Severity == SevError {
					errs = append(errs, f)
				}
			}
			if m.rule == "" {
				if len(errs) != 0 {
					t.Fatalf("want no finding, got %v", errs)
				}
				return
			}
			want := lineOf(src, m.edits[len(m.edits)-1][1], m.at, m.occurrence)
			if m.name == "size: read before the QP is created" || strings.HasPrefix(m.name, "size: the guard") {
				want = lineOf(src, "", m.at, 0)
			}
			for _, f := range errs {
				if f.Rule == m.rule && f.File == m.file && f.Line == want {
					return
				}
			}
			t.Errorf("want %s at %s:%d (%q); got %v", m.rule, m.file, want, m.at, errs)
		})
	}
}

func TestNvmeRdmaMutants(t *testing.T) {
	pristine, patched := patchedFiles(t)
	b, ok := patched[rdma]
	if !ok {
		t.Fatal("the series does not change rdma.c")
	}
	files := map[string][]byte{rdma: b}
	// sizeof(struct nvme_command) is computed from the tree's header.
	h, err := os.ReadFile(filepath.Join(pristine, "include/linux/nvme.h"))
	if err != nil {
		t.Fatal(err)
	}
	files["include/linux/nvme.h"] = h
	// The tree's providers that grant less inline data than requested
	// and succeed (mlx4's kernel QPs, pvrdma): with them the requested
	// size is no bound (the grant semantics, inline_size.go).
	for _, p := range []string{"drivers/infiniband/hw/mlx4/qp.c", "drivers/infiniband/hw/vmw_pvrdma/pvrdma_qp.c"} {
		if b, err := os.ReadFile(filepath.Join(pristine, p)); err == nil {
			files[p] = b
		}
	}
	// The unmutated patched file is clean.
	tree, _ := mutate(t, files, mutant{file: rdma})
	rep, err := Run(Options{Tree: tree, Paths: []string{"drivers/nvme/host"}})
	if err != nil || rep.Errors() != 0 {
		t.Fatalf("patched rdma.c: %v %v", err, rep.Findings)
	}
	runMutants(t, files, "drivers/nvme/host", nvmeMutants)
	runMutants(t, files, "drivers/nvme/host", sizeMutants)
}

func TestSmcMutants(t *testing.T) {
	_, pristine := testenv.Kernel(t, testkernel.Default)
	files := map[string][]byte{}
	ents, _ := os.ReadDir(filepath.Join(pristine, "net/smc"))
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(pristine, "net/smc", e.Name()))
		if err == nil {
			files["net/smc/"+e.Name()] = b
		}
	}
	runMutants(t, files, "net/smc", smcMutants)
}

// TestPristineTreesClean: the whole RDMA-using part of every pinned
// kernel's pristine tree has no inline finding and exactly the known
// in-capsule one.
func TestPristineTreesClean(t *testing.T) {
	l, err := tree.LoadLock(filepath.Join(testenv.RepoRoot(t), "series", "kernels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range l.Names() {
		t.Run(k, func(t *testing.T) {
			_, dir := testenv.KernelIfTested(t, k)
			rep, err := Run(Options{Tree: dir})
			if err != nil {
				t.Fatal(err)
			}
			// No inline-* finding at all: no error, no warning that an
			// address cannot be shown virtual, no incomplete analysis.
			// incapsule-bounds: exactly the known nvmet-rdma line.
			// It is an error (a true positive), and the known findings make it
			// pre-existing: the pristine tree judged by them has no new one.
			rep.JudgeKnown()
			if rep.Errors() != 0 || rep.Baseline.Unchanged != 1 {
				t.Errorf("%s: judged against the known findings: %d new errors, %d pre-existing, want 0 and 1", k, rep.Errors(), rep.Baseline.Unchanged)
			}
			known := 0
			for _, f := range rep.Findings {
				switch {
				case f.Rule == RuleIncapsule && f.File == "drivers/nvme/target/rdma.c" && f.Function == "nvmet_rdma_map_sgl_inline" && f.Severity == SevError && f.PreExisting():
					known++
				case strings.HasPrefix(f.Rule, "inline-") || f.Rule == RuleIncomplete || f.Rule == RuleIncapsule:
					t.Errorf("%s: %s [%s]", k, f, f.Severity)
				}
			}
			if known != 1 {
				t.Errorf("%s: want the known incapsule-bounds finding in nvmet_rdma_map_sgl_inline once, got %d", k, known)
			}
			// net/smc, the in-tree inline user (from 5.11 on), was analysed,
			// not skipped.
			got := strings.Join(rep.Inline, " ")
			for _, want := range []string{"net/smc/smc_tx.c", "net/smc/smc_wr.c"} {
				src, err := os.ReadFile(filepath.Join(dir, want))
				if err != nil || !bytes.Contains(src, []byte("IB_SEND_INLINE")) {
					continue // this kernel's smc posts nothing inline
				}
				if !strings.Contains(got, want) {
					t.Errorf("%s: %s was not analysed (inline users: %v)", k, want, rep.Inline)
				}
			}
		})
	}
}

const nvmetRdma = "drivers/nvme/target/rdma.c"

// The two posted fixes of the nvmet-rdma in-capsule bound, written from
// their descriptions, are clean; copies of the pattern on the host side
// and in nvmet-tcp are caught.
var incapsuleMutants = []mutant{
	{name: "fix v1: reject inline data with a nonzero offset", file: nvmetRdma,
		edits: [][2]string{{"	if (off + len > rsp->queue->dev->inline_data_size) {", "	if (off) {\n\t\tpr_err(\"inline data with a nonzero offset\\n\");\n\t\treturn NVME_SC_SGL_INVALID_OFFSET | NVME_STATUS_DNR;\n\t}\n\tif (off + len > rsp->queue->dev->inline_data_size) {"}},
		rule:  ""},
	{name: "fix v2: handle inline data with a nonzero offset", file: nvmetRdma,
		edits: [][2]string{{"	if (off + len > rsp->queue->dev->inline_data_size) {", "	if (off > rsp->queue->dev->inline_data_size ||\n\t    len > rsp->queue->dev->inline_data_size - off) {"}},
		rule:  ""},
	{name: "the pattern copied into nvmet-tcp", file: "drivers/nvme/target/tcp.c",
		edits: [][2]string{{"static void nvmet_tcp_free_cmd(struct nvmet_tcp_cmd *c)\n{", "static u16 nvmet_tcp_map_inline(struct nvmet_tcp_cmd *cmd, u32 size)\n{\n\tstruct nvme_sgl_desc *sgl = &cmd->req.cmd->common.dptr.sgl;\n\tu64 off = le64_to_cpu(sgl->addr);\n\tu32 len = le32_to_cpu(sgl->length);\n\n\tif (off + len > size)\n\t\treturn NVME_SC_SGL_INVALID_OFFSET;\n\treturn 0;\n}\n\nstatic void nvmet_tcp_free_cmd(struct nvmet_tcp_cmd *c)\n{"}},
		rule:  RuleIncapsule, at: "if (off + len > size)"},
	{name: "the pattern copied into the host", file: "drivers/nvme/host/rdma.c",
		edits: [][2]string{{"static void nvme_rdma_free_qe(", "static int nvme_rdma_check_inline(struct nvme_command *c, u32 size)\n{\n\tu64 off = le64_to_cpu(c->common.dptr.sgl.addr);\n\n\tif (le32_to_cpu(c->common.dptr.sgl.length) + off >= size)\n\t\treturn -EINVAL;\n\treturn 0;\n}\n\nstatic void nvme_rdma_free_qe("}},
		rule:  RuleIncapsule, at: "if (le32_to_cpu(c->common.dptr.sgl.length) + off >= size)"},
}

func TestIncapsuleBounds(t *testing.T) {
	_, pristine := testenv.Kernel(t, testkernel.Default)
	for _, m := range incapsuleMutants {
		b, err := os.ReadFile(filepath.Join(pristine, m.file))
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{m.file: b}
		if m.file != nvmetRdma {
			nb, err := os.ReadFile(filepath.Join(pristine, nvmetRdma))
			if err != nil {
				t.Fatal(err)
			}
			files[nvmetRdma] = nb
		}
		t.Run(m.name, func(t *testing.T) {
			tree, src := mutate(t, files, m)
			rep, err := Run(Options{Tree: tree, Paths: []string{filepath.Dir(m.file)}})
			if err != nil {
				t.Fatal(err)
			}
			var got []Finding
			for _, f := range rep.Findings {
				if f.Rule == RuleIncapsule && f.File == m.file && f.Severity == SevError {
					got = append(got, f)
				}
			}
			if m.rule == "" {
				for _, f := range rep.Findings {
					if f.Rule == RuleIncapsule {
						t.Errorf("the fix is not clean: %s [%s]", f, f.Severity)
					}
				}
				return
			}
			want := lineOf(src, m.edits[0][1], m.at, 0)
			if len(got) != 1 || got[0].Line != want {
				t.Errorf("want one incapsule-bounds error at %s:%d, got %v", m.file, want, got)
			}
		})
	}
}
