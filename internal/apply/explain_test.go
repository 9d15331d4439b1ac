package apply

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/tree"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files")

// TestExplainGolden: the text a conflicting patch gets names, per failing
// hunk, the file, the hunk header, the nearest place and its first
// differing line, the fuzz tried, and where the reverse of a hunk already
// stands; a missing file and a plain diff's strip level are said too.
func TestExplainGolden(t *testing.T) {
	l := base()
	l[13] = "\tfoo_call(dev, 14 /* changed upstream */);" // hunk 1's context
	l = append(l[:22], append([]string{"\tfoo_new(dev);"}, l[22:]...)...)
	file := join(l)
	diff := "--- a/drivers/foo/foo.c\n+++ b/drivers/foo/foo.c\n" +
		"@@ -12,7 +12,7 @@ static int foo(struct dev *dev)\n \tfoo_call(dev, 12);\n \tfoo_call(dev, 13);\n \tfoo_call(dev, 14);\n-\tfoo_call(dev, 15);\n+\tfoo_call(dev, 15 + 1);\n \tfoo_call(dev, 16);\n \tfoo_call(dev, 17);\n \tfoo_call(dev, 18);\n" +
		"@@ -20,6 +20,7 @@ static int foo(struct dev *dev)\n \tfoo_call(dev, 20);\n \tfoo_call(dev, 21);\n \tfoo_call(dev, 22);\n+\tfoo_new(dev);\n \tfoo_call(dev, 23);\n \tfoo_call(dev, 24);\n \tfoo_call(dev, 25);\n" +
		"--- a/drivers/foo/gone.c\n+++ b/drivers/foo/gone.c\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n d\n"
	text := "From: Jane Doe <jane@example.org>\nSubject: [PATCH] foo: fix the thing\n\nFix.\n\nSigned-off-by: Jane Doe <jane@example.org>\n---\n" + diff
	ps, err := mailpatch.ImportBytes("t.patch", []byte(text), "t", mailpatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Series(memTree{"drivers/foo/foo.c": file}, []series.Entry{{Source: "fix.patch", Expect: series.Applies}}, ps)
	if err != nil {
		t.Fatal(err)
	}
	o := &Out{Kernel: &tree.Kernel{Name: testkernel.Default}, Result: res, Given: true}
	got := strings.Join(res.Results[0].Explain(), "\n") + "\n\n" + o.Mismatch().Error() + "\n"
	golden := filepath.Join("testdata", "golden", "conflict-explain.txt")
	if *updateGolden {
		os.MkdirAll(filepath.Dir(golden), 0o755)
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("text differs from %s (-update rewrites it):\n%s", golden, got)
	}
}

// TestUpstreamLocationIsWhereTheChangeIs: a file that has the patch's
// added lines together far down (the fix) and one of them, or a name it
// introduces, near the top (a prototype, a similar line): the evidence
// points at the fix, not at the first line that matched.
func TestUpstreamLocationIsWhereTheChangeIs(t *testing.T) {
	var l []string
	l = append(l, "static void early(void)", "{", "\tsrq_wqe_copy_checked(srq, 0, NULL);", "\t\treturn -EINVAL_checked_bound;", "}")
	for i := 6; i < 300; i++ {
		l = append(l, "\tfoo_call(dev, "+itoa(i)+");")
	}
	l = append(l,
		"static int get_srq_wqe_checked(struct rxe_srq *srq, int wqe_index)",
		"{",
		"\tif (unlikely(wqe_index >= srq->rq.max_wr_checked))",
		"\t\treturn -EINVAL_checked_bound;",
		"\tsrq_wqe_copy_checked(srq, wqe_index, &qp->resp.srq_wqe);",
		"\treturn 0;",
		"}")
	patch := patchText("drivers/foo/rxe_resp.c", "@@ -1,6 +1,13 @@\n \tbar_call(1);\n \tbar_call(4);\n \tbar_call(5);\n+static int get_srq_wqe_checked(struct rxe_srq *srq, int wqe_index)\n+{\n"+
		"+\tif (unlikely(wqe_index >= srq->rq.max_wr_checked))\n+\t\treturn -EINVAL_checked_bound;\n+\tsrq_wqe_copy_checked(srq, wqe_index, &qp->resp.srq_wqe);\n+\treturn 0;\n+}\n"+
		" \tbar_call(2);\n \tbar_call(3);\n \tbar_call(6);\n")
	resp := join([]string{"\tbar_call(1);", "\tbar_call(4);", "\tbar_call(5);", "\tbar_call(20);", "\tbar_call(30);", "\tbar_call(7);"})
	r := one(t, memTree{"drivers/foo/rxe_resp.c": resp, "drivers/foo/rxe_srq.c": join(l)}, patch, series.AlreadyUpstream)
	u := r.Upstream
	if u == nil || len(u.Files) == 0 {
		t.Fatalf("no upstream evidence: %+v (%s)", u, r.Disposition)
	}
	if f := u.Files[0]; f.First < 300 {
		t.Errorf("evidence at %s, want the function at line 300", f)
	}
	for _, n := range u.NamesFound {
		if n.Line < 300 {
			t.Errorf("name %s, want it where the function is (line 300 on)", n)
		}
	}
	if ex := strings.Join(r.Explain(), "\n"); !strings.Contains(ex, "rxe_srq.c:300-") {
		t.Errorf("text %q does not name lines 300-", ex)
	}
}

// TestAllowedCauses: a patch accepted with --allow though it does not
// apply still has its cause in the text: where an already-applied patch
// stands (the line its reverse matches), a conflict's failing hunk and
// nearest place. Patches that apply have none.
func TestAllowedCauses(t *testing.T) {
	l := base()
	l = append(l[:22], append([]string{"\tfoo_new(dev);"}, l[22:]...)...)
	applied := "--- a/drivers/foo/foo.c\n+++ b/drivers/foo/foo.c\n" +
		"@@ -20,6 +20,7 @@ static int foo(struct dev *dev)\n \tfoo_call(dev, 20);\n \tfoo_call(dev, 21);\n \tfoo_call(dev, 22);\n+\tfoo_new(dev);\n \tfoo_call(dev, 23);\n \tfoo_call(dev, 24);\n \tfoo_call(dev, 25);\n"
	conflict := "--- a/drivers/foo/foo.c\n+++ b/drivers/foo/foo.c\n" +
		"@@ -12,7 +12,7 @@ static int foo(struct dev *dev)\n \tfoo_call(dev, 12);\n \tfoo_call(dev, 13);\n \tfoo_call(dev, 99);\n-\tfoo_call(dev, 15);\n+\tfoo_call(dev, 15 + 1);\n \tfoo_call(dev, 98);\n \tfoo_call(dev, 97);\n \tfoo_call(dev, 18);\n"
	fine := "--- a/drivers/foo/foo.c\n+++ b/drivers/foo/foo.c\n" +
		"@@ -3,3 +3,3 @@\n \tfoo_call(dev, 3);\n-\tfoo_call(dev, 4);\n+\tfoo_call(dev, 4 + 1);\n \tfoo_call(dev, 5);\n"
	var ps []*mailpatch.Patch
	var entries []series.Entry
	for i, d := range []string{applied, conflict, fine} {
		text := "From: Jane Doe <jane@example.org>\nSubject: [PATCH] foo: fix " + itoa(i) + "\n\nFix.\n\nSigned-off-by: Jane Doe <jane@example.org>\n---\n" + d
		p, err := mailpatch.ImportBytes("t.patch", []byte(text), "t", mailpatch.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p...)
		entries = append(entries, series.Entry{Source: "p" + itoa(i) + ".patch", Expect: []string{series.AlreadyApplied, series.Conflict, series.Applies}[i]})
	}
	res, err := Series(memTree{"drivers/foo/foo.c": join(l)}, entries, ps)
	if err != nil {
		t.Fatal(err)
	}
	o := &Out{Kernel: &tree.Kernel{Name: testkernel.Default}, Result: res, Given: true}
	c := o.Causes()
	if len(c) != 2 {
		t.Fatalf("causes %q, want two (the patch that applies has none)", c)
	}
	if !strings.Contains(c[0], "p0.patch is already-applied") || !strings.Contains(c[0], "its reverse matches at line 20") {
		t.Errorf("already-applied cause %q does not say where", c[0])
	}
	if !strings.Contains(c[1], "p1.patch is conflict") || !strings.Contains(c[1], "hunk 1 (@@ -12,7 +12,7 @@") || !strings.Contains(c[1], "nearest at line 12") {
		t.Errorf("conflict cause %q does not name the hunk and the nearest place", c[1])
	}
}
