package mailpatch

import (
	"encoding/base64"
	"errors"
	"mime/quotedprintable"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
)

// bare builds bare archive text around a diff.
func bare(subject, diff string) string {
	return "[PATCH 1/1] " + subject + "\n\n[Jane Doe]\n\nA change.\n\nSigned-off-by: Jane Doe <jane at example.org>\n---\n" + diff
}

// fooDiff is a small C diff; the placeholders are filled per case.
func fooDiff(ctx, add string) string {
	return "diff --git a/drivers/x/foo.c b/drivers/x/foo.c\n" +
		"index 1111111..2222222 100644\n" +
		"--- a/drivers/x/foo.c\n" +
		"+++ b/drivers/x/foo.c\n" +
		"@@ -10,4 +10,5 @@ static int foo_setup(struct foo *f)\n" +
		" \tstruct foo_params params;\n" +
		" \tint regs = 0;\n" +
		ctx +
		"+" + add + "\n" +
		" \treturn 0;\n"
}

func importString(t *testing.T, text string, opts Options) ([]*Patch, error) {
	t.Helper()
	ps, err := ImportBytes("case.txt", []byte(text), "case", opts)
	if err == nil {
		checkRoundTrip(t, ps)
	}
	return ps, err
}

func wantInputError(t *testing.T, err error, says ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("import succeeded, want an input error")
	}
	if !errors.Is(err, errs.ErrInput) {
		t.Fatalf("error %v is not an input error", err)
	}
	var ie *InputError
	if !errors.As(err, &ie) || ie.File == "" {
		t.Fatalf("error %v does not name the file", err)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}

