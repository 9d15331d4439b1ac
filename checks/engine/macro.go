package engine

import (
	"bytes"
	"crypto/sha256"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// The analyses read raw C, so a macro of the module that sets the flag,
// re-points an SGE or sets num_sge would hide what it does. A light
// expander rewrites, before parsing, the uses of the object-like and
// function-like #defines of the file and of the module's headers it
// includes by a relative path ("x.h"), when their bodies touch what the
// rules read (send_flags, IB_SEND_INLINE, sg_list, num_sge, SGE
// addresses, keys and lengths, DMA mapping, inline sizes, posts). Each
// use is replaced on its own line (an expansion's newlines are dropped,
// a use spanning lines is padded), so every finding keeps the source
// line; the macro's definition is added to its evidence as the related
// location. Other macros (the kernel's, constants, flag masks the facts
// already read) are left as they are. No # or ## bodies, no variadic
// macros, no recursion past a few rounds: those stay unexpanded.

// macroDef is one #define.
type macroDef struct {
	name   string
	params []string // nil: object-like
	body   string
	file   string // where it is defined (relative to the tree)
	line   int
}

// macroUse is an expansion on a line of the file.
type macroUse struct {
	Name, File string
	Line       int
}

var (
	defineRe   = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\(([^)]*)\))?[ \t]*((?:[^\n]*\\\n)*[^\n]*)`)
	includeRe  = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]+"([^"]+)"`)
	macroTouch = regexp.MustCompile(`send_flags|IB_SEND_INLINE|sg_list|num_sge|\baddr\b|\blkey\b|\blength\b|dma_map|max_inline_data|post_send`)
)

// macroDefs reads the #defines of src worth expanding.
func macroDefs(rel string, src []byte) []macroDef {
	// Cheap first: a define whose text touches what the rules read.
	worth := false
	for off := 0; !worth; {
		i := bytes.Index(src[off:], []byte("define"))
		if i < 0 {
			break
		}
		i += off
		end := bytes.IndexByte(src[i:], '\n')
		for end >= 0 && i+end > 0 && src[i+end-1] == '\\' {
			next := bytes.IndexByte(src[i+end+1:], '\n')
			if next < 0 {
				end = -1
				break
			}
			end += next + 1
		}
		if end < 0 {
			end = len(src) - i
		}
		worth = macroTouch.Match(src[i : i+end])
		off = i + end
	}
	if !worth {
		return nil
	}
	var out []macroDef
	for _, m := range defineRe.FindAllSubmatchIndex(src, -1) {
		name := string(src[m[2]:m[3]])
		body := strings.TrimSpace(strings.ReplaceAll(string(src[m[8]:m[9]]), "\\\n", " "))
		if i := strings.Index(body, "/*"); i >= 0 && strings.HasSuffix(body, "*/") && !strings.Contains(body[:i], "*/") {
			body = strings.TrimSpace(body[:i])
		}
		if !macroTouch.MatchString(body) || strings.Contains(body, "#") {
			continue
		}
		d := macroDef{name: name, body: body, file: rel, line: bytes.Count(src[:m[0]], []byte("\n")) + 1}
		if m[4] >= 0 {
			if src[m[4]-1] != ' ' && src[m[4]-1] != '\t' { // NAME(: function-like
				ps := strings.TrimSpace(string(src[m[6]:m[7]]))
				if strings.Contains(ps, "...") {
					continue
				}
				d.params = []string{}
				if ps != "" {
					for _, p := range strings.Split(ps, ",") {
						d.params = append(d.params, strings.TrimSpace(p))
					}
				}
			} else {
				d.body = strings.TrimSpace(string(src[m[4]:m[5]]) + " " + body)
			}
		} else if !regexp.MustCompile(`[a-z]`).MatchString(body) {
			continue // a constant or a flag mask: the facts read those
		}
		out = append(out, d)
	}
	return out
}

// headerDefs are a module header's macros, cached by its content.
func headerDefs(root, rel string) []macroDef {
	b, err := readFile(filepath.Join(root, rel))
	if err != nil {
		return nil
	}
	// By path and sha256 of the content: a 64-bit hash two headers
	// could be written to share would hand one the other's macros.
	h := sha256.Sum256(b)
	key := rel + "\x00" + string(h[:])
	if d, ok := headerCache.Load(key); ok {
		return d.([]macroDef)
	}
	d := macroDefs(rel, b)
	headerCache.Store(key, d)
	return d
}

var headerCache sync.Map

