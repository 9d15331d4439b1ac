package mailpatch

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand"
	"mime"
	"mime/quotedprintable"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/simplifiedchinese"
)

// The import differential test: generated mails (charsets, transfer
// encodings, folding, format=flowed, dates, CRLF, mboxrd escaping, From
// comments, combined diffs, binary patches), each given to git mailinfo
// and git am (git 2.39) and to patchctl import. Where git am applies the
// mail, patchctl must import it with the same author, email, date,
// subject, message and diff bytes, and git am of patchctl's output must
// give the same commit and tree. Where git am refuses it, patchctl must
// refuse it with an input error naming the file and line.

// gitRepo is a scratch repository holding the preimage at commit "base".
type gitRepo struct {
	t   testing.TB
	dir string
}

func newGitRepo(t testing.TB) *gitRepo {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	r := &gitRepo{t: t, dir: t.TempDir()}
	r.git(nil, "init", "-q")
	os.MkdirAll(filepath.Join(r.dir, "drivers", "x"), 0o755)
	os.WriteFile(filepath.Join(r.dir, "drivers", "x", "foo.c"), []byte(diffPreimage), 0o644)
	os.WriteFile(filepath.Join(r.dir, "fw.bin"), []byte("OLD\x00BIN\n"), 0o644)
	r.git(nil, "add", "-A")
	r.git(nil, "commit", "-q", "-m", "base")
	r.git(nil, "tag", "base")
	return r
}

func (r *gitRepo) git(stdin []byte, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+r.dir, "TZ=UTC", "LC_ALL=C",
		"GIT_COMMITTER_NAME=patchctl test", "GIT_COMMITTER_EMAIL=test@patchctl.invalid", "GIT_COMMITTER_DATE=1700000000 +0000",
		"GIT_AUTHOR_NAME=base", "GIT_AUTHOR_EMAIL=base@patchctl.invalid")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

// gitCommit is what git am made of a mail.
type gitCommit struct {
	author, email, date, subject, body, tree string
	patch                                    string // when git am stopped at apply: the patch it read
}

// am runs git am on mail (mboxrd when it is one) and reads the commit.
func (r *gitRepo) am(mail []byte, mboxrd bool) (*gitCommit, error) {
	r.git(nil, "am", "--abort")
	if _, err := r.git(nil, "reset", "-q", "--hard", "base"); err != nil {
		r.t.Fatal(err)
	}
	f := filepath.Join(r.dir, ".git", "mail.in")
	os.WriteFile(f, mail, 0o644)
	args := []string{"am", "-q"}
	if mboxrd {
		args = append(args, "--patch-format=mboxrd")
	}
	if _, err := r.git(nil, append(args, f)...); err != nil {
		if st := r.amStopped(); st != nil {
			return st, &amApplyError{err}
		}
		return nil, err
	}
	out, err := r.git(nil, "log", "-1", "--format=%an%x00%ae%x00%ad%x00%s%x00%b%x00%T", "--date=raw")
	if err != nil {
		return nil, err
	}
	p := strings.Split(out, "\x00")
	if len(p) < 6 {
		return nil, fmt.Errorf("git log: %q", out)
	}
	// the body loses only its surrounding newlines: a first line's
	// leading white space is the message's
	return &gitCommit{p[0], p[1], p[2], p[3], strings.Trim(p[4], "\n"), strings.TrimSpace(p[5]), ""}, nil
}

// amApplyError is git am stopping at git apply: it read the mail, and
// the patch does not apply.
type amApplyError struct{ err error }

func (e *amApplyError) Error() string { return e.err.Error() }

