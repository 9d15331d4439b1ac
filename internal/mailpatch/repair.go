package mailpatch

import (
	"fmt"
	"net/mail"
	"regexp"
	"strings"
)

// Repair kinds.
const (
	KindEmail         = "email-obfuscation" // "name at domain" -> "name@domain"
	KindAuthor        = "author"            // author taken from a trailer or comment form
	KindInBodyFrom    = "in-body-from"      // in-body From: moved to the header
	KindEntity        = "html-entity"       // a decoded HTML entity restored in code
	KindFinalNewline  = "final-newline"     // the file did not end in a newline
	KindSignature     = "signature"         // "-- \n2.x" mail signature removed
	KindMboxEscape    = "mbox-escape"       // ">From " unescaped
	KindLineEnds      = "line-ends"         // CRLF -> LF
	KindSubjectPrefix = "subject-prefix"    // "[PATCHv1]" -> "[PATCH v1]"
	KindFlowed        = "format-flowed"     // RFC 3676 soft line breaks and space-stuffing undone
	KindInBodyFold    = "in-body-fold"      // a folded in-body header unfolded
	KindComment       = "from-comment"      // an RFC 5322 comment in From kept in the name, as git does
)

// Repair is one change made to the received text, with its proof.
type Repair struct {
	Kind   string `json:"kind"`
	File   string `json:"file"`
	Line   int    `json:"line"` // input line, 0 when not known
	Before string `json:"before"`
	After  string `json:"after"`
	Why    string `json:"why"`
}

// Warning is something a user should know that does not stop the import.
type Warning struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// obfuscatedEmail matches the archive's "name at domain" spelling.
var obfuscatedEmail = regexp.MustCompile(`([A-Za-z0-9._%+=-]+) at ([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})`)

// angleObfuscated matches "<name at domain>": only inside angle brackets is
// the spelling provably an address (prose says "at" too).
var angleObfuscated = regexp.MustCompile(`<([A-Za-z0-9._%+=-]+) at ([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})>`)

