package preproc

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Loc is a place in a source file: a path relative to the tree when the
// file is in it, else as the compiler named it (generated headers of the
// build folder, <built-in>).
type Loc struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

// MacroSite is a macro named on a source line, where the configuration
// defined it (the #define the preprocessor used), with its body and the
// bodies of the macros that body names (a few levels), so a reader can
// tell what the expansion touches.
type MacroSite struct {
	Name string `json:"name"`
	Loc
	Body string `json:"body"`
	// Text is Body followed by the bodies of the macros it names, to a
	// depth of three, each with its parameters' names blanked.
	Text string `json:"-"`

	params []string // a function-like macro's parameters
}

// paramNames lists the parameters of "(a, b, ...)".
func paramNames(list string) []string {
	list = strings.Trim(list, "()")
	if list == "" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(list, ",") {
		out = append(out, strings.TrimSpace(p))
	}
	return out
}

// bodyText is a macro's body with its parameters' names blanked: a
// parameter called addr says nothing of what the macro touches.
func bodyText(d MacroSite) string {
	if len(d.params) == 0 {
		return d.Body
	}
	return identRe.ReplaceAllStringFunc(d.Body, func(id string) string {
		for _, p := range d.params {
			if id == p {
				return "_"
			}
		}
		return id
	})
}

// Projection is the main file's share of a translation unit, line for
// line: Src has the source's number of lines and line k holds what the
// preprocessor made of source line k, or its source text (see Project);
// empty for directives, comments and #if arms the configuration does not
// build; the file's own #defines stay, as -dD writes them. Macros lists,
// per source line whose expansion Src holds, the macros named there.
type Projection struct {
	Src    []byte
	Macros map[int][]MacroSite
	// Lines counts the source lines that produced code; Skipped the
	// non-blank source lines that produced none (directives, comments,
	// arms not built).
	Lines, Skipped int
}

var markerRe = regexp.MustCompile(`^# ([0-9]+) "((?:[^"\\]|\\.)*)"`)

// lineMap walks preprocessor output (with -dD), calling fn for every
// line that is not a line marker, with the location it came from.
func lineMap(out []byte, fn func(text []byte, file string, line int)) {
	file, line := "", 0
	for len(out) > 0 {
		i := bytes.IndexByte(out, '\n')
		var l []byte
		if i < 0 {
			l, out = out, nil
		} else {
			l, out = out[:i], out[i+1:]
		}
		if len(l) > 2 && l[0] == '#' && l[1] == ' ' {
			if m := markerRe.FindSubmatch(l); m != nil {
				n, _ := strconv.Atoi(string(m[1]))
				file, line = unquoteC(string(m[2])), n
				continue
			}
		}
		fn(l, file, line)
		line++
	}
}

func unquoteC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	if u, err := strconv.Unquote(`"` + s + `"`); err == nil {
		return u
	}
	return s
}

// Lines maps every line of the output to where it came from.
func (u *Unit) Lines() []Loc {
	var out []Loc
	lineMap(u.Output, func(_ []byte, file string, line int) {
		out = append(out, Loc{File: u.rel(file), Line: line})
	})
	return out
}

