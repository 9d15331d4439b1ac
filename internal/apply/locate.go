package apply

import (
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// MaxFuzz is GNU patch's default fuzz factor.
const MaxFuzz = 2

// placement is where a hunk was found in the old content.
type placement struct {
	pos   int // 0-based index of the first matched (not dropped) old line
	dropL int // leading context lines not matched (fuzz)
	dropT int // trailing context lines not matched (fuzz)
	fuzz  int
}

// landed is the 1-based line where the whole hunk (with dropped context)
// starts.
func (p placement) landed() int64 { return int64(p.pos-p.dropL) + 1 }

// oldLines returns the old side of frag's lines [from, to).
func oldLines(frag *gitdiff.TextFragment, from, to int) []string {
	var out []string
	for _, l := range frag.Lines[from:to] {
		if l.Old() {
			out = append(out, l.Line)
		}
	}
	return out
}

// hunkPattern is a hunk as GNU patch's locate_hunk sees it: its old lines
// (the pattern), its leading and trailing context counts, and the line
// it says it starts at.
type hunkPattern struct {
	pat    []string
	prefix int // leading context lines
	suffix int // trailing context lines
	first  int // 1-based: the first old line, or for a hunk with no old lines the line it goes before
}

func patternOf(frag *gitdiff.TextFragment) hunkPattern {
	hp := hunkPattern{pat: oldLines(frag, 0, len(frag.Lines)), prefix: int(frag.LeadingContext), suffix: int(frag.TrailingContext), first: int(frag.OldPosition)}
	if frag.OldLines == 0 {
		hp.first++ // "-5,0": insert after line 5, so before line 6
	}
	return hp
}

// context is the larger of the two context sizes: GNU patch's fuzz counts
// from it.
func (h hunkPattern) context() int { return max(h.prefix, h.suffix) }

// maxFuzzFor is the fuzz GNU patch tries up to for a hunk: the fuzz factor,
// at most the hunk's context.
func (h hunkPattern) maxFuzzFor(maxFuzz int) int { return min(maxFuzz, h.context()) }

// locate is GNU patch 2.7.6's locate_hunk at one fuzz level. inOffset is
// the offset the hunks before left (the search starts at first+inOffset
// and moves outwards, forward first), lastFrozen the last line (1-based)
// that an applied hunk consumed: nothing before it moves again. The
// pattern, context included, starts after lastFrozen (2.7.6; later
// releases let the context reach back into it), except for one quirk
// kept on purpose: when the first guess itself is frozen, 2.7.6 starts
// its search below it and may find a place that misorders (see
// misordered).
//
// Fuzz f ignores up to f outer context lines, counted from the larger of
// the two context sizes: a side with less context than the other ignores
// that many fewer, and a side whose count goes below zero anchors the hunk
// to that edge of the file (a hunk with no trailing context, made at the
// end of a file, only matches at the end of the file; one with less
// leading context than trailing, made at line 1, only at the start).
func locate(lines []string, h hunkPattern, inOffset, lastFrozen, fuzz int) (placement, bool) {
	input := len(lines)
	firstGuess := h.first + inOffset
	patLines := len(h.pat)
	context := h.context()
	prefixFuzz := fuzz + h.prefix - context
	suffixFuzz := fuzz + h.suffix - context
	maxWhere := input - (patLines - suffixFuzz) + 1
	minWhere := lastFrozen + 1
	maxPos := maxWhere - firstGuess
	maxNeg := firstGuess - minWhere
	maxOff := max(maxPos, maxNeg)
	at := func(where, pf, sf int) placement {
		return placement{pos: where - 1 + pf, dropL: pf, dropT: sf, fuzz: fuzz}
	}
	if patLines == 0 {
		// A null range matches anywhere: GNU takes the first guess.
		if firstGuess < 1 || firstGuess > input+1 {
			return placement{}, false
		}
		return at(firstGuess, 0, 0), true
	}
	if firstGuess <= maxNeg {
		maxNeg = firstGuess - 1 // never lines <= 0
	}
	if prefixFuzz < 0 && h.first <= 1 {
		// Only the start of the file.
		if suffixFuzz < 0 && (patLines != input || h.prefix < lastFrozen) {
			return placement{}, false // only the whole file, and it is not
		}
		sf := max(suffixFuzz, 0)
		offset := 1 - firstGuess
		if lastFrozen <= h.prefix && offset <= maxPos && match(lines, h.pat, 1, 0, sf) {
			return at(1, 0, sf), true
		}
		return placement{}, false
	} else if prefixFuzz < 0 {
		prefixFuzz = 0
	}
	if suffixFuzz < 0 {
		// Only the end of the file.
		where := input - patLines + 1
		offset := firstGuess - where
		if offset <= maxNeg && where >= 1 && match(lines, h.pat, where, prefixFuzz, 0) {
			return at(where, prefixFuzz, 0), true
		}
		return placement{}, false
	}
	minOff := 0
	switch {
	case maxPos < 0:
		minOff = firstGuess - maxWhere
	case maxNeg < 0:
		minOff = firstGuess - minWhere
	}
	for off := minOff; off <= maxOff; off++ {
		if off <= maxPos && match(lines, h.pat, firstGuess+off, prefixFuzz, suffixFuzz) {
			return at(firstGuess+off, prefixFuzz, suffixFuzz), true
		}
		if off <= maxNeg && match(lines, h.pat, firstGuess-off, prefixFuzz, suffixFuzz) {
			return at(firstGuess-off, prefixFuzz, suffixFuzz), true
		}
	}
	return placement{}, false
}

// misordered says whether a hunk found at where (1-based, the start of
// its whole pattern) would change a line an earlier hunk already
// consumed. GNU patch 2.7.6 fails such a hunk ("misordered hunks! output
// would be garbled"), keeping the offset it found for the hunks after.
func misordered(h hunkPattern, where, lastFrozen int) bool {
	return lastFrozen > where-1+h.prefix
}

// match is GNU patch's patch_match: the pattern without its first pf and
// last sf lines equals the file from line where+pf (1-based).
func match(lines, pat []string, where, pf, sf int) bool {
	from := where - 1 + pf
	n := len(pat) - pf - sf
	if from < 0 || n < 0 || from+n > len(lines) {
		return false
	}
	return matchAt(lines, pat[pf:pf+n], from)
}

func matchAt(lines, pat []string, at int) bool {
	for i, p := range pat {
		if lines[at+i] != p {
			return false
		}
	}
	return true
}

// nearest finds where frag's old lines come closest to matching, comparing
// lines with white space folded: the line, and how many lines match.
func nearest(lines []string, frag *gitdiff.TextFragment, guess int) (line int, matched, total int) {
	pat := oldLines(frag, 0, len(frag.Lines))
	total = len(pat)
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	np := make([]string, len(pat))
	for i, p := range pat {
		np[i] = norm(p)
	}
	nl := make([]string, len(lines))
	for i, l := range lines {
		nl[i] = norm(l)
	}
	best, bestAt := -1, 0
	for at := 0; at+len(pat) <= len(lines); at++ {
		score := 0
		for i := range np {
			if nl[at+i] == np[i] {
				score++
			}
		}
		dist := func(x int) int {
			if x > guess {
				return x - guess
			}
			return guess - x
		}
		if score > best || score == best && dist(at) < dist(bestAt) {
			best, bestAt = score, at
		}
	}
	if best < 0 {
		return 0, 0, total
	}
	return bestAt + 1, best, total
}

// splitLines splits content into lines that keep their "\n".
func splitLines(content []byte) []string {
	s := string(content)
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// reversed returns the fragment that undoes frag.
func reversed(frag *gitdiff.TextFragment) *gitdiff.TextFragment {
	r := *frag
	r.OldPosition, r.NewPosition = frag.NewPosition, frag.OldPosition
	r.OldLines, r.NewLines = frag.NewLines, frag.OldLines
	r.LinesAdded, r.LinesDeleted = frag.LinesDeleted, frag.LinesAdded
	r.Lines = make([]gitdiff.Line, len(frag.Lines))
	for i, l := range frag.Lines {
		switch l.Op {
		case gitdiff.OpAdd:
			l.Op = gitdiff.OpDelete
		case gitdiff.OpDelete:
			l.Op = gitdiff.OpAdd
		}
		r.Lines[i] = l
	}
	return &r
}

// nearDiffer is the first line of the hunk's old side that the file
// does not have at the nearest place (1-based line), as each has it.
func nearDiffer(lines []string, frag *gitdiff.TextFragment, at int) (want, have string) {
	if at < 1 {
		return "", ""
	}
	pat := oldLines(frag, 0, len(frag.Lines))
	for i, p := range pat {
		k := at - 1 + i
		if k >= len(lines) {
			return strings.TrimRight(p, "\n"), "(end of file)"
		}
		if normalize(lines[k]) != normalize(p) {
			return strings.TrimRight(p, "\n"), strings.TrimRight(lines[k], "\n")
		}
	}
	for i, p := range pat {
		if k := at - 1 + i; lines[k] != p {
			return strings.TrimRight(p, "\n") + " (white space differs)", strings.TrimRight(lines[k], "\n")
		}
	}
	return "", ""
}
