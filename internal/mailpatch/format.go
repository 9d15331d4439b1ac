package mailpatch

import (
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"
)

// zeroFromLine opens every message: git format-patch writes the commit id
// there; an imported patch has none yet.
const zeroFromLine = "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"

// Format writes the patch in git format-patch form: From line, headers,
// message, "---", notes (the diffstat), diff. git am accepts it.
func (p *Patch) Format() []byte {
	var b strings.Builder
	b.WriteString(zeroFromLine)
	fmt.Fprintf(&b, "From: %s\n", formatAddress(p.Author.Name, p.Author.Address))
	if !p.Date.IsZero() {
		fmt.Fprintf(&b, "Date: %s\n", p.Date.Format("Mon, 2 Jan 2006 15:04:05 -0700"))
	}
	fmt.Fprintf(&b, "Subject: %s\n", encodeHeader(p.SubjectLine()))
	if p.MessageID != "" {
		fmt.Fprintf(&b, "Message-ID: %s\n", p.MessageID)
	}
	if !isASCII(p.Message) || !isASCII(p.Diff) || !isASCII(p.Notes) {
		b.WriteString("MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: 8bit\n")
	}
	b.WriteString("\n")
	if p.Message != "" {
		msg := escapeFromLines(p.Message)
		if first, _, _ := strings.Cut(msg, "\n"); readsAsInBodyHeader(first) {
			// git am would take the message's first line for an in-body
			// header (a second From: block, a "[PATCH]" line, an escaped
			// format-patch separator); an in-body From: naming the author
			// again, then a blank line, ends git's in-body headers first.
			fmt.Fprintf(&b, "From: %s\n\n", formatAddress(p.Author.Name, p.Author.Address))
		}
		b.WriteString(msg)
		b.WriteString("\n")
	}
	b.WriteString("---\n")
	if p.Notes != "" {
		b.WriteString(escapeFromLines(p.Notes))
	} else {
		b.WriteString(p.Diffstat())
		b.WriteString("\n")
	}
	b.WriteString(escapeFromLines(p.Diff))
	return []byte(b.String())
}

// escapeFromLines puts '>' before every line git mailsplit would take
// for the start of the next message (a "From <sha> Mon Sep 17 00:00:00
// 2001" line of a git format-patch carried in the mail, or any "From "
// line with a time and a year): the output stays one patch. The message
// keeps the line, '>'-escaped as mboxrd writers and git format-patch
// --pretty=mboxrd escape it; in the notes and between the diff's files
// git apply skips it as it skips any other text.
func escapeFromLines(s string) string {
	if !strings.Contains(s, "From ") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if isMboxFromLine(l) {
			lines[i] = ">" + l
		}
	}
	return strings.Join(lines, "\n")
}

// isMboxFromLine is git mailsplit's is_from_line: "From ", then a last
// ':' with digits around it as in "12:34:56", then a year after 90.
func isMboxFromLine(l string) bool {
	line := l + "\n"
	n := len(line)
	if n < 20 || !strings.HasPrefix(line, "From ") {
		return false
	}
	colon := n - 2
	for {
		if colon < 5 {
			return false
		}
		colon--
		if line[colon] == ':' {
			break
		}
	}
	digit := func(i int) bool { return i >= 0 && i < n && line[i] >= '0' && line[i] <= '9' }
	if !digit(colon-4) || !digit(colon-2) || !digit(colon-1) || !digit(colon+1) || !digit(colon+2) {
		return false
	}
	return strtolAbove(line[min(colon+3, n):], 90)
}

// strtolAbove reports whether C's strtol(s, NULL, 10) is above limit.
func strtolAbove(s string, limit int64) bool {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var v int64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if v < 1<<40 {
			v = v*10 + int64(s[i]-'0')
		}
	}
	if neg {
		v = -v
	}
	return v > limit
}

// readsAsInBodyHeader reports whether git mailinfo, reading the first
// body line of a message, takes it for an in-body header
// (check_inbody_header): "From:", "Subject:" or "Date:" in any case, a
// "[PATCH]" subject line, or a '>'-escaped format-patch separator.
func readsAsInBodyHeader(l string) bool {
	if strings.HasPrefix(l, ">From") && len(l) > 5 && isSpace(l[5]) {
		return formatPatchSeparator.MatchString(l[1:])
	}
	if strings.HasPrefix(l, "[PATCH]") && (len(l) == 7 || isSpace(l[7])) {
		return true // git sees the line with its newline: "[PATCH]\n" counts
	}
	for _, h := range []string{"From", "Subject", "Date"} {
		if len(l) > len(h) && strings.EqualFold(l[:len(h)], h) && l[len(h)] == ':' {
			return true
		}
	}
	return false
}

// Diffstat summarizes the diff the way git's --stat does (without the
// terminal-width scaling: bars are capped at 50 columns).
func (p *Patch) Diffstat() string {
	var b strings.Builder
	width, maxChange := 0, int64(0)
	for _, f := range p.Files {
		width = max(width, len(firstNonEmpty(f.NewName, f.OldName)))
		var n int64
		for _, fr := range f.TextFragments {
			n += fr.LinesAdded + fr.LinesDeleted
		}
		maxChange = max(maxChange, n)
	}
	var adds, dels int64
	for _, f := range p.Files {
		var a, d int64
		for _, fr := range f.TextFragments {
			a += fr.LinesAdded
			d += fr.LinesDeleted
		}
		adds, dels = adds+a, dels+d
		pa, pd := a, d
		if maxChange > 50 {
			pa, pd = a*50/maxChange, d*50/maxChange
		}
		fmt.Fprintf(&b, " %-*s | %d %s%s\n", width, firstNonEmpty(f.NewName, f.OldName), a+d, strings.Repeat("+", int(pa)), strings.Repeat("-", int(pd)))
	}
	plural := func(n int64, one, many string) string {
		if n == 1 {
			return one
		}
		return many
	}
	fmt.Fprintf(&b, " %d %s changed", len(p.Files), plural(int64(len(p.Files)), "file", "files"))
	if adds > 0 {
		fmt.Fprintf(&b, ", %d %s(+)", adds, plural(adds, "insertion", "insertions"))
	}
	if dels > 0 {
		fmt.Fprintf(&b, ", %d %s(-)", dels, plural(dels, "deletion", "deletions"))
	}
	b.WriteString("\n")
	return b.String()
}

// formatAddress writes "Name <addr>" as git does: the name bare when it is
// plain, quoted when it has specials, RFC 2047 encoded when not ASCII.
func formatAddress(name, addr string) string {
	switch {
	case name == "":
		return "<" + addr + ">"
	case !isASCII(name):
		return mime.QEncoding.Encode("UTF-8", name) + " <" + addr + ">"
	case strings.ContainsAny(name, "()<>[]:;@\\,.\""):
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(name) + `" <` + addr + ">"
	}
	return name + " <" + addr + ">"
}

func encodeHeader(s string) string {
	if isASCII(s) {
		return s
	}
	return mime.QEncoding.Encode("UTF-8", s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
