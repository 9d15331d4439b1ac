package mailpatch

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Format is the kind of container a message came in.
type Format string

const (
	FormatMbox   Format = "mbox"   // mboxo: only ">From " is escaped
	FormatMboxrd Format = "mboxrd" // public-inbox: every ">*From " is escaped
	FormatMail   Format = "mail"   // one RFC 2822 message, no "From " line
	FormatBare   Format = "bare"   // archive text: "[PATCH n/m] subject", "[Author]"
	FormatHg     Format = "hg"     // hg export: "# HG changeset patch", "# User", "# Date"
	FormatStgit  Format = "stgit"  // StGit export: subject, blank line, "From:"/"Author:"/"Date:"
)

// rawMessage is one message cut out of an input file, before its headers
// are read. Line numbers are 1-based lines of the input file.
type rawMessage struct {
	// ctx, when set, is looked at (its Err) while reading long header
	// blocks: a context.Context.
	ctx       interface{ Err() error }
	File      string
	Format    Format
	StartLine int      // line of the first header (or subject) line
	Lines     []string // message lines without their line ends
	Repairs   []Repair // made while cutting (mboxrd unescaping)
	// lineAt, when set, is the input line of each of Lines (a converted
	// hg or StGit patch, whose header lines are written anew).
	lineAt []int
}

// lineOf is the input line of Lines[i].
func (r *rawMessage) lineOf(i int) int {
	if r.lineAt != nil && i < len(r.lineAt) {
		return r.lineAt[i]
	}
	if len(r.lineAt) > 0 {
		return r.lineAt[len(r.lineAt)-1]
	}
	return r.StartLine + i
}

// mboxFromLine matches an mbox separator: "From " sender, then a date that
// carries a time of day. Body lines starting with "From " are escaped by the
// writer, so this is safe at a line start after a blank line.
var mboxFromLine = regexp.MustCompile(`^From \S+\s.*\d{1,2}:\d{2}(:\d{2})?`)

// mboxrdFrom matches an escaped "From " line in an mboxrd body.
var mboxrdFrom = regexp.MustCompile(`^>+From `)

// splitFile cuts data into messages. It detects the container from the first
// line: an mbox "From " line, a mail header, or a bare "[PATCH" subject.
func splitFile(name string, data []byte) ([]rawMessage, error) {
	text := string(data)
	lines := strings.Split(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // the final newline ends the last line
	}
	first := 0
	for first < len(lines) && strings.TrimSpace(lines[first]) == "" {
		first++
	}
	if first == len(lines) {
		return nil, &InputError{File: name, Msg: "empty file, not a patch"}
	}
	head := strings.TrimRight(lines[first], "\r")
	// git am's detect_patch_format: "From " or "From: " is a mailbox, then
	// an hg export, then a StGit patch (a line, an empty line, then
	// From:, Author: or Date:).
	gitMbox := strings.HasPrefix(head, "From ") || strings.HasPrefix(head, "From: ")
	stgit := !gitMbox && first+2 < len(lines) && strings.TrimSuffix(lines[first+1], "\r") == "" &&
		(strings.HasPrefix(lines[first+2], "From:") || strings.HasPrefix(lines[first+2], "Author:") || strings.HasPrefix(lines[first+2], "Date:"))
	switch {
	case mboxFromLine.MatchString(head):
		return splitMbox(name, lines[first:], first+1), nil
	case !gitMbox && head == "# HG changeset patch":
		raw, err := convertHg(name, lines)
		if err != nil {
			return nil, err
		}
		return []rawMessage{raw}, nil
	case stgit:
		return []rawMessage{convertStgit(name, lines)}, nil
	case bareSubject.MatchString(head):
		return []rawMessage{{File: name, Format: FormatBare, StartLine: first + 1, Lines: lines[first:]}}, nil
	case headerLine.MatchString(head):
		return []rawMessage{{File: name, Format: FormatMail, StartLine: first + 1, Lines: lines[first:]}}, nil
	}
	return nil, &InputError{File: name, Line: first + 1,
		Msg:  "not a patch message: expected an mbox \"From \" line, mail headers, or a \"[PATCH n/m] subject\" line",
		Hint: "save the message as mbox or raw mail from the archive"}
}