// amStopped reads what git am made of the mail it stopped at because the
// patch does not apply: author, date, message and patch (rebase-apply's
// author-script, final-commit and patch); nil when it stopped earlier.
func (r *gitRepo) amStopped() *gitCommit {
	dir := filepath.Join(r.dir, ".git", "rebase-apply")
	script, err1 := os.ReadFile(filepath.Join(dir, "author-script"))
	msg, err2 := os.ReadFile(filepath.Join(dir, "final-commit"))
	patch, err3 := os.ReadFile(filepath.Join(dir, "patch"))
	if err1 != nil || err2 != nil || err3 != nil {
		return nil
	}
	c := &gitCommit{tree: "(does not apply)", patch: string(patch)}
	for _, l := range strings.Split(string(script), "\n") {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		v = strings.ReplaceAll(strings.Trim(v, "'"), `'\''`, "'")
		switch k {
		case "GIT_AUTHOR_NAME":
			c.author = v
		case "GIT_AUTHOR_EMAIL":
			c.email = v
		case "GIT_AUTHOR_DATE":
			// the Date as the mail gave it; git commit would parse it so
			// (the commit path of this test holds the parser to git's)
			c.date = v
			if t, ok := parseGitDate(v); ok {
				_, off := t.Zone()
				sign := '+'
				if off < 0 {
					sign, off = '-', -off
				}
				c.date = fmt.Sprintf("%d %c%02d%02d", t.Unix(), sign, off/3600, off%3600/60)
			}
		}
	}
	m := stripspace(string(msg))
	var para []string
	lines := strings.Split(m, "\n")
	i := 0
	for i < len(lines) && lines[i] != "" {
		para = append(para, lines[i])
		i++
	}
	c.subject = strings.Join(para, " ")
	c.body = strings.Trim(strings.Join(lines[i:], "\n"), "\n")
	return c
}

// mailsplit runs git mailsplit on an output file and counts the messages.
func (r *gitRepo) mailsplit(mbox []byte) (int, error) {
	d := r.t.TempDir()
	f := filepath.Join(d, "in.mbox")
	if err := os.WriteFile(f, mbox, 0o644); err != nil {
		return 0, err
	}
	out, err := r.git(nil, "mailsplit", "-o"+d, f)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(out))
}

// mailinfo runs git mailinfo -u and returns its info lines and patch.
func (r *gitRepo) mailinfo(mail []byte) (info map[string]string, msg, patch string, err error) {
	d := r.t.TempDir()
	out, err := r.git(mail, "mailinfo", "-u", filepath.Join(d, "msg"), filepath.Join(d, "patch"))
	if err != nil {
		return nil, "", "", err
	}
	info = map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			info[k] = v
		}
	}
	m, _ := os.ReadFile(filepath.Join(d, "msg"))
	pt, _ := os.ReadFile(filepath.Join(d, "patch"))
	return info, string(m), string(pt), nil
}

const diffPreimage = "/* foo.c */\n#include <linux/foo.h>\n\nstatic int foo_setup(struct foo *f)\n{\n\tint regs = 0;\n\n\tfoo_init(f);\n\tfoo_read(f, &regs);\n\treturn regs;\n}\n\nstatic void foo_exit(struct foo *f)\n{\n\tfoo_fini(f);\n}\n"

// genMail is one generated mail and what went into it.
type genMail struct {
	text   []byte
	mboxrd bool
	// mboxo: an mbox whose writer '>'-escaped "From " lines; git keeps
	// the '>', patchctl takes it off (and escapes again in its output
	// the lines git mailsplit would cut at)
	mboxo bool
	what  []string
}

type mailGen struct {
	r *rand.Rand
}

var (
	genNames = []string{"Jane Doe", "Jürgen Müller", "Łukasz Stępień", "YOSHIFUJI Hideaki / 吉藤英明", "François Le Bœuf", "李明", "Al"}
	genDates = []string{
		"Thu, 4 Dec 2008 16:00:00 -0800", "Thu Dec 4 16:00:00 2008 -0800", "2008-12-04 16:00:00 +0100",
		"Mon, 3 Mar 2025 10:00:00 +0200 (EET)", "Tue, 7 Feb 2017 23:51:22 +0100 (CET)", "Wed, 1 Jan 2020 00:00:00 GMT",
		"bogus", "Thu, 32 Dec 2008 16:00:00 -0800",
	}
	genCharsets = []string{"UTF-8", "ISO-8859-1", "ISO-8859-15", "ISO-2022-JP", "GB2312", "KOI8-R", "windows-1252"}
)

