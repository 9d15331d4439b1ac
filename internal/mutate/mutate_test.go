package mutate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// A small provider-neutral ULP made for this test: a post function that
// gains an inline path and a QP creation that gains an inline request.
const fixtureBefore = `struct buf {
	void *data;
	u64 dma;
};

static int make_qp(struct q *q)
{
	struct ib_qp_init_attr attr;
	int ret;

	ret = ib_create_qp(q->pd, &attr);
	return ret;
}

static int post(struct q *q, struct buf *b, struct ib_sge *sge, int n)
{
	struct ib_send_wr wr = {};

	sge->addr = b->dma;
	wr.sg_list = sge;
	wr.num_sge = n;
	return ib_post_send(q->qp, &wr, NULL);
}
`

const fixturePatch = `From: Dev <dev@example.invalid>
Subject: [PATCH] ulp: post small messages inline

Post inline when the message fits.

---
diff --git a/drivers/ulp/post.c b/drivers/ulp/post.c
index 1111111..2222222 100644
--- a/drivers/ulp/post.c
+++ b/drivers/ulp/post.c
@@ -8,7 +8,9 @@ static int make_qp(struct q *q)
 	struct ib_qp_init_attr attr;
 	int ret;
 
+	attr.cap.max_inline_data = sizeof(struct hdr);
 	ret = ib_create_qp(q->pd, &attr);
+	q->inline_size = ret ? 0 : attr.cap.max_inline_data;
 	return ret;
 }
 
@@ -17,6 +19,10 @@ static int post(struct q *q, struct buf *b, struct ib_sge *sge, int n)
 	struct ib_send_wr wr = {};
 
 	sge->addr = b->dma;
+	if (n == 1 && sge->length <= q->inline_size) {
+		sge->addr = (uintptr_t)b->data;
+		wr.send_flags |= IB_SEND_INLINE;
+	}
 	wr.sg_list = sge;
 	wr.num_sge = n;
 	return ib_post_send(q->qp, &wr, NULL);
-- 
2.39.5
`

