package mailpatch

import (
	"encoding/base64"
	"strings"
	"testing"
)

// One test per class of disagreement with git found on real mail
// (issue 12); each failed before the fix.

func mailWith(headers, body string) string {
	return headers + "\n\n" + body
}

var classDiff = fooDiff(" \tfoo_init(f);\n", "\tfoo_more(f);")

func TestClassCharsets(t *testing.T) {
	jp := base64.StdEncoding.EncodeToString([]byte(mustEnc("吉藤英明", "ISO-2022-JP")))
	cases := []struct{ name, text, author, msg string }{
		{"iso-8859-15 body", mailWith("From: Jane <jane@example.org>\nSubject: [PATCH] x: y\nContent-Type: text/plain; charset=ISO-8859-15\nContent-Transfer-Encoding: 8bit",
			mustEnc("Prix: 5 €.\n---\n", "ISO-8859-15")+classDiff), "Jane", "Prix: 5 €."},
		{"gb2312 base64 ascii", mailWith("From: Jane <jane@example.org>\nSubject: [PATCH] x: y\nContent-Type: text/plain; charset=\"gb2312\"\nContent-Transfer-Encoding: base64",
			base64.StdEncoding.EncodeToString([]byte("Plain text.\n---\n"+classDiff))), "Jane", "Plain text."},
		{"second encoded word kept", mailWith("From: YOSHIFUJI Hideaki / =?ISO-2022-JP?B?"+jp+"?= <yoshfuji@example.org>\nSubject: [PATCH] x: y", "Body.\n---\n"+classDiff),
			"YOSHIFUJI Hideaki / 吉藤英明", "Body."},
		{"last content-type wins", mailWith("From: Jane <jane@example.org>\nSubject: [PATCH] x: y\nContent-Type: text/plain; charset=us-ascii\nContent-Type: text/plain; charset=ISO-8859-1",
			"Gr\xfc\xdfe.\n---\n"+classDiff), "Jane", "Grüße."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps, err := importString(t, c.text, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if ps[0].Author.Name != c.author || ps[0].Message != c.msg {
				t.Errorf("author %q message %q, want %q %q", ps[0].Author.Name, ps[0].Message, c.author, c.msg)
			}
		})
	}
	_, err := importString(t, mailWith("From: =?x-no-such?B?SmFuZQ==?= <jane@example.org>\nSubject: [PATCH] x: y", "Body.\n---\n"+classDiff), Options{})
	wantInputError(t, err, "case.txt:1", "unknown charset")
}

