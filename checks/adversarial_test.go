package checks

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/checks/engine"
)

// adversarialShapes are kernel-C shapes chosen to hurt an analysis:
// deep nesting, a huge switch, goto spaghetti, recursive and exponential
// macros, K&R definitions, very long expressions, deep parentheses and
// ternaries, unterminated constructs, a long function, many posts in a
// loop. scale multiplies their sizes.
func adversarialShapes(scale int) map[string]string {
	nestN, tenK := 60*scale, 400*scale
	m := map[string]string{}
	var b strings.Builder
	hdr := "static int f(struct q *q, struct ib_send_wr *first, u32 len, int n)\n{\n\tstruct ib_send_wr wr = {};\n\tstruct ib_sge sge;\n\tint ret = 0;\n"
	tail := "\tret = ib_post_send(q->qp, &wr, NULL);\n\treturn ret;\n}\n"
	// deep nesting
	b.Reset()
	b.WriteString(hdr)
	for i := 0; i < nestN; i++ {
		fmt.Fprintf(&b, "if (len > %d) {\n wr.send_flags |= IB_SEND_INLINE;\n", i)
	}
	for i := 0; i < nestN; i++ {
		b.WriteString("}\n")
	}
	b.WriteString(tail)
	m["nest"] = b.String()
	// huge switch
	b.Reset()
	b.WriteString(hdr + "switch (n) {\n")
	for i := 0; i < 300*scale; i++ {
		fmt.Fprintf(&b, "case %d: wr.send_flags = %s; sge.length = %d; if (len < %d) break;\n", i, []string{"IB_SEND_INLINE", "0"}[i%2], i, i)
	}
	b.WriteString("}\n" + tail)
	m["switch"] = b.String()
	// goto spaghetti
	b.Reset()
	b.WriteString(hdr)
	for i := 0; i < 60*scale; i++ {
		fmt.Fprintf(&b, "l%d:\n\tif (len == %d) goto l%d;\n\twr.send_flags ^= IB_SEND_INLINE;\n\tif (n & %d) goto l%d;\n\tsge.addr = (uintptr_t)q->buf%d;\n", i, i, (i*7+3)%(60*scale), i, (i*13+1)%(60*scale), i)
	}
	b.WriteString(tail)
	m["goto"] = b.String()
	// macro recursion
	m["macro"] = "#define SETF(w) MARK(w).send_flags |= IB_SEND_INLINE\n#define MARK(w) SETF(w)\n#define TWICE(w) (w.send_flags | w.send_flags | w.send_flags | w.send_flags)\n#define DEEP(w) TWICE(TWICE(TWICE(TWICE(w))))\n" + hdr + "\tSETF(wr);\n\twr.send_flags = DEEP(DEEP(wr));\n" + tail
	// K&R
	m["knr"] = "static int f(q, len)\n\tstruct q *q;\n\tu32 len;\n{\n\tstruct ib_send_wr wr;\n\twr.send_flags = IB_SEND_INLINE;\n\treturn ib_post_send(q->qp, &wr, NULL);\n}\n"
	// long expression: x | (c ? F : 0) | ... (2000 terms took minutes in
	// one step; TestWorkBudget holds that case)
	b.Reset()
	b.WriteString(hdr + "\twr.send_flags = 0")
	for i := 0; i < 10*scale; i++ {
		fmt.Fprintf(&b, " | (len > %d ? IB_SEND_INLINE : 0)", i)
	}
	b.WriteString(";\n" + tail)
	m["longexpr"] = b.String()
	// deep ternary
	b.Reset()
	b.WriteString(hdr + "\twr.send_flags = ")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "(len > %d ? IB_SEND_INLINE : ", i)
	}
	b.WriteString("0" + strings.Repeat(")", 40) + ";\n" + tail)
	m["ternary"] = b.String()
	// deep parens
	m["parens"] = hdr + "\twr.send_flags = " + strings.Repeat("(", 1000*scale) + "IB_SEND_INLINE" + strings.Repeat(")", 1000*scale) + ";\n" + tail
	// unterminated
	m["unterminated"] = hdr + "\tif (len) {\n\t\twr.send_flags = IB_SEND_INLINE;\n\t\tret = ib_post_send(q->qp, &wr, NULL\n/* never closed\n"
	// 10k lines
	b.Reset()
	b.WriteString(hdr)
	for i := 0; i < tenK; i++ {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "\tif (len > %d)\n", i)
		case 1:
			b.WriteString("\t\twr.send_flags |= IB_SEND_INLINE;\n")
		case 2:
			fmt.Fprintf(&b, "\tsge.length = %d;\n", i)
		case 3:
			b.WriteString("\twr.sg_list = &sge; wr.num_sge = 1;\n")
		case 4:
			b.WriteString("\tret = ib_post_send(q->qp, &wr, NULL);\n")
		}
	}
	b.WriteString(tail)
	m["10k"] = b.String()
	// many posts in a loop with branches
	b.Reset()
	b.WriteString(hdr + "\tfor (;;) {\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "\t\tif (len > %d) wr.send_flags |= IB_SEND_INLINE; else wr.send_flags &= ~IB_SEND_INLINE;\n\t\tif (n == %d) sge.length = len; \n\t\tret = ib_post_send(q->qp, &wr, NULL);\n", i, i)
	}
	b.WriteString("\t}\n" + tail)
	m["loopposts"] = b.String()
	return m
}