// rel names a file the compiler read relative to the tree when it is in
// it.
func (u *Unit) rel(file string) string {
	if file == "" || file[0] == '<' {
		return file
	}
	p := file
	if !filepath.IsAbs(p) {
		p = filepath.Join(u.dir, p)
	}
	if r, err := filepath.Rel(u.Tree, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}

var (
	defineLineRe = regexp.MustCompile(`^#define ([A-Za-z_]\w*)(\([^)]*\))? ?(.*)$`)
	undefLineRe  = regexp.MustCompile(`^#undef ([A-Za-z_]\w*)`)
	identRe      = regexp.MustCompile(`[A-Za-z_]\w*`)
)

// Project cuts the output to the main file's lines, each at its source
// line, and finds the macros each line expanded (see Projection). With
// expand set, a line keeps its source text (comments blanked) unless one
// of the macros named on it satisfies expand: the kernel's API macros
// the rules know by name (le64_to_cpu, min, unlikely) stay as written,
// while the lines the configuration does not build are still dropped and
// the macros that matter are expanded as the compiler expands them. A
// nil expand takes the compiler's text for every line.
func (u *Unit) Project(raw []byte, expand func(MacroSite) bool) *Projection {
	rawLines := strings.Split(string(blankComments(raw)), "\n")
	lines := make([][]byte, len(rawLines))
	has := make([]bool, len(rawLines))
	defs := map[string]MacroSite{}
	macros := map[int][]MacroSite{}
	mainAbs := u.srcPath
	lineMap(u.Output, func(text []byte, file string, line int) {
		if len(text) > 0 && text[0] == '#' {
			if m := defineLineRe.FindSubmatch(text); m != nil {
				defs[string(m[1])] = MacroSite{Name: string(m[1]), Loc: Loc{File: u.rel(file), Line: line}, Body: strings.TrimSpace(string(m[3])), params: paramNames(string(m[2]))}
			} else if m := undefLineRe.FindSubmatch(text); m != nil {
				delete(defs, string(m[1]))
				return
			}
			if file != mainAbs || !bytes.HasPrefix(text, []byte("#define ")) {
				return // #pragma and the headers' #defines
			}
		}
		if file != mainAbs || line < 1 || line > len(lines) || len(bytes.TrimSpace(text)) == 0 {
			return
		}
		if lines[line-1] != nil {
			lines[line-1] = append(lines[line-1], ' ')
		}
		lines[line-1] = append(lines[line-1], text...)
		has[line-1] = true
		if text[0] == '#' || macros[line] != nil {
			return
		}
		for _, n := range macrosOn(rawLines, line-1, defs) {
			d := defs[n]
			d.Text = expandText(d, defs)
			macros[line] = append(macros[line], d)
		}
	})
	p := &Projection{Macros: map[int][]MacroSite{}}
	out := make([]string, len(rawLines))
	for i := 0; i < len(rawLines); i++ {
		if !has[i] {
			if strings.TrimSpace(rawLines[i]) != "" {
				p.Skipped++
			}
			continue
		}
		// A group: the line and the lines its open parentheses carry to
		// (a macro's use over several lines comes out on the first and,
		// what follows the use, on the last). It takes the compiler's
		// text or the source's as a whole.
		end := i
		depth := strings.Count(rawLines[i], "(") - strings.Count(rawLines[i], ")")
		for k := i + 1; depth > 0 && k < len(rawLines) && k < i+20 && !strings.HasPrefix(strings.TrimSpace(rawLines[k]), "#"); k++ {
			depth += strings.Count(rawLines[k], "(") - strings.Count(rawLines[k], ")")
			end = k
		}
		keepRaw := expand != nil && !strings.HasPrefix(string(lines[i]), "#")
		for k := i; k <= end; k++ {
			for _, m := range macros[k+1] {
				if keepRaw && expand(m) {
					keepRaw = false
				}
			}
		}
		for k := i; k <= end; k++ {
			if has[k] {
				p.Lines++
			}
			if keepRaw {
				out[k] = rawLines[k]
				continue
			}
			out[k] = string(lines[k])
			if ms := macros[k+1]; len(ms) > 0 {
				p.Macros[k+1] = ms
			}
		}
		i = end
	}
	p.Src = []byte(strings.Join(out, "\n"))
	return p
}

// blankComments replaces C comments by spaces, keeping newlines, string
// and character literals and line splices as they are.
func blankComments(src []byte) []byte {
	out := append([]byte(nil), src...)
	for i := 0; i < len(out); i++ {
		switch c := out[i]; {
		case c == '"' || c == '\'':
			for i++; i < len(out) && out[i] != c && out[i] != '\n'; i++ {
				if out[i] == '\\' {
					i++
				}
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				if out[i] == '\\' && i+1 < len(out) && out[i+1] == '\n' {
					out[i] = ' '
					i++
					continue
				}
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			out[i], out[i+1] = ' ', ' '
			for i += 2; i < len(out); i++ {
				if out[i] == '*' && i+1 < len(out) && out[i+1] == '/' {
					out[i], out[i+1] = ' ', ' '
					i++
					break
				}
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
		}
	}
	return out
}

// macrosOn lists the macros named on source line i (and on the lines a
// use's open parentheses carry it to), in order, once each.
func macrosOn(raw []string, i int, defs map[string]MacroSite) []string {
	text := raw[i]
	depth := strings.Count(text, "(") - strings.Count(text, ")")
	for k := i + 1; depth > 0 && k < len(raw) && k < i+20; k++ {
		t := raw[k]
		text += " " + t
		depth += strings.Count(t, "(") - strings.Count(t, ")")
	}
	var out []string
	seen := map[string]bool{}
	for _, id := range identRe.FindAllString(stripLiterals(text), -1) {
		if _, ok := defs[id]; ok && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

var literalRe = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)

func stripLiterals(s string) string { return literalRe.ReplaceAllString(s, `""`) }

// expandText is a macro's body followed by the bodies of the macros it
// names, three levels deep, at most 4 KiB, parameters blanked.
func expandText(d MacroSite, defs map[string]MacroSite) string {
	var b strings.Builder
	seen := map[string]bool{d.Name: true}
	level := []string{bodyText(d)}
	b.WriteString(level[0])
	for depth := 0; depth < 3 && len(level) > 0 && b.Len() < 4096; depth++ {
		var next []string
		for _, body := range level {
			for _, id := range identRe.FindAllString(stripLiterals(body), -1) {
				if n, ok := defs[id]; ok && !seen[id] {
					seen[id] = true
					t := bodyText(n)
					b.WriteString("\n")
					b.WriteString(t)
					next = append(next, t)
				}
			}
		}
		level = next
	}
	return b.String()
}
