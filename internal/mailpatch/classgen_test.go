package mailpatch

import (
	"encoding/base64"
	"fmt"
	"mime/quotedprintable"
	"strings"
)

// Generators for the mail shapes of issue 27 (classes 1-4), mixed into
// mailGen.gen so that the git differential test, the ReadThread test and
// FuzzImportGit's corpus all see them:
//
//  1. a git format-patch carried inline or as an attachment (7bit,
//     base64, quoted-printable), its "From <sha> Mon Sep 17 00:00:00
//     2001" line escaped or not, in raw mails, mboxo and mboxrd; "From "
//     lines with a time and a year in the message and the notes; two
//     patches in one mail;
//  2. format=flowed bodies, DelSp=yes and no, wrapped at several widths
//     (mid-word with DelSp), space-stuffed diff context lines, empty
//     context lines sent as " " or trimmed to "", QP and base64, CRLF,
//     a signature, multipart with a part that has no Content-Type;
//  3. in-body header blocks: several From:, Subject:, Date: and [PATCH]
//     lines in any order and case, blank and white-space lines between,
//     continuation lines, escaped format-patch separators;
//  4. hg exports and StGit patches (git am --patch-format=hg|stgit).

func (g *mailGen) hex40() string {
	const digits = "0123456789abcdef"
	b := make([]byte, 40)
	for i := range b {
		b[i] = digits[g.r.Intn(16)]
	}
	return string(b)
}

// classDiffText is a diff of foo.c with blank context lines; long makes
// its added line longer than any wrap width.
func classDiffText(long bool) string {
	add := "\tfoo_read(f, &regs); /* settle */"
	if long {
		add = "\tfoo_read(f, &regs); /* read again: the hardware settles late, after the first read of the registers */"
	}
	return "diff --git a/drivers/x/foo.c b/drivers/x/foo.c\nindex 1111111..2222222 100644\n--- a/drivers/x/foo.c\n+++ b/drivers/x/foo.c\n" +
		"@@ -6,6 +6,7 @@ static int foo_setup(struct foo *f)\n \tint regs = 0;\n \n \tfoo_init(f);\n \tfoo_read(f, &regs);\n+" + add + "\n \treturn regs;\n }\n \n"
}

// barDiff creates a second file, for mails carrying two patches.
const barDiff = "diff --git a/drivers/x/bar.c b/drivers/x/bar.c\nnew file mode 100644\nindex 0000000..3333333\n--- /dev/null\n+++ b/drivers/x/bar.c\n@@ -0,0 +1,2 @@\n+/* bar.c */\n+int bar;\n"

const classStat = " drivers/x/foo.c | 1 +\n 1 file changed, 1 insertion(+)\n\n"

// genClass makes a mail of one of the classes above.
func (g *mailGen) genClass() genMail {
	switch g.r.Intn(4) {
	case 0:
		return g.genInner()
	case 1:
		return g.genFlowed()
	case 2:
		return g.genInBody()
	}
	return g.genHgStgit()
}

// frame wraps a mail as mboxrd, mboxo or leaves it raw.
func (g *mailGen) frame(gm *genMail, mail string, allowMboxo bool) {
	switch n := g.r.Intn(4); {
	case n == 0:
		gm.mboxrd = true
		var b strings.Builder
		b.WriteString("From mboxrd@z Thu Jan  1 00:00:00 1970\n")
		for _, l := range strings.SplitAfter(mail, "\n") {
			if mboxrdFrom.MatchString(l) || strings.HasPrefix(l, "From ") {
				b.WriteString(">")
			}
			b.WriteString(l)
		}
		mail = b.String()
		gm.what = append(gm.what, "mboxrd")
	case n == 1 && allowMboxo:
		var b strings.Builder
		b.WriteString("From jane@example.org Thu Dec  4 16:00:00 2008\n")
		for _, l := range strings.SplitAfter(mail, "\n") {
			if strings.HasPrefix(l, "From ") {
				b.WriteString(">")
			}
			b.WriteString(l)
		}
		mail = b.String()
		gm.mboxo = true
		gm.what = append(gm.what, "mboxo")
	}
	gm.text = []byte(mail)
}

func qpEncode(s string) string {
	var b strings.Builder
	w := quotedprintable.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return strings.ReplaceAll(b.String(), "\r\n", "\n")
}

func b64Lines(s string) string {
	e := base64.StdEncoding.EncodeToString([]byte(s))
	var b strings.Builder
	for len(e) > 76 {
		b.WriteString(e[:76] + "\n")
		e = e[76:]
	}
	return b.String() + e + "\n"
}