func TestClassDates(t *testing.T) {
	ps, err := importString(t, mailWith("From: Jane <jane@example.org>\nDate: Thu Dec 4 16:00:00 2008 -0800\nSubject: [PATCH] x: y", "Body.\n---\n"+classDiff), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ps[0].Date.Unix() != 1228435200 {
		t.Errorf("git log date read as %v", ps[0].Date)
	}
	_, err = importString(t, mailWith("From: Jane <jane@example.org>\nSubject: [PATCH] x: y", "Date: bogus\n\nBody.\n---\n"+classDiff), Options{})
	wantInputError(t, err, "case.txt:4", "invalid date format")
}

func TestClassFoldedInBodyFrom(t *testing.T) {
	ps, err := importString(t, mailWith("From: Jane <jane@example.org>\nSubject: [PATCH] x: y", "From: Another Thor\n <another@example.org>\n\nBody.\n---\n"+classDiff), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a := ps[0].Author; a.Name != "Another Thor" || a.Address != "another@example.org" {
		t.Errorf("author %+v", a)
	}
}

func TestClassFlowed(t *testing.T) {
	for _, delsp := range []bool{false, true} {
		br := "wrapped \n"
		ct := "text/plain; format=flowed"
		if delsp {
			br, ct = "wrapped  \n", ct+"; delsp=yes"
		}
		soft := "static int \n"
		if delsp {
			soft = "static int  \n"
		}
		diff := "diff --git a/drivers/x/foo.c b/drivers/x/foo.c\n--- a/drivers/x/foo.c\n+++ b/drivers/x/foo.c\n@@ -10,3 +10,4 @@ " + soft + "foo_setup(struct foo *f)\n  \tint a;\n  \tint b;\n+\tint c;\n  \treturn 0;\n"
		ps, err := importString(t, mailWith("From: Jane <jane@example.org>\nSubject: [PATCH] x: y\nContent-Type: "+ct, "A line "+br+"here.\n---\n"+diff), Options{})
		if err != nil {
			t.Fatal(err)
		}
		p := ps[0]
		if p.Message != "A line wrapped here." || !strings.Contains(p.Diff, "@@ -10,3 +10,4 @@ static int foo_setup(struct foo *f)\n \tint a;\n") {
			t.Errorf("delsp=%v: message %q diff %q", delsp, p.Message, p.Diff)
		}
		found := false
		for _, r := range p.Repairs {
			found = found || r.Kind == KindFlowed
		}
		if !found {
			t.Error("format=flowed not listed as a repair")
		}
	}
}

func TestClassCombinedDiff(t *testing.T) {
	diff := "diff --cc drivers/x/foo.c\nindex 1111111,2222222..3333333\n--- a/drivers/x/foo.c\n+++ b/drivers/x/foo.c\n@@@ -6,3 -6,3 +6,4 @@@\n  \tint regs = 0;\n++\tfoo_more(f);\n"
	_, err := importString(t, mailWith("From: Jane <jane@example.org>\nSubject: [PATCH] x: y", "Body.\n---\n"+diff), Options{})
	wantInputError(t, err, "case.txt:10", "combined diff")
}

func TestClassBinaryTrailingNewline(t *testing.T) {
	bin := "diff --git a/fw.bin b/fw.bin\nindex 6e8fc11701d97dca2c547916ab0be82052527c7e..2db01c2ecf30768c53c7d2932e40b2342610427a 100644\nGIT binary patch\nliteral 8\nPcmeZs4QFuj^y2~m2<`#S\n\nliteral 8\nPcmebGaba-s^y2~m2(<yj\n\n"
	if _, err := importString(t, mailWith("From: Jane <jane@example.org>\nSubject: [PATCH] x: y", "Body.\n---\n"+bin+"\n"), Options{}); err != nil {
		t.Fatal(err)
	}
}

func TestClassDiffBytesKept(t *testing.T) {
	diff := fooDiff(" \tfoo_init(f);\n", "\tfoo_more(f); /* M\xfcller */")
	ps, err := importString(t, mailWith("From: Jane <jane@example.org>\nSubject: [PATCH] x: y\nContent-Type: text/plain; charset=ISO-8859-1\nContent-Transfer-Encoding: 8bit", "Gr\xfc\xdfe.\n---\n"+diff), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ps[0].Diff, "M\xfcller") || ps[0].Message != "Grüße." {
		t.Errorf("diff re-encoded or message not converted: %q / %q", ps[0].Diff, ps[0].Message)
	}
}

func TestClassFromComments(t *testing.T) {
	ps, err := importString(t, mailWith("From: A (zzz) U Thor <a.u.thor@example.org> (Comment)\nSubject: [PATCH] x: y", "Body.\n---\n"+classDiff), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a := ps[0].Author; a.Name != "A (zzz) U Thor (Comment)" || a.Address != "a.u.thor@example.org" {
		t.Errorf("author %+v, want git's A (zzz) U Thor (Comment)", a)
	}
}

// Issue 27, classes 1-4: mails of each shape, written for this test,
// each read by git am (2.39) and by import; the two must agree (author,
// date, subject, message, diff, the tree git am of import's output
// makes) and import's output must be one message for git mailsplit.
// Each failed before the fix.
func TestIssue27Classes(t *testing.T) {
	repo := newGitRepo(t)
	sha := "0123456789abcdef0123456789abcdef01234567"
	inner := "From " + sha + " Mon Sep 17 00:00:00 2001\nFrom: Inner Author <inner@example.org>\nDate: Mon, 3 Mar 2025 10:00:00 +0200\nSubject: [PATCH] foo: inner subject\n\nInner message.\n\nSigned-off-by: Inner Author <inner@example.org>\n---\n" + classStat + classDiffText(false) + "-- \n2.39.5\n\n"
	hdr := "From: Sender Person <sender@example.org>\nDate: Tue, 4 Mar 2025 09:00:00 +0100\nSubject: [PATCH] foo: outer subject\n"
	cases := []struct {
		name, mail string
		mboxrd     bool
		author     string // "" when not checked
	}{
		// class 1: a git format-patch inside the mail
		{"mboxo inline format-patch", "From sender@example.org Tue Mar  4 09:00:00 2025\n" + hdr + "\n>" + inner, false, "Inner Author"},
		{"mboxrd inline format-patch", "From mboxrd@z Thu Jan  1 00:00:00 1970\n" + hdr + "\n>" + inner, true, "Sender Person"},
		{"base64 attachment after text", hdr + "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"b\"\n\n--b\nContent-Type: text/plain\n\nHi, the patch is attached.\n--b\nContent-Type: text/x-patch; name=\"0001-foo.patch\"\nContent-Disposition: attachment\nContent-Transfer-Encoding: base64\n\n" + b64Lines(inner) + "--b--\n", false, "Sender Person"},
		{"from-lines in message and notes", hdr + "\nFirst line.\nFrom Linus Torvalds Mon Sep 17 00:00:00 2001\n\nSigned-off-by: Jane Doe <jane@example.org>\n---\nFrom the v1 review, Tue Jan  2 10:00:00 2024:\n" + classStat + classDiffText(false), false, "Sender Person"},
		{"two patches inline", hdr + "\n" + inner + strings.Replace(inner, classDiffText(false), barDiff, 1), false, "Sender Person"},
		// class 2: format=flowed
		{"flowed delsp multipart, a part without Content-Type", hdr + "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"xyz\"\n\n--xyz\nContent-Type: text/plain; charset=UTF-8; format=flowed; delsp=yes\n\nThe setup reads the  \nregisters once.\n---\n" + classStat +
			strings.Replace(flowedDiff(classDiffText(true)), "read again: the hardware", "read again: the   \nhardware", 1) + "--xyz\n\nA part without  \na Content-Type.\n--xyz--\n", false, "Sender Person"},
		{"flowed quoted-printable, soft break before a stuffed line", hdr + "MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8; format=flowed\nContent-Transfer-Encoding: quoted-printable\n\nA line ending in a soft break=20\n Stuffed next line.\n---\n" + classStat + flowedDiff(classDiffText(false)), false, "Sender Person"},
		// class 3: in-body header blocks
		{"two in-body From blocks", hdr + "\nFrom: Another Thor <another@example.org>\n\nFrom: Third Person <third@example.org>\n\nBody.\n---\n" + classStat + classDiffText(false), false, "Another Thor"},
		{"[PATCH] line, blank, From", hdr + "\n[PATCH] foo: patch-line subject\n\nFrom: Another Thor <another@example.org>\n\nBody.\n---\n" + classStat + classDiffText(false), false, "Another Thor"},
		{"white-space line continues a header", hdr + "\nSubject: in-body subject\n  \nfrom:Fourth <fourth@example.org>\n\nBody.\n---\n" + classStat + classDiffText(false), false, "Fourth"},
		{"white-space line first ends the headers", hdr + "\n \nFrom: Another Thor <another@example.org>\n\nBody.\n---\n" + classStat + classDiffText(false), false, "Sender Person"},
		// class 4: hg and StGit patches
		{"hg export", "# HG changeset patch\n# User Jane Doe <jane@example.org>\n# Date 1228435200 -19800\n# Node ID " + sha + "\n# Parent  " + sha + "\nfoo: read the registers\ntwice\n\nBody.\n\n" + classDiffText(false), false, "Jane Doe"},
		{"stgit patch", "foo: read the registers twice\n\nAuthor: Jane Doe <jane@example.org>\nDate: Thu Dec 4 16:00:00 2008 -0800\n\nBody.\n\nSigned-off-by: Jane Doe <jane@example.org>\n---\n\n" + classStat + classDiffText(false), false, "Jane Doe"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gm := genMail{text: []byte(c.mail), mboxrd: c.mboxrd, mboxo: strings.HasPrefix(c.mail, "From sender@")}
			if why := compareWithGit(t, repo, gm); why != "" {
				t.Fatalf("import and git disagree: %s", why)
			}
			ps, err := importString(t, c.mail, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if c.author != "" && ps[0].Author.Name != c.author {
				t.Errorf("author %q, want %q (git's)", ps[0].Author.Name, c.author)
			}
		})
	}
	// An hg Date git am stops on is refused with its line.
	_, err := importString(t, "# HG changeset patch\n# User Jane Doe <jane@example.org>\n# Date 1228435200\nfoo: x\n\n"+classDiffText(false), Options{})
	wantInputError(t, err, "case.txt:3", "invalid Date line")
}

// flowedDiff is a diff as a format=flowed client sends it: empty context
// lines trimmed to "" (a line ending in a space would be a soft break),
// lines starting with a space stuffed with one more.
func flowedDiff(d string) string {
	d = strings.ReplaceAll(d, "\n \n", "\n\n")
	d = strings.ReplaceAll(d, "\n \n", "\n\n")
	return strings.ReplaceAll(d, "\n ", "\n  ")
}
