package apply

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/patchctl/patchctl/internal/mailpatch"
)

// A patch is already upstream when the tree holds what it adds, perhaps
// moved to other files of the same folder and lightly edited on the way.
// Two measures, both shown to the user:
//
//   - lines: the share of the patch's significant added lines that have a
//     line in the folder sharing a distinctive name and alike in tokens
//     (Dice coefficient over token multisets ≥ LineSimilarity; white space
//     never counts);
//   - names: the identifiers the patch introduces (in added lines, absent
//     from its pre-image: the touched files before the patch, and its own
//     context and removed lines) that the folder already has, with where.
//
// Already upstream: lines ≥ 60 %, or lines ≥ 40 % and at least three
// introduced names of which ≥ 75 % are there (upstream often rewrites a
// helper while keeping the feature's names).

// UpstreamMatch says where a patch's added lines already stand in the tree.
type UpstreamMatch struct {
	Found int            `json:"found"` // significant added lines present
	Total int            `json:"total"` // significant added lines
	Files []UpstreamFile `json:"files,omitempty"`
	// The names the patch introduces (absent from its pre-image): those
	// the folder has, with where, and those it lacks.
	NamesPresent []string `json:"names_present,omitempty"`
	NamesFound   []NameAt `json:"names_found,omitempty"`
	NamesMissing []string `json:"names_missing,omitempty"`
	// Names the patch adds that its pre-image already has: not
	// introduced, so no evidence either way.
	NamesInPreimage []NameAt `json:"names_in_preimage,omitempty"`
}

// UpstreamFile is one file holding some of the added lines.
type UpstreamFile struct {
	Path  string `json:"path"`
	Lines int    `json:"lines"`
	// First and Last bound where the matched lines stand together: the
	// stretch of the file holding most of them (a lone match elsewhere,
	// a prototype or a similar line in another function, is not where
	// the change is).
	First   int   `json:"first"`
	Last    int   `json:"last,omitempty"`
	matched []int // every matched line
}

func (f UpstreamFile) String() string {
	if f.Last > f.First {
		return fmt.Sprintf("%s:%d-%d (%d lines)", f.Path, f.First, f.Last, f.Lines)
	}
	return fmt.Sprintf("%s:%d (%d lines)", f.Path, f.First, f.Lines)
}

// cluster sets First and Last to the window of span lines holding the
// most matched lines (the first such window).
func (f *UpstreamFile) cluster(span int) {
	ls := append([]int(nil), f.matched...)
	sort.Ints(ls)
	best, bi, bj := 0, 0, 0
	j := 0
	for i := range ls {
		for j < len(ls) && ls[j]-ls[i] <= span {
			j++
		}
		if j-i > best {
			best, bi, bj = j-i, i, j
		}
	}
	if best > 0 {
		f.First, f.Last = ls[bi], ls[bj-1]
	}
}

const (
	// LineSimilarity is the token similarity at which two lines are the same line.
	LineSimilarity = 0.8
	lineShare      = 0.6
	lineShareNames = 0.4
	nameShare      = 0.75
	minNames       = 3
)

// LineShare is the share of significant added lines present.
func (u *UpstreamMatch) LineShare() float64 {
	if u.Total == 0 {
		return 0
	}
	return float64(u.Found) / float64(u.Total)
}

// IsUpstream applies the rule above.
func (u *UpstreamMatch) IsUpstream() bool {
	if u.Total < 3 {
		return false
	}
	if u.LineShare() >= lineShare {
		return true
	}
	n := len(u.NamesPresent) + len(u.NamesMissing)
	return u.LineShare() >= lineShareNames && n >= minNames && float64(len(u.NamesPresent)) >= nameShare*float64(n)
}

