package mailpatch

import (
	"fmt"
	"mime"
	"regexp"
	"strings"
	"unicode/utf8"
)

// message is a mail taken apart: its headers decoded, its body as lines.
type message struct {
	File      string
	Format    Format
	StartLine int
	From      string // From header, RFC 2047 decoded, may be ""
	Date      string
	Subject   string
	MessageID string
	// InReplyTo and References are the threading headers, as received.
	InReplyTo, References string
	// AuthorHint is the "[Author]" line of bare archive text, without brackets.
	AuthorHint     string
	AuthorHintLine int
	Body           []string
	// BodyCharset is the charset each body line came in ("": none said).
	BodyCharset []string
	// EncodedAt is the input line where a transfer-encoded body starts.
	EncodedAt int
	// FromLine and DateLine are the input lines of those headers.
	FromLine, DateLine int
	// BodyStart is the input line of Body[0], or 0 when the body was
	// transfer-decoded and its lines no longer match input lines.
	BodyStart int
	Repairs   []Repair
}

// line returns the input line of body line i, or 0 when unknown.
func (m *message) line(i int) int {
	if m.BodyStart == 0 {
		return m.EncodedAt // the encoded body's first line: the best place to name
	}
	return m.BodyStart + i
}

// bareSubject matches the first line of archive text: "[PATCH 1/2] subject".
var bareSubject = regexp.MustCompile(`^\[([^\]]*(?:PATCH|RFC)[^\]]*)\]\s*(\S.*)$`)

// bareAuthor matches the "[Author]" line of archive text.
var bareAuthor = regexp.MustCompile(`^\[([^\[\]]+)\]\s*$`)

func readMessage(raw rawMessage) (*message, error) {
	if raw.Format == FormatBare {
		return readBare(raw)
	}
	return readMail(raw)
}

func readBare(raw rawMessage) (*message, error) {
	m := &message{File: raw.File, Format: raw.Format, StartLine: raw.StartLine, Repairs: raw.Repairs}
	data := []byte(strings.Join(raw.Lines, "\n"))
	if err := checkUTF8(raw.File, raw.StartLine, data, ""); err != nil {
		return nil, err
	}
	lines := raw.Lines
	m.Subject = strings.TrimRight(lines[0], "\r \t")
	i := 1
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i < len(lines) {
		if sm := bareAuthor.FindStringSubmatch(strings.TrimRight(lines[i], "\r")); sm != nil {
			m.AuthorHint = strings.TrimSpace(sm[1])
			m.AuthorHintLine = raw.StartLine + i
			i++
		}
	}
	m.Body = lines[i:]
	m.BodyStart = raw.StartLine + i
	return m, nil
}

// header is one header field, unfolded as git mailinfo unfolds it.
type header struct {
	text string // "Name: value", continuation lines joined
	line int    // input line of its first line
}

// isHeaderLine is git's is_rfc2822_header: a field name of printable
// ASCII without ':' and then ':'.
func isHeaderLine(l string) bool {
	if strings.HasPrefix(l, "From ") || strings.HasPrefix(l, ">From ") {
		return true
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if c == ':' {
			return i > 0
		}
		if c < 33 || c > 126 {
			return false
		}
	}
	return false
}

// readHeaders reads a header block from lines[i:] as git does: trailing
// white space goes, a line starting with a space or tab continues the one
// before (its first character becomes a space), and the block ends at an
// empty line (consumed) or at a line that is not a header (the first body
// line).
func readHeaders(lines []string, i, startLine int) (hs []header, next int) {
	hs, next, _ = readHeadersCtx(nil, lines, i, startLine)
	return hs, next
}

