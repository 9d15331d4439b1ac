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
		b.WriteString(p.Message)
		b.WriteString("\n")
	}
	b.WriteString("---\n")
	if p.Notes != "" {
		b.WriteString(p.Notes)
	} else {
		b.WriteString(p.Diffstat())
		b.WriteString("\n")
	}
	b.WriteString(p.Diff)
	return []byte(b.String())
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
