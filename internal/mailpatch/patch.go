package mailpatch

import (
	"fmt"
	"net/mail"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// Patch is one imported message: a commit's author, subject and message,
// and its diff, parsed by go-gitdiff.
type Patch struct {
	Series string // series name (the folder under patches/, or the file stem)
	Source string // input file
	Line   int    // input line where the message starts

	// Subject prefix: [Tags... PATCH vVersion Number/Total].
	Tags    []string // e.g. "RFC", "net-next"
	Version int      // 0 when not given
	Number  int      // 0 when not numbered
	Total   int      // 0 when not numbered
	Subject string   // without the bracket prefix

	Author    mail.Address
	Date      time.Time // zero when the message had none
	MessageID string

	// Message is the commit message after the subject: body and trailers,
	// without leading or trailing blank lines.
	Message string
	// Notes is what stood between "---" and the diff (the diffstat,
	// changelog notes), verbatim; empty when there was none.
	Notes string
	Files []*gitdiff.File
	// Diff is the diff section as received (after repairs), one string.
	Diff string

	Repairs  []Repair
	Warnings []Warning
}

// SubjectLine is the Subject header: the normalized prefix and the subject.
func (p *Patch) SubjectLine() string { return p.Prefix() + " " + p.Subject }

// Prefix is the bracket prefix in git format-patch's spelling: "[PATCH v2 1/3]".
func (p *Patch) Prefix() string {
	words := append([]string{}, p.Tags...)
	words = append(words, "PATCH")
	if p.Version > 0 {
		words = append(words, "v"+strconv.Itoa(p.Version))
	}
	if p.Total > 0 {
		words = append(words, fmt.Sprintf("%d/%d", p.Number, p.Total))
	}
	return "[" + strings.Join(words, " ") + "]"
}

// subjectPrefix matches the bracket prefix of a subject: "[PATCHv1]",
// "[PATCH net-next v2 3/5]". Leading "Re:" is not a patch.
var subjectPrefix = regexp.MustCompile(`^\[([^\]]*)\]\s*(.*)$`)

var (
	versionWord = regexp.MustCompile(`^[vV](\d+)$`)
	numberWord  = regexp.MustCompile(`^(\d+)/(\d+)$`)
	patchWord   = regexp.MustCompile(`^(?i:PATCH)[vV]?(\d*)$`)
)

// parseSubject splits "[PATCH v2 1/3] subject" into its parts. The
// subject is what git am makes of it (mailinfo's cleanup_subject): every
// leading "Re:", ':', white space and [bracketed] group goes, runs of
// white space become one space. The bracketed groups' words become the
// prefix.
func (p *Patch) parseSubject(s string) {
	p.Tags, p.Version, p.Number, p.Total = nil, 0, 0, 0
	var groups []string
	for {
		switch {
		case len(s) > 3 && (s[0] == 'r' || s[0] == 'R') && (s[1] == 'e' || s[1] == 'E') && s[2] == ':':
			s = s[3:]
			continue
		case len(s) > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == ':'):
			s = s[1:]
			continue
		case len(s) > 0 && s[0] == '[':
			if j := strings.IndexByte(s, ']'); j >= 0 {
				groups = append(groups, s[1:j])
				s = s[j+1:]
				continue
			}
		}
		break
	}
	p.Subject = strings.TrimSpace(cleanupSpace(strings.TrimSpace(s)))
	for _, g := range groups {
		for _, w := range strings.Fields(strings.ReplaceAll(g, ",", " ")) {
			switch {
			case patchWord.MatchString(w):
				if v := patchWord.FindStringSubmatch(w)[1]; v != "" {
					p.Version, _ = strconv.Atoi(v)
				}
			case versionWord.MatchString(w):
				p.Version, _ = strconv.Atoi(versionWord.FindStringSubmatch(w)[1])
			case numberWord.MatchString(w):
				n := numberWord.FindStringSubmatch(w)
				p.Number, _ = strconv.Atoi(n[1])
				p.Total, _ = strconv.Atoi(n[2])
			default:
				p.Tags = append(p.Tags, w)
			}
		}
	}
}

// diffStart reports whether line i of lines starts the diff section.
func diffStart(lines []string, i int) bool {
	l := lines[i]
	switch {
	case strings.HasPrefix(l, "diff --git "), strings.HasPrefix(l, "Index: "):
		return true
	case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
		return true
	}
	return false
}