// readHeadersCtx is readHeaders that stops early, with ctx's error, when
// ctx (if any) has ended: a header block can be millions of lines.
func readHeadersCtx(ctx interface{ Err() error }, lines []string, i, startLine int) (hs []header, next int, err error) {
	for i < len(lines) {
		if ctx != nil && i%pollLines == 0 && i > 0 {
			if err := ctx.Err(); err != nil {
				return hs, i, err
			}
		}
		l := strings.TrimRight(lines[i], " \t\r\n\v\f")
		if l == "" {
			return hs, i + 1, nil
		}
		if !isHeaderLine(l) {
			return hs, i, nil
		}
		h := header{text: l, line: startLine + i}
		i++
		// Continuation lines are joined once (a builder, not repeated
		// string concatenation): linear in the header however often
		// it is folded.
		var b strings.Builder
		for i < len(lines) && len(lines[i]) > 0 && (lines[i][0] == ' ' || lines[i][0] == '\t') {
			if ctx != nil && i%pollLines == 0 {
				if err := ctx.Err(); err != nil {
					return hs, i, err
				}
			}
			if b.Len() == 0 {
				b.WriteString(l)
			}
			b.WriteByte(' ')
			b.WriteString(strings.TrimRight(lines[i][1:], " \t\r\n\v\f"))
			i++
		}
		if b.Len() > 0 {
			h.text = b.String()
		}
		hs = append(hs, h)
	}
	return hs, i, nil
}

// headerValue is git's cmp_header and value: "Name:" (any case) and a
// white space character, the value after that one character.
func headerValue(h string, name string) (string, bool) {
	if len(h) < len(name)+2 || !strings.EqualFold(h[:len(name)], name) || h[len(name)] != ':' {
		return "", false
	}
	if c := h[len(name)+1]; c != ' ' && c != '\t' {
		return "", false
	}
	return h[len(name)+2:], true
}

// contentInfo is what the Content-Type and Content-Transfer-Encoding
// headers say (the last of each wins, as in git).
type contentInfo struct {
	media    string
	charset  string
	boundary string
	flowed   bool
	delsp    bool
	hasType  bool // a Content-Type header was read
	cte      string
	line     int
}

func (ci *contentInfo) take(h header) {
	if v, ok := headerValue(h.text, "Content-Type"); ok {
		v, _ = decodeWords(v)
		media, params, err := mime.ParseMediaType(v)
		if err != nil {
			media = strings.ToLower(strings.TrimSpace(strings.SplitN(v, ";", 2)[0]))
			params = looseParams(v)
		}
		ci.media, ci.charset, ci.boundary = media, params["charset"], params["boundary"]
		// format= and delsp= are found as git's has_attr_value finds them:
		// the first "format=" anywhere in the value, any case.
		ci.flowed = strings.EqualFold(slurpAttr(v, "format="), "flowed")
		ci.delsp = strings.EqualFold(slurpAttr(v, "delsp="), "yes")
		ci.hasType = true
		ci.line = h.line
	}
	if v, ok := headerValue(h.text, "Content-Transfer-Encoding"); ok {
		lv := strings.ToLower(v)
		switch {
		case strings.Contains(lv, "base64"):
			ci.cte = "base64"
		case strings.Contains(lv, "quoted-printable"):
			ci.cte = "quoted-printable"
		default:
			ci.cte = ""
		}
	}
}

