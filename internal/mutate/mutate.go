// Package mutate makes mutants of the lines a series adds: one added line
// changed by an operator of a class that matters for inline posting and
// in-capsule data (an SGE's address kind, the inline flag, the guard
// before it, the size requested versus granted, lengths off by one,
// errors ignored). Each mutant is the series with one patch rewritten, so
// the stages judge it as they judge the series: the static checks and a
// boot are the two oracles, and a mutant neither kills shows what neither
// would catch.
//
// Operators work on the C syntax tree of the file after the patch
// (tree-sitter), never on text patterns: an edit is a syntax node lying
// on one added line, replaced by another expression or statement.
package mutate

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	sitter "github.com/tree-sitter/go-tree-sitter"
	tsc "github.com/tree-sitter/tree-sitter-c/bindings/go"

	"github.com/patchctl/patchctl/internal/mailpatch"
)

// Operator classes.
const (
	AddrKind        = "addr-kind"         // an SGE's address: CPU address <-> DMA address
	InlineAlways    = "inline-always"     // the guard before IB_SEND_INLINE replaced by 1
	GuardDropped    = "guard-dropped"     // one conjunct of that guard replaced by 1
	GuardWidened    = "guard-widened"     // a bound in a guard let one more through
	RequestForGrant = "request-for-grant" // the requested size used where the granted one was read
	OffByOne        = "off-by-one"        // a size or count one more or one less
	FlagCleared     = "flag-cleared"      // IB_SEND_INLINE cleared where it was set
	ErrorIgnored    = "error-ignored"     // a failure's value or branch not taken
)

// Operators lists the classes in the order mutants are numbered.
var Operators = []string{AddrKind, InlineAlways, GuardDropped, GuardWidened, RequestForGrant, OffByOne, FlagCleared, ErrorIgnored}

// Mutant is the series with one added line changed.
type Mutant struct {
	ID       string `json:"id"`
	Operator string `json:"operator"`
	// Index is the patch's position in the series (0-based).
	Index  int    `json:"patch"`
	File   string `json:"file"`
	Line   int    `json:"line"` // in the file after the series
	Before string `json:"before"`
	After  string `json:"after"`
	// Why says, in words, what the mutant does.
	Why string `json:"why"`
	// Patch is the series' patch Index with the line changed.
	Patch *mailpatch.Patch `json:"-"`
}

// Diff is the mutant's change to its patch, as a two-line diff.
func (m *Mutant) Diff() string {
	return fmt.Sprintf("%s:%d\n-%s\n+%s\n", m.File, m.Line, m.Before, m.After)
}

// Options bounds the mutants made.
type Options struct {
	// Max caps the mutants (0: no cap); the cap keeps every operator
	// class represented before a class gets its second mutant.
	Max int
	// Operators restricts the classes (nil: all).
	Operators []string
}

// Generate makes the mutants of patches (a series, in order, as
// regenerated for the tree: every hunk applies exactly). read returns a
// file of the tree before the series (fs.ErrNotExist for none).
func Generate(patches []*mailpatch.Patch, read func(rel string) ([]byte, error), o Options) ([]*Mutant, error) {
	want := map[string]bool{}
	for _, op := range o.Operators {
		if !known(op) {
			return nil, fmt.Errorf("unknown mutation operator %q (known: %s)", op, strings.Join(Operators, ", "))
		}
		want[op] = true
	}
	cur := map[string][]byte{}
	get := func(p string) ([]byte, error) {
		if b, ok := cur[p]; ok {
			return b, nil
		}
		return read(p)
	}
	var all []*Mutant
	for i, p := range patches {
		for fi, f := range p.Files {
			if f.IsBinary || f.IsDelete {
				continue
			}
			var before []byte
			if !f.IsNew {
				b, err := get(f.OldName)
				if err != nil {
					return nil, fmt.Errorf("patch %d (%s): %w", i+1, p.SubjectLine(), err)
				}
				before = b
			}
			var after bytes.Buffer
			if err := gitdiff.Apply(&after, bytes.NewReader(before), f); err != nil {
				return nil, fmt.Errorf("patch %d (%s), %s: does not apply exactly (mutants are made of the patches regenerated for the kernel: run patchctl refresh): %w", i+1, p.SubjectLine(), f.NewName, err)
			}
			cur[f.NewName] = after.Bytes()
			if !strings.HasSuffix(f.NewName, ".c") && !strings.HasSuffix(f.NewName, ".h") {
				continue
			}
			for _, e := range edits(after.Bytes(), addedLines(f)) {
				if len(want) > 0 && !want[e.op] {
					continue
				}
				q, err := rewrite(p, fi, e)
				if err != nil {
					return nil, err
				}
				all = append(all, &Mutant{Operator: e.op, Index: i, File: f.NewName, Line: e.line, Before: e.before, After: e.after, Why: e.why, Patch: q})
			}
		}
	}
	all = capByClass(all, o.Max)
	for i, m := range all {
		m.ID = fmt.Sprintf("m%02d", i+1)
	}
	return all, nil
}

func known(op string) bool { return slices.Contains(Operators, op) }