func encFor(cs string) encoding.Encoding {
	switch strings.ToUpper(cs) {
	case "ISO-8859-1":
		return charmap.ISO8859_1
	case "ISO-8859-15":
		return charmap.ISO8859_15
	case "ISO-2022-JP":
		return japanese.ISO2022JP
	case "GB2312":
		return simplifiedchinese.GBK
	case "KOI8-R":
		return charmap.KOI8R
	case "WINDOWS-1252":
		return charmap.Windows1252
	}
	return nil
}

// encode converts UTF-8 text to cs; ok false when cs cannot hold it.
func encode(s, cs string) (string, bool) {
	e := encFor(cs)
	if e == nil {
		return s, true
	}
	b, err := e.NewEncoder().String(s)
	return b, err == nil
}

func (g *mailGen) pick(xs []string) string { return xs[g.r.Intn(len(xs))] }

// gen makes one mail: half of them of the classes of issue 27
// (classgen_test.go), half of the shapes below.
func (g *mailGen) gen() genMail {
	if g.r.Intn(2) == 0 {
		return g.genClass()
	}
	return g.genBase()
}

// genBase makes one mail of the first rounds' shapes.
func (g *mailGen) genBase() genMail {
	var gm genMail
	r := g.r
	cs := g.pick(genCharsets)
	name := g.pick(genNames)
	if _, ok := encode(name, cs); !ok {
		name = "Jane Doe"
	}
	addr := "jane@example.org"
	var from string
	switch r.Intn(6) {
	case 0:
		from = name + " <" + addr + ">"
		if !isASCII(name) {
			e, _ := encode(name, cs)
			from = mime.BEncoding.Encode(cs, e) + " <" + addr + ">"
			if cs == "UTF-8" {
				from = mime.BEncoding.Encode("UTF-8", name) + " <" + addr + ">"
			}
			if encFor(cs) != nil {
				from = "=?" + cs + "?B?" + base64.StdEncoding.EncodeToString([]byte(e)) + "?= <" + addr + ">"
			}
		}
		gm.what = append(gm.what, "from-2047")
	case 1:
		from = `"` + strings.ReplaceAll(name, `"`, ``) + `" <` + addr + ">"
		gm.what = append(gm.what, "from-quoted")
	case 2:
		from = "A (zzz) U Thor <" + addr + "> (Comment)"
		gm.what = append(gm.what, "from-comment")
	case 3:
		from = addr + " (Jane Doe)"
		gm.what = append(gm.what, "from-addr-comment")
	case 4:
		// two encoded words, the second in another charset
		from = "YOSHIFUJI Hideaki / =?ISO-2022-JP?B?" + base64.StdEncoding.EncodeToString([]byte(mustEnc("吉藤英明", "ISO-2022-JP"))) + "?= <" + addr + ">"
		gm.what = append(gm.what, "from-2047-iso2022jp")
	default:
		from = "Jane Doe <" + addr + ">"
	}
	if !isASCII(from) {
		from = "Jane Doe <" + addr + ">"
	}
	date := g.pick(genDates)
	subject := "foo: make setup read the registers twice"
	switch r.Intn(4) {
	case 0:
		subject = "[PATCH v2 1/3] " + subject
	case 1:
		subject = "Re: [PATCH] " + subject
	case 2:
		subject = "[PATCH net-next] [RFC] " + subject
	}
	msgText := "The setup reads the registers once; read them twice, the second\nread is what the hardware settled to."
	if cs != "UTF-8" && r.Intn(2) == 0 {
		msgText += "\nThanks to " + name + " for the report."
	}
	if r.Intn(4) == 0 {
		msgText += "\n\nFrom the spec: registers settle late."
	}
	addLine := "\tfoo_read(f, &regs); /* settle */"
	if r.Intn(3) == 0 {
		addLine = "\tfoo_read(f, &regs); /* Müller */"
	}
	// Diff bytes: in the mail's charset when it can hold them.
	diff := "diff --git a/drivers/x/foo.c b/drivers/x/foo.c\nindex 1111111..2222222 100644\n--- a/drivers/x/foo.c\n+++ b/drivers/x/foo.c\n" +
		"@@ -6,6 +6,7 @@ static int foo_setup(struct foo *f)\n \tint regs = 0;\n \n \tfoo_init(f);\n \tfoo_read(f, &regs);\n+" + addLine + "\n \treturn regs;\n }\n \n"
	switch r.Intn(8) {
	case 0:
		diff = "diff --cc drivers/x/foo.c\nindex 1111111,2222222..3333333\n--- a/drivers/x/foo.c\n+++ b/drivers/x/foo.c\n@@@ -6,3 -6,3 +6,4 @@@\n  \tint regs = 0;\n  \n  \tfoo_init(f);\n++\tfoo_more(f);\n"
		gm.what = append(gm.what, "combined-diff")
	case 1:
		diff = binaryDiff()
		gm.what = append(gm.what, "binary")
	case 2:
		// A mailer that trims trailing white space: the blank context
		// lines are empty lines, the hunk's last line (counted) too.
		diff = strings.ReplaceAll(strings.Replace(diff, "@@ -6,6 +6,7 @@", "@@ -6,7 +6,8 @@", 1), "\n \n", "\n\n")
		gm.what = append(gm.what, "blank-context-trimmed")
	}
	body := ""
	inBody := r.Intn(4)
	switch inBody {
	case 1:
		body += "From: Another Thor\n <another@example.org>\n\n"
		gm.what = append(gm.what, "in-body-from-folded")
	case 2:
		body += "Date: " + g.pick(genDates) + "\n\n"
		gm.what = append(gm.what, "in-body-date")
	}
	body += msgText + "\n\nSigned-off-by: Jane Doe <jane@example.org>\n---\n drivers/x/foo.c | 1 +\n 1 file changed, 1 insertion(+)\n\n" + diff
	if r.Intn(3) == 0 {
		body += "-- \n2.39.5\n"
	}
	if strings.Contains(diff, "GIT binary patch") {
		body += "\n"
	}
	encBody, ok := encode(body, cs)
	if !ok {
		cs = "UTF-8"
		encBody = body
	}
	gm.what = append(gm.what, "charset="+cs)
	flowed := ""
	if r.Intn(5) == 0 && !strings.Contains(diff, "GIT binary") && !strings.Contains(diff, "diff --cc") {
		// format=flowed cannot carry a line that ends in a space, so the
		// hunk is one without blank context lines.
		diff = "diff --git a/drivers/x/foo.c b/drivers/x/foo.c\nindex 1111111..2222222 100644\n--- a/drivers/x/foo.c\n+++ b/drivers/x/foo.c\n" +
			"@@ -13,4 +13,5 @@\n static void foo_exit(struct foo *f)\n {\n \tfoo_fini(f);\n+" + addLine + "\n }\n"
		body = strings.Replace(body, body[strings.Index(body, "diff --git"):], diff, 1)
		encBody, _ = encode(body, cs)
		delsp := r.Intn(2) == 0
		encBody = flow(encBody, delsp)
		flowed = "; format=flowed"
		if delsp {
			flowed += "; delsp=yes"
		}
		gm.what = append(gm.what, "flowed"+map[bool]string{true: "-delsp", false: ""}[delsp])
	}
	cte := "8bit"
	switch r.Intn(3) {
	case 1:
		cte = "quoted-printable"
		var b strings.Builder
		w := quotedprintable.NewWriter(&b)
		w.Write([]byte(encBody))
		w.Close()
		encBody = strings.ReplaceAll(b.String(), "\r\n", "\n") // Go's writer uses CRLF
	case 2:
		cte = "base64"
		s := base64.StdEncoding.EncodeToString([]byte(encBody))
		var b strings.Builder
		for len(s) > 76 {
			b.WriteString(s[:76] + "\n")
			s = s[76:]
		}
		b.WriteString(s + "\n")
		encBody = b.String()
	}
	if cs == "ISO-2022-JP" && cte == "8bit" {
		cte = "7bit"
	}
	gm.what = append(gm.what, "cte="+cte)
	var h []string
	h = append(h, "From: "+from, "Date: "+date)
	if r.Intn(3) == 0 {
		// folded subject
		words := strings.SplitN(subject, " ", 3)
		if len(words) == 3 {
			h = append(h, "Subject: "+words[0]+" "+words[1], " "+words[2])
			gm.what = append(gm.what, "subject-folded")
		} else {
			h = append(h, "Subject: "+subject)
		}
	} else {
		h = append(h, "Subject: "+subject)
	}
	h = append(h, "Message-Id: <gen@example.org>", "MIME-Version: 1.0")
	if r.Intn(4) == 0 {
		h = append(h, "Content-Type: text/plain; charset=us-ascii")
		gm.what = append(gm.what, "two-content-types")
	}
	h = append(h, "Content-Type: text/plain; charset="+cs+flowed, "Content-Transfer-Encoding: "+cte)
	mail := strings.Join(h, "\n") + "\n\n" + encBody
	if r.Intn(4) == 0 {
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
	}
	if r.Intn(4) == 0 && cte != "base64" && cte != "quoted-printable" {
		mail = strings.ReplaceAll(mail, "\n", "\r\n")
		gm.what = append(gm.what, "crlf")
	}
	gm.text = []byte(mail)
	return gm
}

