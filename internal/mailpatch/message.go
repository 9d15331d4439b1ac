package mailpatch

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
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
	// AuthorHint is the "[Author]" line of bare archive text, without brackets.
	AuthorHint     string
	AuthorHintLine int
	Body           []string
	// BodyStart is the input line of Body[0], or 0 when the body was
	// transfer-decoded and its lines no longer match input lines.
	BodyStart int
	Repairs   []Repair
}

// line returns the input line of body line i, or 0 when unknown.
func (m *message) line(i int) int {
	if m.BodyStart == 0 {
		return 0
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

func readMail(raw rawMessage) (*message, error) {
	m := &message{File: raw.File, Format: raw.Format, StartLine: raw.StartLine, Repairs: raw.Repairs}
	text := strings.Join(raw.Lines, "\n") + "\n"
	msg, err := mail.ReadMessage(strings.NewReader(text))
	if err != nil {
		return nil, &InputError{File: raw.File, Line: raw.StartLine, Msg: fmt.Sprintf("reading mail headers: %v", err)}
	}
	headerLines := 0
	for i, l := range raw.Lines {
		if strings.TrimRight(l, "\r") == "" {
			headerLines = i + 1
			break
		}
	}
	dec := &mime.WordDecoder{CharsetReader: charsetReader}
	decode := func(k string) string {
		v := msg.Header.Get(k)
		if d, err := dec.DecodeHeader(v); err == nil {
			v = d
		}
		return strings.TrimSpace(v)
	}
	m.From = decode("From")
	m.Date = strings.TrimSpace(msg.Header.Get("Date"))
	m.Subject = decode("Subject")
	m.MessageID = strings.TrimSpace(msg.Header.Get("Message-ID"))

	body, mapped, err := decodeBody(raw.File, raw.StartLine+headerLines, msg)
	if err != nil {
		return nil, err
	}
	if mapped {
		m.BodyStart = raw.StartLine + headerLines
	}
	m.Body = strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	return m, nil
}

// decodeBody undoes the transfer encoding and the charset of a mail body
// (multipart mails: their text parts, in order). mapped reports whether the
// body's lines are still the input's lines.
func decodeBody(file string, line int, msg *mail.Message) (body string, mapped bool, err error) {
	ctype := msg.Header.Get("Content-Type")
	media, params, _ := mime.ParseMediaType(ctype)
	if strings.HasPrefix(media, "multipart/") {
		mr := multipart.NewReader(msg.Body, params["boundary"])
		var parts []string
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return "", false, &InputError{File: file, Line: line, Msg: fmt.Sprintf("reading multipart body: %v", err)}
			}
			pm, pp, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
			if pm != "" && !strings.HasPrefix(pm, "text/") {
				continue
			}
			s, err := decodePart(file, line, p, p.Header.Get("Content-Transfer-Encoding"), pp["charset"])
			if err != nil {
				return "", false, err
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, ""), false, nil
	}
	cte := strings.ToLower(strings.TrimSpace(msg.Header.Get("Content-Transfer-Encoding")))
	s, err := decodePart(file, line, msg.Body, cte, params["charset"])
	mapped = cte == "" || cte == "7bit" || cte == "8bit" || cte == "binary"
	return s, mapped, err
}

func decodePart(file string, line int, r io.Reader, cte, charset string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "quoted-printable":
		r = quotedprintable.NewReader(r)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, &newlineStripper{r: r})
	case "", "7bit", "8bit", "binary":
	default:
		return "", &InputError{File: file, Line: line, Msg: fmt.Sprintf("unknown Content-Transfer-Encoding %q", cte)}
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return "", &InputError{File: file, Line: line, Msg: fmt.Sprintf("decoding %s body: %v", cte, err)}
	}
	if charset != "" && !isUTF8Charset(charset) {
		cr, err := charsetReader(charset, bytes.NewReader(data))
		if err != nil {
			return "", &InputError{File: file, Line: line, Msg: err.Error(), Hint: "re-save the message as UTF-8"}
		}
		if data, err = io.ReadAll(cr); err != nil {
			return "", err
		}
	}
	if err := checkUTF8(file, line, data, charset); err != nil {
		return "", err
	}
	return string(data), nil
}

func isUTF8Charset(cs string) bool {
	switch strings.ToLower(cs) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return true
	}
	return false
}

// charsetReader converts the 8-bit charsets that mail from kernel lists
// carries besides UTF-8. Others are refused with their name.
func charsetReader(charset string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(charset) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return r, nil
	case "iso-8859-1", "latin1", "iso8859-1":
		data, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		for _, c := range data {
			b.WriteRune(rune(c))
		}
		return strings.NewReader(b.String()), nil
	}
	return nil, fmt.Errorf("unsupported charset %q", charset)
}

// newlineStripper drops line ends so base64 decodes across lines.
type newlineStripper struct{ r io.Reader }

func (n *newlineStripper) Read(p []byte) (int, error) {
	k, err := n.r.Read(p)
	j := 0
	for _, c := range p[:k] {
		if c != '\n' && c != '\r' {
			p[j] = c
			j++
		}
	}
	return j, err
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
