package apply

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/series"
)

// memTree is a Tree in memory.
type memTree map[string]string

func (m memTree) ReadFile(p string) ([]byte, error) {
	c, ok := m[p]
	if !ok {
		return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	return []byte(c), nil
}

func (m memTree) ReadDir(dir string) ([]string, error) {
	var out []string
	for p := range m {
		if path.Dir(p) == dir {
			out = append(out, path.Base(p))
		}
	}
	if len(out) == 0 {
		return nil, fs.ErrNotExist
	}
	sort.Strings(out)
	return out, nil
}

// base is a C-like file of 30 numbered lines.
func base() []string {
	var l []string
	for i := 1; i <= 30; i++ {
		l = append(l, fmt.Sprintf("\tfoo_call(dev, %d);", i))
	}
	return l
}

func join(l []string) string { return strings.Join(l, "\n") + "\n" }

// patchText makes a one-file patch message from a diff body.
func patchText(file, diff string) string {
	return "From: Jane Doe <jane@example.org>\nSubject: [PATCH] foo: change\n\nA change.\n\nSigned-off-by: Jane Doe <jane@example.org>\n---\n" +
		"diff --git a/" + file + " b/" + file + "\n--- a/" + file + "\n+++ b/" + file + "\n" + diff
}

func mustPatch(t *testing.T, text string) *mailpatch.Patch {
	t.Helper()
	ps, err := mailpatch.ImportBytes("t.patch", []byte(text), "t", mailpatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ps[0]
}

// change15 replaces line 15, with three lines of context on each side
// (12-14 and 16-18): outer context 12 and 18, inner 14 and 16.
var change15 = patchText("drivers/foo/foo.c", "@@ -12,7 +12,7 @@ static int foo(struct dev *dev)\n"+
	" \tfoo_call(dev, 12);\n \tfoo_call(dev, 13);\n \tfoo_call(dev, 14);\n"+
	"-\tfoo_call(dev, 15);\n+\tfoo_call(dev, 15 + 1);\n"+
	" \tfoo_call(dev, 16);\n \tfoo_call(dev, 17);\n \tfoo_call(dev, 18);\n")

func edit(l []string, line int, s string) []string {
	out := append([]string(nil), l...)
	out[line-1] = s
	return out
}

func one(t *testing.T, tree memTree, text, expect string) *Result {
	t.Helper()
	res, err := Series(tree, []series.Entry{{Source: "patches/t/x.patch", Expect: expect, Reason: "test"}}, []*mailpatch.Patch{mustPatch(t, text)})
	if err != nil {
		t.Fatal(err)
	}
	return res.Results[0]
}

func TestDispositions(t *testing.T) {
	post := edit(base(), 15, "\tfoo_call(dev, 15 + 1);")
	shifted := append([]string{"/* a */", "/* b */", "/* c */", "/* d */", "/* e */"}, base()...)
	cases := []struct {
		name        string
		file        []string
		disposition string
		offset      int64
		fuzz        int
	}{
		{"clean", base(), series.Applies, 0, 0},
		{"offset", shifted, series.AppliesOffset, 5, 0},
		{"fuzz 1: last outer context line differs", edit(base(), 18, "\tchanged();"), series.AppliesFuzz, 0, 1},
		{"fuzz 1 with offset", append([]string{"/* a */"}, edit(base(), 12, "\tchanged();")...), series.AppliesFuzz, 1, 1},
		{"fuzz 2: second outer line differs", edit(base(), 17, "\tchanged();"), series.AppliesFuzz, 0, 2},
		{"inner context never dropped", edit(base(), 16, "\tchanged();"), series.Conflict, 0, 0},
		{"removed line differs", edit(base(), 15, "\tfoo_call(dev, 99);"), series.Conflict, 0, 0},
		{"already applied", post, series.AlreadyApplied, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := one(t, memTree{"drivers/foo/foo.c": join(c.file)}, change15, c.disposition)
			if r.Disposition != c.disposition || !r.Match {
				t.Fatalf("disposition %s, want %s", r.Disposition, c.disposition)
			}
			if !series.IsApplied(r.Disposition) {
				if r.Disposition == series.Conflict {
					h := r.Hunks[0]
					if h.Applied || h.Nearest == 0 || h.NearTotal != 7 || h.Text == "" {
						t.Errorf("conflict does not show the hunk and its closest place: %+v", h)
					}
				}
				return
			}
			h := r.Hunks[0]
			if h.Offset != c.offset || h.Fuzz != c.fuzz {
				t.Errorf("offset %d fuzz %d, want %d %d", h.Offset, h.Fuzz, c.offset, c.fuzz)
			}
			// The regenerated patch applies strictly (no offset, no fuzz).
			f := r.Regenerated.Files[0]
			var out bytes.Buffer
			if err := gitdiff.Apply(&out, strings.NewReader(join(c.file)), f); err != nil {
				t.Fatalf("regenerated patch does not apply strictly: %v\n%s", err, r.Regenerated.Diff)
			}
			want := strings.Replace(join(c.file), "\tfoo_call(dev, 15);\n", "\tfoo_call(dev, 15 + 1);\n", 1)
			if out.String() != want {
				t.Errorf("regenerated patch gives another result")
			}
			if f.TextFragments[0].OldPosition != 12+c.offset {
				t.Errorf("regenerated hunk at %d, want %d", f.TextFragments[0].OldPosition, 12+c.offset)
			}
		})
	}
}

func TestSearchStartsNearStatedLine(t *testing.T) {
	// The hunk's lines appear twice; GNU patch takes the one nearest the
	// stated line (plus the previous hunk's offset).
	l := append(base(), base()...)
	r := one(t, memTree{"drivers/foo/foo.c": join(l)}, strings.Replace(change15, "@@ -12,7 +12,7 @@", "@@ -40,7 +40,7 @@", 1), series.AppliesOffset)
	if r.Hunks[0].Landed != 42 {
		t.Errorf("landed at %d, want 42 (the copy nearest 40)", r.Hunks[0].Landed)
	}
}

func TestAlreadyUpstreamMovedCode(t *testing.T) {
	// The patch adds a helper to foo.c; upstream has it in helper.c.
	add := "@@ -13,6 +13,11 @@ static int foo(struct dev *dev)\n \tfoo_call(dev, 13);\n \tfoo_call(dev, 14);\n \tfoo_call(dev, 15);\n" +
		"+\tfoo_register_inline_path(dev, FOO_INLINE_THRESHOLD);\n+\tfoo_enable_inline_klm(dev->inline_mask);\n" +
		"+\tfoo_post_inline_descriptors(dev, foo_inline_size);\n+\tif (foo_inline_size > FOO_INLINE_THRESHOLD)\n+\t\tfoo_warn_inline_size(dev);\n" +
		" \tfoo_call(dev, 16);\n \tfoo_call(dev, 17);\n \tfoo_call(dev, 18);\n"
	moved := "int helper(struct dev *dev)\n{\n\tfoo_register_inline_path(dev, FOO_INLINE_THRESHOLD);\n\tfoo_enable_inline_klm(dev->inline_mask);\n" +
		"\tfoo_post_inline_descriptors(dev,   foo_inline_size);\n\tif (foo_inline_size > FOO_INLINE_THRESHOLD)\n\t\tfoo_warn_inline_size(dev);\n}\n"
	tree := memTree{
		"drivers/foo/foo.c":    join(edit(base(), 15, "\thelper(dev);")),
		"drivers/foo/helper.c": moved,
		"drivers/bar/other.c":  moved, // another folder: not searched
	}
	r := one(t, tree, patchText("drivers/foo/foo.c", add), series.AlreadyUpstream)
	if r.Disposition != series.AlreadyUpstream {
		t.Fatalf("disposition %s, want already-upstream; upstream %+v", r.Disposition, r.Upstream)
	}
	u := r.Upstream
	if u.Found != 5 || u.Total != 5 || len(u.Files) != 1 || u.Files[0].Path != "drivers/foo/helper.c" || u.Files[0].First != 3 {
		t.Errorf("upstream evidence %+v, want all 5 lines in helper.c from line 3", u)
	}
	// Without the moved copy it is a conflict, and the evidence says so.
	delete(tree, "drivers/foo/helper.c")
	r = one(t, tree, patchText("drivers/foo/foo.c", add), series.Conflict)
	if r.Disposition != series.Conflict || r.Upstream.Found != 0 {
		t.Errorf("disposition %s upstream %+v, want a conflict with nothing found", r.Disposition, r.Upstream)
	}
}

func TestNewAndDeletedFiles(t *testing.T) {
	create := "From: J <j@example.org>\nSubject: [PATCH] add\n\n---\ndiff --git a/drivers/foo/new.c b/drivers/foo/new.c\nnew file mode 100644\nindex 000000000000..111111111111\n--- /dev/null\n+++ b/drivers/foo/new.c\n@@ -0,0 +1,2 @@\n+int a;\n+int b;\n"
	r := one(t, memTree{"drivers/foo/foo.c": join(base())}, create, series.Applies)
	if r.Disposition != series.Applies {
		t.Fatalf("create: %s", r.Disposition)
	}
	r = one(t, memTree{"drivers/foo/new.c": "int a;\nint b;\n"}, create, series.AlreadyApplied)
	if r.Disposition != series.AlreadyApplied {
		t.Errorf("create on a tree that has the file: %s", r.Disposition)
	}
	del := "From: J <j@example.org>\nSubject: [PATCH] del\n\n---\ndiff --git a/drivers/foo/new.c b/drivers/foo/new.c\ndeleted file mode 100644\nindex 111111111111..000000000000\n--- a/drivers/foo/new.c\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-int a;\n-int b;\n"
	res, err := Series(memTree{"drivers/foo/new.c": "int a;\nint b;\n"}, []series.Entry{{Source: "p/x", Expect: series.Applies}}, []*mailpatch.Patch{mustPatch(t, del)})
	if err != nil || res.Results[0].Disposition != series.Applies {
		t.Fatalf("delete: %v %+v", err, res)
	}
	if c, ok := res.Files["drivers/foo/new.c"]; !ok || c != nil {
		t.Error("delete not recorded")
	}
}

func TestSeriesInOrderAndMismatch(t *testing.T) {
	second := patchText("drivers/foo/foo.c", "@@ -14,3 +14,3 @@\n \tfoo_call(dev, 14);\n-\tfoo_call(dev, 15 + 1);\n+\tfoo_call(dev, 15 + 2);\n \tfoo_call(dev, 16);\n")
	tree := memTree{"drivers/foo/foo.c": join(base())}
	entries := []series.Entry{{Source: "patches/s/1", Expect: series.Applies}, {Source: "patches/s/2", Expect: series.Applies}}
	res, err := Series(tree, entries, []*mailpatch.Patch{mustPatch(t, change15), mustPatch(t, second)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Mismatches()) != 0 {
		t.Fatalf("mismatches: %+v", res.Mismatches()[0])
	}
	if !strings.Contains(string(res.Files["drivers/foo/foo.c"]), "foo_call(dev, 15 + 2);") {
		t.Error("second patch did not build on the first")
	}
	// The second alone does not apply: a mismatch with its expectation.
	res, err = Series(tree, entries[1:], []*mailpatch.Patch{mustPatch(t, second)})
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Mismatches(); len(m) != 1 || m[0].Disposition != series.Conflict {
		t.Errorf("want one mismatch (conflict), got %+v", m)
	}
}