func mustEnc(s, cs string) string {
	e, ok := encode(s, cs)
	if !ok {
		panic(cs)
	}
	return e
}

// flow writes text as format=flowed: long lines wrapped at a space with a
// trailing space (and one more with delsp), lines starting with a space
// (diff context) space-stuffed.
func flow(text string, delsp bool) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		nl := strings.HasSuffix(l, "\n")
		l = strings.TrimSuffix(l, "\n")
		if l == "-- " {
			b.WriteString(l + "\n")
			continue
		}
		if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "From ") || strings.HasPrefix(l, ">") {
			l = " " + l
		}
		for len(l) > 40 {
			i := strings.LastIndexByte(l[:40], ' ')
			if i <= 1 {
				break
			}
			if delsp {
				b.WriteString(l[:i] + "  \n"[:2] + "\n")
				l = l[i:]
				l = strings.TrimPrefix(l, " ")
			} else {
				b.WriteString(l[:i+1] + "\n")
				l = l[i+1:]
			}
		}
		b.WriteString(l)
		if nl {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// binaryDiff is git's binary patch of fw.bin (OLD\0BIN\n -> NEW\0BIN\n).
var binaryDiffText string

func binaryDiff() string { return binaryDiffText }

func TestImportDifferentialGit(t *testing.T) {
	repo := newGitRepo(t)
	// The binary patch, made by git itself.
	os.WriteFile(filepath.Join(repo.dir, "fw.bin"), []byte("NEW\x00BIN\n"), 0o644)
	bd, err := repo.git(nil, "diff", "--binary", "--full-index", "fw.bin")
	if err != nil {
		t.Fatal(err)
	}
	binaryDiffText = bd
	repo.git(nil, "checkout", "-q", "--", "fw.bin")

	seed := genSeed(t)
	n := 200
	if testing.Short() {
		n = 40
	}
	if s := os.Getenv("PATCHCTL_GEN_CASES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("PATCHCTL_GEN_CASES=%q: want a number of mails", s)
		}
	}
	t.Logf("import differential test: seed %d, %d mails (PATCHCTL_GEN_SEED=%d to repeat)", seed, n, seed)
	g := &mailGen{r: rand.New(rand.NewSource(seed))}
	accepted, refused := 0, 0
	var fails []string
	for i := 0; i < n; i++ {
		gm := g.gen()
		why := compareWithGit(t, repo, gm)
		if why == "refused" {
			refused++
			continue
		}
		if why == "" {
			accepted++
			continue
		}
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("patchctl-import-differential-%d", seed))
		os.MkdirAll(dir, 0o755)
		f := filepath.Join(dir, fmt.Sprintf("mail%03d.eml", i))
		os.WriteFile(f, gm.text, 0o644)
		fails = append(fails, fmt.Sprintf("mail %d (%s): %s\n  input: %s", i, strings.Join(gm.what, ", "), why, f))
	}
	t.Logf("%d applied by git am and imported alike, %d refused by both", accepted, refused)
	if len(fails) > 0 {
		if len(fails) > 15 {
			fails = append(fails[:15], fmt.Sprintf("... and %d more", len(fails)-15))
		}
		t.Errorf("seed %d: %d disagreements with git:\n%s", seed, len(fails), strings.Join(fails, "\n"))
	}
}