// trailerLine matches a commit message trailer: "Signed-off-by: ...".
var trailerLine = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9-]*):\s`)

// deobfuscateAddress turns an address field (From header, in-body From,
// [Author] line) back into a mail address when the whole field or its
// angle-bracket part is the archive's "name at domain".
func deobfuscateAddress(s string) (string, bool) {
	if r := angleObfuscated.ReplaceAllString(s, "<$1@$2>"); r != s {
		return r, true
	}
	// "name at domain" or "name at domain (Full Name)": the address part is
	// the whole field up to a comment.
	addr, comment, _ := strings.Cut(s, "(")
	addr = strings.TrimSpace(addr)
	if loc := obfuscatedEmail.FindStringIndex(addr); loc != nil && loc[0] == 0 && loc[1] == len(addr) {
		r := obfuscatedEmail.ReplaceAllString(addr, "$1@$2")
		if comment != "" {
			r += " (" + comment
		}
		return r, true
	}
	return s, false
}

// repairTrailers fixes "<name at domain>" in the message's trailers.
func (p *Patch) repairTrailers(m *message, msgStart int) {
	lines := strings.Split(p.Message, "\n")
	// Message line i is body line msgStart+i.
	for i, l := range lines {
		if !trailerLine.MatchString(l) {
			continue
		}
		r := angleObfuscated.ReplaceAllString(l, "<$1@$2>")
		if r == l {
			continue
		}
		p.Repairs = append(p.Repairs, Repair{Kind: KindEmail, File: m.File, Line: m.line(msgStart + i),
			Before: l, After: r,
			Why: "the archive hides addresses as \"name at domain\"; inside <...> of a trailer it can only be an address"})
		lines[i] = r
	}
	p.Message = strings.Join(lines, "\n")
}

// signedOffBy matches a Signed-off-by trailer.
var signedOffBy = regexp.MustCompile(`^Signed-off-by:\s*(.+?)\s*$`)

// resolveAuthor settles the author: the in-body From: first (git am's
// rule), then the From header, then for bare archive text the [Author]
// line matched against the Signed-off-by trailers.
func (p *Patch) resolveAuthor(m *message, inBodyFrom string, inBodyLine int) error {
	parse := func(field string, line int, what string) (*mail.Address, error) {
		fixed, changed := deobfuscateAddress(field)
		if changed {
			p.Repairs = append(p.Repairs, Repair{Kind: KindEmail, File: m.File, Line: line, Before: field, After: fixed,
				Why: "the archive hides addresses as \"name at domain\"; the " + what + " is an address field"})
		}
		name, addr := gitFrom(fixed)
		if addr == "" {
			return nil, &InputError{File: m.File, Line: line, Msg: fmt.Sprintf("unreadable %s %s: no mail address in it", what, excerpt(field))}
		}
		a := &mail.Address{Name: name, Address: addr}
		if a.Name != "" && a.Name != a.Address && !strings.Contains(fixed, "<") {
			// "addr (Name)": the old comment form.
			p.Repairs = append(p.Repairs, Repair{Kind: KindAuthor, File: m.File, Line: line, Before: fixed,
				After: formatAddress(a.Name, a.Address), Why: "RFC 2822 comment form \"addr (Name)\" names the same mailbox as \"Name <addr>\""})
		}
		return a, nil
	}
	switch {
	case inBodyFrom != "":
		a, err := parse(inBodyFrom, inBodyLine, "in-body From:")
		if err != nil {
			return err
		}
		p.Author = *a
		p.Repairs = append(p.Repairs, Repair{Kind: KindInBodyFrom, File: m.File, Line: inBodyLine,
			Before: "From: " + inBodyFrom, After: "From: " + formatAddress(a.Name, a.Address) + " (header)",
			Why: "git am takes an in-body From: as the author; the header says the same without it in the message"})
		return nil
	case m.From != "":
		line := m.FromLine
		if line == 0 {
			line = m.StartLine
		}
		a, err := parse(m.From, line, "From header")
		if err != nil {
			return err
		}
		p.Author = *a
		return nil
	case m.AuthorHint != "":
		return p.authorFromHint(m)
	}
	return &InputError{File: m.File, Line: m.StartLine, Msg: "no author: the message has no From: header, no in-body From: and no [Author] line",
		Hint: "add \"From: Name <email>\" as the first body line"}
}

// authorFromHint resolves bare archive text's "[Author]" line. The line
// holds a name or an (obfuscated) address; the Signed-off-by trailer that
// matches it supplies the other half.
func (p *Patch) authorFromHint(m *message) error {
	hint, _ := deobfuscateAddress(m.AuthorHint)
	hintIsAddr := strings.Contains(hint, "@") && !strings.Contains(hint, " ")
	for _, l := range strings.Split(p.Message, "\n") {
		sm := signedOffBy.FindStringSubmatch(l)
		if sm == nil {
			continue
		}
		a, err := mail.ParseAddress(sm[1])
		if err != nil {
			continue
		}
		if (hintIsAddr && strings.EqualFold(a.Address, hint)) || (!hintIsAddr && a.Name == hint) {
			p.Author = *a
			p.Repairs = append(p.Repairs, Repair{Kind: KindAuthor, File: m.File, Line: m.AuthorHintLine,
				Before: "[" + m.AuthorHint + "]", After: "From: " + formatAddress(a.Name, a.Address),
				Why: fmt.Sprintf("the archive's author line matches the %s of the Signed-off-by trailer %q", map[bool]string{true: "address", false: "name"}[hintIsAddr], l)})
			return nil
		}
	}
	return &InputError{File: m.File, Line: m.AuthorHintLine,
		Msg:  fmt.Sprintf("author %q matches no Signed-off-by trailer, so its address is unknown", m.AuthorHint),
		Hint: "add \"From: Name <email>\" as the first body line"}
}

// gitFrom reads an author field as git mailinfo's handle_from does: the
// address is the word around '@' (inside <> when there are), the name is
// what is left with quotes undone and white space folded, RFC 5322
// comments kept ("A (zzz) U Thor (Comment)"), a name wholly in parentheses
// ("addr (Name)") unwrapped. An empty name, one longer than 60
// bytes, or holding '@', '<' or '>', is replaced by the address, as git
// does.
func gitFrom(from string) (name, addr string) {
	f := unquotePairs(from)
	at := strings.IndexByte(f, '@')
	if at < 0 {
		// "John Doe <johndoe>"
		bra := strings.IndexByte(from, '<')
		if bra < 0 {
			return "", ""
		}
		ket := strings.IndexByte(from[bra:], '>')
		if ket < 0 {
			return "", ""
		}
		addr = from[bra+1 : bra+ket]
		return saneName(strings.TrimSpace(from[:bra]), addr), addr
	}
	b := []byte(f)
	start := at
	for start > 0 {
		c := b[start-1]
		if isSpace(c) {
			break
		}
		if c == '<' {
			b[start-1] = ' '
			break
		}
		start--
	}
	el := strings.IndexAny(string(b[start:]), " \n\t\r\v\f>")
	if el < 0 {
		el = len(b) - start
	}
	addr = string(b[start : start+el])
	cut := start + el
	if cut < len(b) {
		cut++
	}
	rest := string(b[:start]) + string(b[cut:])
	rest = strings.TrimSpace(cleanupSpace(rest))
	if strings.HasPrefix(rest, "(") && strings.HasSuffix(rest, ")") && len(rest) >= 2 {
		rest = rest[1 : len(rest)-1]
	}
	return saneName(rest, addr), addr
}

func saneName(name, addr string) string {
	if name == "" || len(name) > 60 || strings.ContainsAny(name, "@<>") {
		return addr
	}
	return name
}

// unquotePairs is git's unquote_quoted_pair: quoted strings lose their
// quotes and backslashes, comments keep their parentheses.
func unquotePairs(s string) string {
	var b strings.Builder
	var comment func(i int) int
	comment = func(i int) int {
		b.WriteByte('(')
		lit := false
		for i < len(s) {
			c := s[i]
			i++
			if lit {
				lit = false
				b.WriteByte(c)
				continue
			}
			switch c {
			case '\\':
				lit = true
				continue
			case '(':
				i = comment(i)
				continue
			case ')':
				b.WriteByte(')')
				return i
			}
			b.WriteByte(c)
		}
		return i
	}
	for i := 0; i < len(s); {
		c := s[i]
		i++
		switch c {
		case '"':
			lit := false
			for i < len(s) {
				c := s[i]
				i++
				if lit {
					lit = false
					b.WriteByte(c)
					continue
				}
				if c == '\\' {
					lit = true
					continue
				}
				if c == '"' {
					break
				}
				b.WriteByte(c)
			}
			continue
		case '(':
			i = comment(i)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