// slurpAttr is git mailinfo's slurp_attr: the text after the first
// (case-insensitive) occurrence of name, up to a closing quote when it
// starts with one, else up to ';' or white space.
func slurpAttr(v, name string) string {
	i := strings.Index(strings.ToLower(v), name)
	if i < 0 {
		return ""
	}
	rest := v[i+len(name):]
	if strings.HasPrefix(rest, `"`) {
		rest = rest[1:]
		if j := strings.IndexByte(rest, '"'); j >= 0 {
			rest = rest[:j]
		}
		return rest
	}
	if j := strings.IndexAny(rest, "; \t"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// looseParams reads name=value parameters the way git's slurp_attr does,
// for a Content-Type that mime cannot parse.
func looseParams(v string) map[string]string {
	out := map[string]string{}
	for _, name := range []string{"charset", "boundary", "format", "delsp"} {
		i := strings.Index(strings.ToLower(v), name+"=")
		if i < 0 {
			continue
		}
		rest := v[i+len(name)+1:]
		if strings.HasPrefix(rest, `"`) {
			rest = rest[1:]
			if j := strings.IndexByte(rest, '"'); j >= 0 {
				rest = rest[:j]
			}
		} else if j := strings.IndexAny(rest, "; \t"); j >= 0 {
			rest = rest[:j]
		}
		out[name] = rest
	}
	return out
}

func readMail(raw rawMessage) (*message, error) {
	m := &message{File: raw.File, Format: raw.Format, StartLine: raw.StartLine, Repairs: raw.Repairs}
	hs, bodyAt, err := readHeadersCtx(raw.ctx, raw.Lines, 0, raw.StartLine)
	if err != nil {
		return nil, err
	}
	if raw.lineAt != nil {
		for k := range hs {
			hs[k].line = raw.lineOf(hs[k].line - raw.StartLine)
		}
	}
	var ci contentInfo
	for _, h := range hs {
		take := func(name string, dst *string, dstLine *int) error {
			v, ok := headerValue(h.text, name)
			if !ok {
				return nil
			}
			d, err := decodeWords(v)
			if err != nil {
				return &InputError{File: raw.File, Line: h.line, Msg: name + " header: " + err.Error(),
					Hint: "git am refuses it too; fix the header"}
			}
			*dst = d
			if dstLine != nil {
				*dstLine = h.line
			}
			return nil
		}
		// The last From, Subject and Date win, as in git.
		if err := take("From", &m.From, &m.FromLine); err != nil {
			return nil, err
		}
		if err := take("Subject", &m.Subject, nil); err != nil {
			return nil, err
		}
		if err := take("Date", &m.Date, &m.DateLine); err != nil {
			return nil, err
		}
		if v, ok := headerValue(h.text, "Message-Id"); ok {
			m.MessageID = strings.TrimSpace(v)
		}
		if v, ok := headerValue(h.text, "In-Reply-To"); ok {
			m.InReplyTo = strings.TrimSpace(v)
		}
		if v, ok := headerValue(h.text, "References"); ok {
			m.References = strings.TrimSpace(v)
		}
		ci.take(h)
	}
	m.From = strings.TrimSpace(cleanupSpace(m.From))
	m.Date = strings.TrimSpace(cleanupSpace(m.Date))
	m.Subject = strings.TrimSpace(m.Subject)
	body := raw.Lines[bodyAt:]
	bodyLine := raw.lineOf(bodyAt)
	m.EncodedAt = bodyLine
	if err := m.readBody(body, bodyLine, ci); err != nil {
		return nil, err
	}
	if ci.cte == "" && ci.boundary == "" && !ci.flowed {
		m.BodyStart = bodyLine // the body lines are the input's lines
	}
	return m, nil
}

// bodyText converts message lines [from, to) to UTF-8 from the charset
// each came in.
func (m *message) convert(i int, s string) (string, error) {
	cs := ""
	if i < len(m.BodyCharset) {
		cs = m.BodyCharset[i]
	}
	return toUTF8([]byte(s), cs)
}

// checkUTF8 refuses bytes that are not UTF-8 and not declared otherwise.
func checkUTF8(file string, startLine int, data []byte, charset string) error {
	if utf8.Valid(data) {
		return nil
	}
	ln := startLine
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			msg := fmt.Sprintf("invalid UTF-8 byte 0x%02x", data[i])
			if charset != "" {
				msg += fmt.Sprintf(" in a body declared %s", charset)
			} else {
				msg += " and no charset is declared"
			}
			return &InputError{File: file, Line: ln, Msg: msg, Hint: "the archive copy is damaged; fetch it again or declare its charset"}
		}
		if data[i] == '\n' {
			ln++
		}
		i += size
	}
	return nil
}
