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