// compareWithGit returns "" when patchctl and git agree on an accepted
// mail, "refused" when both refuse it, else what differs.
func compareWithGit(t *testing.T, repo *gitRepo, gm genMail) string {
	ref, amErr := repo.am(gm.text, gm.mboxrd)
	ps, err := ImportBytes("gen.eml", gm.text, "gen", Options{})
	var applyErr *amApplyError
	if errors.As(amErr, &applyErr) && err == nil {
		// git am read the mail and git apply refused the patch (a
		// format=flowed body that joined a diff line with the next):
		// import, which does not apply, must read it as git am read it.
		if why := sameAsGit(ps[0], ref, ref.patch, gm.mboxo); why != "" {
			return "git am reads it otherwise (then cannot apply it): " + why
		}
		return "refused"
	}
	if amErr != nil {
		if err == nil {
			return "git am refuses it (" + firstLine(amErr.Error()) + "), patchctl imports it"
		}
		var ie *InputError
		if !errors.As(err, &ie) || ie.File == "" || ie.Line == 0 {
			return "refused without file and line: " + err.Error()
		}
		return "refused"
	}
	if err != nil {
		return "git am applies it, patchctl refuses it: " + err.Error()
	}
	p := ps[0]
	var diffs []string
	if why := sameAsGit(p, ref, "", gm.mboxo); why != "" {
		diffs = append(diffs, why)
	}
	if len(ps) != 1 {
		diffs = append(diffs, fmt.Sprintf("%d patches from one mail", len(ps)))
	}
	// The round trip: every output is one message for git mailsplit.
	for _, q := range ps {
		if n, err := repo.mailsplit(q.Format()); err != nil || n != 1 {
			diffs = append(diffs, fmt.Sprintf("git mailsplit cuts patchctl's output into %d messages (%v)", n, err))
		}
	}
	mi := gm.text
	if gm.mboxrd {
		mi = []byte(mboxrdUnescape(string(mi)))
	}
	if _, _, patch, err := repo.mailinfo(mi); err == nil {
		diff := p.Diff
		for _, r := range p.Repairs {
			if r.Kind == KindFinalNewline {
				diff = strings.TrimSuffix(diff, "\n") // a listed repair: the newline the mail lacked
			}
		}
		if !strings.Contains(strings.ReplaceAll(patch, "\r\n", "\n"), diff) {
			diffs = append(diffs, "diff bytes are not git mailinfo's")
		}
	}
	again, err := repo.am(p.Format(), false)
	// A message line git mailsplit would cut at stays in the output
	// '>'-escaped (the mboxrd and format-patch --pretty=mboxrd escape):
	// git am keeps the '>'.
	want := *ref
	want.body = escapeFromLines(ref.body)
	if p.Date.IsZero() && again != nil {
		want.date = again.date // no date in the mail: git am takes the time of day
	}
	if err != nil {
		diffs = append(diffs, "git am refuses patchctl's output: "+firstLine(err.Error()))
	} else if *again != want {
		diffs = append(diffs, fmt.Sprintf("git am of patchctl's output gives %+v, of the mail %+v", *again, want))
	}
	return strings.Join(diffs, "; ")
}

