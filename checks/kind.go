package checks

import (
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// Kind is what an address value is.
type Kind int

const (
	Unknown Kind = iota // not shown to be either
	Virt                // a kernel virtual address: a pointer made an integer
	DMA                 // a DMA (bus) address
)

func (k Kind) String() string {
	return [...]string{"unknown", "virtual", "DMA"}[k]
}

// dmaFuncs return DMA addresses.
var dmaFuncs = map[string]bool{
	"ib_dma_map_single": true, "ib_dma_map_page": true, "ib_dma_map_sg": true, "ib_dma_map_sg_attrs": true,
	"ib_dma_map_sgtable_attrs": true, "ib_sg_dma_address": true, "sg_dma_address": true,
	"dma_map_single": true, "dma_map_single_attrs": true, "dma_map_page": true, "dma_map_page_attrs": true,
	"dma_map_sg": true, "dma_map_resource": true, "dma_map_sgtable": true, "virt_to_phys": true, "page_to_phys": true,
	"sg_phys": true,
}

// virtFuncs return kernel virtual addresses (pointers).
var virtFuncs = map[string]bool{"sg_virt": true, "page_address": true, "kmap": true, "kmap_local_page": true,
	"phys_to_virt": true, "lowmem_page_address": true}

// passThrough functions keep their argument's kind.
var passThrough = map[string]bool{"cpu_to_le64": true, "le64_to_cpu": true, "cpu_to_be64": true, "lower_32_bits": true,
	"upper_32_bits": true, "ALIGN": true, "PTR_ALIGN": true, "READ_ONCE": true}

var intTypes = map[string]bool{"uintptr_t": true, "u64": true, "__u64": true, "uint64_t": true, "unsigned long": true,
	"unsigned long long": true, "unsigned int": true, "u32": true, "__u32": true, "size_t": true, "long": true}

// val is an abstract value: a kind, or a choice made by a condition that a
// path may decide later (c ? a : b).
type val struct {
	kind Kind
	cond string
	t, f *val
	why  string // the expression and its line, for evidence
	line int
}

func leaf(k Kind, why string, line int) *val { return &val{kind: k, why: why, line: line} }

// resolve decides conditions known on the path, joining the rest: DMA on
// any branch is DMA, virtual needs every branch virtual.
func (v *val) resolve(facts map[string]bool) (Kind, *val) {
	if v.cond == "" {
		return v.kind, v
	}
	if b, ok := facts[v.cond]; ok {
		if b {
			return v.t.resolve(facts)
		}
		return v.f.resolve(facts)
	}
	kt, wt := v.t.resolve(facts)
	kf, wf := v.f.resolve(facts)
	switch {
	case kt == DMA:
		return DMA, wt
	case kf == DMA:
		return DMA, wf
	case kt == Virt && kf == Virt:
		return Virt, wt
	case kt != Virt:
		return Unknown, wt
	}
	return Unknown, wf
}

// combine applies op to the leaves of a and b (for arithmetic).
func combine(a, b *val, op func(x, y *val) *val) *val {
	if a.cond != "" {
		return &val{cond: a.cond, t: combine(a.t, b, op), f: combine(a.f, b, op), line: a.line, why: a.why}
	}
	if b.cond != "" {
		return &val{cond: b.cond, t: combine(a, b.t, op), f: combine(a, b.f, op), line: b.line, why: b.why}
	}
	return op(a, b)
}

func mapLeaves(v *val, fn func(*val) *val) *val {
	if v.cond != "" {
		return &val{cond: v.cond, t: mapLeaves(v.t, fn), f: mapLeaves(v.f, fn), line: v.line, why: v.why}
	}
	return fn(v)
}

// scope is what an expression's kind depends on: the path's locals and
// the facts learned across files.
type scope struct {
	f      *file
	locals map[string]*val   // local variables assigned on this path
	types  map[string]string // declared types of locals and parameters
	alias  map[string]string // local pointers and what they point at
	places map[string]*val   // fields assigned on this path
	facts  *Facts
}

func condKey(f *file, n *sitter.Node) string {
	return strings.Join(strings.Fields(f.text(n)), "")
}

// valueOf abstracts an expression.
func (s *scope) valueOf(n *sitter.Node) *val {
	f := s.f
	why, line := strings.Join(strings.Fields(f.text(n)), " "), f.line(n)
	switch n.Kind() {
	case "parenthesized_expression":
		if c := named(n); len(c) == 1 {
			return s.valueOf(c[0])
		}
	case "conditional_expression":
		cond := n.ChildByFieldName("condition")
		return &val{cond: condKey(f, stripParens(cond)), t: s.valueOf(n.ChildByFieldName("consequence")), f: s.valueOf(n.ChildByFieldName("alternative")), why: why, line: line}
	case "cast_expression":
		inner := s.valueOf(n.ChildByFieldName("value"))
		typ := strings.Join(strings.Fields(f.text(n.ChildByFieldName("type"))), " ")
		literal := n.ChildByFieldName("value").Kind() == "number_literal"
		return mapLeaves(inner, func(l *val) *val {
			if l.kind == Unknown && intTypes[typ] && !literal {
				// A pointer converted to an integer; a cast of a DMA
				// address stays DMA.
				return leaf(Virt, why, line)
			}
			return &val{kind: l.kind, why: l.why, line: l.line}
		})
	case "pointer_expression":
		if f.text(n.ChildByFieldName("operator")) == "&" {
			return leaf(Virt, why, line)
		}
	case "binary_expression":
		op := f.text(n.ChildByFieldName("operator"))
		if op == "+" || op == "-" || op == "|" {
			a, b := s.valueOf(n.ChildByFieldName("left")), s.valueOf(n.ChildByFieldName("right"))
			return combine(a, b, func(x, y *val) *val {
				switch {
				case x.kind == DMA || y.kind == DMA:
					w := x
					if y.kind == DMA {
						w = y
					}
					return leaf(DMA, w.why, w.line)
				case x.kind == Virt || y.kind == Virt:
					w := x
					if y.kind == Virt {
						w = y
					}
					return leaf(Virt, w.why, w.line)
				}
				return leaf(Unknown, why, line)
			})
		}
	case "call_expression":
		name := f.text(n.ChildByFieldName("function"))
		args := named(n.ChildByFieldName("arguments"))
		switch {
		case dmaFuncs[name]:
			return leaf(DMA, why, line)
		case virtFuncs[name]:
			return leaf(Virt, why, line)
		case passThrough[name] && len(args) > 0:
			return s.valueOf(args[0])
		}
	case "identifier":
		name := f.text(n)
		if v, ok := s.locals[name]; ok {
			return v
		}
		if t := s.types[name]; strings.Contains(t, "dma_addr_t") {
			return leaf(DMA, why+" (declared dma_addr_t)", line)
		}
	case "field_expression", "subscript_expression":
		p := placeOf(f, n, s.alias)
		if v, ok := s.places[p]; ok {
			return v
		}
		if k, w := s.facts.fieldKind(p); k != Unknown {
			return leaf(k, why+" ("+w+")", line)
		}
	}
	return leaf(Unknown, why, line)
}

func stripParens(n *sitter.Node) *sitter.Node {
	for n != nil && n.Kind() == "parenthesized_expression" {
		c := named(n)
		if len(c) != 1 {
			break
		}
		n = c[0]
	}
	return n
}

// mentions reports whether expression n names ident (not as ~ident when
// clear is false).
func mentions(f *file, n *sitter.Node, ident string) bool {
	found := false
	walk(n, func(c *sitter.Node) bool {
		if c.Kind() == "identifier" && f.text(c) == ident {
			found = true
		}
		return !found
	})
	return found
}