func TestEntityRepairs(t *testing.T) {
	cases := []struct {
		name, ctx, add, want string
	}{
		// legacy entity without ';', the identifier's tail stays: &params -> ¶ms
		{"para prefix", " \tfoo_init(f);\n", "\tfoo_apply(f, ¶ms);", "\tfoo_apply(f, &params);"},
		// &regs -> ®s
		{"reg prefix", " \tfoo_init(f);\n", "\tfoo_read(f, ®s);", "\tfoo_read(f, &regs);"},
		// &not; eats C's own ';' when the identifier is the whole entity
		{"not with semicolon", " \tbool not = true;\n", "\tp = ¬", "\tp = &not;"},
		// two damages on one line
		{"two on a line", " \tfoo_init(f);\n", "\tfoo_pair(¶ms, ®s);", "\tfoo_pair(&params, &regs);"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps, err := importString(t, bare("x: y", fooDiff(c.ctx, c.add)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got *Repair
			for i, r := range ps[0].Repairs {
				if r.Kind == KindEntity {
					got = &ps[0].Repairs[i]
				}
			}
			if got == nil {
				t.Fatalf("no entity repair in %+v", ps[0].Repairs)
			}
			if got.After != c.want || got.Before != c.add {
				t.Errorf("repair %q -> %q, want %q -> %q", got.Before, got.After, c.add, c.want)
			}
			if got.Line != 17 {
				t.Errorf("repair at line %d, want the added line 17", got.Line)
			}
			if !strings.Contains(ps[0].Diff, "+"+c.want+"\n") {
				t.Errorf("diff not repaired:\n%s", ps[0].Diff)
			}
		})
	}
}

func TestEntityDamageInCommentIsLeftAlone(t *testing.T) {
	ps, err := importString(t, bare("x: y", fooDiff(" \tfoo_init(f);\n", "\t/* see ¶ 3 of the spec, © 2024 */")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range ps[0].Repairs {
		if r.Kind == KindEntity {
			t.Errorf("comment text was repaired: %+v", r)
		}
	}
}

func TestEntityDamageUnprovable(t *testing.T) {
	// "&sect_len" -> "§_len": sect_len appears nowhere in the hunk.
	_, err := importString(t, bare("x: y", fooDiff(" \tfoo_init(f);\n", "\tfoo_len(f, §_len);")), Options{})
	wantInputError(t, err, "case.txt:17", "drivers/x/foo.c", "U+00A7", "--tree")
}

func TestEntityDamageProvenByTree(t *testing.T) {
	// The damage is in a context line; the tree has the undamaged line.
	tree := t.TempDir()
	src := strings.Repeat("/* filler */\n", 9) +
		"\tstruct foo_params params;\n\tint regs = 0;\n\tx = &sect_len;\n\treturn 0;\n"
	os.MkdirAll(filepath.Join(tree, "drivers", "x"), 0o755)
	os.WriteFile(filepath.Join(tree, "drivers", "x", "foo.c"), []byte(src), 0o644)
	text := bare("x: y", fooDiff(" \tx = §_len;\n", "\tfoo_init(f);"))

	_, err := importString(t, text, Options{})
	wantInputError(t, err, "context line")

	ps, err := importString(t, text, Options{Tree: tree})
	if err != nil {
		t.Fatal(err)
	}
	var got *Repair
	for i := range ps[0].Repairs {
		if ps[0].Repairs[i].Kind == KindEntity {
			got = &ps[0].Repairs[i]
		}
	}
	if got == nil || got.After != "\tx = &sect_len;" || !strings.Contains(got.Why, "drivers/x/foo.c:12") {
		t.Fatalf("want a tree-proven repair citing foo.c:12, got %+v", got)
	}
}

func TestEntityDamageSyntaxDecides(t *testing.T) {
	// "®s" with both "reg" and "regs" in the hunk: "&reg;s" would put a
	// ';' inside the call's parentheses, so only "&regs" fits.
	ps, err := importString(t, bare("x: y", fooDiff(" \tint reg;\n", "\tfoo_read(f, ®s);")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range ps[0].Repairs {
		if r.Kind == KindEntity {
			n++
			if r.After != "\tfoo_read(f, &regs);" {
				t.Errorf("wrong restoration %q", r.After)
			}
		}
	}
	if n != 1 {
		t.Errorf("want one entity repair, got %d", n)
	}
}

func TestEntityDamageAmbiguous(t *testing.T) {
	// "&reg;" and "&REG;" both decode to "®", and both identifiers are in
	// the hunk: no proof which one was sent.
	_, err := importString(t, bare("x: y", fooDiff(" \tint reg, REG;\n", "\tp = ®")), Options{})
	wantInputError(t, err, "more than one restoration", "&reg;", "&REG;")
}

// mailFrom003 rebuilds seed 003 as a modern mail: RFC 2047 name, folded
// subject, a Date with a zone comment, and the given transfer encoding and
// line ends.
func mailFrom003(t *testing.T, cte string, crlf bool) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(seedDir("nvmet-rdma-inline-16k"), "003_be5ede6ad577d1fd.txt"))
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(data), "\n\n")
	nl := "\n"
	if crlf {
		nl = "\r\n"
		body = strings.ReplaceAll(body, "\n", "\r\n")
	}
	enc := body
	switch cte {
	case "quoted-printable":
		var b strings.Builder
		w := quotedprintable.NewWriter(&b)
		w.Write([]byte(body))
		w.Close()
		enc = b.String()
	case "base64":
		enc = ""
		s := base64.StdEncoding.EncodeToString([]byte(body))
		for len(s) > 76 {
			enc += s[:76] + nl
			s = s[76:]
		}
		enc += s + nl
	}
	h := []string{
		"From: =?UTF-8?q?Parav_P=C3=A4ndit?= <parav@mellanox.com>",
		"Date: Tue, 7 Feb 2017 23:51:22 +0100 (CET)",
		"Subject: [PATCHv1] nvmet-rdma: Support 16K worth of inline data for write",
		" commands",
		"MIME-Version: 1.0",
		"Content-Type: text/plain; charset=UTF-8",
		"Content-Transfer-Encoding: " + cte,
	}
	return strings.Join(h, nl) + nl + nl + enc
}

func TestMailEncodings(t *testing.T) {
	golden, err := Import([]string{seedDir("nvmet-rdma-inline-16k")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := golden.Patches[0]
	for _, c := range []struct {
		cte  string
		crlf bool
	}{{"quoted-printable", true}, {"quoted-printable", false}, {"base64", true}, {"8bit", true}} {
		t.Run(c.cte, func(t *testing.T) {
			ps, err := importString(t, mailFrom003(t, c.cte, c.crlf), Options{})
			if err != nil {
				t.Fatal(err)
			}
			p := ps[0]
			if p.Diff != want.Diff {
				t.Errorf("diff differs from the mboxrd copy's:\n%s", firstDiff(want.Diff, p.Diff))
			}
			if p.Message != want.Message {
				t.Errorf("message differs:\n%s", firstDiff(want.Message, p.Message))
			}
			if p.Author.Name != "Parav Pändit" {
				t.Errorf("author name %q, want the RFC 2047 decoding", p.Author.Name)
			}
			if p.SubjectLine() != want.SubjectLine() {
				t.Errorf("subject %q, want %q", p.SubjectLine(), want.SubjectLine())
			}
			if !p.Date.Equal(want.Date) {
				t.Errorf("date %v, want %v", p.Date, want.Date)
			}
			hasCRLF := false
			for _, r := range p.Repairs {
				hasCRLF = hasCRLF || r.Kind == KindLineEnds
			}
			if c.crlf && !hasCRLF {
				t.Error("CRLF line ends were not recorded as a repair")
			}
			out := string(p.Format())
			if !strings.Contains(out, "From: =?UTF-8?q?Parav_P=C3=A4ndit?= <parav@mellanox.com>\n") {
				t.Errorf("non-ASCII author not RFC 2047 encoded in output:\n%s", out[:300])
			}
		})
	}
}

func TestMboxrdSeries(t *testing.T) {
	msg := func(n, subj, from string) string {
		return "From mboxrd@z Thu Jan  1 00:00:00 1970\n" +
			"From: Jane Doe <jane@example.org>\n" +
			"Date: Mon, 3 Mar 2025 10:00:00 +0200 (EET)\n" +
			"Subject: [PATCH " + n + "] " + subj + "\n\n" +
			"Body text.\n" + from + "\nSigned-off-by: Jane Doe <jane@example.org>\n---\n" +
			fooDiff(" \tfoo_init(f);\n", "\tfoo_more(f);") + "\n"
	}
	cover := "From mboxrd@z Thu Jan  1 00:00:00 1970\nFrom: Jane Doe <jane@example.org>\nSubject: [PATCH 0/3] foo: things\n\nCover letter.\n\n"
	text := cover + msg("1/3", "foo: one", ">>From the spec: quoted") + msg("3/3", "foo: three", ">From here on")
	res := &Result{}
	ps, err := importString(t, text, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res.add(ps)
	if len(ps) != 2 {
		t.Fatalf("got %d patches, want 2 (the cover letter has no diff)", len(ps))
	}
	if !strings.Contains(ps[0].Message, "\n>From the spec: quoted\n") || !strings.Contains(ps[1].Message, "\nFrom here on\n") {
		t.Errorf("mboxrd unescaping wrong:\n%s\n--\n%s", ps[0].Message, ps[1].Message)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0].Message, "2/3 missing") {
		t.Errorf("want one warning naming 2/3, got %+v", res.Warnings)
	}
	escapes := 0
	for _, r := range ps[0].Repairs {
		if r.Kind == KindMboxEscape {
			escapes++
		}
	}
	if escapes != 1 {
		t.Errorf("want 1 mbox-escape repair in 1/3, got %d", escapes)
	}
}

func TestBadInput(t *testing.T) {
	seed000, err := os.ReadFile(filepath.Join(seedDir("nvme-rdma-inline-capsule"), "000_97dfe90d7f7f5563.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s000 := string(seed000)
	truncated := s000[:strings.Index(s000, "+\t\twr.send_flags |= IB_SEND_INLINE;")]
	cases := []struct {
		name, text string
		says       []string
	}{
		{"not a patch", "Hello,\nthis is a letter.\n", []string{"case.txt:1", "not a patch"}},
		{"mail without diff", "From: Jane <j@example.org>\nSubject: [PATCH] x\n\nno diff here\n", []string{"no diff"}},
		{"hunk cut short", truncated, []string{"case.txt:", "damaged diff", "miscounts"}},
		{"relative traversal", strings.ReplaceAll(s000, "drivers/nvme/host/rdma.c", "../../etc/passwd"), []string{"unsafe path", "\"..\" would leave the tree"}},
		{"absolute path", bare("x: y", "--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n"), []string{"unsafe path", "absolute"}},
		{"git metadata", strings.ReplaceAll(s000, "drivers/nvme/host/rdma.c", ".git/hooks/post-checkout"), []string{"git metadata"}},
		{"binary without data", bare("x: y", "diff --git a/fw.bin b/fw.bin\nindex 1111111..2222222 100644\nBinary files a/fw.bin and b/fw.bin differ\n"), []string{"fw.bin", "carries no data", "--binary"}},
		{"bidi control", strings.Replace(s000, "if (num_sge == 1", "if (num_sge == 1 /*\u202e } \u2066*/", 1), []string{"U+202E", "Trojan Source", "--allow-unicode-control"}},
		{"invalid utf-8", strings.Replace(s000, "nvme_rdma_post_send() posts", "nvme_rdma_post_send()\xff posts", 1), []string{"case.txt:5", "invalid UTF-8"}},
		{"unknown author", strings.Replace(s000, "[Andrei-Alexandru Bleortu]", "[Somebody Else]", 1), []string{"case.txt:3", "matches no Signed-off-by"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := importString(t, c.text, Options{})
			wantInputError(t, err, c.says...)
		})
	}
	t.Run("bidi allowed", func(t *testing.T) {
		text := strings.Replace(s000, "if (num_sge == 1", "if (num_sge == 1 /*\u202e*/", 1)
		if _, err := importString(t, text, Options{AllowUnicodeControl: true}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestIdempotent(t *testing.T) {
	for _, s := range seedSeries {
		res, err := Import([]string{seedDir(s)}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		p := res.Patches[0]
		again, err := ImportBytes("normalized.patch", p.Format(), s, Options{})
		if err != nil {
			t.Fatalf("%s: re-importing the normalized patch: %v", s, err)
		}
		q := again[0]
		if q.Diff != p.Diff || q.Message != p.Message || q.Author != p.Author || q.SubjectLine() != p.SubjectLine() {
			t.Errorf("%s: the normalized patch does not import to itself", s)
		}
		if len(q.Repairs) != 0 {
			t.Errorf("%s: the normalized patch needed repairs again: %+v", s, q.Repairs)
		}
	}
}
