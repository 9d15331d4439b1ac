package mailpatch

import (
	"fmt"
	"net/mail"
	"regexp"
	"strconv"
	"strings"
	"time"

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

// parseSubject splits "[PATCH v2 1/3] subject" into its parts.
func (p *Patch) parseSubject(s string) {
	sm := subjectPrefix.FindStringSubmatch(s)
	if sm == nil {
		p.Subject = s
		return
	}
	p.Subject = strings.TrimSpace(sm[2])
	for _, w := range strings.Fields(strings.ReplaceAll(sm[1], ",", " ")) {
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

// inBodyHeader matches the headers git am reads at the top of a body.
var inBodyHeader = regexp.MustCompile(`^(From|Date|Subject):\s*(.*)$`)

// gitdiffLine pulls the line number out of a go-gitdiff parse error.
var gitdiffLine = regexp.MustCompile(`^gitdiff: line (\d+): (.*)$`)

// signatureVersion matches the line after "-- " that git format-patch
// writes: its version.
var signatureVersion = regexp.MustCompile(`^\d+(\.\d+)+\S*$`)

// buildPatch takes a message apart into a Patch and repairs it.
func buildPatch(m *message, series string, opts Options) (*Patch, error) {
	p := &Patch{Series: series, Source: m.File, Line: m.StartLine, MessageID: m.MessageID}
	p.Repairs = append(p.Repairs, m.Repairs...)
	p.parseSubject(m.Subject)
	if pfx := subjectPrefix.FindStringSubmatch(m.Subject); pfx != nil && "["+pfx[1]+"]" != p.Prefix() {
		p.Repairs = append(p.Repairs, Repair{Kind: KindSubjectPrefix, File: m.File, Line: m.StartLine,
			Before: "[" + pfx[1] + "]", After: p.Prefix(),
			Why: "the same tags, version and numbering in git format-patch's spelling"})
	}
	if m.Date != "" {
		t, err := mail.ParseDate(m.Date)
		if err != nil {
			return nil, &InputError{File: m.File, Line: m.StartLine, Msg: fmt.Sprintf("unreadable Date %q: %v", m.Date, err)}
		}
		p.Date = t
	}

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
	if err := checkControl(m, body, opts.AllowUnicodeControl); err != nil {
		return nil, err
	}

	// In-body headers (git am semantics) come first in the body.
	i := 0
	for i < len(body) && strings.TrimSpace(body[i]) == "" {
		i++
	}
	var inBodyFrom string
	inBodyFromLine := 0
	if i < len(body) && inBodyHeader.MatchString(body[i]) {
		for ; i < len(body) && strings.TrimSpace(body[i]) != ""; i++ {
			hm := inBodyHeader.FindStringSubmatch(body[i])
			if hm == nil {
				break
			}
			switch hm[1] {
			case "From":
				inBodyFrom, inBodyFromLine = strings.TrimSpace(hm[2]), m.line(i)
			case "Date":
				if t, err := mail.ParseDate(strings.TrimSpace(hm[2])); err == nil {
					p.Date = t
				}
			case "Subject":
				p.parseSubject(strings.TrimSpace(hm[2]))
			}
		}
	}
	msgStart := i

	// The commit message ends at "---" or at the diff; notes follow "---".
	diffAt, sepAt := -1, -1
	for j := msgStart; j < len(body); j++ {
		if sepAt < 0 && strings.TrimRight(body[j], " \t") == "---" {
			sepAt = j
			continue
		}
		if diffStart(body, j) {
			diffAt = j
			break
		}
	}
	if diffAt < 0 {
		if p.Number == 0 && p.Total > 0 {
			return nil, nil // a cover letter: no diff by design
		}
		return nil, &InputError{File: m.File, Line: m.StartLine, Msg: "not a patch: the message has no diff",
			Hint: "a patch message carries a \"diff --git\" section after its \"---\" line"}
	}
	if p.Subject == "" {
		return nil, &InputError{File: m.File, Line: m.StartLine, Msg: "message has no subject", Hint: "a patch needs a Subject: line or a \"[PATCH] subject\" first line"}
	}
	msgEnd := diffAt
	if sepAt >= 0 {
		msgEnd = sepAt
		p.Notes = strings.Join(body[sepAt+1:diffAt], "\n")
		if p.Notes != "" {
			p.Notes += "\n"
		}
	}
	for msgStart < msgEnd && strings.TrimSpace(body[msgStart]) == "" {
		msgStart++
	}
	p.Message = strings.TrimRight(strings.Join(body[msgStart:msgEnd], "\n"), "\n")

	diff := body[diffAt:]
	diff = p.stripSignature(m, diff, m.line(diffAt))
	p.Diff = strings.Join(diff, "\n") + "\n"

	files, _, err := gitdiff.Parse(strings.NewReader(p.Diff))
	if err != nil {
		ie := &InputError{File: m.File, Msg: "damaged diff: " + err.Error(),
			Hint: "the hunk is cut short or its line counts are wrong; fetch the patch again"}
		if sm := gitdiffLine.FindStringSubmatch(err.Error()); sm != nil {
			n, _ := strconv.Atoi(sm[1])
			ie.Msg = "damaged diff: " + sm[2]
			if m.BodyStart > 0 {
				ie.Line = m.line(diffAt) + n - 1
			} else {
				ie.Msg += fmt.Sprintf(" (line %d of the decoded diff)", n)
			}
		}
		return nil, ie
	}
	if len(files) == 0 {
		return nil, &InputError{File: m.File, Line: m.line(diffAt), Msg: "not a patch: no file changes in the diff"}
	}
	p.Files = files
	if err := checkFiles(m, p, diffAt); err != nil {
		return nil, err
	}
	if err := p.repairEntities(m, diffAt, opts); err != nil {
		return nil, err
	}
	p.repairTrailers(m, msgStart)
	if err := p.resolveAuthor(m, inBodyFrom, inBodyFromLine); err != nil {
		return nil, err
	}
	return p, nil
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