// headerLine matches an RFC 2822 header field line as mail writers put it:
// a name, a colon and a space.
var headerLine = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]*:( |\t|$)`)

// splitMbox splits an mbox into messages and undoes the "From " escaping.
// An mbox whose separator names mboxrd (public-inbox writes "From mboxrd@z")
// is unescaped the mboxrd way: one '>' comes off every ">*From " line. Any
// other mbox is mboxo: only ">From " is unescaped.
func splitMbox(name string, lines []string, startLine int) []rawMessage {
	var msgs []rawMessage
	var cur *rawMessage
	for i, l := range lines {
		ln := startLine + i
		bare := strings.TrimRight(l, "\r")
		if mboxFromLine.MatchString(bare) && (i == 0 || strings.TrimSpace(lines[i-1]) == "") {
			if cur != nil {
				msgs = append(msgs, *cur)
			}
			format := FormatMbox
			if strings.HasPrefix(bare, "From mboxrd@") {
				format = FormatMboxrd
			}
			cur = &rawMessage{File: name, Format: format, StartLine: ln + 1}
			continue
		}
		unescaped := l
		switch {
		case cur.Format == FormatMboxrd && mboxrdFrom.MatchString(l):
			unescaped = l[1:]
		case cur.Format == FormatMbox && strings.HasPrefix(l, ">From ") && !formatPatchSeparator.MatchString(bare[1:]):
			// A git format-patch separator carried in the body stays
			// escaped, as git am reads mboxo: at the top of the body
			// git mailinfo skips it and reads the in-body headers after it.
			unescaped = l[1:]
		}
		if unescaped != l {
			cur.Repairs = append(cur.Repairs, Repair{
				Kind: KindMboxEscape, File: name, Line: ln,
				Before: l, After: unescaped,
				Why: string(cur.Format) + " writers prefix '>' to body lines that start with \">*From \"; the reader takes one off",
			})
		}
		cur.Lines = append(cur.Lines, unescaped)
	}
	if cur != nil {
		msgs = append(msgs, *cur)
	}
	// An mbox writer puts one empty line after each message; take it off.
	// Only an empty line: " " is an empty context line of a hunk.
	for i := range msgs {
		m := &msgs[i]
		if n := len(m.Lines); n > 0 && strings.TrimRight(m.Lines[n-1], "\r") == "" {
			m.Lines = m.Lines[:n-1]
		}
	}
	return msgs
}

// hasNUL reports whether data looks binary.
func hasNUL(data []byte) bool { return bytes.IndexByte(data, 0) >= 0 }

// convertHg turns an hg export into the mail git am makes of it
// (--patch-format=hg, hg_patch_to_mail): "# User" becomes From, "# Date
// <seconds> <seconds west of UTC>" an RFC 2822 Date, other "# " lines
// go, and the first other line starts the body.
func convertHg(name string, lines []string) (rawMessage, error) {
	raw := rawMessage{File: name, Format: FormatHg, StartLine: 1}
	i := 0
	for ; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "# User "):
			raw.Lines = append(raw.Lines, "From: "+l[len("# User "):])
		case strings.HasPrefix(l, "# Date "):
			d, err := hgDate(l[len("# Date "):])
			if err != nil {
				return raw, &InputError{File: name, Line: i + 1, Msg: fmt.Sprintf("hg patch: %v: %s", err, excerpt(l)),
					Hint: "hg writes \"# Date <seconds since 1970> <seconds west of UTC>\"; git am --patch-format=hg stops on it too"}
			}
			raw.Lines = append(raw.Lines, "Date: "+d)
		case strings.HasPrefix(l, "# "):
			continue
		default:
			goto body
		}
		raw.lineAt = append(raw.lineAt, i+1)
	}
body:
	raw.appendBody(lines, i)
	return raw, nil
}

// hgDate reads hg's "<seconds> <offset>" as git am does (a number, one
// space, a signed offset in seconds west of UTC, nothing after) and
// writes it as RFC 2822.
func hgDate(s string) (string, error) {
	ts, rest, ok := cNumber(s, false)
	if !ok {
		return "", fmt.Errorf("invalid timestamp")
	}
	if !strings.HasPrefix(rest, " ") {
		return "", fmt.Errorf("invalid Date line")
	}
	tz, rest, ok := cNumber(rest[1:], true)
	if !ok {
		return "", fmt.Errorf("invalid timezone offset")
	}
	if rest != "" {
		return "", fmt.Errorf("invalid Date line")
	}
	abs := tz
	if abs < 0 {
		abs = -abs
	}
	hhmm := abs/3600*100 + abs%3600/60
	if tz > 0 {
		hhmm = -hhmm
	}
	off := int(hhmm/100*3600 + hhmm%100*60)
	t := time.Unix(ts, 0).In(time.FixedZone("", off))
	return t.Format("Mon, 2 Jan 2006 15:04:05 -0700"), nil
}

// cNumber is C's strtol: white space, a sign (only when signed), digits;
// with no digits the value is 0 and nothing is read. ok is false on
// overflow or, unsigned, a sign (strtoumax would wrap it).
func cNumber(s string, signed bool) (v int64, rest string, ok bool) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		if !signed {
			return 0, s, false
		}
		neg = t[0] == '-'
		t = t[1:]
	}
	n := 0
	for n < len(t) && t[n] >= '0' && t[n] <= '9' {
		n++
	}
	if n == 0 {
		return 0, s, true
	}
	v, err := strconv.ParseInt(t[:n], 10, 64)
	if err != nil {
		return 0, s, false
	}
	if neg {
		v = -v
	}
	return v, t[n:], true
}

// convertStgit turns a StGit patch into the mail git am makes of it
// (--patch-format=stgit, stgit_patch_to_mail): blank lines skipped,
// "Author:" becomes From, lines starting "From" or "Date" are headers,
// the first other line is the Subject, the next starts the body.
func convertStgit(name string, lines []string) rawMessage {
	raw := rawMessage{File: name, Format: FormatStgit, StartLine: 1}
	subject := false
	i := 0
	for ; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.TrimLeft(l, " \t\n\v\f\r") == "":
			continue
		case strings.HasPrefix(l, "Author:"):
			raw.Lines = append(raw.Lines, "From:"+l[len("Author:"):])
		case strings.HasPrefix(l, "From"), strings.HasPrefix(l, "Date"):
			raw.Lines = append(raw.Lines, l)
		case !subject:
			raw.Lines = append(raw.Lines, "Subject: "+l)
			subject = true
		default:
			goto body
		}
		raw.lineAt = append(raw.lineAt, i+1)
	}
body:
	raw.appendBody(lines, i)
	return raw
}

// appendBody ends the headers converted from a foreign patch format and
// takes lines[i:] as the body, each line keeping its number in the file.
func (raw *rawMessage) appendBody(lines []string, i int) {
	raw.Lines = append(raw.Lines, "")
	raw.lineAt = append(raw.lineAt, i+1)
	for j := i; j < len(lines); j++ {
		raw.Lines = append(raw.Lines, lines[j])
		raw.lineAt = append(raw.lineAt, j+1)
	}
}
