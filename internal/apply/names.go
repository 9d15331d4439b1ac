package apply

import (
	"strings"

	"github.com/patchctl/patchctl/internal/mailpatch"
)

// Plain diffs (no "diff --git" line) name files as their tool wrote them:
// a/ and b/, no prefix, linux-next-20260601/, quilt's dir.orig/ and dir/.
// GNU patch is told how many leading components to strip (-pN) and then
// picks, of the old, new and Index: names, the best one that exists
// (fewest components, shortest base name, shortest name: best_name in
// its pch.c). patchctl does the same, and finds N itself when it is not
// given: the level at which most of the patch's files exist in the tree
// (1 first, then 0, 2, 3...; a patch creating only new files: 1 when its
// names have a prefix, else 0). git headers are always -p1, as git am
// applies them.

// NoStrip asks resolveNames to find the strip level.
const NoStrip = -1

// resolveNames sets the names of p's plain-header files for the tree as
// it stands (o): strip is -pN, or NoStrip to find it. The names are
// derived from p.Diff each time, so resolving twice is resolving once.
// It returns the strip level used (-1 when p has no plain header).
func resolveNames(o *overlay, p *mailpatch.Patch, strip int) (int, error) {
	hs := mailpatch.DiffHeaders(p.Diff)
	if len(hs) != len(p.Files) {
		return -1, nil // not one header per file: leave go-gitdiff's names
	}
	var plain []int
	for i, h := range hs {
		if !h.Git {
			plain = append(plain, i)
		}
	}
	if len(plain) == 0 {
		return -1, nil
	}
	exists := func(name string) (bool, error) {
		_, ok, err := o.read(name)
		return ok, err
	}
	if strip < 0 {
		var err error
		if strip, err = findStrip(hs, plain, exists); err != nil {
			return -1, err
		}
	}
	for _, i := range plain {
		names := candidates(hs[i], strip)
		if len(names) == 0 {
			continue // too few components: go-gitdiff's name, reported missing
		}
		var there []string
		for _, n := range names {
			ok, err := exists(n)
			if err != nil {
				return -1, err
			}
			if ok {
				there = append(there, n)
			}
		}
		if len(there) == 0 {
			there = names
		}
		name := bestName(there)
		f := p.Files[i]
		switch {
		case f.IsNew:
			f.OldName, f.NewName = "", name
		case f.IsDelete:
			f.OldName, f.NewName = name, ""
		default:
			f.OldName, f.NewName = name, name
		}
	}
	return strip, nil
}

// findStrip is GNU patch's strip level for the plain headers hs[plain]:
// of 1, 0, then 2 and up to the most components a name has, the first
// under which most files are there (exists); none there, 1 (0 when a
// name has too few components for 1).
func findStrip(hs []mailpatch.DiffHeader, plain []int, exists func(string) (bool, error)) (int, error) {
	maxComp := 0
	for _, i := range plain {
		for _, n := range []string{hs[i].Old, hs[i].New, hs[i].Index} {
			maxComp = max(maxComp, strings.Count(n, "/"))
		}
	}
	order := []int{1, 0}
	for k := 2; k <= maxComp; k++ {
		order = append(order, k)
	}
	best, bestScore := -1, 0
	for _, k := range order {
		score := 0
		for _, i := range plain {
			for _, n := range candidates(hs[i], k) {
				ok, err := exists(n)
				if err != nil {
					return -1, err
				}
				if ok {
					score++
					break
				}
			}
		}
		if score > bestScore {
			best, bestScore = k, score
		}
	}
	if best < 0 {
		best = 1
		for _, i := range plain {
			if len(candidates(hs[i], 1)) == 0 {
				best = 0
			}
		}
	}
	return best, nil
}

// candidates are a plain header's names stripped of k components, in
// GNU patch's order (old, new, then Index: when neither is given), only
// those that stay inside the tree.
func candidates(h mailpatch.DiffHeader, k int) []string {
	raw := []string{h.Old, h.New}
	if h.Old == "" && h.New == "" {
		raw = append(raw, h.Index)
	}
	var out []string
	for _, n := range raw {
		if n == "" {
			continue
		}
		s, ok := mailpatch.StripName(n, k)
		if !ok || mailpatch.CheckPath(s) != nil {
			continue
		}
		out = append(out, s)
	}
	return out
}

// bestName is GNU patch's best_name: fewest components, then shortest
// base name, then shortest name, then the first.
func bestName(names []string) string {
	best := names[0]
	key := func(n string) (int, int, int) {
		base := n[strings.LastIndexByte(n, '/')+1:]
		return strings.Count(n, "/"), len(base), len(n)
	}
	for _, n := range names[1:] {
		c, b, l := key(n)
		bc, bb, bl := key(best)
		if c < bc || c == bc && (b < bb || b == bb && l < bl) {
			best = n
		}
	}
	return best
}