var (
	identRe   = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	tokenRe   = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*|[0-9]+|->|\+\+|--|<<|>>|[|&+\-*/<>=!]=|&&|\|\||\S`)
	cKeywords = map[string]bool{"int": true, "return": true, "else": true, "void": true, "bool": true, "struct": true,
		"static": true, "const": true, "unsigned": true, "break": true, "case": true, "goto": true, "true": true,
		"false": true, "NULL": true, "for": true, "while": true, "char": true, "long": true, "u32": true, "u64": true,
		"u16": true, "u8": true, "default": true, "unlikely": true, "likely": true, "sizeof": true, "err": true, "ret": true, "if": true}
)

// normalize folds white space.
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

// significant keeps lines that say something: long enough and naming
// something other than keywords. "}", "} else {", "return 0;" say nothing.
func significant(n string) bool {
	if len(n) < 10 {
		return false
	}
	for _, id := range identRe.FindAllString(n, -1) {
		if len(id) >= 3 && !cKeywords[id] {
			return true
		}
	}
	return false
}

// distinctive reports whether a token is a name that can tie two lines:
// an identifier of four or more characters that is not a keyword.
func distinctive(t string) bool {
	return len(t) >= 4 && !cKeywords[t] && identRe.MatchString(t) && (t[0] < '0' || t[0] > '9')
}

// dice is the Dice coefficient of two token multisets.
func dice(a, b []string) float64 {
	if len(a)+len(b) == 0 {
		return 0
	}
	m := make(map[string]int, len(a))
	for _, x := range a {
		m[x]++
	}
	c := 0
	for _, x := range b {
		if m[x] > 0 {
			m[x]--
			c++
		}
	}
	return 2 * float64(c) / float64(len(a)+len(b))
}

// introducedNames are the identifiers the patch's added lines use that its
// pre-image lacks: the files it touches as they are before the patch, and
// its own context and removed lines. A name used all over the touched file
// (NLM_F_CREATE in rtnetlink.c) is not introduced, however often the
// patch adds it. Only distinctive names count (an underscore, six
// characters or more). used lists the added names the pre-image has, with
// where, for the report.
func introducedNames(o *overlay, p *mailpatch.Patch) (introduced []string, used []NameAt, err error) {
	old, added := map[string]bool{}, map[string]bool{}
	for _, f := range p.Files {
		for _, fr := range f.TextFragments {
			for _, l := range fr.Lines {
				for _, id := range identRe.FindAllString(l.Line, -1) {
					if l.Op == gitdiff.OpAdd {
						added[id] = true
					} else {
						old[id] = true
					}
				}
			}
		}
	}
	candidates := map[string]bool{}
	for id := range added {
		if !old[id] && len(id) >= 6 && strings.Contains(id, "_") && !cKeywords[id] {
			candidates[id] = true
		}
	}
	inPre := map[string]NameAt{}
	for _, f := range p.Files {
		name := f.OldName
		if f.IsNew || name == "" {
			continue
		}
		content, exists, err := o.read(name)
		if err != nil {
			return nil, nil, err
		}
		if !exists {
			continue
		}
		for i, l := range splitLines(content) {
			for _, id := range identRe.FindAllString(l, -1) {
				if _, seen := inPre[id]; candidates[id] && !seen {
					inPre[id] = NameAt{Name: id, Path: name, Line: i + 1}
				}
			}
		}
	}
	for id := range candidates {
		if at, ok := inPre[id]; ok {
			used = append(used, at)
		} else {
			introduced = append(introduced, id)
		}
	}
	sort.Strings(introduced)
	sort.Slice(used, func(i, j int) bool { return used[i].Name < used[j].Name })
	return introduced, used, nil
}

// NameAt is where a name stands in the tree.
type NameAt struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Line int    `json:"line"`
}

func (n NameAt) String() string { return fmt.Sprintf("%s (%s:%d)", n.Name, n.Path, n.Line) }

type folderLine struct {
	path   string
	line   int
	tokens []string
}

// findUpstream measures the patch against the files of the folders it
// touches (code that moved usually stays in its driver).
func findUpstream(o *overlay, p *mailpatch.Patch) (*UpstreamMatch, error) {
	want := addedLines(p)
	u := &UpstreamMatch{Total: len(want)}
	introduced, used, err := introducedNames(o, p)
	if err != nil {
		return nil, err
	}
	// What the match and the names below look up: the wanted lines'
	// distinctive tokens and the names the patch introduces.
	sought := map[string]bool{}
	for _, w := range want {
		for _, t := range w {
			if distinctive(t) {
				sought[t] = true
			}
		}
	}
	for _, n := range introduced {
		sought[n] = true
	}
	ix := indexFoldersFunc(o, p, sought)
	u.Files, u.Found = ix.match(want)
	u.NamesInPreimage = used
	for _, n := range introduced {
		if ats, ok := ix.names[n]; ok {
			u.NamesPresent = append(u.NamesPresent, n)
			u.NamesFound = append(u.NamesFound, nearestName(ats, u.Files))
		} else {
			u.NamesMissing = append(u.NamesMissing, n)
		}
	}
	return u, nil
}

// addedLines are the patch's added lines that say something, each once,
// normalized and cut into tokens.
func addedLines(p *mailpatch.Patch) [][]string {
	seen := map[string]bool{}
	var want [][]string
	for _, f := range p.Files {
		for _, fr := range f.TextFragments {
			for _, l := range fr.Lines {
				n := normalize(l.Line)
				if l.Op != gitdiff.OpAdd || !significant(n) || seen[n] {
					continue
				}
				seen[n] = true
				want = append(want, tokenRe.FindAllString(n, -1))
			}
		}
	}
	return want
}

// folderIndex holds the lines of the folders a patch touches, their
// names' places, and the lines each distinctive token stands in.
type folderIndex struct {
	lines   []folderLine
	names   map[string][]NameAt
	byToken map[string][]int // rare-token index into lines
}

// indexFoldersFunc is indexFolders; tests compare it with an index of
// every line.
var indexFoldersFunc = indexFolders

// indexFolders reads every file of the folders the patch touches and
// indexes the lines that name one of sought: the only lines match and
// the name lookups can reach (a line is a candidate only through a
// distinctive token it shares with a wanted line, and names are looked
// up only for names the patch introduces), kept in the folders' order.
// The other lines are passed over by a scan for names, without the
// tokenizing regular expression (most of a folder: a driver's folder is
// 100k lines).
func indexFolders(o *overlay, p *mailpatch.Patch, sought map[string]bool) *folderIndex {
	dirs := map[string]bool{}
	for _, f := range p.Files {
		dirs[path.Dir(firstNonEmpty(f.NewName, f.OldName))] = true
	}
	var sorted []string
	for d := range dirs {
		sorted = append(sorted, d)
	}
	sort.Strings(sorted)
	ix := &folderIndex{names: map[string][]NameAt{}, byToken: map[string][]int{}}
	for _, d := range sorted {
		files, err := o.tree.ReadDir(d)
		if err != nil {
			continue // the folder is gone too
		}
		for _, name := range files {
			fp := path.Join(d, name)
			content, exists, err := o.read(fp)
			if err != nil || !exists {
				continue
			}
			ix.addFile(fp, content, sought)
		}
	}
	return ix
}

// addFile indexes the lines of the file fp that name one of sought.
func (ix *folderIndex) addFile(fp string, content []byte, sought map[string]bool) {
	names := ix.names
	for i, l := range splitLines(content) {
		if !namesOneOf(l, sought) {
			continue
		}
		n := normalize(l)
		if n == "" {
			continue
		}
		toks := tokenRe.FindAllString(n, -1)
		idx := len(ix.lines)
		ix.lines = append(ix.lines, folderLine{fp, i + 1, toks})
		for _, t := range toks {
			if identRe.MatchString(t) && (len(names[t]) == 0 || names[t][len(names[t])-1].Line != i+1) {
				names[t] = append(names[t], NameAt{Name: t, Path: fp, Line: i + 1})
			}
			if distinctive(t) {
				ix.byToken[t] = append(ix.byToken[t], idx)
			}
		}
	}
}

// namesOneOf reports whether the line has an identifier token (as tokenRe
// cuts it: a digit run is a number, so "0x1f" holds the name "x1f") that
// is in sought.
func namesOneOf(line string, sought map[string]bool) bool {
	isLetter := func(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case isLetter(c):
			j := i + 1
			for j < len(line) && (isLetter(line[j]) || isDigit(line[j])) {
				j++
			}
			if sought[line[i:j]] {
				return true
			}
			i = j
		case isDigit(c):
			for i < len(line) && isDigit(line[i]) {
				i++
			}
		default:
			i++
		}
	}
	return false
}

// match finds each wanted line's most similar line in the folders and
// returns the files that hold them, most matches first, and how many
// were found.
func (ix *folderIndex) match(want [][]string) ([]UpstreamFile, int) {
	found := 0
	perFile := map[string]*UpstreamFile{}
	for _, w := range want {
		// Only lines that share a distinctive name are compared: two
		// lines alike in punctuation and "dev" are not the same line.
		cand := map[int]bool{}
		for _, t := range w {
			if distinctive(t) {
				for _, i := range ix.byToken[t] {
					cand[i] = true
				}
			}
		}
		best, bestAt := 0.0, -1
		for i := range cand {
			if d := dice(w, ix.lines[i].tokens); d > best || d == best && i < bestAt {
				best, bestAt = d, i
			}
		}
		if best < LineSimilarity {
			continue
		}
		found++
		fl := ix.lines[bestAt]
		uf := perFile[fl.path]
		if uf == nil {
			uf = &UpstreamFile{Path: fl.path, First: fl.line}
			perFile[fl.path] = uf
		}
		uf.Lines++
		uf.matched = append(uf.matched, fl.line)
	}
	var files []UpstreamFile
	for _, uf := range perFile {
		uf.cluster(2*len(want) + 20)
		files = append(files, *uf)
	}
	sort.Slice(files, func(i, j int) bool {
		if files[i].Lines != files[j].Lines {
			return files[i].Lines > files[j].Lines
		}
		return files[i].Path < files[j].Path
	})
	return files, found
}

// nearestName picks, of a name's places, the one in the file holding most
// matched lines closest to where they stand; else the first.
func nearestName(ats []NameAt, files []UpstreamFile) NameAt {
	best := ats[0]
	if len(files) == 0 {
		return best
	}
	f := files[0]
	dist := func(a NameAt) int {
		switch {
		case a.Path != f.Path:
			return 1 << 30
		case a.Line < f.First:
			return f.First - a.Line
		case a.Line > f.Last && f.Last > 0:
			return a.Line - f.Last
		}
		return 0
	}
	for _, a := range ats[1:] {
		if dist(a) < dist(best) {
			best = a
		}
	}
	return best
}
