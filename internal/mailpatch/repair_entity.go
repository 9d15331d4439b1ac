package mailpatch

import (
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// Archives that render mail as HTML and copy it back as text decode named
// entities: "first->next = &wr;" comes back as "first->next = ≀", and
// "&params" (no ';', a legacy entity prefix) as "¶ms". Kernel C code is
// ASCII outside comments and strings, so a non-ASCII character in code is
// damage. It is repaired only with proof:
//
//   - a context or removed line whose target file (--tree) has a line that
//     the same decoding turns into exactly the damaged line;
//   - otherwise, a restoration "&name" whose identifier the hunk itself (or
//     its function in the target file) declares or uses, and which Go's
//     html package (the HTML5 entity table) decodes into the damage.
//
// Damage with no proof, or with two different proofs, is an error.

// damage is one non-ASCII character in code.
type damage struct {
	file, frag, line int // indexes into Patch.Files / TextFragments / Lines
	pos              int // byte offset in the line text
	r                rune
}

func (p *Patch) repairEntities(m *message, diffAt int, opts Options) error {
	index := fragmentLineIndex(strings.Split(p.Diff, "\n"))
	diffLines := strings.Split(p.Diff, "\n")
	changed := false
	for fi, f := range p.Files {
		name := f.NewName
		if f.IsDelete {
			name = f.OldName
		}
		if !isCSource(name) {
			continue
		}
		var target []string
		if opts.Tree != "" && !f.IsNew {
			if data, err := os.ReadFile(filepath.Join(opts.Tree, filepath.FromSlash(f.OldName))); err == nil {
				target = strings.Split(string(data), "\n")
			}
		}
		for ri, frag := range f.TextFragments {
			dmg, evidence := scanFragment(fi, ri, frag)
			if len(dmg) == 0 {
				continue
			}
			if target != nil {
				for id, where := range functionIdentifiers(target, frag) {
					if _, ok := evidence[id]; !ok {
						evidence[id] = where
					}
				}
			}
			done := map[int]bool{}
			for _, d := range dmg {
				if done[d.line] {
					continue
				}
				done[d.line] = true
				ln := frag.Lines[d.line]
				text := strings.TrimSuffix(ln.Line, "\n")
				k, ok := locate(index, diffLines, fi, ri, d.line, ln.Op.String()+text)
				if !ok {
					return &InputError{File: m.File, Line: m.line(diffAt),
						Msg: fmt.Sprintf("%s hunk %d: cannot place line %q in the diff text to repair it", name, ri+1, text)}
				}
				inLine := m.line(diffAt + k)
				fixed, why, err := proveLine(text, ln.Op, d, frag, target, f.OldName, evidence)
				if err != nil {
					return &InputError{File: m.File, Line: inLine,
						Msg:  fmt.Sprintf("%s hunk %d (%s) %s line %q: %v", name, ri+1, strings.TrimSpace(frag.Header()), opName(ln.Op), text, err),
						Hint: "pass --tree with the target kernel tree to prove it against the file, or fix the line by hand"}
				}
				p.Repairs = append(p.Repairs, Repair{Kind: KindEntity, File: m.File, Line: inLine,
					Before: text, After: fixed, Why: why})
				diffLines[k] = ln.Op.String() + fixed
				changed = true
			}
		}
	}
	if !changed {
		return nil
	}
	p.Diff = strings.Join(diffLines, "\n")
	files, _, err := gitdiff.Parse(strings.NewReader(p.Diff))
	if err != nil {
		return fmt.Errorf("re-reading repaired diff: %w", err)
	}
	p.Files = files
	return nil
}

// locate finds the diff text line of fragment line li, checking that it
// holds the expected text.
func locate(index [][][]int, lines []string, fi, ri, li int, want string) (int, bool) {
	if fi >= len(index) || ri >= len(index[fi]) || li >= len(index[fi][ri]) {
		return 0, false
	}
	k := index[fi][ri][li]
	return k, k < len(lines) && lines[k] == want
}

func opName(op gitdiff.LineOp) string {
	switch op {
	case gitdiff.OpAdd:
		return "added"
	case gitdiff.OpDelete:
		return "removed"
	}
	return "context"
}

// scanFragment lexes a hunk's two sides as C and returns the non-ASCII
// characters in code and the identifiers the hunk uses (with where).
func scanFragment(fi, ri int, frag *gitdiff.TextFragment) ([]damage, map[string]string) {
	raw := make([]string, len(frag.Lines))
	for i, l := range frag.Lines {
		raw[i] = l.Line
	}
	oldIn, newIn := startsInComment(raw), startsInComment(raw)
	var dmg []damage
	evidence := map[string]string{}
	for i, l := range frag.Lines {
		text := strings.TrimSuffix(l.Line, "\n")
		var spans [][2]int
		switch l.Op {
		case gitdiff.OpDelete:
			spans, oldIn = codeSpans(text, oldIn)
		case gitdiff.OpAdd:
			spans, newIn = codeSpans(text, newIn)
		default:
			spans, newIn = codeSpans(text, newIn)
			_, oldIn = codeSpans(text, oldIn)
		}
		for _, sp := range spans {
			seg := text[sp[0]:sp[1]]
			for _, id := range identifiers(seg) {
				if _, ok := evidence[id]; !ok {
					evidence[id] = fmt.Sprintf("hunk line %d: %s", i+1, strings.TrimSpace(l.String()))
				}
			}
			for off, r := range seg {
				if r >= utf8.RuneSelf {
					dmg = append(dmg, damage{fi, ri, i, sp[0] + off, r})
				}
			}
		}
	}
	for _, id := range identifiers(frag.Comment) {
		if _, ok := evidence[id]; !ok {
			evidence[id] = "hunk header: " + strings.TrimSpace(frag.Comment)
		}
	}
	return dmg, evidence
}

// proveLine restores every damaged character of one line, or says why it
// cannot.
func proveLine(text string, op gitdiff.LineOp, d damage, frag *gitdiff.TextFragment, target []string, path string, evidence map[string]string) (string, string, error) {
	if target != nil && op != gitdiff.OpAdd {
		if n, ok := findDecodedLine(target, text, frag.OldPosition); ok {
			return target[n-1], fmt.Sprintf("%s:%d in the target tree reads %q, which HTML entity decoding turns into the received line", path, n, target[n-1]), nil
		}
	}
	fixed := text
	var whys []string
	for {
		pos, r := firstNonASCIICode(fixed)
		if pos < 0 {
			break
		}
		cands := restoreCandidates(fixed, pos, r, evidence, nextSameSide(frag, d.line, op))
		switch len(cands) {
		case 0:
			return "", "", fmt.Errorf("%q (U+%04X) in code looks like a decoded HTML entity, but no identifier of the hunk or its function restores it", string(r), r)
		case 1:
		default:
			var alts []string
			for _, c := range cands {
				alts = append(alts, strconv.Quote(c.text))
			}
			return "", "", fmt.Errorf("%q (U+%04X) has more than one restoration: %s", string(r), r, strings.Join(alts, ", "))
		}
		c := cands[0]
		whys = append(whys, fmt.Sprintf("HTML entity %q decodes to %q; %q is an identifier of this hunk (%s)", c.entity, string(r), c.ident, evidence[c.ident]))
		fixed = c.text
	}
	return fixed, strings.Join(whys, "; "), nil
}

// firstNonASCIICode finds the first non-ASCII rune outside comments and
// literals (a line alone: hunk context was already considered).
func firstNonASCIICode(s string) (int, rune) {
	spans, _ := codeSpans(s, false)
	for _, sp := range spans {
		for off, r := range s[sp[0]:sp[1]] {
			if r >= utf8.RuneSelf {
				return sp[0] + off, r
			}
		}
	}
	return -1, 0
}

type candidate struct{ text, ident, entity string }

// restoreCandidates lists the lines that, decoded as HTML, give line with r
// at pos, where the restored "&ident" is an identifier in evidence.
//
// C syntax rules out restorations that cannot compile: a ';' consumed by
// the entity cannot sit inside open parentheses (other than a for header)
// nor be followed by a closing token, and an expression left open at the
// end of the line must go on in the next line.
func restoreCandidates(line string, pos int, r rune, evidence map[string]string, next string) []candidate {
	ch := string(r)
	rest := line[pos+len(ch):]
	prefix := line[:pos]
	ids := make([]string, 0, len(evidence))
	for id := range evidence {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	seen := map[string]bool{}
	var out []candidate
	add := func(c candidate) {
		if !seen[c.text] {
			seen[c.text] = true
			out = append(out, c)
		}
	}
	for _, id := range ids {
		// "&id;" decoded whole: the ';' (often C's own) went with it.
		if html.UnescapeString("&"+id+";") == ch && semicolonFits(prefix, rest) {
			add(candidate{line[:pos] + "&" + id + ";" + rest, id, "&" + id + ";"})
		}
		// "&id" with no ';': a legacy entity that is a prefix of id
		// decoded, the rest of id stayed: "&params" -> "¶ms".
		for k := 1; k <= len(id); k++ {
			tail := id[k:]
			if !strings.HasPrefix(rest, tail) {
				continue
			}
			after := rest[len(tail):]
			if after != "" && (isIdentByte(after[0]) || after[0] == ';') {
				continue
			}
			if html.UnescapeString("&"+id) == ch+tail && (after != "" || expressionGoesOn(prefix, next)) {
				add(candidate{line[:pos] + "&" + id + after, id, "&" + id[:k]})
			}
		}
	}
	return out
}

// parenDepth counts the parentheses and brackets left open in s.
func parenDepth(s string) int {
	d := 0
	spans, _ := codeSpans(s, false)
	for _, sp := range spans {
		for _, c := range s[sp[0]:sp[1]] {
			switch c {
			case '(', '[':
				d++
			case ')', ']':
				d--
			}
		}
	}
	return d
}

// semicolonFits reports whether a ';' can end a statement between prefix
// and rest.
func semicolonFits(prefix, rest string) bool {
	if parenDepth(prefix) > 0 && !strings.HasPrefix(strings.TrimSpace(prefix), "for") {
		return false
	}
	r := strings.TrimSpace(rest)
	return r == "" || !strings.ContainsAny(r[:1], ")],.?:")
}

// expressionGoesOn reports whether an expression that ends the line after
// prefix, with no ';', is continued: a parenthesis is still open or the
// next line starts with an operator.
func expressionGoesOn(prefix, next string) bool {
	if parenDepth(prefix) > 0 {
		return true
	}
	n := strings.TrimSpace(next)
	for _, op := range []string{"&&", "||", "?", ":", "+", "-", "*", "/", "%", "|", "^", "&", ",", ")", "]", ".", "->", "<", ">", "=", "!="} {
		if strings.HasPrefix(n, op) {
			return true
		}
	}
	return false
}

// nextSameSide is the text of the line after line i on the same side of
// the hunk (old side for removed lines, new side otherwise).
func nextSameSide(frag *gitdiff.TextFragment, i int, op gitdiff.LineOp) string {
	skip := gitdiff.OpDelete
	if op == gitdiff.OpDelete {
		skip = gitdiff.OpAdd
	}
	for j := i + 1; j < len(frag.Lines); j++ {
		if frag.Lines[j].Op != skip {
			return strings.TrimSuffix(frag.Lines[j].Line, "\n")
		}
	}
	return ""
}

// findDecodedLine looks in the target file for a line that HTML decoding
// turns into damaged, nearest to the hunk's stated position.
func findDecodedLine(target []string, damaged string, near int64) (int, bool) {
	best, bestDist := 0, -1
	for i, l := range target {
		if l == damaged || !strings.Contains(l, "&") || html.UnescapeString(l) != damaged {
			continue
		}
		dist := i + 1 - int(near)
		if dist < 0 {
			dist = -dist
		}
		if bestDist < 0 || dist < bestDist {
			best, bestDist = i+1, dist
		}
	}
	return best, bestDist >= 0
}

// funcStart matches the first line of a C function definition.
var funcStart = regexp.MustCompile(`^[A-Za-z_][^;]*\(`)

// functionIdentifiers returns the identifiers of the function that encloses
// the hunk in the target file: found by the hunk header (git's function
// context), else by the stated position.
func functionIdentifiers(target []string, frag *gitdiff.TextFragment) map[string]string {
	start := -1
	if c := strings.TrimSpace(frag.Comment); c != "" {
		for i, l := range target {
			if strings.HasPrefix(l, c) {
				start = i
				break
			}
		}
	}
	if start < 0 {
		for i := min(int(frag.OldPosition)-1, len(target)-1); i >= 0; i-- {
			if funcStart.MatchString(target[i]) {
				start = i
				break
			}
		}
	}
	ids := map[string]string{}
	if start < 0 {
		return ids
	}
	inComment := false
	for i := start; i < len(target); i++ {
		var spans [][2]int
		spans, inComment = codeSpans(target[i], inComment)
		for _, sp := range spans {
			for _, id := range identifiers(target[i][sp[0]:sp[1]]) {
				if _, ok := ids[id]; !ok {
					ids[id] = fmt.Sprintf("target function, line %d", i+1)
				}
			}
		}
		if i > start && target[i] == "}" {
			break
		}
	}
	return ids
}

// hunkHeader reads "@@ -a,b +c,d @@".
var hunkHeader = regexp.MustCompile(`^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@`)

// fragmentLineIndex maps file/fragment/line indexes (go-gitdiff's order) to
// line indexes of the diff text, so repairs can name input lines.
func fragmentLineIndex(lines []string) [][][]int {
	var out [][][]int
	fi := -1
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		// A file starts at "diff --git", or at a "---"/"+++" pair outside a
		// hunk when the current file already has hunks (plain diffs).
		if strings.HasPrefix(l, "diff --git ") ||
			strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") && (fi < 0 || len(out[fi]) > 0) {
			out = append(out, nil)
			fi++
			continue
		}
		sm := hunkHeader.FindStringSubmatch(l)
		if sm == nil || fi < 0 {
			continue
		}
		oldN, newN := 1, 1
		if sm[1] != "" {
			oldN, _ = strconv.Atoi(sm[1])
		}
		if sm[2] != "" {
			newN, _ = strconv.Atoi(sm[2])
		}
		var idx []int
		for i++; i < len(lines) && (oldN > 0 || newN > 0); i++ {
			switch c := lines[i]; {
			case strings.HasPrefix(c, "\\ "):
				continue
			case strings.HasPrefix(c, "-"):
				oldN--
			case strings.HasPrefix(c, "+"):
				newN--
			default:
				oldN--
				newN--
			}
			idx = append(idx, i)
		}
		i--
		out[fi] = append(out[fi], idx)
	}
	return out
}