// TestAdversarialShapes: the engine over each shape, with the
// prefilter off: no panic, no internal error, and every function within
// its budget of steps (the budget bounds the work, not a clock). Without
// -short the shapes are five times larger.
func TestAdversarialShapes(t *testing.T) {
	scale := 5
	if testing.Short() {
		scale = 1
	}
	for name, src := range adversarialShapes(scale) {
		t.Run(name, func(t *testing.T) {
			traceFn = func(f *engine.File, fn string, _ time.Duration, in *engine.Interp) {
				if steps := in.Steps; steps > engine.MaxSteps+1 {
					t.Errorf("%s: %d steps, over the budget of %d", fn, steps, engine.MaxSteps)
				}
			}
			defer func() { traceFn = nil }()
			ex, uses := engine.ExpandMacros(os.TempDir(), caseModule+"/x.c", []byte(src))
			file := engine.Parse(caseModule+"/x.c", ex)
			defer file.Close()
			file.Macros = uses
			if p := analyseEverything(file); len(p) > 0 {
				t.Fatalf("%v", p)
			}
		})
	}
}

// longOr is a function whose one statement ors n ternaries into the
// flags, repeated stmts times after six tests that split the paths.
func longOr(n, stmts int) string {
	var b strings.Builder
	b.WriteString("static int f(struct q *q, u32 len)\n{\n\tstruct ib_send_wr wr = {};\n\tint ret = 0;\n")
	for i := 0; i < 6 && stmts > 1; i++ {
		fmt.Fprintf(&b, "\tif (q->inline_ok%d)\n\t\tret++;\n", i)
	}
	for s := 0; s < stmts; s++ {
		b.WriteString("\twr.send_flags = 0")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, " | (len > %d ? IB_SEND_INLINE : 0)", i)
		}
		b.WriteString(";\n")
	}
	b.WriteString("\tret = ib_post_send(q->qp, &wr, NULL);\n\treturn ret;\n}\n")
	return b.String()
}

// TestWorkBudget: the work of one step is bounded and counted, not
// timed. A statement of 2,000 or-ed ternaries (which took minutes: each
// use of the flag asked tree-sitter for its parents, found from the root
// down, and each sub-expression's text was copied whole) now costs a few
// evaluations per term and stays within the budget; a function that
// evaluates more than engine.MaxWork expressions (long statements on 64
// paths, under the step budget) is cut short and says so.
func TestWorkBudget(t *testing.T) {
	run := func(src string) (in *engine.Interp, notes []Finding) {
		traceFn = func(_ *engine.File, _ string, _ time.Duration, x *engine.Interp) { in = x }
		defer func() { traceFn = nil }()
		file := engine.Parse(caseModule+"/x.c", []byte(src))
		defer file.Close()
		facts := engine.NewFacts()
		facts.Learn(file)
		for _, fn := range engine.Functions(file) {
			out, _ := analyseFunction(file, fn, facts, map[siteKey][]engine.SiteVisit{}, false)
			for _, f := range out {
				if f.Rule == RuleIncomplete {
					notes = append(notes, f)
				}
			}
		}
		if in == nil {
			t.Fatal("the function was not analysed")
		}
		return in, notes
	}
	in, notes := run(longOr(2000, 1))
	if in.WorkCapped || len(notes) > 0 {
		t.Errorf("2,000 terms: cut short (%d expressions evaluated): %v", in.Work, notes)
	}
	if in.Work > 10*2000 {
		t.Errorf("2,000 terms: %d expressions evaluated, want at most 10 a term", in.Work)
	}
	in, notes = run(longOr(100, 20))
	if !in.WorkCapped || !in.Capped {
		t.Fatalf("20 statements of 100 terms on 64 paths: not cut short (%d expressions, %d steps)", in.Work, in.Steps)
	}
	if in.Steps >= engine.MaxSteps {
		t.Errorf("cut by the step budget (%d steps), not the work budget", in.Steps)
	}
	if in.Work > engine.MaxWork+10*100 {
		t.Errorf("%d expressions evaluated, over the budget of %d by more than a statement", in.Work, engine.MaxWork)
	}
	if len(notes) != 1 || !strings.Contains(notes[0].Message, "cut short") {
		t.Errorf("want one note that the analysis was cut short, got %v", notes)
	}
}
