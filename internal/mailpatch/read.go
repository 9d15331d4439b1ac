package mailpatch

import (
	"bytes"
	"regexp"
	"strings"
)

// Format is the kind of container a message came in.
type Format string

const (
	FormatMbox   Format = "mbox"   // mboxo: only ">From " is escaped
	FormatMboxrd Format = "mboxrd" // public-inbox: every ">*From " is escaped
	FormatMail   Format = "mail"   // one RFC 2822 message, no "From " line
	FormatBare   Format = "bare"   // archive text: "[PATCH n/m] subject", "[Author]"
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
	switch {
	case mboxFromLine.MatchString(head):
		return splitMbox(name, lines[first:], first+1), nil
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