// inBodyHeader is git mailinfo's is_inbody_header and skip_header: a
// From, Subject or Date line not seen before, the name in any case, then
// ':'; the value starts after the white space that follows.
func inBodyHeader(l string, seen map[string]bool) (name, val string) {
	for _, n := range []string{"From", "Subject", "Date"} {
		if !seen[n] && len(l) > len(n) && strings.EqualFold(l[:len(n)], n) && l[len(n)] == ':' {
			return n, strings.TrimLeft(l[len(n)+1:], " \t\n\v\f\r")
		}
	}
	return "", ""
}

// gitdiffLine pulls the line number out of a go-gitdiff parse error.
var gitdiffLine = regexp.MustCompile(`^gitdiff: line (\d+): (.*)$`)

// signatureVersion matches the line after "-- " that git format-patch
// writes: its version.
var signatureVersion = regexp.MustCompile(`^\d+(\.\d+)+\S*$`)

// patchBreak is git mailinfo's patchbreak: the line that ends the commit
// message and starts the patch ("---" and white space, "--- file",
// "diff -", "Index: ").
func patchBreak(l string) bool {
	if strings.HasPrefix(l, "diff -") || strings.HasPrefix(l, "Index: ") {
		return true
	}
	if len(l) < 3 || !strings.HasPrefix(l, "---") {
		return false
	}
	if len(l) > 4 && l[3] == ' ' && !isSpace(l[4]) {
		return true
	}
	return strings.TrimRight(l[3:], " \t\r\v\f") == ""
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// formatPatchSeparator matches the "From <sha1> Mon Sep 17 00:00:00 2001"
// line git format-patch writes.
var formatPatchSeparator = regexp.MustCompile(`^From [0-9a-f]{40} Mon Sep 17 00:00:00 2001$`)

// combinedHunk matches a combined diff's hunk header ("@@@ -1 -1 +1 @@@")
// and its file header ("diff --cc", "diff --combined").
var combinedHunk = regexp.MustCompile(`^(@@@+ |diff --cc |diff --combined )`)

// msgNoDiff is the error of a message without a diff (a reply in a
// thread: ReadThread skips it).
const msgNoDiff = "not a patch: the message has no diff"

// buildPatch takes a message apart into a Patch and repairs it: line
// ends, in-body headers, subject and date, commit message and notes, the
// diff, then the repairs that read the parsed files and the author.
func buildPatch(m *message, series string, opts Options) (*Patch, error) {
	p := &Patch{Series: series, Source: m.File, Line: m.StartLine, MessageID: m.MessageID}
	p.Repairs = append(p.Repairs, m.Repairs...)
	body := p.lfBody(m)
	if err := checkControl(m, body, opts.AllowUnicodeControl); err != nil {
		return nil, err
	}
	h := inBodyHeaders{m: m, p: p, body: body, subject: m.Subject, dateText: m.Date, dateLine: m.DateLine, acc: -1}
	if h.dateLine == 0 {
		h.dateLine = m.StartLine
	}
	msgStart, err := h.read()
	if err != nil {
		return nil, err
	}
	if err := p.takeSubjectAndDate(m, h.subject, h.dateText, h.dateLine); err != nil {
		return nil, err
	}
	sepAt, diffAt := splitBody(body, msgStart)
	if diffAt < 0 {
		if p.Number == 0 && p.Total > 0 {
			return nil, nil // a cover letter: no diff by design
		}
		return nil, &InputError{File: m.File, Line: m.StartLine, Msg: msgNoDiff,
			Hint: "a patch message carries a \"diff --git\" section after its \"---\" line"}
	}
	msgEnd := diffAt
	if sepAt >= 0 {
		msgEnd = sepAt
		p.Notes = strings.Join(body[sepAt+1:diffAt], "\n")
		if p.Notes != "" {
			p.Notes += "\n"
		}
	}
	if msgStart, err = p.takeMessage(m, body, msgStart, msgEnd); err != nil {
		return nil, err
	}
	if err := p.takeDiff(m, body[diffAt:], diffAt); err != nil {
		return nil, err
	}
	if err := checkFiles(m, p, diffAt); err != nil {
		return nil, err
	}
	if err := p.repairEntities(m, diffAt, opts); err != nil {
		return nil, err
	}
	p.repairTrailers(m, msgStart)
	if err := p.resolveAuthor(m, h.from, h.fromLine); err != nil {
		return nil, err
	}
	return p, nil
}

// lfBody is the message's body with CRLF line ends made LF (a repair).
func (p *Patch) lfBody(m *message) []string {
	body := append([]string(nil), m.Body...)
	crlf := 0
	for i, l := range body {
		if strings.HasSuffix(l, "\r") {
			body[i] = strings.TrimSuffix(l, "\r")
			crlf++
		}
	}
	if crlf > 0 {
		p.Repairs = append(p.Repairs, Repair{Kind: KindLineEnds, File: m.File, Line: m.line(0),
			Before: fmt.Sprintf("%d lines end in CRLF", crlf), After: "LF",
			Why: "mail transport line ends; a patch for the kernel tree uses LF"})
	}
	return body
}

// inBodyHeaders reads the headers at the top of a body, as git
// mailinfo's check_inbody_header reads them: empty lines before them are
// skipped; From, Subject and Date lines (each once, any case,
// continuation lines unfolded), "[PATCH] subject" lines and git
// format-patch's escaped ">From <sha1>" line are taken; an empty line
// right after a From, Subject or Date header (only there) or any other
// line ends them. A line of white space is not empty: after a header it
// continues it, elsewhere it ends the headers. What they say overrides
// the mail's own headers.
type inBodyHeaders struct {
	m    *message
	p    *Patch
	body []string

	subject         string
	dateText        string
	dateLine        int
	from            string
	fromLine        int
	seen            map[string]bool
	acc             int // the body line of the From, Subject or Date being read; -1: none
	accName, accVal string
}

// read reads the headers and returns the body line after them.
func (h *inBodyHeaders) read() (int, error) {
	h.seen = map[string]bool{}
	body := h.body
	i := 0
	for i < len(body) {
		l := body[i]
		if l == "" {
			i++
			if h.acc >= 0 {
				break
			}
			continue
		}
		if h.acc >= 0 && (l[0] == ' ' || l[0] == '\t') {
			h.accVal += l // git keeps the continuation line as it is, its newline dropped
			i++
			continue
		}
		if err := h.flush(i); err != nil {
			return 0, err
		}
		if strings.HasPrefix(l, ">From") && (len(l) == 5 || isSpace(l[5])) {
			if formatPatchSeparator.MatchString(l[1:]) {
				i++
				continue
			}
			break
		}
		if strings.HasPrefix(l, "[PATCH]") && (len(l) == 7 || isSpace(l[7])) {
			h.subject, h.seen["Subject"] = l, true
			i++
			continue
		}
		name, val := inBodyHeader(l, h.seen)
		if name == "" {
			break
		}
		h.seen[name] = true
		h.acc, h.accName, h.accVal = i, name, val
		i++
	}
	hdrEnd := i
	if hdrEnd > 0 && body[hdrEnd-1] == "" && h.acc >= 0 {
		hdrEnd-- // the empty line that ended the headers is not part of the last one
	}
	if err := h.flush(hdrEnd); err != nil {
		return 0, err
	}
	return i, nil
}

// flush takes the header being read, which ends before body line end.
func (h *inBodyHeaders) flush(end int) error {
	if h.acc < 0 {
		return nil
	}
	m := h.m
	at, name, val := h.acc, h.accName, h.accVal
	h.acc = -1
	dec, err := decodeWords(val)
	if err != nil {
		return &InputError{File: m.File, Line: m.line(at), Msg: "in-body " + name + ": " + err.Error()}
	}
	if dec, err = m.convert(at, dec); err != nil {
		return &InputError{File: m.File, Line: m.line(at), Msg: "in-body " + name + ": " + err.Error()}
	}
	if end-at > 1 {
		h.p.Repairs = append(h.p.Repairs, Repair{Kind: KindInBodyFold, File: m.File, Line: m.line(at),
			Before: strings.Join(h.body[at:end], "\\n"), After: name + ": " + cleanupSpace(dec),
			Why: "a folded header continues on lines that start with white space (RFC 5322 2.2.3); git am unfolds in-body headers too"})
	}
	switch name {
	case "From":
		h.from, h.fromLine = strings.TrimSpace(cleanupSpace(dec)), m.line(at)
	case "Date":
		h.dateText, h.dateLine = strings.TrimSpace(cleanupSpace(dec)), m.line(at)
		if h.dateLine == 0 {
			h.dateLine = m.StartLine
		}
	case "Subject":
		h.subject = dec
	}
	return nil
}

// takeSubjectAndDate parses the subject (its bracket prefix respelled as
// git format-patch spells it is a repair) and the date.
func (p *Patch) takeSubjectAndDate(m *message, subject, dateText string, dateLine int) error {
	p.parseSubject(subject)
	if pfx := subjectPrefix.FindStringSubmatch(strings.TrimSpace(subject)); pfx != nil && strings.HasPrefix(strings.TrimSpace(subject), "[") && "["+pfx[1]+"]" != p.Prefix() {
		p.Repairs = append(p.Repairs, Repair{Kind: KindSubjectPrefix, File: m.File, Line: m.StartLine,
			Before: "[" + pfx[1] + "]", After: p.Prefix(),
			Why: "the same tags, version and numbering in git format-patch's spelling"})
	}
	if dateText == "" {
		return nil
	}
	t, ok := parseGitDate(dateText)
	if !ok {
		return &InputError{File: m.File, Line: dateLine, Msg: fmt.Sprintf("invalid date format: Date %s", excerpt(dateText)),
			Hint: "git am stops on it too; give the date as RFC 2822 (\"Mon, 2 Jan 2006 15:04:05 -0700\")"}
	}
	p.Date = t
	return nil
}

// splitBody finds, from body line from on, the "---" line that ends the
// commit message (sepAt; -1: none) and the line where git's patch
// starts (diffAt; -1: no diff). The notes stand between them.
func splitBody(body []string, from int) (sepAt, diffAt int) {
	sepAt, diffAt = -1, -1
	for j := from; j < len(body); j++ {
		if sepAt < 0 && diffAt < 0 && patchBreak(body[j]) && !diffStart(body, j) {
			sepAt = j
			continue
		}
		if (sepAt >= 0 || patchBreak(body[j])) && diffStart(body, j) {
			diffAt = j
			break
		}
	}
	return sepAt, diffAt
}

// takeMessage sets the commit message from body[start:end], converted
// to UTF-8 (only the message: the diff stays the bytes the author sent,
// as git am writes them), and, when the mail had no subject, the subject
// from its first paragraph. It returns the body line where the message
// proper starts.
func (p *Patch) takeMessage(m *message, body []string, start, end int) (int, error) {
	for start < end && strings.TrimSpace(body[start]) == "" {
		start++
	}
	var msg []string
	for j := start; j < end; j++ {
		l, err := m.convert(j, body[j])
		if err != nil {
			return 0, &InputError{File: m.File, Line: m.line(j), Msg: "commit message: " + err.Error()}
		}
		if !utf8.ValidString(l) {
			return 0, &InputError{File: m.File, Line: m.line(j), Msg: "commit message: invalid UTF-8 and no charset is declared",
				Hint: "the archive copy is damaged; fetch it again or declare its charset"}
		}
		msg = append(msg, l)
	}
	p.Message = strings.TrimRight(strings.Join(msg, "\n"), "\n")
	if p.Subject == "" {
		// No subject (an hg export has none): git am's commit message is
		// the body alone, so its first paragraph is the subject.
		para := 0
		for para < len(msg) && strings.TrimRight(msg[para], " \t\r\v\f") != "" {
			para++
		}
		var words []string
		for _, l := range msg[:para] {
			words = append(words, strings.TrimRight(l, " \t\r\v\f"))
		}
		p.Subject = strings.TrimSpace(cleanupSpace(strings.Join(words, " ")))
		rest := msg[para:]
		for len(rest) > 0 && strings.TrimSpace(rest[0]) == "" {
			rest = rest[1:]
		}
		start += para
		p.Message = strings.TrimRight(strings.Join(rest, "\n"), "\n")
	}
	if p.Subject == "" {
		return 0, &InputError{File: m.File, Line: m.StartLine, Msg: "message has no subject", Hint: "a patch needs a Subject: line or a \"[PATCH] subject\" first line"}
	}
	return start, nil
}

// takeDiff sets the diff (body line diffAt on: no combined diff, the
// signature and the mail's padding taken off) and its files, parsed by
// go-gitdiff; a diff that is damaged or changes nothing is refused.
func (p *Patch) takeDiff(m *message, diff []string, diffAt int) error {
	for k, l := range diff {
		if combinedHunk.MatchString(l) {
			return &InputError{File: m.File, Line: m.line(diffAt + k),
				Msg:  fmt.Sprintf("combined diff (%s): a merge's diff against several parents, which no patch tool applies", excerpt(l)),
				Hint: "send the change as a normal diff against one parent (git format-patch of a non-merge commit)"}
		}
	}
	diff = p.stripSignature(m, diff, m.line(diffAt))
	// Blank lines after the last hunk are mail padding; a binary patch
	// ends in exactly one. Those the last hunk's line counts still call
	// for are its blank context lines, whose space a mailer trimmed (GNU
	// patch and git apply read an empty line in a hunk so).
	end := len(diff)
	for end > 0 && diff[end-1] == "" {
		end--
	}
	if k := hunkShort(diff[:end]); k > 0 && k <= len(diff)-end {
		end += k
	}
	if end < len(diff) {
		diff = diff[:end]
		if binaryTail(diff) {
			diff = append(diff, "")
		}
	}
	p.Diff = strings.Join(diff, "\n") + "\n"

	files, _, err := gitdiff.Parse(strings.NewReader(p.Diff))
	if err != nil {
		return damagedDiff(m, diffAt, err)
	}
	if len(files) == 0 {
		return &InputError{File: m.File, Line: m.line(diffAt), Msg: "not a patch: no file changes in the diff"}
	}
	for _, f := range files {
		if len(f.TextFragments) == 0 && !f.IsBinary && !f.IsNew && !f.IsDelete && !f.IsRename && !f.IsCopy && f.OldMode == f.NewMode {
			return &InputError{File: m.File, Line: m.line(diffAt), Msg: fmt.Sprintf("%s: the diff changes nothing (no hunk)", firstNonEmpty(f.NewName, f.OldName)),
				Hint: "git am refuses a patch with only garbage"}
		}
	}
	p.Files = files
	return nil
}

// damagedDiff is go-gitdiff's parse error as an InputError on the
// input's line (or, for an encoded body, the line where it starts).
func damagedDiff(m *message, diffAt int, err error) *InputError {
	ie := &InputError{File: m.File, Msg: "damaged diff: " + clip(err.Error(), 200),
		Hint: "the hunk is cut short or its line counts are wrong; fetch the patch again"}
	if sm := gitdiffLine.FindStringSubmatch(err.Error()); sm != nil {
		n, _ := strconv.Atoi(sm[1])
		ie.Msg = "damaged diff: " + clip(sm[2], 200)
		if m.BodyStart > 0 {
			ie.Line = m.line(diffAt) + n - 1
		} else {
			ie.Line = m.line(diffAt)
			ie.Msg += fmt.Sprintf(" (line %d of the decoded diff; the encoded body starts at this line)", n)
		}
	}
	return ie
}

// hunkShort is how many blank context lines the last hunk of diff lacks:
// k when its header counts k more old and k more new lines than follow
// it (every line that follows being a hunk line), else 0.
func hunkShort(diff []string) int {
	h := len(diff) - 1
	for h >= 0 && !hunkHeader.MatchString(diff[h]) {
		h--
	}
	if h < 0 {
		return 0
	}
	m := hunkHeader.FindStringSubmatch(diff[h])
	count := func(s string) int {
		if s == "" {
			return 1
		}
		n, _ := strconv.Atoi(s)
		return n
	}
	old, neu := count(m[1]), count(m[2])
	for _, l := range diff[h+1:] {
		switch {
		case l == "" || l[0] == ' ':
			old, neu = old-1, neu-1
		case l[0] == '-':
			old--
		case l[0] == '+':
			neu--
		case l[0] == '\\':
		default:
			return 0 // not a hunk line: the hunk ended before
		}
	}
	if old > 0 && old == neu {
		return old
	}
	return 0
}

// binaryTail reports whether the diff's last file is a binary patch.
func binaryTail(diff []string) bool {
	for k := len(diff) - 1; k >= 0; k-- {
		if strings.HasPrefix(diff[k], "diff --git ") {
			return false
		}
		if diff[k] == "GIT binary patch" {
			return true
		}
	}
	return false
}

// stripSignature removes git format-patch's "-- \n<version>" signature from
// the end of the diff section. It only matches after the last hunk: a
// signature is "-- " followed by at most two lines, the first a version.
func (p *Patch) stripSignature(m *message, diff []string, firstLine int) []string {
	end := len(diff)
	for end > 0 && strings.TrimSpace(diff[end-1]) == "" {
		end--
	}
	for k := end - 1; k >= 0 && k >= end-3; k-- {
		if diff[k] != "-- " {
			continue
		}
		rest := diff[k+1 : end]
		if len(rest) > 0 && !signatureVersion.MatchString(strings.TrimSpace(rest[0])) {
			return diff
		}
		line := 0
		if firstLine > 0 {
			line = firstLine + k
		}
		p.Repairs = append(p.Repairs, Repair{Kind: KindSignature, File: m.File, Line: line,
			Before: strings.Join(diff[k:end], "\\n"), After: "",
			Why: "the mail signature follows the last hunk, whose line counts are complete; it is not part of the diff"})
		return diff[:k]
	}
	return diff
}
