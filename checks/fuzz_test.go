package checks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/checks/engine"
)

// genC turns fuzz bytes into a C module: a few functions built from the
// statements and expressions kernel ULPs use around inline sends
// (requests, SGEs, flags, DMA mapping, QP creation, goto, loops, switch,
// ternaries, GNU ?:, statement expressions, #ifdef), nested by the input.
type genC struct {
	in  []byte
	pos int
	b   strings.Builder
}

func (g *genC) next(n int) int {
	if n <= 0 {
		return 0
	}
	if g.pos >= len(g.in) {
		return 0
	}
	c := int(g.in[g.pos])
	g.pos++
	return c % n
}

var (
	genPlaces = []string{"wr.send_flags", "wr->send_flags", "req->wr.send_flags", "first->send_flags", "flags", "sge->addr",
		"sge[1].addr", "wr.sg_list", "wr->sg_list", "wr.num_sge", "n", "wr.opcode", "wr.next", "q->max_inline",
		"attr.cap.max_inline_data", "req->sge[i].addr", "ret", "addr", "ok"}
	genExprs = []string{"IB_SEND_INLINE", "IB_SEND_SIGNALED | IB_SEND_INLINE", "flags", "0", "1", "(uintptr_t)buf",
		"qe->dma", "ib_dma_map_single(dev, buf, len, DMA_TO_DEVICE)", "__pa(buf)", "virt_to_phys(buf)", "&req->sge[0]",
		"req->sge", "len <= q->max_inline", "attr.cap.max_inline_data", "helper(q, len)", "IB_WR_REG_MR", "IB_WR_SEND",
		"&wr", "n + 1", "(u64)cookie", "wr.send_flags & IB_SEND_INLINE", "~IB_SEND_INLINE", "READ_ONCE(q->max_inline)",
		"rdma_create_qp(id, pd, &attr)", "ib_create_qp(pd, &attr)"}
	genOps   = []string{"=", "|=", "&=", "+=", "="}
	genConds = []string{"len <= q->max_inline", "likely(n == 1)", "unlikely(ret)", "!ret", "n != 1", "ok", "flags & IB_SEND_INLINE",
		"num_sge <= 1", "iu->num_sge == 1", "helper(q, len)", "ret == -EINVAL", "IS_ERR(qp)", "(ret = f())", "1", "0"}
)

func (g *genC) expr(depth int) string {
	switch g.next(6) {
	case 0:
		if depth < 3 {
			return "(" + g.expr(depth+1) + " ? " + g.expr(depth+1) + " : " + g.expr(depth+1) + ")"
		}
	case 1:
		if depth < 3 {
			return "(" + g.expr(depth+1) + " ?: " + g.expr(depth+1) + ")"
		}
	case 2:
		if depth < 2 {
			return "({ u64 t = " + g.expr(depth+1) + "; t; })"
		}
	case 3:
		if depth < 3 {
			return g.expr(depth+1) + " | " + g.expr(depth+1)
		}
	}
	return genExprs[g.next(len(genExprs))]
}

func (g *genC) stmt(depth int) {
	ind := strings.Repeat("\t", depth+1)
	if depth > 5 {
		fmt.Fprintf(&g.b, "%s%s %s %s;\n", ind, genPlaces[g.next(len(genPlaces))], genOps[g.next(len(genOps))], g.expr(0))
		return
	}
	switch g.next(13) {
	case 0, 1, 2:
		fmt.Fprintf(&g.b, "%s%s %s %s;\n", ind, genPlaces[g.next(len(genPlaces))], genOps[g.next(len(genOps))], g.expr(0))
	case 3:
		fmt.Fprintf(&g.b, "%sif (%s) {\n", ind, genConds[g.next(len(genConds))])
		g.block(depth + 1)
		if g.next(2) == 0 {
			fmt.Fprintf(&g.b, "%s} else {\n", ind)
			g.block(depth + 1)
		}
		fmt.Fprintf(&g.b, "%s}\n", ind)
	case 4:
		fmt.Fprintf(&g.b, "%sfor (i = 0; i < %d; i++) {\n", ind, g.next(4))
		g.block(depth + 1)
		fmt.Fprintf(&g.b, "%s}\n", ind)
	case 5:
		fmt.Fprintf(&g.b, "%swhile (%s) {\n", ind, genConds[g.next(len(genConds))])
		g.block(depth + 1)
		if g.next(2) == 0 {
			fmt.Fprintf(&g.b, "%s\tbreak;\n", ind)
		}
		fmt.Fprintf(&g.b, "%s}\n", ind)
	case 6:
		fmt.Fprintf(&g.b, "%sif (%s)\n%s\tgoto %s;\n", ind, genConds[g.next(len(genConds))], ind, []string{"out", "post", "err"}[g.next(3)])
	case 7:
		fmt.Fprintf(&g.b, "%sswitch (n) {\n%scase 1:\n", ind, ind)
		g.block(depth + 1)
		fmt.Fprintf(&g.b, "%s\tfallthrough;\n%scase 2:\n", ind, ind)
		g.block(depth + 1)
		fmt.Fprintf(&g.b, "%s\tbreak;\n%sdefault:\n%s\tbreak;\n%s}\n", ind, ind, ind, ind)
	case 8:
		fmt.Fprintf(&g.b, "%sret = ib_post_send(q->qp, %s, NULL);\n", ind, []string{"&wr", "first", "wr", "&req->wr"}[g.next(4)])
	case 9:
		fmt.Fprintf(&g.b, "%sdo {\n", ind)
		g.block(depth + 1)
		fmt.Fprintf(&g.b, "%s} while (%s);\n", ind, genConds[g.next(len(genConds))])
	case 10:
		fmt.Fprintf(&g.b, "#ifdef CONFIG_X\n")
		g.block(depth)
		fmt.Fprintf(&g.b, "#else\n")
		g.block(depth)
		fmt.Fprintf(&g.b, "#endif\n")
	case 11:
		fmt.Fprintf(&g.b, "%sreturn %s;\n", ind, g.expr(0))
	case 12:
		fmt.Fprintf(&g.b, "%slist_for_each_entry(p, &q->list, node) {\n", ind)
		g.block(depth + 1)
		fmt.Fprintf(&g.b, "%s}\n", ind)
	}
}