// ExpandMacros rewrites the uses of the module's macros in src (see
// above). It returns src itself when nothing is expanded.
func ExpandMacros(root, rel string, src []byte) (out []byte, uses map[int]macroUse) {
	defer func() {
		if r := recover(); r != nil {
			out, uses = src, nil // a bug here: the file as written
		}
	}()
	if !bytes.Contains(src, []byte("define")) && !bytes.Contains(src, []byte("#include \"")) {
		return src, nil
	}
	defs := macroDefs(rel, src)
	for _, m := range includeRe.FindAllSubmatch(src, -1) {
		inc := path.Join(path.Dir(rel), string(m[1]))
		if strings.HasPrefix(inc, "..") {
			continue
		}
		defs = append(defs, headerDefs(root, inc)...)
	}
	if len(defs) == 0 {
		return src, nil
	}
	byName := map[string]macroDef{}
	for _, d := range defs {
		if _, dup := byName[d.name]; !dup {
			byName[d.name] = d
		}
	}
	uses = map[int]macroUse{}
	lines := strings.SplitAfter(string(src), "\n")
	var b strings.Builder
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "#") {
			// Directives (and their continuations) stay as written.
			b.WriteString(l)
			for strings.HasSuffix(strings.TrimRight(lines[i], "\n"), "\\") && i+1 < len(lines) {
				i++
				b.WriteString(lines[i])
			}
			continue
		}
		// A use may span lines: join until the parentheses balance.
		joined, extra := l, 0
		for round := 0; round < 4; round++ {
			out, used, open := expandLine(joined, byName)
			if open && i+extra+1 < len(lines) && extra < 20 {
				extra++
				joined = strings.TrimRight(joined, "\n") + " " + strings.TrimLeft(lines[i+extra], " \t")
				round--
				continue
			}
			if used == "" {
				break
			}
			joined = out
			if _, ok := uses[i+1]; !ok {
				d := byName[used]
				uses[i+1] = macroUse{Name: used, File: d.file, Line: d.line}
			}
		}
		if _, ok := uses[i+1]; !ok {
			// Nothing expanded: keep the lines as they were.
			for k := 0; k <= extra; k++ {
				b.WriteString(lines[i+k])
			}
			i += extra
			continue
		}
		joined = strings.ReplaceAll(strings.TrimRight(joined, "\n"), "\n", " ")
		b.WriteString(joined)
		b.WriteString(strings.Repeat("\n", extra))
		if strings.HasSuffix(lines[i+extra], "\n") {
			b.WriteString("\n")
		}
		i += extra
	}
	if len(uses) == 0 {
		return src, nil
	}
	return []byte(b.String()), uses
}

// expandLine expands the first use of a macro in a line: the new line,
// the macro's name ("" when none), and whether a function-like use's
// parentheses are still open at the end of the line.
func expandLine(l string, defs map[string]macroDef) (string, string, bool) {
	for i := 0; i < len(l); i++ {
		c := l[i]
		if c == '"' || c == '\'' {
			// Skip a literal.
			for j := i + 1; j < len(l); j++ {
				if l[j] == '\\' {
					j++
					continue
				}
				if l[j] == c {
					i = j
					break
				}
			}
			continue
		}
		if c == '/' && i+1 < len(l) && (l[i+1] == '/' || l[i+1] == '*') {
			if l[i+1] == '/' {
				return l, "", false
			}
			if j := strings.Index(l[i+2:], "*/"); j >= 0 {
				i += j + 3
				continue
			}
			return l, "", false
		}
		if !isWord(c) || i > 0 && isWord(l[i-1]) || c >= '0' && c <= '9' {
			continue
		}
		j := i
		for j < len(l) && isWord(l[j]) {
			j++
		}
		d, ok := defs[l[i:j]]
		if !ok {
			i = j - 1
			continue
		}
		if d.params == nil {
			return l[:i] + "(" + d.body + ")" + l[j:], d.name, false
		}
		k := j
		for k < len(l) && (l[k] == ' ' || l[k] == '\t') {
			k++
		}
		if k >= len(l) || l[k] != '(' {
			i = j - 1
			continue
		}
		args, end, ok := macroArgs(l, k)
		if !ok {
			return l, "", true
		}
		if len(args) != len(d.params) && !(len(d.params) == 0 && len(args) == 1 && strings.TrimSpace(args[0]) == "") {
			i = j - 1
			continue
		}
		body := d.body
		if len(d.params) > 0 {
			body = substParams(body, d.params, args)
		}
		return l[:i] + body + l[end:], d.name, false
	}
	return l, "", false
}

// macroArgs splits the arguments of a use whose "(" is at l[open]: the
// arguments, the index after ")", and false when the line ends first.
func macroArgs(l string, open int) ([]string, int, bool) {
	depth := 0
	var args []string
	start := open + 1
	for i := open; i < len(l); i++ {
		switch l[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				args = append(args, strings.TrimSpace(l[start:i]))
				return args, i + 1, true
			}
		case ',':
			if depth == 1 {
				args = append(args, strings.TrimSpace(l[start:i]))
				start = i + 1
			}
		case '"', '\'':
			q := l[i]
			for i++; i < len(l) && l[i] != q; i++ {
				if l[i] == '\\' {
					i++
				}
			}
		}
	}
	return nil, 0, false
}