// sameAsGit compares what patchctl read with what git am read: author,
// email, date, subject, message and, when given, the patch git read.
func sameAsGit(p *Patch, ref *gitCommit, patch string, mboxo bool) string {
	var diffs []string
	if p.Author.Name != ref.author || p.Author.Address != ref.email {
		diffs = append(diffs, fmt.Sprintf("author %q <%s>, git %q <%s>", p.Author.Name, p.Author.Address, ref.author, ref.email))
	}
	if p.Subject != ref.subject {
		diffs = append(diffs, fmt.Sprintf("subject %q, git %q", p.Subject, ref.subject))
	}
	_, off := p.Date.Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	// No date in the mail: git am takes the time of day.
	if got := fmt.Sprintf("%d %c%02d%02d", p.Date.Unix(), sign, off/3600, off%3600/60); got != ref.date && !p.Date.IsZero() {
		diffs = append(diffs, fmt.Sprintf("date %s, git %s", got, ref.date))
	}
	msg, body := stripspace(p.Message), ref.body
	if mboxo {
		// equal but for the '>' the mbox writer put before the lines
		// git mailsplit would cut at (git keeps it, patchctl's output
		// puts it back)
		msg, body = escapeFromLines(msg), escapeFromLines(body)
	}
	if msg != body {
		diffs = append(diffs, "message differs:\n"+firstDiff(ref.body, msg))
	}
	if patch != "" && !strings.Contains(strings.ReplaceAll(patch, "\r\n", "\n"), strings.TrimSuffix(p.Diff, "\n")) {
		diffs = append(diffs, "diff bytes are not the patch git am read:\n"+firstDiff(patch, p.Diff))
	}
	return strings.Join(diffs, "; ")
}