// genInner is class 1: a git format-patch inside a mail.
func (g *mailGen) genInner() genMail {
	r := g.r
	gm := genMail{what: []string{"class1"}}
	sep := "From " + g.hex40() + " Mon Sep 17 00:00:00 2001"
	inner := sep + "\nFrom: Inner Author <inner@example.org>\nDate: Mon, 3 Mar 2025 10:00:00 +0200\nSubject: [PATCH] foo: read the registers twice\n\n" +
		"The first read is too early.\n\nSigned-off-by: Inner Author <inner@example.org>\n---\n" + classStat + classDiffText(false) + "-- \n2.39.5\n\n"
	headers := "From: Sender Person <sender@example.org>\nDate: Tue, 4 Mar 2025 09:00:00 +0100\nSubject: [PATCH] foo: read the registers twice\nMessage-Id: <inner@example.org>\nMIME-Version: 1.0\n"
	var body string
	mboxo := true
	switch shape := r.Intn(6); shape {
	case 0: // the format-patch is the body, its separator escaped or not
		if r.Intn(2) == 0 {
			inner = ">" + inner
			gm.what = append(gm.what, "inline-escaped")
		} else {
			gm.what = append(gm.what, "inline")
		}
		switch r.Intn(3) {
		case 0:
			body = "Content-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: 8bit\n\n" + inner
		case 1:
			body = "Content-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: base64\n\n" + b64Lines(inner)
			gm.what = append(gm.what, "base64")
		default:
			body = "Content-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: quoted-printable\n\n" + qpEncode(inner)
			gm.what = append(gm.what, "qp")
		}
	case 1: // after a few words of the sender
		body = "Content-Type: text/plain\n\nHi,\n\nplease apply the patch below.\n\n" + inner
		gm.what = append(gm.what, "inline-after-text")
	case 2, 3: // attached, after a text part or alone
		gm.what = append(gm.what, "attachment")
		var parts []string
		if shape == 2 {
			text := []string{"", "Please apply.\n", "Hi,\n\nthe patch is attached.\n\nThanks\n"}[r.Intn(3)]
			parts = append(parts, "Content-Type: text/plain; charset=UTF-8; format=flowed\nContent-Transfer-Encoding: 7bit\n\n"+text)
			gm.what = append(gm.what, fmt.Sprintf("text-part-%d", len(text)))
		}
		att := "Content-Type: text/x-patch; charset=UTF-8; name=\"0001-foo.patch\"\nContent-Disposition: attachment; filename=\"0001-foo.patch\"\n"
		switch r.Intn(3) {
		case 0:
			att += "Content-Transfer-Encoding: 7bit\n\n" + inner
		case 1:
			att += "Content-Transfer-Encoding: base64\n\n" + b64Lines(inner)
			gm.what = append(gm.what, "base64")
		default:
			att += "Content-Transfer-Encoding: quoted-printable\n\n" + qpEncode(inner)
			gm.what = append(gm.what, "qp")
		}
		parts = append(parts, att)
		body = "Content-Type: multipart/mixed; boundary=\"------------b0undary\"\n\nThis is a multi-part message in MIME format.\n"
		for _, p := range parts {
			body += "--------------b0undary\n" + p
		}
		body += "--------------b0undary--\n"
	case 4: // two patches inline, the second after the first's diff
		second := "From " + g.hex40() + " Mon Sep 17 00:00:00 2001\nFrom: Inner Author <inner@example.org>\nDate: Mon, 3 Mar 2025 10:01:00 +0200\nSubject: [PATCH 2/2] bar: new file\n\n---\n" +
			" drivers/x/bar.c | 2 ++\n 1 file changed, 2 insertions(+)\n\n" + barDiff + "-- \n2.39.5\n\n"
		body = "Content-Type: text/plain\n\n" + inner + second
		gm.what = append(gm.what, "two-inline")
	default: // "From " lines with a time and a year in the message and the notes
		body = "Content-Type: text/plain\n\nThe registers settle late.\nFrom Linus Torvalds Mon Sep 17 00:00:00 2001\nFrom v1 of Tue Jan 2 10:00:00 2024 nothing changed\n\nSigned-off-by: Jane Doe <jane@example.org>\n---\n" +
			"From the v1 review, Tue Jan  2 10:00:00 2024:\n" + classStat + classDiffText(false)
		gm.what = append(gm.what, "from-lines")
		mboxo = r.Intn(2) == 0
	}
	g.frame(&gm, headers+body, mboxo)
	return gm
}

