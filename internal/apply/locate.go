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

// locate finds frag in lines at or after from, starting at guess and
// moving outwards (GNU patch's order), first with all context, then
// dropping up to maxFuzz outer context lines at each end. The context line
// next to a change is never dropped.
func locate(lines []string, frag *gitdiff.TextFragment, from, guess, maxFuzz int) (placement, bool) {
	n := len(frag.Lines)
	for fuzz := 0; fuzz <= maxFuzz; fuzz++ {
		// Only outer lines go: the context line next to the change is
		// inner and always matched.
		dropL := min(fuzz, max(int(frag.LeadingContext)-1, 0))
		dropT := min(fuzz, max(int(frag.TrailingContext)-1, 0))
		if fuzz > 0 && dropL == 0 && dropT == 0 {
			break // no context left to drop: more fuzz changes nothing
		}
		pat := oldLines(frag, dropL, n-dropT)
		start := guess + dropL
		last := len(lines) - len(pat)
		if last < from {
			continue
		}
		for d := 0; ; d++ {
			lo, hi := start-d, start+d
			if lo < from && hi > last {
				break
			}
			if lo >= from && lo <= last && matchAt(lines, pat, lo) {
				return placement{lo, dropL, dropT, fuzz}, true
			}
			if d > 0 && hi >= from && hi <= last && matchAt(lines, pat, hi) {
				return placement{hi, dropL, dropT, fuzz}, true
			}
		}
	}
	return placement{}, false
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