// mboxrdUnescape takes one '>' off every ">*From " line, as git
// mailsplit --mboxrd does.
func mboxrdUnescape(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if mboxrdFrom.MatchString(l) {
			lines[i] = l[1:]
		}
	}
	return strings.Join(lines, "")
}

// stripspace is git's message cleanup: trailing white space off every
// line, runs of blank lines one, none at either end.
func stripspace(s string) string {
	var out []string
	blank := false
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimRight(l, " \t\r")
		if l == "" {
			blank = len(out) > 0
			continue
		}
		if blank {
			out = append(out, "")
		}
		blank = false
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// FuzzImportGit mutates generated mails and compares patchctl with git on
// every mail git am applies: the same author, email, date, subject,
// message, diff bytes and resulting tree, or the input is written out.
// (What git refuses, patchctl may refuse or repair; the differential test
// above holds those to their documented classes.) Run by make fuzz.
func FuzzImportGit(f *testing.F) {
	if _, err := exec.LookPath("git"); err != nil {
		f.Skip("git not installed")
	}
	g := &mailGen{r: rand.New(rand.NewSource(1))}
	seeds := 48
	if testing.Short() {
		seeds = 16
	}
	for i := 0; i < seeds; i++ {
		gm := g.gen()
		f.Add(gm.text, gm.mboxrd)
	}
	f.Fuzz(func(t *testing.T, mail []byte, mboxrd bool) {
		repo := newGitRepo(t)
		// patchctl reads public-inbox's "From mboxrd@z" as mboxrd; any
		// other mbox as mboxo (git keeps its '>', patchctl's output puts
		// it back only where git mailsplit would cut)
		mboxrd = mboxrd || bytes.HasPrefix(mail, []byte("From mboxrd@"))
		mboxo := !mboxrd && mboxFromLine.Match(bytes.SplitN(mail, []byte("\n"), 2)[0])
		why := compareWithGit(t, repo, genMail{text: mail, mboxrd: mboxrd, mboxo: mboxo})
		if why == "" || why == "refused" || strings.HasPrefix(why, "git am refuses it") {
			return
		}
		t.Errorf("patchctl and git disagree on a mail git am applies: %s", why)
	})
}

// genSeed is the seed of a generated-mail test: fixed, so CI repeats
// itself, unless PATCHCTL_GEN_SEED names one or says "random" (a new one
// each run, for exploring; `make fuzz` does).
func genSeed(t *testing.T) int64 {
	t.Helper()
	switch s := os.Getenv("PATCHCTL_GEN_SEED"); s {
	case "":
		return 20261201
	case "random":
		return time.Now().UnixNano() % 1_000_000_007
	default:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("PATCHCTL_GEN_SEED=%q: not a number or \"random\"", s)
		}
		return n
	}
}