// flowText writes text as a format=flowed sender does: lines longer
// than width are wrapped (with DelSp also inside words), lines starting
// with a space, "From " or '>' space-stuffed; trimEmptyContext sends the
// empty context line " " as "" (a client trimming trailing white space).
func (g *mailGen) flowText(text string, width int, delsp, trimEmptyContext bool) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		nl := strings.HasSuffix(l, "\n")
		l = strings.TrimSuffix(l, "\n")
		if l == "-- " {
			b.WriteString(l + "\n")
			continue
		}
		if l == " " && trimEmptyContext {
			l = ""
		}
		if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "From ") || strings.HasPrefix(l, ">") {
			l = " " + l
		}
		for len(l) > width {
			if delsp && g.r.Intn(3) == 0 {
				// a break inside a word: the soft break's space is not text
				cut := width - 1
				if l[cut-1] == ' ' || l[cut] == ' ' {
					break
				}
				b.WriteString(l[:cut] + " \n")
				l = l[cut:]
				continue
			}
			i := strings.LastIndexByte(l[:width], ' ')
			if i <= 1 || l[i-1] == ' ' {
				break
			}
			if delsp {
				b.WriteString(l[:i+1] + " \n")
			} else {
				b.WriteString(l[:i+1] + "\n")
			}
			l = l[i+1:]
			if l == "" || l[0] == ' ' || strings.HasPrefix(l, "From ") || l[0] == '>' {
				l = " " + l
			}
		}
		b.WriteString(l)
		if nl {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// genFlowed is class 2: format=flowed bodies carrying a diff.
func (g *mailGen) genFlowed() genMail {
	r := g.r
	gm := genMail{what: []string{"class2"}}
	delsp := r.Intn(2) == 0
	width := []int{30, 40, 66, 72, 78}[r.Intn(5)]
	trim := r.Intn(2) == 0
	long := r.Intn(2) == 0
	text := "The setup reads the registers once; read them twice, the second read is what the hardware settled to.\n" +
		"> quoted review text from the previous version\nFrom the spec: registers settle late.\n\nSigned-off-by: Jane Doe <jane@example.org>\n---\n" + classStat + classDiffText(long)
	if r.Intn(3) == 0 {
		text += "-- \n2.39.5\n"
		gm.what = append(gm.what, "signature")
	}
	body := g.flowText(text, width, delsp, trim)
	gm.what = append(gm.what, fmt.Sprintf("width=%d delsp=%v trim-empty-context=%v long=%v", width, delsp, trim, long))
	ct := "text/plain; charset=UTF-8; format=flowed"
	if delsp {
		ct += []string{"; delsp=yes", "; DelSp=Yes", "; delsp=\"yes\""}[r.Intn(3)]
	}
	cte := "7bit"
	switch r.Intn(4) {
	case 1:
		cte, body = "quoted-printable", qpEncode(body)
	case 2:
		cte, body = "base64", b64Lines(body)
	}
	gm.what = append(gm.what, "cte="+cte)
	headers := "From: Jane Doe <jane@example.org>\nDate: Tue, 4 Mar 2025 09:00:00 +0100\nSubject: [PATCH] foo: read the registers twice\nMessage-Id: <flowed@example.org>\nMIME-Version: 1.0\nUser-Agent: Mozilla Thunderbird\n"
	var mail string
	switch r.Intn(3) {
	case 0: // multipart: the flowed text, then a part without Content-Type
		mail = headers + "Content-Type: multipart/mixed; boundary=\"xyz\"\n\n--xyz\nContent-Type: " + ct + "\nContent-Transfer-Encoding: " + cte + "\n\n" + body
		if !strings.HasSuffix(body, "\n") {
			mail += "\n"
		}
		mail += "--xyz\n\nA part without a Content-Type \nthat ends here.\n--xyz--\n"
		gm.what = append(gm.what, "multipart")
	default:
		mail = headers + "Content-Type: " + ct + "\nContent-Transfer-Encoding: " + cte + "\n\n" + body
	}
	if cte == "7bit" && r.Intn(4) == 0 {
		mail = strings.ReplaceAll(mail, "\n", "\r\n")
		gm.what = append(gm.what, "crlf")
	}
	g.frame(&gm, mail, false)
	return gm
}

// genInBody is class 3: in-body header blocks.
func (g *mailGen) genInBody() genMail {
	r := g.r
	gm := genMail{what: []string{"class3"}}
	items := []string{
		"", "", "From: Another Thor <another@example.org>", "From: Third Person <third@example.org>", "from:Fourth <fourth@example.org>",
		"FROM:  Fifth <fifth@example.org>", "Subject: [PATCH v3] foo: the in-body subject", "[PATCH] foo: the patch-line subject",
		"Date: Mon, 3 Mar 2025 10:00:00 +0200", "date: 2008-12-04 16:00:00 +0100", "  ", "\t", " <cont@example.org>", "\t(Folded Comment)",
		">From " + g.hex40() + " Mon Sep 17 00:00:00 2001", "From " + g.hex40() + " Mon Sep 17 00:00:00 2001", "Hello,",
	}
	var top []string
	for n := 1 + r.Intn(6); n > 0; n-- {
		top = append(top, items[r.Intn(len(items))])
	}
	gm.what = append(gm.what, fmt.Sprintf("%q", top))
	body := strings.Join(top, "\n") + "\n\nThe registers settle late.\n\nSigned-off-by: Jane Doe <jane@example.org>\n---\n" + classStat + classDiffText(false)
	mail := "From: Jane Doe <jane@example.org>\nDate: Tue, 4 Mar 2025 09:00:00 +0100\nSubject: [PATCH] foo: read the registers twice\nMessage-Id: <inbody@example.org>\n\n" + body
	if r.Intn(3) == 0 {
		mail = "From: Jane Doe <jane@example.org>\nDate: Tue, 4 Mar 2025 09:00:00 +0100\nSubject: [PATCH] foo: read the registers twice\nMIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: base64\n\n" + b64Lines(body)
		gm.what = append(gm.what, "base64")
	}
	g.frame(&gm, mail, false)
	return gm
}

// genHgStgit is class 4: an hg export or a StGit patch file.
func (g *mailGen) genHgStgit() genMail {
	r := g.r
	gm := genMail{what: []string{"class4"}}
	diff := classDiffText(false)
	if r.Intn(2) == 0 {
		gm.what = append(gm.what, "traditional-diff")
		diff = "diff -r 0123456789ab -r ba9876543210 drivers/x/foo.c\n" + strings.Replace(strings.Replace(
			strings.TrimPrefix(diff, "diff --git a/drivers/x/foo.c b/drivers/x/foo.c\nindex 1111111..2222222 100644\n"),
			"--- a/drivers/x/foo.c\n", "--- a/drivers/x/foo.c\tThu Jan 01 00:00:00 1970 +0000\n", 1),
			"+++ b/drivers/x/foo.c\n", "+++ b/drivers/x/foo.c\tThu Dec 04 16:00:00 2008 -0800\n", 1)
	}
	if r.Intn(2) == 0 {
		gm.what = append(gm.what, "hg")
		var b strings.Builder
		b.WriteString("# HG changeset patch\n")
		user := []string{"# User Jane Doe <jane@example.org>\n", "# User jane@example.org\n", "# User Jürgen Müller <jm@example.org>\n", "# User Jane Doe\n", ""}[r.Intn(5)]
		b.WriteString(user)
		tz := []int{0, -3600, 28800, -19800, 3600}[r.Intn(5)]
		switch r.Intn(6) {
		case 0:
			b.WriteString("# Date 1228435200\n")
		case 1:
			b.WriteString("# Date nonsense 0\n")
		default:
			fmt.Fprintf(&b, "# Date %d %d\n", 1228435200+r.Intn(1000000), tz)
		}
		fmt.Fprintf(&b, "# Node ID %s\n# Parent  %s\n", g.hex40(), g.hex40())
		if r.Intn(2) == 0 {
			b.WriteString("# Branch stable\n")
		}
		b.WriteString([]string{"foo: read the registers twice\n", "foo: read the registers\ntwice, in two lines\n", "[PATCH] foo: bracketed\n"}[r.Intn(3)])
		b.WriteString("\nThe first read is too early.\n\n" + diff)
		gm.what = append(gm.what, strings.TrimSpace(user))
		gm.text = []byte(b.String())
		return gm
	}
	gm.what = append(gm.what, "stgit")
	var b strings.Builder
	b.WriteString([]string{"foo: read the registers twice\n", "[PATCH] foo: read the registers twice\n"}[r.Intn(2)])
	b.WriteString("\n")
	switch r.Intn(3) {
	case 0:
		b.WriteString("From: Jane Doe <jane@example.org>\n")
	case 1:
		b.WriteString("Author: Jane Doe <jane@example.org>\nDate: Thu Dec 4 16:00:00 2008 -0800\n")
	default:
		b.WriteString("Date: Thu, 4 Dec 2008 16:00:00 -0800\nFrom: Jane Doe <jane@example.org>\n")
	}
	b.WriteString("\n")
	b.WriteString([]string{"The first read is too early.\n", "Fromage aside, the first read is too early.\n", "Dates matter: the first read is too early.\n"}[r.Intn(3)])
	b.WriteString("\nSigned-off-by: Jane Doe <jane@example.org>\n---\n\n" + classStat + diff)
	gm.text = []byte(b.String())
	return gm
}
