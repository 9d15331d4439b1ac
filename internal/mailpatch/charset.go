package mailpatch

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/ianaindex"
)

// Charsets: every IANA charset golang.org/x/text knows (ISO-8859-*,
// ISO-2022-JP, GB2312/GBK, Big5, KOI8, windows-125x, ...), by its IANA name
// or alias first and by its WHATWG label after (GB2312 is read as GBK, its
// superset). Git hands the same names to iconv.

var isoNoDash = regexp.MustCompile(`^(?i)iso[-_ ]?(8859|2022)[-_ ]?(.*)$`)

// lookupCharset finds the decoder for a charset name; nil for UTF-8 and
// ASCII (nothing to convert).
func lookupCharset(name string) (encoding.Encoding, error) {
	n := strings.Trim(strings.TrimSpace(name), `"'`)
	switch strings.ToLower(n) {
	case "", "utf-8", "utf8", "us-ascii", "ascii":
		return nil, nil
	}
	try := []string{n}
	if m := isoNoDash.FindStringSubmatch(n); m != nil {
		try = append(try, "ISO-"+m[1]+"-"+m[2])
	}
	for _, c := range try {
		if e, err := ianaindex.IANA.Encoding(c); err == nil && e != nil {
			return e, nil
		}
	}
	for _, c := range try {
		if e, err := htmlindex.Get(c); err == nil && e != nil {
			return e, nil
		}
	}
	return nil, fmt.Errorf("unknown charset %s", excerpt(n))
}

// toUTF8 converts text in charset to UTF-8. Text that does not decode in
// its charset is an error, never replaced silently.
func toUTF8(data []byte, charset string) (string, error) {
	enc, err := lookupCharset(charset)
	if err != nil {
		return "", err
	}
	if enc == nil {
		return string(data), nil
	}
	out, err := enc.NewDecoder().Bytes(data)
	if err != nil {
		return "", fmt.Errorf("text is not valid %s: %v", charset, err)
	}
	if !utf8.Valid(out) {
		return "", fmt.Errorf("text is not valid %s", charset)
	}
	if strings.ContainsRune(string(out), utf8.RuneError) && !strings.ContainsRune(string(data), utf8.RuneError) {
		return "", fmt.Errorf("text has bytes that are not %s", charset)
	}
	return string(out), nil
}

// decodeWords undoes RFC 2047 encoded words in a header the way git
// mailinfo does (decode_header): B and Q words in any charset, white space
// between two encoded words dropped, everything else kept. A word that is
// cut short or in an unknown charset is an error: git refuses the mail,
// and no part of a header is ever dropped.
func decodeWords(s string) (string, error) {
	var out strings.Builder
	in := s
	first := true
	for {
		ep := strings.Index(in, "=?")
		if ep < 0 {
			break
		}
		if ep > 0 {
			if strings.TrimLeft(in[:ep], " \t\r\n\v\f") != "" || first {
				out.WriteString(in[:ep])
			}
		}
		rest := in[ep+2:]
		q := strings.IndexByte(rest, '?')
		if q < 0 || q+2 >= len(rest) || rest[q+2] != '?' {
			return "", fmt.Errorf("encoded word %s is cut short", excerpt(in[ep:]))
		}
		charset := rest[:q]
		enc := rest[q+1]
		end := strings.Index(rest[q+3:], "?=")
		if end < 0 {
			return "", fmt.Errorf("encoded word %s has no end (\"?=\")", excerpt(in[ep:]))
		}
		text := rest[q+3 : q+3+end]
		var raw []byte
		switch enc {
		case 'b', 'B':
			raw = decodeB(text)
		case 'q', 'Q':
			raw = decodeQ(text, true)
		default:
			return "", fmt.Errorf("encoded word %s has unknown encoding %q", excerpt(in[ep:]), enc)
		}
		if i := strings.IndexByte(charset, '*'); i >= 0 {
			charset = charset[:i] // RFC 2231 language
		}
		dec, err := toUTF8(raw, charset)
		if err != nil {
			return "", fmt.Errorf("encoded word %s: %v", excerpt(in[ep:ep+2+q+3+end+2]), err)
		}
		out.WriteString(dec)
		in = rest[q+3+end+2:]
		first = false
	}
	out.WriteString(in)
	return out.String(), nil
}

// decodeQ is git's decode_q_segment; rfc2047 turns '_' into a space.
func decodeQ(s string, rfc2047 bool) []byte {
	var out []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '=' {
			if i+1 >= len(s) || s[i+1] == '\n' {
				break // a soft line break
			}
			if h, ok := unhex2(s[i+1:]); ok {
				out = append(out, h)
				i += 2
				continue
			}
		}
		if rfc2047 && c == '_' {
			c = ' '
		}
		out = append(out, c)
	}
	return out
}

func unhex2(s string) (byte, bool) {
	if len(s) < 2 {
		return 0, false
	}
	h, ok1 := unhex(s[0])
	l, ok2 := unhex(s[1])
	return h<<4 | l, ok1 && ok2
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// decodeB is git's decode_b_segment: base64 that skips what is not in
// its alphabet.
func decodeB(s string) []byte {
	var out []byte
	pos, acc := 0, 0
	for i := 0; i < len(s); i++ {
		c := int(s[i])
		switch {
		case c == '+':
			c = 62
		case c == '/':
			c = 63
		case c >= 'A' && c <= 'Z':
			c -= 'A'
		case c >= 'a' && c <= 'z':
			c -= 'a' - 26
		case c >= '0' && c <= '9':
			c -= '0' - 52
		default:
			continue
		}
		switch pos {
		case 0:
			acc = c << 2
		case 1:
			out = append(out, byte(acc|c>>4))
			acc = (c & 15) << 4
		case 2:
			out = append(out, byte(acc|c>>2))
			acc = (c & 3) << 6
		case 3:
			out = append(out, byte(acc|c))
			acc = 0
		}
		pos = (pos + 1) % 4
	}
	return out
}