func (g *genC) block(depth int) {
	n := 1 + g.next(4)
	for i := 0; i < n; i++ {
		g.stmt(depth)
	}
}

// maxGenInput bounds how much of an input drives the generator (a
// function of a few dozen statements at most).
const maxGenInput = 192

func generate(in []byte) string {
	if len(in) > maxGenInput {
		in = in[:maxGenInput]
	}
	g := &genC{in: in}
	g.b.WriteString("static const struct ib_send_wr tmpl = { .opcode = IB_WR_SEND, .send_flags = IB_SEND_INLINE };\n")
	g.b.WriteString("static bool helper(struct q *q, u32 len) { return len <= q->max_inline; }\n")
	nf := 1 + g.next(3)
	for i := 0; i < nf; i++ {
		fmt.Fprintf(&g.b, "static int fn%d(struct q *q, struct tc_req *req, struct ib_send_wr *first, void *buf, u32 len)\n{\n", i)
		g.b.WriteString("\tstruct ib_send_wr wr = {}, *wrp = &wr;\n\tstruct ib_sge *sge = &req->sge[0];\n\tstruct ib_qp_init_attr attr = {};\n\tu32 flags = 0;\n\tint ret = 0, n = 1, i;\n\tbool ok = len <= q->max_inline;\n")
		g.block(0)
		g.b.WriteString("post:\n\tret = ib_post_send(q->qp, &wr, NULL);\nerr:\nout:\n\treturn ret;\n}\n")
	}
	return g.b.String()
}

// FuzzEngine: generated C functions (and, as seeds, the testdata cases
// themselves and their raw bytes) never crash the engine.
func FuzzEngine(f *testing.F) {
	f.Add([]byte{3, 0, 1, 2, 6, 1, 8, 0, 7, 3, 3, 2, 1, 11, 4})
	f.Add([]byte{10, 5, 9, 12, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	ents, _ := os.ReadDir("testdata")
	for _, e := range ents {
		if b, err := os.ReadFile(filepath.Join("testdata", e.Name())); err == nil && !e.IsDir() {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, src := range []string{generate(in), string(in)} {
			ex, uses := engine.ExpandMacros(os.TempDir(), caseModule+"/x.c", []byte(src))
			file := engine.Parse(caseModule+"/x.c", ex)
			file.Macros = uses
			p := analyseEverything(file)
			file.Close() // a fuzzing run parses millions of inputs
			if len(p) > 0 {
				t.Fatalf("%v\n%s", p, src)
			}
		}
	})
}

func TestGeneratedFunctions(t *testing.T) {
	// A fixed sweep of the generator, so -short runs some of it too.
	for seed := 0; seed < 30; seed++ {
		in := make([]byte, 64)
		x := uint32(seed*2654435761 + 1)
		for i := range in {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			in[i] = byte(x)
		}
		src := generate(in)
		file := engine.Parse(caseModule+"/x.c", []byte(src))
		p := analyseEverything(file)
		file.Close()
		if len(p) > 0 {
			t.Fatalf("%v\n%s", p, src)
		}
	}
}
