package engine

import (
	"bytes"
	"slices"
	"sort"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// Kind is what an address value is.
type Kind int

const (
	Unknown Kind = iota // not shown to be any of the others
	Virt                // a kernel virtual address: a pointer made an integer
	DMA                 // a DMA (bus) address
	Phys                // a physical address (__pa, virt_to_phys)
)

func (k Kind) String() string {
	return [...]string{"unknown", "virtual", "DMA", "physical"}[k]
}

// dmaFuncs return DMA addresses.
var dmaFuncs = map[string]bool{
	"ib_dma_map_single": true, "ib_dma_map_page": true, "ib_dma_map_sg": true, "ib_dma_map_sg_attrs": true,
	"ib_dma_map_sgtable_attrs": true, "ib_sg_dma_address": true, "sg_dma_address": true,
	"dma_map_single": true, "dma_map_single_attrs": true, "dma_map_page": true, "dma_map_page_attrs": true,
	"dma_map_sg": true, "dma_map_resource": true, "dma_map_sgtable": true,
}

// physFuncs return physical addresses.
var physFuncs = map[string]bool{"virt_to_phys": true, "__pa": true, "page_to_phys": true, "sg_phys": true,
	"__pa_symbol": true, "PFN_PHYS": true, "pfn_to_phys": true}

// virtFuncs return kernel virtual addresses (pointers).
var virtFuncs = map[string]bool{"sg_virt": true, "page_address": true, "kmap": true, "kmap_local_page": true,
	"phys_to_virt": true, "lowmem_page_address": true, "__va": true, "kmap_atomic": true}

// PassThrough functions keep their argument's kind.
var PassThrough = map[string]bool{"cpu_to_le64": true, "le64_to_cpu": true, "cpu_to_be64": true, "lower_32_bits": true,
	"upper_32_bits": true, "ALIGN": true, "PTR_ALIGN": true, "READ_ONCE": true, "likely": true, "unlikely": true}

// Val is an abstract value: an address kind and, for flags, whether the
// IB_SEND_INLINE bit is set (flagOn), clear (flagOff) or not known
// (flagUnset); or a choice made by a condition that a path may decide
// later (c ? a : b). why, line and file are its provenance: the
// expression it came from.
type Val struct {
	kind Kind
	inl  inline
	Cond string
	t, f *Val
	Why  string
	Line int
	File string // "" = the function's own file
	memo string
}

func leaf(k Kind, why string, line int) *Val { return &Val{kind: k, Why: why, Line: line} }

func flagVal(i inline, why string, line int) *Val { return &Val{inl: i, Why: why, Line: line} }

// key is the value's identity for merging states.
func (v *Val) key() string {
	if v == nil {
		return "-"
	}
	if v.memo == "" {
		if v.Cond != "" {
			v.memo = "(" + v.Cond + "?" + v.t.key() + ":" + v.f.key() + ")"
		} else {
			v.memo = v.kind.String() + "/" + string(rune('0'+v.inl)) + "/" + v.Why + "@" + v.File + ":" + Itoa(v.Line)
		}
	}
	return v.memo
}

// Resolve decides conditions known on the path, joining the rest: DMA on
// any branch is DMA (then physical), virtual needs every branch virtual.
func (v *Val) Resolve(facts map[string]bool) (Kind, *Val) {
	if v.Cond == "" {
		return v.kind, v
	}
	if b, ok := facts[v.Cond]; ok {
		if b {
			return v.t.Resolve(facts)
		}
		return v.f.Resolve(facts)
	}
	kt, wt := v.t.Resolve(facts)
	kf, wf := v.f.Resolve(facts)
	switch {
	case kt == DMA:
		return DMA, wt
	case kf == DMA:
		return DMA, wf
	case kt == Phys:
		return Phys, wt
	case kf == Phys:
		return Phys, wf
	case kt == Virt && kf == Virt:
		return Virt, wt
	case kt != Virt:
		return Unknown, wt
	}
	return Unknown, wf
}

// Undecided lists the conditions a value's choices depend on that facts
// leave open, outermost first.
func (v *Val) Undecided(facts map[string]bool) []string {
	if v == nil || v.Cond == "" {
		return nil
	}
	if b, ok := facts[v.Cond]; ok {
		if b {
			return v.t.Undecided(facts)
		}
		return v.f.Undecided(facts)
	}
	out := []string{v.Cond}
	for _, k := range append(v.t.Undecided(facts), v.f.Undecided(facts)...) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// FlagsOn resolves a flags value on a path: whether IB_SEND_INLINE is
// set, and the leaf that says so.
func (v *Val) FlagsOn(facts map[string]bool) (inline, *Val) {
	if v.Cond == "" {
		return v.inl, v
	}
	if b, ok := facts[v.Cond]; ok {
		if b {
			return v.t.FlagsOn(facts)
		}
		return v.f.FlagsOn(facts)
	}
	it, wt := v.t.FlagsOn(facts)
	iff, wf := v.f.FlagsOn(facts)
	switch {
	case it == FlagOn:
		return FlagOn, wt
	case iff == FlagOn:
		return FlagOn, wf
	case it == FlagOff && iff == FlagOff:
		return FlagOff, wt
	}
	return FlagUnset, wt
}

func isOn(v *Val) bool {
	i, _ := v.FlagsOn(nil)
	return i == FlagOn && allOn(v)
}

func allOn(v *Val) bool {
	if v.Cond != "" {
		return allOn(v.t) && allOn(v.f)
	}
	return v.inl == FlagOn
}

func maybeOn(v *Val) bool {
	i, _ := v.FlagsOn(nil)
	return i == FlagOn
}

// maxLeaves bounds a value's choices: past it the choices are joined
// (the widening that lets loops that or into a value reach a fixed
// point).
const maxLeaves = 8

func leaves(v *Val) int {
	if v.Cond == "" {
		return 1
	}
	return leaves(v.t) + leaves(v.f)
}

// widen joins a value with too many choices into one leaf: its kind
// as resolve joins it, its flag set when any choice sets it.
func widen(v *Val) *Val {
	if v == nil || v.Cond == "" || leaves(v) <= maxLeaves {
		return v
	}
	k, l := v.Resolve(nil)
	i, _ := v.FlagsOn(nil)
	return &Val{kind: k, inl: i, Why: l.Why, Line: l.Line, File: l.File}
}

// combine applies op to the leaves of a and b.
func combine(a, b *Val, op func(x, y *Val) *Val) *Val {
	return widen(combine1(widen(a), widen(b), op))
}

func combine1(a, b *Val, op func(x, y *Val) *Val) *Val {
	if a.Cond != "" {
		return &Val{Cond: a.Cond, t: combine1(a.t, b, op), f: combine1(a.f, b, op), Line: a.Line, Why: a.Why}
	}
	if b.Cond != "" {
		return &Val{Cond: b.Cond, t: combine1(a, b.t, op), f: combine1(a, b.f, op), Line: b.Line, Why: b.Why}
	}
	return op(a, b)
}

func mapLeaves(v *Val, fn func(*Val) *Val) *Val {
	if v.Cond != "" {
		return &Val{Cond: v.Cond, t: mapLeaves(v.t, fn), f: mapLeaves(v.f, fn), Line: v.Line, Why: v.Why}
	}
	return fn(v)
}

// binop is an operator on two leaves: address arithmetic keeps the kind
// (DMA, then physical, then virtual wins); | and & on flags work on the
// IB_SEND_INLINE bit.
func binop(op string, x, y *Val) *Val {
	op = strings.TrimSuffix(op, "=")
	w := x
	var k Kind
	switch op {
	case "+", "-", "|", "^", "&":
		switch {
		case x.kind == DMA || y.kind == DMA:
			k = DMA
			if y.kind == DMA {
				w = y
			}
		case x.kind == Phys || y.kind == Phys:
			k = Phys
			if y.kind == Phys {
				w = y
			}
		case x.kind == Virt || y.kind == Virt:
			k = Virt
			if y.kind == Virt {
				w = y
			}
		}
	}
	in := FlagUnset
	switch op {
	case "|":
		switch {
		case x.inl == FlagOn || y.inl == FlagOn:
			in = FlagOn
			if y.inl == FlagOn {
				w = y
			}
		case x.inl == FlagOff && y.inl == FlagOff:
			in = FlagOff
		}
	case "&":
		switch {
		case x.inl == FlagOff || y.inl == FlagOff:
			in = FlagOff
			if y.inl == FlagOff {
				w = y
			}
		case x.inl == FlagOn && y.inl == FlagOn:
			in = FlagOn
		}
	case "^":
		if x.inl != FlagUnset && y.inl != FlagUnset {
			in = FlagOff
			if x.inl != y.inl {
				in = FlagOn
			}
		}
	default:
		if x.inl == FlagOff && y.inl == FlagOff {
			in = FlagOff
		}
	}
	return &Val{kind: k, inl: in, Why: w.Why, Line: w.Line, File: w.File}
}

// compound applies an assignment operator (|=, &=, +=) to old and v.
func compound(op string, old, v *Val) *Val {
	if op == "=" {
		return v
	}
	return combine(old, v, func(x, y *Val) *Val { return binop(op, x, y) })
}

// scope is what an expression's value depends on: the path's locals and
// places and the facts learned across files.
type scope struct {
	f      *File
	locals map[string]*Val   // local variables assigned on this path
	types  map[string]string // declared types of locals and parameters
	ptrs   map[string]bool   // declared pointers or arrays
	// ptrElems: locals whose elements are pointers
	ptrElems map[string]bool
	alias    map[string]string // local pointers and what they point at
	places   map[string]*Val   // fields assigned on this path
	flags    map[string]*Val   // send_flags assigned on this path
	facts    *Facts
	st       *State
	in       *Interp
}

// CondKey is an expression's text as a key: without white space, and
// without the parentheses a macro puts around its arguments where they
// change nothing ((len) <= (ic)->max is len <= ic->max), so that a test
// spelled through a macro and the same test spelled out are one fact.
func CondKey(f *File, n *sitter.Node) string {
	for n != nil && KindOf(n) == "parenthesized_expression" {
		k := Named(n)
		if len(k) != 1 || !atomicKinds[KindOf(k[0])] {
			break
		}
		n = k[0]
	}
	if n == nil {
		return ""
	}
	src := f.Src[n.StartByte():n.EndByte()]
	if !bytes.Contains(src, []byte("(")) {
		return strings.Join(strings.Fields(string(src)), "")
	}
	var skip []uint
	Walk(n, func(c *sitter.Node) bool {
		if KindOf(c) == "parenthesized_expression" && !c.Equals(*n) {
			if k := Named(c); len(k) == 1 && atomicKinds[KindOf(k[0])] {
				skip = append(skip, c.StartByte(), c.EndByte()-1)
			}
		}
		return true
	})
	if len(skip) == 0 {
		return strings.Join(strings.Fields(string(src)), "")
	}
	var b strings.Builder
	j := 0
	sort.Slice(skip, func(a, b int) bool { return skip[a] < skip[b] })
	for i := n.StartByte(); i < n.EndByte(); i++ {
		if j < len(skip) && skip[j] == i {
			j++
			continue
		}
		c := f.Src[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// atomicKinds are the expressions a parenthesis around changes nothing.
var atomicKinds = map[string]bool{"identifier": true, "field_expression": true, "call_expression": true,
	"subscript_expression": true, "sizeof_expression": true, "number_literal": true, "parenthesized_expression": true}

// isPointer reports whether an expression is known to be a pointer (so
// casting it to an integer makes a kernel virtual address): a declared
// pointer or array, a member declared as one in the module, &x, a
// string.
func (s *scope) isPointer(n *sitter.Node) bool {
	n = StripParens(n)
	if n == nil {
		return false
	}
	f := s.f
	switch KindOf(n) {
	case "identifier":
		return s.ptrs[f.Text(n)]
	case "field_expression":
		return s.facts.pointerMember(f.Text(n.ChildByFieldName("field")))
	case "pointer_expression":
		return f.Text(n.ChildByFieldName("operator")) == "&"
	case "string_literal", "concatenated_string":
		return true
	case "cast_expression":
		t := f.Text(n.ChildByFieldName("type"))
		return strings.Contains(t, "*") || s.isPointer(n.ChildByFieldName("value"))
	case "binary_expression":
		op := f.Text(n.ChildByFieldName("operator"))
		return (op == "+" || op == "-") && (s.isPointer(n.ChildByFieldName("left")) || s.isPointer(n.ChildByFieldName("right")) && op == "+")
	case "call_expression":
		name := f.Text(n.ChildByFieldName("function"))
		return virtFuncs[name] || s.facts.retPtr[name]
	case "subscript_expression":
		// An element of an array of pointers (void *bufs[8]) or of a
		// pointer to pointers.
		a := StripParens(n.ChildByFieldName("argument"))
		switch {
		case a == nil:
		case KindOf(a) == "identifier":
			return s.ptrElems[f.Text(a)]
		case KindOf(a) == "field_expression":
			return s.facts.ptrElems[f.Text(a.ChildByFieldName("field"))]
		}
		return false
	}
	return false
}

// valueOf abstracts an expression. Each expression kind has its own
// step below, which answers ok=false when it knows nothing: the value is
// then Unknown, described by the expression's text.
func (s *scope) valueOf(n *sitter.Node) *Val {
	if n == nil {
		return leaf(Unknown, "nothing", 0)
	}
	if s.in != nil {
		s.in.Work++
		if s.in.Work > MaxWork {
			// Past the work budget: the run stops after this step
			// and says so; until then nothing more is evaluated.
			return leaf(Unknown, "the analysis's work budget was spent", 0)
		}
	}
	f := s.f
	// Only the first 120 characters are kept: the text is cut before it
	// is split, so a long expression costs its prefix, not its length
	// at every level of it.
	src := f.Src[n.StartByte():n.EndByte()]
	if len(src) > 480 {
		src = src[:480]
	}
	why, line := strings.Join(strings.Fields(string(src)), " "), f.Line(n)
	if len(why) > 120 {
		why = why[:117] + "..."
	}
	var v *Val
	ok := true
	switch KindOf(n) {
	case "parenthesized_expression":
		v, ok = s.parenValue(n)
	case "conditional_expression":
		v = s.conditionalValue(n, why, line)
	case "cast_expression":
		v = s.castValue(n, why, line)
	case "pointer_expression":
		v, ok = leaf(Virt, why, line), f.Text(n.ChildByFieldName("operator")) == "&"
	case "unary_expression":
		v = s.unaryValue(n, why, line)
	case "binary_expression":
		v = s.binaryValue(n, why, line)
	case "number_literal", "char_literal", "true", "false", "null", "sizeof_expression":
		v = flagVal(FlagOff, why, line)
	case "string_literal", "concatenated_string":
		v = &Val{kind: Virt, inl: FlagOff, Why: why, Line: line}
	case "call_expression":
		v, ok = s.callValue(n, why, line)
	case "identifier":
		v, ok = s.identValue(n, why, line)
	case "field_expression", "subscript_expression":
		v, ok = s.placeValue(n, why, line)
	default:
		ok = false
	}
	if !ok {
		return leaf(Unknown, why, line)
	}
	return v
}

// parenValue: (e) is e, and a GNU statement expression ({ ...; e; }) is
// its last expression.
func (s *scope) parenValue(n *sitter.Node) (*Val, bool) {
	c := Named(n)
	if len(c) != 1 {
		return nil, false
	}
	if KindOf(c[0]) != "compound_statement" {
		return s.valueOf(c[0]), true
	}
	kids := Named(c[0])
	if len(kids) > 0 && KindOf(kids[len(kids)-1]) == "expression_statement" {
		if e := Named(kids[len(kids)-1]); len(e) == 1 {
			return s.valueOf(e[0]), true
		}
	}
	return nil, false
}

// conditionalValue: c ? t : e is the arm the path's facts decide, or
// both under the condition.
func (s *scope) conditionalValue(n *sitter.Node, why string, line int) *Val {
	f := s.f
	cond := stripCond(f, n.ChildByFieldName("condition"))
	// GNU a ?: b has no consequence: it is a when a is nonzero.
	cons := n.ChildByFieldName("consequence")
	if cons == nil {
		cons = cond
	}
	t, e := s.valueOf(cons), s.valueOf(n.ChildByFieldName("alternative"))
	k, neg := factKey(f, cond)
	if x, set, ok := s.inlineBitTest(cond); ok {
		// (flags & IB_SEND_INLINE) ? va : dma follows the bit: each
		// choice of the flags' value that sets it takes one arm, each
		// that clears it the other, and only a choice that leaves it
		// unknown keeps the test as a condition.
		on, off := t, e
		if !set {
			on, off = e, t
		}
		und := &Val{Cond: k, t: t, f: e, Why: why, Line: line}
		if neg {
			und = &Val{Cond: k, t: e, f: t, Why: why, Line: line}
		}
		if s.st != nil {
			if b, ok := s.st.Facts[k]; ok {
				und = t
				if b == neg {
					und = e
				}
			}
		}
		return widen(mapLeaves(s.valueOf(x), func(l *Val) *Val {
			switch l.inl {
			case FlagOn:
				return on
			case FlagOff:
				return off
			}
			return und
		}))
	}
	if neg {
		t, e = e, t
	}
	if s.st != nil {
		if b, ok := s.st.Facts[k]; ok {
			if b {
				return t
			}
			return e
		}
	}
	return widen(&Val{Cond: k, t: t, f: e, Why: why, Line: line})
}

// inlineBitTest recognises a test of the IB_SEND_INLINE bit of a flags
// expression (flags & IB_SEND_INLINE, its negation, a comparison with
// 0): the flags
// expression, and whether the test is true when the bit is set.
func (s *scope) inlineBitTest(n *sitter.Node) (*sitter.Node, bool, bool) {
	f := s.f
	n = stripCond(f, n)
	if n == nil {
		return nil, false, false
	}
	switch KindOf(n) {
	case "unary_expression":
		if f.Text(n.ChildByFieldName("operator")) == "!" {
			x, set, ok := s.inlineBitTest(n.ChildByFieldName("argument"))
			return x, !set, ok
		}
	case "binary_expression":
		l, r := StripParens(n.ChildByFieldName("left")), StripParens(n.ChildByFieldName("right"))
		switch f.Text(n.ChildByFieldName("operator")) {
		case "&":
			if s.isInlineFlag(r) {
				return l, true, l != nil
			}
			if s.isInlineFlag(l) {
				return r, true, r != nil
			}
		case "==", "!=":
			if r != nil && KindOf(r) == "number_literal" && f.Text(r) == "0" {
				x, set, ok := s.inlineBitTest(l)
				return x, set == (f.Text(n.ChildByFieldName("operator")) == "!="), ok
			}
		}
	}
	return nil, false, false
}

// isInlineFlag: IB_SEND_INLINE itself (a mask with other bits tests
// those too).
func (s *scope) isInlineFlag(n *sitter.Node) bool {
	return n != nil && KindOf(n) == "identifier" && s.f.Text(n) == "IB_SEND_INLINE"
}

// restrict is v with the choices the facts decide made.
func restrict(v *Val, facts map[string]bool) *Val {
	if v == nil || v.Cond == "" {
		return v
	}
	if b, ok := facts[v.Cond]; ok {
		if b {
			return restrict(v.t, facts)
		}
		return restrict(v.f, facts)
	}
	t, f := restrict(v.t, facts), restrict(v.f, facts)
	if t == v.t && f == v.f {
		return v
	}
	return &Val{Cond: v.Cond, t: t, f: f, Why: v.Why, Line: v.Line, File: v.File}
}

// narrowFlag keeps a path on which flags value v has the IB_SEND_INLINE
// bit set (on) or clear: false when no choice of v the facts leave open
// does; otherwise the conditions of v that only one side's choices
// satisfy become facts of the path (v = c ? IB_SEND_INLINE : 0 tested
// set makes c true).
func narrowFlag(v *Val, on bool, facts map[string]bool) bool {
	if v == nil {
		return true
	}
	if v.Cond == "" {
		return v.inl == FlagUnset || (v.inl == FlagOn) == on
	}
	if b, ok := facts[v.Cond]; ok {
		if b {
			return narrowFlag(v.t, on, facts)
		}
		return narrowFlag(v.f, on, facts)
	}
	tOK, fOK := flagPossible(v.t, on, facts), flagPossible(v.f, on, facts)
	switch {
	case tOK && !fOK:
		facts[v.Cond] = true
		return narrowFlag(v.t, on, facts)
	case fOK && !tOK:
		facts[v.Cond] = false
		return narrowFlag(v.f, on, facts)
	}
	return tOK
}

// flagPossible: some choice of v the facts leave open has the bit set
// (on) or clear.
func flagPossible(v *Val, on bool, facts map[string]bool) bool {
	if v.Cond == "" {
		return v.inl == FlagUnset || (v.inl == FlagOn) == on
	}
	if b, ok := facts[v.Cond]; ok {
		if b {
			return flagPossible(v.t, on, facts)
		}
		return flagPossible(v.f, on, facts)
	}
	return flagPossible(v.t, on, facts) || flagPossible(v.f, on, facts)
}

// castValue: a cast keeps what the value is; a pointer cast to an
// integer is a virtual address.
func (s *scope) castValue(n *sitter.Node, why string, line int) *Val {
	v := n.ChildByFieldName("value")
	inner := s.valueOf(v)
	// A cast to uintptr_t (or intptr_t) is the kernel's way of making a
	// pointer an integer ((u64)(uintptr_t)iu->buf): of a value the
	// analysis cannot place, it says the value is a pointer. A known
	// DMA or physical address keeps its kind below.
	t := strings.Join(strings.Fields(s.f.Text(n.ChildByFieldName("type"))), " ")
	ptr := t == "uintptr_t" || t == "intptr_t" || s.isPointer(v)
	return mapLeaves(inner, func(l *Val) *Val {
		if l.kind == Unknown && ptr {
			// A pointer converted to an integer.
			return &Val{kind: Virt, inl: l.inl, Why: why, Line: line}
		}
		// A cast keeps what the value is, and proves nothing
		// about an unknown one.
		return &Val{kind: l.kind, inl: l.inl, Why: l.Why, Line: l.Line, File: l.File}
	})
}

// unaryValue: ~ flips the inline bit (a mask that clears it); any other
// unary operator yields a plain number.
func (s *scope) unaryValue(n *sitter.Node, why string, line int) *Val {
	op := s.f.Text(n.ChildByFieldName("operator"))
	a := s.valueOf(n.ChildByFieldName("argument"))
	if op != "~" {
		return flagVal(FlagOff, why, line)
	}
	return mapLeaves(a, func(l *Val) *Val {
		i := FlagUnset
		switch l.inl {
		case FlagOn:
			i = FlagOff
		case FlagOff:
			i = FlagOn
		}
		return &Val{inl: i, Why: l.Why, Line: l.Line, File: l.File}
	})
}

// binaryValue: arithmetic and bit operators combine their operands'
// values; a comparison is 0 or 1.
func (s *scope) binaryValue(n *sitter.Node, why string, line int) *Val {
	op := s.f.Text(n.ChildByFieldName("operator"))
	if op == "&" && isTypeName(s.f, n.ChildByFieldName("left")) {
		// (u64)&x, parsed without knowing u64 is a type as
		// (u64) & x: a pointer made an integer.
		return leaf(Virt, why, line)
	}
	switch op {
	case "+", "-", "|", "&", "^":
		a, b := s.valueOf(n.ChildByFieldName("left")), s.valueOf(n.ChildByFieldName("right"))
		return combine(a, b, func(x, y *Val) *Val { return binop(op, x, y) })
	}
	return flagVal(FlagOff, why, line) // a comparison: 0 or 1
}

// callValue: the address kinds of the mapping and address functions,
// pass-through helpers, and the summaries of the scope's functions
// (their return value with its condition on the arguments).
func (s *scope) callValue(n *sitter.Node, why string, line int) (*Val, bool) {
	f := s.f
	name := f.Text(n.ChildByFieldName("function"))
	args := Named(n.ChildByFieldName("arguments"))
	switch {
	case dmaFuncs[name]:
		return leaf(DMA, why, line), true
	case physFuncs[name]:
		return leaf(Phys, why, line), true
	case virtFuncs[name]:
		return leaf(Virt, why, line), true
	case PassThrough[name] && len(args) > 0:
		return s.valueOf(args[0]), true
	}
	if sum := s.facts.Summary(name); sum != nil && sum.ret != nil {
		return s.summaryReturn(sum, name, args, why, line), true
	}
	if k, w := s.facts.returnKind(name); k != Unknown {
		return leaf(k, why+" ("+w+")", line), true
	}
	return nil, false
}

// summaryReturn is what a call of a summarised function returns, its
// condition on the parameters put in terms of the call's arguments and
// decided by the path's facts where they can.
func (s *scope) summaryReturn(sum *summary, name string, args []*sitter.Node, why string, line int) *Val {
	v := mapLeaves(sum.ret, func(l *Val) *Val {
		return &Val{kind: l.kind, inl: l.inl, Why: why + " (" + name + "() returns " + l.Why + ")", Line: line}
	})
	if v.Cond == "" {
		return v
	}
	var keys []string
	for _, a := range args {
		keys = append(keys, CondKey(s.f, a))
	}
	v = &Val{Cond: substParams(v.Cond, sum.params, keys), t: v.t, f: v.f, Why: why, Line: line}
	if s.st != nil {
		if b, ok := s.st.Facts[v.Cond]; ok {
			if b {
				return v.t
			}
			return v.f
		}
	}
	return v
}

// identValue: IB_SEND_INLINE and the macros defined with it, locals,
// variables declared with an address type, and upper-case constants.
func (s *scope) identValue(n *sitter.Node, why string, line int) (*Val, bool) {
	name := s.f.Text(n)
	if name == "IB_SEND_INLINE" {
		return flagVal(FlagOn, why, line), true
	}
	if w, ok := s.facts.flagMacros[name]; ok {
		return flagVal(FlagOn, why+" (defined with IB_SEND_INLINE at "+w+")", line), true
	}
	if v, ok := s.locals[name]; ok {
		return v, true
	}
	if t := s.types[name]; strings.Contains(t, "dma_addr_t") {
		return leaf(DMA, why+" (declared dma_addr_t)", line), true
	} else if t == "phys_addr_t" {
		return leaf(Phys, why+" (declared phys_addr_t)", line), true
	}
	if _, ok := s.types[name]; !ok && strings.ToUpper(name) == name {
		return flagVal(FlagOff, why, line), true // a constant
	}
	return nil, false
}

// placeValue: a field or an element holds what the path stored there
// (a request's send_flags, an SGE's address through its aliases), or
// what the scope's functions store into that field.
func (s *scope) placeValue(n *sitter.Node, why string, line int) (*Val, bool) {
	p := PlaceOf(s.f, n, s.alias)
	if wr, m := wrMember(p); m == "send_flags" && s.flags != nil {
		if v, ok := s.flags[wr]; ok {
			return v, true
		}
	}
	if v, ok := s.places[p]; ok {
		return v, true
	}
	if v, ok := s.places[sgeAlias(p)]; ok {
		return v, true
	}
	if k, w := s.facts.FieldKind(p); k != Unknown {
		return leaf(k, why+" ("+w+")", line), true
	}
	if w, ok := s.facts.FlagField(p); ok {
		return flagVal(FlagOn, why+" (IB_SEND_INLINE stored at "+w+")", line), true
	}
	if set, clear, ok := s.facts.FlagChoice(p); ok {
		// Set or not as the module decided where it stored it: a
		// choice each path may decide (if (queue->inline_flags)).
		return &Val{Cond: CondKey(s.f, n), t: flagVal(FlagOn, why+" (IB_SEND_INLINE stored at "+set+")", line),
			f: flagVal(FlagOff, why+" (0 stored at "+clear+")", line), Why: why, Line: line}, true
	}
	return nil, false
}

// intTypes are the integer type names a pointer is cast to.
var intTypes = map[string]bool{"u64": true, "u32": true, "__u64": true, "uintptr_t": true, "unsigned long": true, "long": true,
	"unsigned long long": true, "dma_addr_t": true, "__le64": true, "__be64": true, "s64": true, "phys_addr_t": true, "size_t": true}

// isTypeName reports whether n is a parenthesized integer type name (the
// left of (u64)&x, which the parser, not knowing u64 is a type, reads as
// a bitwise and).
func isTypeName(f *File, n *sitter.Node) bool {
	if n != nil && KindOf(n) == "call_expression" {
		// (u64)(uintptr_t)&x: the parser reads the two casts as a
		// call of (u64) with the argument uintptr_t.
		args := Named(n.ChildByFieldName("arguments"))
		return isTypeName(f, n.ChildByFieldName("function")) && len(args) == 1 &&
			KindOf(args[0]) == "identifier" && intTypes[f.Text(args[0])]
	}
	if n == nil || KindOf(n) != "parenthesized_expression" {
		return false
	}
	c := Named(n)
	if len(c) != 1 || KindOf(c[0]) != "identifier" {
		return false
	}
	return intTypes[f.Text(c[0])]
}

// sgeAlias is the other spelling of an SGE place: l[0].addr and l->addr
// (and an array's decayed name) are one SGE.
func sgeAlias(p string) string { return canon(p) }

func StripParens(n *sitter.Node) *sitter.Node {
	for n != nil && KindOf(n) == "parenthesized_expression" {
		c := Named(n)
		if len(c) != 1 || KindOf(c[0]) == "compound_statement" {
			break
		}
		n = c[0]
	}
	return n
}

// mentions reports whether expression n names ident.
func mentions(f *File, n *sitter.Node, ident string) bool {
	found := false
	Walk(n, func(c *sitter.Node) bool {
		if KindOf(c) == "identifier" && f.Text(c) == ident {
			found = true
		}
		return !found
	})
	return found
}
