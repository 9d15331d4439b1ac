package mailpatch

import "strings"

// codeSpans returns the byte ranges of line that are C code: not inside a
// comment, a string literal or a character literal. inComment says whether
// the line starts inside a block comment; the result says whether it ends
// inside one.
func codeSpans(line string, inComment bool) (spans [][2]int, endsInComment bool) {
	start := 0
	i := 0
	if inComment {
		j := strings.Index(line, "*/")
		if j < 0 {
			return nil, true
		}
		i, start = j+2, j+2
	}
	for i < len(line) {
		switch {
		case strings.HasPrefix(line[i:], "/*"):
			spans = appendSpan(spans, start, i)
			j := strings.Index(line[i+2:], "*/")
			if j < 0 {
				return spans, true
			}
			i = i + 2 + j + 2
			start = i
		case strings.HasPrefix(line[i:], "//"):
			return appendSpan(spans, start, i), false
		case line[i] == '"' || line[i] == '\'':
			spans = appendSpan(spans, start, i)
			q := line[i]
			i++
			for i < len(line) && line[i] != q {
				if line[i] == '\\' {
					i++
				}
				i++
			}
			i++
			start = i
		default:
			i++
		}
	}
	return appendSpan(spans, start, len(line)), false
}

func appendSpan(spans [][2]int, from, to int) [][2]int {
	if to > from {
		spans = append(spans, [2]int{from, to})
	}
	return spans
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// identifiers returns the C identifiers in s (ASCII only: the kernel's).
func identifiers(s string) []string {
	var ids []string
	for i := 0; i < len(s); {
		if !isIdentByte(s[i]) || s[i] >= '0' && s[i] <= '9' {
			// skip numbers whole: 0x1f is not the identifier x1f
			j := i
			for j < len(s) && isIdentByte(s[j]) {
				j++
			}
			if j == i {
				j++
			}
			i = j
			continue
		}
		j := i
		for j < len(s) && isIdentByte(s[j]) {
			j++
		}
		ids = append(ids, s[i:j])
		i = j
	}
	return ids
}

// startsInComment guesses whether a hunk begins inside a block comment:
// it does when a "*/" shows up before any "/*".
func startsInComment(lines []string) bool {
	for _, l := range lines {
		o, c := strings.Index(l, "/*"), strings.Index(l, "*/")
		switch {
		case c >= 0 && (o < 0 || c < o):
			return true
		case o >= 0:
			return false
		}
	}
	return false
}

// isCSource reports whether path holds C (where entity damage is provable).
func isCSource(path string) bool {
	for _, ext := range []string{".c", ".h"} {
		if strings.HasSuffix(path, ext) {
			return true
		}
	}
	return false
}