// capByClass keeps at most max mutants, taking each class's first before
// any class's second, and numbers them in operator order.
func capByClass(all []*Mutant, max int) []*Mutant {
	rank := map[string]int{}
	for i, op := range Operators {
		rank[op] = i
	}
	sort.SliceStable(all, func(a, b int) bool { return rank[all[a].Operator] < rank[all[b].Operator] })
	if max <= 0 || len(all) <= max {
		return all
	}
	byClass := map[string][]*Mutant{}
	for _, m := range all {
		byClass[m.Operator] = append(byClass[m.Operator], m)
	}
	var keep []*Mutant
	for round := 0; len(keep) < max; round++ {
		added := false
		for _, op := range Operators {
			if round < len(byClass[op]) && len(keep) < max {
				keep = append(keep, byClass[op][round])
				added = true
			}
		}
		if !added {
			break
		}
	}
	sort.SliceStable(keep, func(a, b int) bool { return rank[keep[a].Operator] < rank[keep[b].Operator] })
	return keep
}

// addedLines maps each added line's number in the new file to its
// fragment and line index.
func addedLines(f *gitdiff.File) map[int][2]int {
	out := map[int][2]int{}
	for fi, fr := range f.TextFragments {
		n := int(fr.NewPosition)
		for li, l := range fr.Lines {
			switch l.Op {
			case gitdiff.OpAdd:
				out[n] = [2]int{fi, li}
				n++
			case gitdiff.OpContext:
				n++
			}
		}
	}
	return out
}

// rewrite returns p with one added line of file fi replaced.
func rewrite(p *mailpatch.Patch, fi int, e edit) (*mailpatch.Patch, error) {
	q := *p
	q.Files = make([]*gitdiff.File, len(p.Files))
	copy(q.Files, p.Files)
	f := *p.Files[fi]
	f.TextFragments = make([]*gitdiff.TextFragment, len(p.Files[fi].TextFragments))
	for i, fr := range p.Files[fi].TextFragments {
		c := *fr
		c.Lines = append([]gitdiff.Line(nil), fr.Lines...)
		f.TextFragments[i] = &c
	}
	fr := f.TextFragments[e.at[0]]
	old := fr.Lines[e.at[1]].Line
	nl := ""
	if strings.HasSuffix(old, "\n") {
		nl = "\n"
	}
	fr.Lines[e.at[1]].Line = e.after + nl
	if err := fr.Validate(); err != nil {
		return nil, fmt.Errorf("mutating %s:%d: %w", f.NewName, e.line, err)
	}
	q.Files[fi] = &f
	var diff strings.Builder
	for _, g := range q.Files {
		diff.WriteString(g.String())
	}
	q.Diff = diff.String()
	return &q, nil
}

var language = sitter.NewLanguage(tsc.Language())

// edit is one mutation of one added line.
type edit struct {
	op, why       string
	line          int    // 1-based in the new file
	at            [2]int // fragment, line index
	before, after string // the whole line, without its newline
}

// source is the new file parsed, with what the operators look up.
type source struct {
	src   []byte
	lines []string // without newlines
	added map[int][2]int
}

func (s *source) text(n *sitter.Node) string { return string(s.src[n.StartByte():n.EndByte()]) }

func (s *source) row(n *sitter.Node) int { return int(n.StartPosition().Row) + 1 }

// onAdded: the node starts and ends on one added line.
func (s *source) onAdded(n *sitter.Node) bool {
	if n == nil || n.StartPosition().Row != n.EndPosition().Row {
		return false
	}
	_, ok := s.added[s.row(n)]
	return ok
}

// replace makes the edit that puts repl in n's place on its line.
func (s *source) replace(op, why string, n *sitter.Node, repl string) (edit, bool) {
	line := s.row(n)
	at, ok := s.added[line]
	if !ok || line-1 >= len(s.lines) {
		return edit{}, false
	}
	before := s.lines[line-1]
	c0, c1 := int(n.StartPosition().Column), int(n.EndPosition().Column)
	if c1 > len(before) || c0 > c1 {
		return edit{}, false
	}
	after := before[:c0] + repl + before[c1:]
	if after == before {
		return edit{}, false
	}
	return edit{op: op, why: why, line: line, at: at, before: before, after: after}, true
}

func edits(src []byte, added map[int][2]int) []edit {
	if len(added) == 0 {
		return nil
	}
	p := sitter.NewParser()
	defer p.Close()
	if err := p.SetLanguage(language); err != nil {
		return nil
	}
	tree := p.Parse(src, nil)
	if tree == nil {
		return nil
	}
	defer tree.Close()
	s := &source{src: src, lines: strings.Split(strings.TrimSuffix(string(src), "\n"), "\n"), added: added}
	var out []edit
	seen := map[string]bool{}
	add := func(e edit, ok bool) {
		key := fmt.Sprint(e.line, "\x00", e.after)
		if ok && !seen[key] {
			seen[key] = true
			out = append(out, e)
		}
	}
	var walk func(n *sitter.Node, fn *sitter.Node)
	walk = func(n *sitter.Node, fn *sitter.Node) {
		if n.Kind() == "function_definition" {
			fn = n
		}
		for _, e := range s.mutations(n, fn) {
			add(e, true)
		}
		for i := uint(0); i < n.NamedChildCount(); i++ {
			walk(n.NamedChild(i), fn)
		}
	}
	walk(tree.RootNode(), nil)
	return out
}