func fixture(t *testing.T) ([]*mailpatch.Patch, func(string) ([]byte, error)) {
	t.Helper()
	ps, err := mailpatch.ImportBytes("post.patch", []byte(fixturePatch), "ulp", mailpatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	read := func(rel string) ([]byte, error) {
		if rel == "drivers/ulp/post.c" {
			return []byte(fixtureBefore), nil
		}
		return nil, os.ErrNotExist
	}
	return ps, read
}

// TestGenerateClasses: on the fixture every operator class makes its
// mutants at the line it names, and each mutant is the patch with
// exactly that added line changed (it applies to the same tree and the
// result differs from the patch's in that line only).
func TestGenerateClasses(t *testing.T) {
	ps, read := fixture(t)
	ms, err := Generate(ps, read, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		AddrKind:        {"\t\tsge->addr = b->dma;", "\t\t(void)0;"},
		InlineAlways:    {"\tif (1) {"},
		GuardDropped:    {"\tif (1 && sge->length <= q->inline_size) {", "\tif (n == 1 && 1) {"},
		GuardWidened:    {"\tif (n == 1 && sge->length <= q->inline_size + 1) {"},
		RequestForGrant: {"\tq->inline_size = ret ? 0 : sizeof(struct hdr);"},
		OffByOne:        {"\tattr.cap.max_inline_data = (sizeof(struct hdr) - 1);", "\tattr.cap.max_inline_data = (sizeof(struct hdr) + 1);"},
		FlagCleared:     {"\t\twr.send_flags &= ~(IB_SEND_INLINE);"},
		ErrorIgnored:    {"\tq->inline_size = attr.cap.max_inline_data;"},
	}
	got := map[string][]string{}
	orig := apply(t, ps[0], read)
	for _, m := range ms {
		got[m.Operator] = append(got[m.Operator], m.After)
		after := apply(t, m.Patch, read)
		ol, al := strings.Split(orig, "\n"), strings.Split(after, "\n")
		if len(ol) != len(al) {
			t.Fatalf("%s: %d lines after the mutant, %d after the patch", m.ID, len(al), len(ol))
		}
		diff := 0
		for i := range ol {
			if ol[i] != al[i] {
				diff++
				if i+1 != m.Line || ol[i] != m.Before || al[i] != m.After {
					t.Errorf("%s: line %d changed (%q -> %q), the mutant says line %d", m.ID, i+1, ol[i], al[i], m.Line)
				}
			}
		}
		if diff != 1 {
			t.Errorf("%s changes %d lines", m.ID, diff)
		}
	}
	for op, lines := range want {
		for _, l := range lines {
			if !contains(got[op], l) {
				t.Errorf("%s: no mutant %q (got %q)", op, l, got[op])
			}
		}
	}
	n := 0
	for _, l := range want {
		n += len(l)
	}
	if len(ms) != n {
		t.Errorf("%d mutants, want the %d above", len(ms), n)
	}
}

// TestCapKeepsEveryClass: a cap smaller than the mutants keeps one of
// each class before a second of any, and numbers them from m01.
func TestCapKeepsEveryClass(t *testing.T) {
	ps, read := fixture(t)
	ms, err := Generate(ps, read, Options{Max: len(Operators)})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, m := range ms {
		if seen[m.Operator] {
			t.Errorf("class %s twice under a cap of one per class", m.Operator)
		}
		seen[m.Operator] = true
		if want := "m0" + string(rune('1'+i)); i < 9 && m.ID != want {
			t.Errorf("mutant %d is %s", i, m.ID)
		}
	}
	if len(seen) != len(Operators) {
		t.Errorf("classes %v, want all %d", seen, len(Operators))
	}
	if _, err := Generate(ps, read, Options{Operators: []string{"no-such"}}); err == nil {
		t.Error("an unknown operator was accepted")
	}
}

// TestNotExactRefused: a patch that does not apply exactly (the tree
// moved on) is refused with the way out, not mutated on a guess.
func TestNotExactRefused(t *testing.T) {
	ps, _ := fixture(t)
	read := func(string) ([]byte, error) { return []byte("int other;\n"), nil }
	_, err := Generate(ps, read, Options{})
	if err == nil || !strings.Contains(err.Error(), "patchctl refresh") {
		t.Fatalf("err = %v", err)
	}
}

// TestSeed000 on the pinned 6.12 tree: seed 000 as regenerated for the
// kernel gives at least 12 mutants, among them the DMA address on the
// inline SGE (qe->dma) the DMA-faithful boot is for.
func TestSeed000(t *testing.T) {
	_, dir := testenv.Kernel(t, testkernel.Default)
	root := testenv.RepoRoot(t)
	// 6.12 itself: a patch of its series
	b, err := os.ReadFile(filepath.Join(root, "series", "6.12", "0001-nvme-rdma-post-the-command-capsule-inline-when-it-fi.patch"))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := mailpatch.ImportBytes("0001.patch", b, "nvme-rdma-inline-capsule", mailpatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := Generate(ps, func(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, rel)) }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	classes := map[string]int{}
	dma := false
	for _, m := range ms {
		classes[m.Operator]++
		if m.Operator == AddrKind && strings.Contains(m.After, "sge->addr = qe->dma;") {
			dma = true
		}
		t.Logf("%s %-18s %s:%d %s", m.ID, m.Operator, m.File, m.Line, strings.TrimSpace(m.After))
	}
	if len(ms) < 12 || !dma {
		t.Errorf("%d mutants (want >= 12), the inline SGE's DMA address among them: %v", len(ms), dma)
	}
	for _, op := range Operators {
		if classes[op] == 0 {
			t.Errorf("no %s mutant of seed 000", op)
		}
	}
}

func apply(t *testing.T, p *mailpatch.Patch, read func(string) ([]byte, error)) string {
	t.Helper()
	src, _ := read(p.Files[0].OldName)
	var out bytes.Buffer
	if err := gitdiff.Apply(&out, bytes.NewReader(src), p.Files[0]); err != nil {
		t.Fatalf("the mutant does not apply: %v", err)
	}
	return out.String()
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestFlagSetByAssignment: a patch that sets send_flags whole (the
// inline flag or-ed into a constant, or chosen by a ternary) gets the
// flag-cleared mutant too, not only one that or-s it in.
func TestFlagSetByAssignment(t *testing.T) {
	before := "static int post(struct q *q, bool small)\n{\n\tstruct ib_send_wr wr = {};\n\n\treturn ib_post_send(q->qp, &wr, NULL);\n}\n"
	patch := `From: Dev <dev@example.invalid>
Subject: [PATCH] ulp: signal and inline

---
diff --git a/drivers/ulp/p.c b/drivers/ulp/p.c
index 1111111..2222222 100644
--- a/drivers/ulp/p.c
+++ b/drivers/ulp/p.c
@@ -2,5 +2,7 @@ static int post(struct q *q, bool small)
 {
 	struct ib_send_wr wr = {};
 
+	wr.send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE;
+	wr.send_flags = small ? IB_SEND_INLINE : 0;
 	return ib_post_send(q->qp, &wr, NULL);
 }
-- 
2.39.5
`
	ps, err := mailpatch.ImportBytes("p.patch", []byte(patch), "ulp", mailpatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := Generate(ps, func(string) ([]byte, error) { return []byte(before), nil }, Options{Operators: []string{FlagCleared}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, strings.TrimSpace(m.After))
	}
	for _, w := range []string{"wr.send_flags = IB_SEND_SIGNALED | 0;", "wr.send_flags = small ? 0 : 0;"} {
		if !contains(got, w) {
			t.Errorf("no mutant %q (got %q)", w, got)
		}
	}
}
