package engine

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// The engine runs a dataflow analysis over one function's control-flow
// graph (cfg.go). Its states are path-sensitive: each holds, for the
// paths it stands for, the abstract values (kind.go) of work requests'
// send_flags, sg_list, num_sge, opcode and next, of SGE addresses and of
// locals, the facts the branch conditions established (booleans, ternary
// conditions, == and != constants, upper bounds from < and <=) and what
// each QP creation call's result says about its attr. A state whose facts
// contradict a condition does not take that branch. States equal in
// everything are one state, so loops reach a fixed point; a node that
// would hold more than maxStates states, or a function that takes more
// than maxSteps transfers, is reported as not fully analysed (a budget,
// not a clock). A fact dies when a variable it mentions is assigned.

const (
	MaxStates = 64
	MaxSteps  = 20000
	// MaxWork bounds the expressions a function's analysis evaluates
	// (scope.valueOf calls): a step's work, which MaxSteps does not
	// bound (one statement of 2,000 or-ed ternaries).
	MaxWork = 200000
	// maxPending bounds the states waiting to be processed (memory).
	maxPending = 2048
)

type inline int

const (
	FlagUnset inline = iota // not assigned in this function
	FlagOff
	FlagOn
)

type State struct {
	Addr      map[string]*Val // SGE address places -> value
	Flags     map[string]*Val // work request place -> send_flags value
	FlagLine  map[string]int
	Sgl       map[string]string // work request -> pointee of sg_list
	Nsge      map[string]string // work request -> num_sge expression
	Opc       map[string]string // work request -> opcode
	next      map[string]string // work request -> chained request
	alias     map[string]string
	locals    map[string]*Val
	localExpr map[string]string // local -> the condition it was set from
	Facts     map[string]bool
	Nums      map[string]int64  // expression -> its value on this path
	Hi        map[string]int64  // expression -> an upper bound on this path
	created   map[string]string // attr -> the condition that holds the create call's result
	grant     map[string]int    // attr -> grantOK / grantFailed once the result is decided and overwritten
}

// NsgeZeroed is the num_sge of a request zeroed by its initializer or
// memset and not assigned since: 0 while nothing points its sg_list.
const NsgeZeroed = "=0"

const (
	grantPending = iota
	grantOK
	grantFailed
)

func newState() *State {
	return &State{Addr: map[string]*Val{}, Flags: map[string]*Val{}, FlagLine: map[string]int{}, Sgl: map[string]string{},
		Nsge: map[string]string{}, Opc: map[string]string{}, next: map[string]string{}, alias: map[string]string{},
		locals: map[string]*Val{}, localExpr: map[string]string{}, Facts: map[string]bool{}, Nums: map[string]int64{},
		Hi: map[string]int64{}, created: map[string]string{}, grant: map[string]int{}}
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (s *State) clone() *State {
	return &State{Addr: cloneMap(s.Addr), Flags: cloneMap(s.Flags), FlagLine: cloneMap(s.FlagLine), Sgl: cloneMap(s.Sgl),
		Nsge: cloneMap(s.Nsge), Opc: cloneMap(s.Opc), next: cloneMap(s.next), alias: cloneMap(s.alias),
		locals: cloneMap(s.locals), localExpr: cloneMap(s.localExpr), Facts: cloneMap(s.Facts), Nums: cloneMap(s.Nums),
		Hi: cloneMap(s.Hi), created: cloneMap(s.created), grant: cloneMap(s.grant)}
}

// hash identifies a state for merging (a 64-bit FNV-1a of its key).
func (s *State) hash() uint64 {
	h := stateHash(fnvOffset64)
	hashMap(&h, "A", s.Addr, func(v *Val) string { return v.key() })
	h.add("F")
	for _, k := range SortedKeys(s.Flags) {
		h.add(k)
		h.add("=")
		h.add(s.Flags[k].key())
		h.add("@")
		h.addInt(int64(s.FlagLine[k]))
		h.add(";")
	}
	hashMap(&h, "S", s.Sgl, identity)
	hashMap(&h, "N", s.Nsge, identity)
	hashMap(&h, "O", s.Opc, identity)
	hashMap(&h, "X", s.next, identity)
	hashMap(&h, "P", s.alias, identity)
	hashMap(&h, "L", s.locals, func(v *Val) string { return v.key() })
	hashMap(&h, "E", s.localExpr, identity)
	hashMap(&h, "C", s.Facts, strconv.FormatBool)
	hashInts(&h, "M", s.Nums)
	hashInts(&h, "H", s.Hi)
	hashMap(&h, "Q", s.created, identity)
	h.add("G")
	for _, k := range SortedKeys(s.grant) {
		h.add(k)
		h.add("=")
		h.addInt(int64(s.grant[k]))
		h.add(";")
	}
	return uint64(h)
}

// stateHash is 64-bit FNV-1a (hash/fnv's New64a), fed strings without
// copying them: a state is hashed on every visit of every statement.
type stateHash uint64

const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

func (h *stateHash) add(s string) {
	x := *h
	for i := 0; i < len(s); i++ {
		x ^= stateHash(s[i])
		x *= fnvPrime64
	}
	*h = x
}

func (h *stateHash) addInt(n int64) {
	var buf [20]byte
	for _, c := range strconv.AppendInt(buf[:0], n, 10) {
		*h ^= stateHash(c)
		*h *= fnvPrime64
	}
}

func identity(s string) string { return s }

// hashMap adds "name" and each "key=value;" of m, keys in order.
func hashMap[V any](h *stateHash, name string, m map[string]V, val func(V) string) {
	h.add(name)
	for _, k := range SortedKeys(m) {
		h.add(k)
		h.add("=")
		h.add(val(m[k]))
		h.add(";")
	}
}

func hashInts(h *stateHash, name string, m map[string]int64) {
	h.add(name)
	for _, k := range SortedKeys(m) {
		h.add(k)
		h.add("=")
		h.addInt(m[k])
		h.add(";")
	}
}

// Checkpoint is a place on a path where work requests leave the
// function: a post (of the listed requests) or the function's exit.
type Checkpoint struct {
	Node  *sitter.Node
	Wrs   []string // posted requests (nil at exit)
	Exit  bool
	State *State
	ret   *sitter.Node // the returned expression at a return
	// Handed are the SGEs a call passes to a function that posts them
	// inline (handed.go); Wrs is nil then.
	Handed []Handed
}

// SiteVisit is one path reaching a statement that sets IB_SEND_INLINE.
type SiteVisit struct {
	Node *sitter.Node
	// A helper's site reached from a caller (helperSites): the site's
	// file, and the caller's file and function the Conds are in. nil:
	// the function's own site.
	SiteF  *File
	CondF  *File
	CondFn *sitter.Node
	Reg    bool           // the request it flags is a registration
	Conds  []*sitter.Node // the conditions whose truth the path knows
	// At a post (onPost): the request's SGE count on the path (-1 when
	// not bounded) and the lengths of its SGEs ("" when not assigned on
	// the path).
	Nsge int
	Lens []string
}

// GrantRecord is one path reaching a store of a QP's granted caps.
type GrantRecord struct {
	Node *sitter.Node
	Msg  string // "" when the path records the grant correctly
}

// Interp runs one function.
type Interp struct {
	F     *File
	Fn    *sitter.Node
	Facts *Facts
	types map[string]string
	Ptrs  map[string]bool // locals and parameters declared as pointers or arrays
	// ptrElems are the locals whose elements are pointers (void *v[4]).
	ptrElems map[string]bool
	Locals   map[string]bool // declared in the function
	Params   map[string]bool
	OnCheck  func(Checkpoint)
	OnSite   func(SiteVisit)
	OnGrant  func(GrantRecord)
	// OnPost hears of a post of a request flagged inline on a path: the
	// line that set the flag, its SGE count and lengths.
	OnPost func(flagLine int, v SiteVisit)
	Capped bool
	Steps  int
	// Work counts the expressions evaluated; WorkCapped says the
	// analysis stopped at MaxWork (Capped is then set too).
	Work       int
	WorkCapped bool
	budget     int // steps allowed, when below maxSteps
	g          *cfg
	// relevant are the conditions worth keeping as facts: tested more
	// than once, or about inline sends, SGEs or booleans.
	relevant  map[string]bool
	condNodes map[string]*sitter.Node
	nsgeExprs map[string]bool
	templates map[string]*sitter.Node
	// ptrArrays are local arrays of pointers initialized with addresses
	// ({ &a, &b }): what each element points at.
	ptrArrays map[string][]string
	sites     map[int][]*sitter.Node // CFG node -> inline sites it evaluates
	forks     []*State               // states a callee's exit paths split the current one into
}

func (in *Interp) scope(st *State) *scope {
	return &scope{f: in.F, locals: st.locals, types: in.types, ptrs: in.Ptrs, ptrElems: in.ptrElems, alias: st.alias, places: st.Addr, flags: st.Flags, facts: in.Facts, st: st, in: in}
}

func (in *Interp) Run() {
	in.types, in.Ptrs, in.Locals, in.Params = map[string]string{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	in.ptrElems = map[string]bool{}
	in.condNodes = map[string]*sitter.Node{}
	for _, p := range Params(in.F, in.Fn) {
		in.types[p.Name] = p.Typ
		in.Params[p.Name] = true
		in.Ptrs[p.Name] = p.Pointer
	}
	in.prescan()
	in.templates = in.Facts.templatesOf(in.F)
	in.g = buildCFG(in.F, in.Fn)
	g := in.g
	in.sites = map[int][]*sitter.Node{}
	if in.OnSite != nil {
		sites := FindInlineSitesFacts(in.F, in.Fn, in.Facts)
		for id, nd := range g.nodes {
			if nd.ast == nil || nd.kind == cBranch {
				continue
			}
			for _, s := range sites {
				if nd.ast.StartByte() <= s.Node.StartByte() && s.Node.EndByte() <= nd.ast.EndByte() && !inNestedBlock(nd.ast, s.Node) {
					in.sites[id] = append(in.sites[id], s.Node)
				}
			}
		}
	}
	seen := make([]map[uint64]bool, len(g.nodes))
	type item struct {
		id int
		st *State
	}
	start := newState()
	seen[g.entry] = map[uint64]bool{start.hash(): true}
	work := []item{{g.entry, start}}
	for len(work) > 0 {
		it := work[len(work)-1]
		work = work[:len(work)-1]
		in.Steps++
		if in.Steps > MaxSteps || in.budget > 0 && in.Steps > in.budget {
			in.Capped = true
			return
		}
		nd := g.nodes[it.id]
		outs := in.transfer(nd, it.st)
		if in.Work > MaxWork {
			in.Capped, in.WorkCapped = true, true
			return
		}
		for _, o := range outs {
			if o.st == nil {
				continue
			}
			k := o.st.hash()
			if seen[o.id] == nil {
				seen[o.id] = map[uint64]bool{}
			}
			if seen[o.id][k] {
				continue
			}
			if len(seen[o.id]) >= MaxStates {
				if debugCap != nil && !in.Capped {
					debugCap(in, o.id, o.st)
				}
				in.Capped = true
				continue
			}
			seen[o.id][k] = true
			if len(work) >= maxPending {
				in.Capped = true
				continue
			}
			work = append(work, item(o))
		}
	}
}

var debugCap func(in *Interp, id int, st *State)

type out struct {
	id int
	st *State
}

// transfer applies a node to a state and returns its successors' states.
func (in *Interp) transfer(nd *cfgNode, st *State) []out {
	switch nd.kind {
	case cExit:
		in.OnCheck(Checkpoint{Node: in.Fn, Exit: true, State: st})
		return nil
	case cReturn:
		st = st.clone()
		in.forks = nil
		var ret *sitter.Node
		for _, c := range Named(nd.ast) {
			in.expr(c, st)
			ret = c
		}
		for _, s := range append([]*State{st}, in.takeForks()...) {
			in.visitSites(nd, s)
			in.OnCheck(Checkpoint{Node: nd.ast, Exit: true, State: s, ret: ret})
		}
		return nil
	case cExpr:
		st = st.clone()
		in.forks = nil
		for _, c := range exprsOf(nd.ast) {
			in.expr(c, st)
		}
	case cDecl:
		st = st.clone()
		in.forks = nil
		in.declaration(nd.ast, st)
	case cBranch:
		st = st.clone()
		in.forks = nil
		in.expr(nd.ast, st) // calls in the condition (ret = f())
		var outs []out
		for _, s := range append([]*State{st}, in.takeForks()...) {
			yes := in.assume(nd.ast, true, s.clone())
			no := in.assume(nd.ast, false, s)
			outs = append(outs, out{nd.succ[0], yes}, out{nd.succ[1], no})
		}
		return outs
	}
	var outs []out
	for _, s := range append([]*State{st}, in.takeForks()...) {
		in.visitSites(nd, s)
		for i, n := range nd.succ {
			if i > 0 {
				outs = append(outs, out{n, s.clone()})
			} else {
				outs = append(outs, out{n, s})
			}
		}
	}
	return outs
}

func (in *Interp) takeForks() []*State {
	f := in.forks
	in.forks = nil
	return f
}

// visitSites reports the inline sites a node evaluates with the
// conditions the path knows.
func (in *Interp) visitSites(nd *cfgNode, st *State) {
	if in.OnSite == nil || in.sites == nil {
		return
	}
	for _, s := range in.sites[nd.id] {
		var conds []*sitter.Node
		for _, k := range SortedKeys(st.Facts) {
			if c, ok := in.condNodes[k]; ok {
				conds = append(conds, c)
			}
		}
		reg := false
		if KindOf(s) == "assignment_expression" {
			if wr, m := wrMember(PlaceOf(in.F, s.ChildByFieldName("left"), st.alias)); m == "send_flags" {
				op := st.Opc[wr]
				if op == "" && !in.Locals[Root(wr)] {
					op, _, _ = in.Facts.OpcodeOf(FieldKey(wr))
				}
				reg = RegistrationOps[op]
			}
		}
		in.OnSite(SiteVisit{Node: s, Conds: conds, Reg: reg})
	}
}

// helperSites reports, at a call of a function of the module that sets
// IB_SEND_INLINE on a request its caller passed (a static inline helper
// in a header: wr->send_flags |= IB_SEND_INLINE), the callee's sites as
// visited with the caller's path conditions: a helper that sets the
// flag unconditionally leaves the size guard to its callers.
func (in *Interp) helperSites(call *sitter.Node, st *State) {
	if in.OnSite == nil || call == nil {
		return
	}
	d, ok := in.Facts.funcs[in.F.Text(call.ChildByFieldName("function"))]
	if !ok || d.f == nil {
		return
	}
	var conds []*sitter.Node
	for _, k := range SortedKeys(st.Facts) {
		if c, ok := in.condNodes[k]; ok {
			conds = append(conds, c)
		}
	}
	for _, s := range FindInlineSitesFacts(d.f, d.fn, in.Facts) {
		in.OnSite(SiteVisit{Node: s.Node, Conds: conds, SiteF: d.f, CondF: in.F, CondFn: in.Fn})
	}
}

// inNestedBlock reports whether s lies in a statement expression inside
// n (evaluated by a node of its own).
func inNestedBlock(n, s *sitter.Node) bool {
	for p := s; p != nil && !Same(p, n); p = p.Parent() {
		if KindOf(p) == "compound_statement" {
			return true
		}
	}
	return false
}

func exprsOf(n *sitter.Node) []*sitter.Node {
	if KindOf(n) == "expression_statement" {
		return Named(n)
	}
	return []*sitter.Node{n}
}

// prescan finds which conditions the function tests more than once and
// the expressions stored into num_sge.
func (in *Interp) prescan() {
	f := in.F
	count := map[string]int{}
	in.relevant = map[string]bool{}
	in.nsgeExprs = map[string]bool{}
	var conds func(n *sitter.Node)
	conds = func(n *sitter.Node) {
		n = stripCond(f, n)
		if n == nil {
			return
		}
		if KindOf(n) == "binary_expression" {
			if op := f.Text(n.ChildByFieldName("operator")); op == "&&" || op == "||" {
				conds(n.ChildByFieldName("left"))
				conds(n.ChildByFieldName("right"))
				return
			}
		}
		if KindOf(n) == "unary_expression" && f.Text(n.ChildByFieldName("operator")) == "!" {
			conds(n.ChildByFieldName("argument"))
			return
		}
		k, _ := factKey(f, n)
		count[k]++
		if KindOf(n) == "field_expression" {
			// A field holding IB_SEND_INLINE or 0 as the module chose
			// (if (q->inline_flags)): the flags read from it follow.
			if _, _, ok := in.Facts.FlagChoice(PlaceOf(f, n, nil)); ok {
				count[k]++
			}
		}
	}
	Walk(in.Fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		switch KindOf(n) {
		case "if_statement", "while_statement", "do_statement", "for_statement", "conditional_expression":
			conds(n.ChildByFieldName("condition"))
		case "assignment_expression":
			if l := n.ChildByFieldName("left"); KindOf(l) == "field_expression" && f.Text(l.ChildByFieldName("field")) == "num_sge" {
				in.nsgeExprs[CondKey(f, n.ChildByFieldName("right"))] = true
			}
		case "initializer_pair":
			if strings.Contains(f.Text(n), "num_sge") {
				if v := n.ChildByFieldName("value"); v != nil {
					in.nsgeExprs[CondKey(f, v)] = true
				}
			}
		}
		return true
	})
	// Locals that hold an inline size or decision.
	inlineLocals := map[string]bool{}
	bools := map[string]bool{}
	for _, p := range Params(f, in.Fn) {
		if !p.Pointer {
			// A guard passed in: a bool, or an integer tested for
			// its truth (if (direct)), which the key alone names.
			bools[p.Name] = true
		}
	}
	Walk(in.Fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		switch KindOf(n) {
		case "declaration":
			if strings.TrimSpace(f.Text(n.ChildByFieldName("type"))) == "bool" {
				for _, d := range Named(n) {
					if name, _ := DeclName(f, d); name != "" {
						bools[name] = true
					}
				}
			}
		case "init_declarator":
			if v := n.ChildByFieldName("value"); v != nil && strings.Contains(strings.ToLower(f.Text(v)), "inline") {
				name, _ := DeclName(f, n.ChildByFieldName("declarator"))
				inlineLocals[name] = true
			}
		case "assignment_expression":
			if l := n.ChildByFieldName("left"); KindOf(l) == "identifier" && strings.Contains(strings.ToLower(f.Text(n.ChildByFieldName("right"))), "inline") {
				inlineLocals[f.Text(l)] = true
			}
		}
		return true
	})
	in.elementPointers()
	for k, c := range count {
		lk := strings.ToLower(k)
		keep := c >= 2 || strings.Contains(lk, "inline") || strings.Contains(lk, "sge") || bools[k] || in.nsgeExprs[k]
		for l := range inlineLocals {
			keep = keep || hasToken(k, l)
		}
		if m := callNameRe.FindStringSubmatch(k); m != nil && in.Facts.mentionsInline(m[1]) {
			keep = true
		}
		if keep {
			in.relevant[k] = true
		}
	}
}

var callNameRe = regexp.MustCompile(`^([A-Za-z_]\w*)\(`)

// declaration handles "T x = init" and designated initializers of work
// requests.
func (in *Interp) declaration(n *sitter.Node, st *State) {
	f := in.F
	typ := f.Text(n.ChildByFieldName("type"))
	for _, d := range Named(n) {
		if Same(d, n.ChildByFieldName("type")) {
			continue
		}
		name, ptr := DeclName(f, d)
		if name == "" {
			continue
		}
		in.types[name] = typ
		in.Locals[name] = true
		in.Ptrs[name] = ptr
		in.ptrElems[name] = DeclDepth(d) >= 2
		in.kill(name, st)
		if KindOf(d) != "init_declarator" {
			continue
		}
		v := d.ChildByFieldName("value")
		if v == nil {
			continue
		}
		if KindOf(v) == "initializer_list" && ptr && in.pointerArray(name, v) {
			continue
		}
		if KindOf(v) == "compound_literal_expression" && !ptr {
			if l := v.ChildByFieldName("value"); l != nil {
				v = l
			}
		}
		if KindOf(v) == "initializer_list" {
			// = {} and designated initializers zero what they omit.
			st.Flags[name] = flagVal(FlagOff, "initializer", f.Line(v))
			st.Nsge[name] = NsgeZeroed
			in.initList(name, v, st)
			continue
		}
		in.expr(v, st)
		if ptr {
			if p := pointee(f, v, st.alias); p != "" {
				st.alias[name] = p
			}
		} else if t := in.template(v); t != nil {
			in.initList(name, t, st)
		}
		st.locals[name] = plainLocal(name, in.scope(st).valueOf(v))
		if in.relevant[name] {
			st.localExpr[name] = localCond(f, v)
		}
	}
}

// pointerArray records an array of pointers initialized with
// addresses ({ &a, &b }); false when the list is anything else.
func (in *Interp) pointerArray(name string, list *sitter.Node) bool {
	var targets []string
	for _, c := range Named(list) {
		c = StripParens(c)
		if KindOf(c) == "comment" {
			continue
		}
		if KindOf(c) != "pointer_expression" || in.F.Text(c.ChildByFieldName("operator")) != "&" {
			return false
		}
		t := objectPlace(in.F, c.ChildByFieldName("argument"), nil)
		if t == "" {
			return false
		}
		targets = append(targets, t)
	}
	if len(targets) == 0 {
		return false
	}
	if in.ptrArrays == nil {
		in.ptrArrays = map[string][]string{}
	}
	in.ptrArrays[name] = targets
	return true
}

// elementPointers records a local array of pointers whose elements the
// function assigns one by one with addresses (wrs[0] = &reg.wr; wrs[1] =
// &send.wr;), as pointerArray does for an initializer: each element is
// assigned once, at a constant index, and the indexes cover 0..n-1. Any
// other store into the array (a computed index, another value) leaves it
// unknown.
func (in *Interp) elementPointers() {
	f := in.F
	arrays := map[string]bool{}
	Walk(in.Fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		if KindOf(n) == "declaration" {
			for _, d := range Named(n) {
				if Same(d, n.ChildByFieldName("type")) || KindOf(d) == "init_declarator" {
					continue
				}
				if name, _ := DeclName(f, d); name != "" && strings.Contains(f.Text(d), "[") && DeclDepth(d) >= 2 {
					arrays[name] = true
				}
			}
		}
		return true
	})
	if len(arrays) == 0 {
		return
	}
	targets := map[string]map[int64]string{}
	bad := map[string]bool{}
	Walk(in.Fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		if KindOf(n) != "assignment_expression" {
			return true
		}
		l := StripParens(n.ChildByFieldName("left"))
		name, idx := "", int64(-1)
		switch {
		case KindOf(l) == "identifier":
			name = f.Text(l)
		case KindOf(l) == "subscript_expression":
			if a := StripParens(l.ChildByFieldName("argument")); a != nil && KindOf(a) == "identifier" {
				name = f.Text(a)
				if v, ok := in.number(l.ChildByFieldName("index")); ok {
					idx = v
				}
			}
		}
		if !arrays[name] {
			return true
		}
		r := StripParens(n.ChildByFieldName("right"))
		t := ""
		if idx >= 0 && f.Text(n.ChildByFieldName("operator")) == "=" && r != nil && KindOf(r) == "pointer_expression" && f.Text(r.ChildByFieldName("operator")) == "&" {
			t = objectPlace(f, r.ChildByFieldName("argument"), nil)
		}
		if t == "" || targets[name][idx] != "" {
			bad[name] = true
			return true
		}
		if targets[name] == nil {
			targets[name] = map[int64]string{}
		}
		targets[name][idx] = t
		return true
	})
	for name, m := range targets {
		if bad[name] || in.ptrArrays[name] != nil {
			continue
		}
		list := make([]string, len(m))
		ok := true
		for k, t := range m {
			if k >= int64(len(m)) {
				ok = false
				break
			}
			list[k] = t
		}
		if ok {
			if in.ptrArrays == nil {
				in.ptrArrays = map[string][]string{}
			}
			in.ptrArrays[name] = list
		}
	}
}

// throughPtrArray names the places a place reached through an array of
// pointers stands for: arr[k].x is element k's target's x, arr[*].x each
// target's (a loop over the array, or an index the path does not know).
func (in *Interp) throughPtrArray(p string) []string {
	i := strings.IndexByte(p, '[')
	if i < 0 || in.ptrArrays == nil {
		return nil
	}
	targets, ok := in.ptrArrays[p[:i]]
	if !ok {
		return nil
	}
	j := strings.IndexByte(p[i:], ']')
	if j < 0 {
		return nil
	}
	idx, rest := p[i+1:i+j], p[i+j+1:]
	if idx == "*" {
		var out []string
		for _, t := range targets {
			out = append(out, t+rest)
		}
		return out
	}
	k, err := strconv.Atoi(idx)
	if err != nil || k < 0 || k >= len(targets) {
		return nil
	}
	return []string{targets[k] + rest}
}

// template is the file-scope static initializer an expression names (a
// struct copied from a template).
func (in *Interp) template(n *sitter.Node) *sitter.Node {
	n = StripParens(n)
	if n == nil {
		return nil
	}
	if KindOf(n) == "pointer_expression" && in.F.Text(n.ChildByFieldName("operator")) == "*" {
		n = StripParens(n.ChildByFieldName("argument"))
	}
	if KindOf(n) == "pointer_expression" && in.F.Text(n.ChildByFieldName("operator")) == "&" {
		n = StripParens(n.ChildByFieldName("argument"))
	}
	if n != nil && KindOf(n) == "identifier" && !in.Locals[in.F.Text(n)] && !in.Params[in.F.Text(n)] {
		return in.templates[in.F.Text(n)]
	}
	return nil
}

// initList reads { .send_flags = ..., .wr = { ... } } for object obj.
func (in *Interp) initList(obj string, list *sitter.Node, st *State) {
	f := in.F
	for _, c := range Named(list) {
		if KindOf(c) != "initializer_pair" {
			continue
		}
		var member string
		for _, d := range Named(c) {
			if KindOf(d) == "field_designator" {
				if member != "" {
					member += "."
				}
				member += strings.TrimPrefix(f.Text(d), ".")
			}
		}
		v := c.ChildByFieldName("value")
		if member == "" || v == nil {
			continue
		}
		if KindOf(v) == "initializer_list" {
			in.initList(obj+"."+member, v, st)
			continue
		}
		in.store(obj+"."+member, "=", v, c, st)
	}
}

// zero records an object zeroed by an initializer that omits members.
func (in *Interp) zero(obj string, line int, st *State) {
	for k := range st.Flags {
		if strings.HasPrefix(k, obj+".") {
			st.Flags[k] = flagVal(FlagOff, "initializer", line)
		}
	}
	st.Flags[obj] = flagVal(FlagOff, "initializer", line)
	delete(st.FlagLine, obj)
	st.Nsge[obj] = NsgeZeroed
	delete(st.Sgl, obj)
	delete(st.Opc, obj)
}

// kill drops what the path knew about a variable or place that changes.
func (in *Interp) kill(name string, st *State) {
	if name == "" {
		return
	}
	// A create call's result held in it is overwritten: what it said
	// about the attr is kept as decided, or lost. Decided first, while the
	// facts about the result (ret == -EINVAL) still hold.
	for attr, c := range st.created {
		if hasToken(c, name) {
			st.grant[attr] = in.grantStatus(attr, st)
			delete(st.created, attr)
		}
	}
	for k := range st.Facts {
		if hasToken(k, name) {
			delete(st.Facts, k)
		}
	}
	for k := range st.Nums {
		if hasToken(k, name) {
			delete(st.Nums, k)
		}
	}
	for k := range st.Hi {
		if hasToken(k, name) {
			delete(st.Hi, k)
		}
	}
	for k, e := range st.localExpr {
		if hasToken(e, name) {
			delete(st.localExpr, k)
		}
	}
}

// expr interprets an expression's effects: assignments and calls.
func (in *Interp) expr(n *sitter.Node, st *State) {
	if n == nil {
		return
	}
	f := in.F
	switch KindOf(n) {
	case "assignment_expression":
		lhs, rhs := n.ChildByFieldName("left"), n.ChildByFieldName("right")
		if rhs == nil || lhs == nil {
			return
		}
		in.expr(rhs, st)
		op := f.Text(n.ChildByFieldName("operator"))
		p := PlaceOf(f, lhs, st.alias)
		in.checkGrantStore(n, p, rhs, st)
		if strings.HasPrefix(p, "v:") {
			name := strings.TrimPrefix(p, "v:")
			v := in.scope(st).valueOf(rhs)
			if op != "=" {
				if old, ok := st.locals[name]; ok {
					v = compound(op, old, v)
				}
			}
			in.kill(name, st)
			in.storeNum(CondKey(f, lhs), op, rhs, st)
			if pt := pointee(f, rhs, st.alias); pt != "" && in.Ptrs[name] {
				st.alias[name] = pt
			} else if pt != "" && (KindOf(rhs) == "pointer_expression" || st.alias[f.Text(rhs)] != "") {
				st.alias[name] = pt
			}
			if t := in.template(rhs); t != nil && !in.Ptrs[name] {
				in.initList(name, t, st)
			}
			if lit := StripParens(rhs); op == "=" && !in.Ptrs[name] && lit != nil && KindOf(lit) == "compound_literal_expression" {
				if l := lit.ChildByFieldName("value"); l != nil {
					in.zero(name, f.Line(lit), st)
					in.initList(name, l, st)
				}
			}
			st.locals[name] = plainLocal(name, v)
			if in.relevant[name] {
				st.localExpr[name] = localCond(f, rhs)
			} else {
				delete(st.localExpr, name)
			}
			if c := in.createCall(rhs); c != nil {
				in.created(c, CondKey(f, lhs), st)
			}
			return
		}
		if p != "" {
			in.kill(strings.Join(strings.Fields(f.Text(lhs)), ""), st)
			in.storeNum(CondKey(f, lhs), op, rhs, st)
			if t := in.template(rhs); t != nil {
				in.initList(p, t, st)
				return
			}
			if lit := StripParens(rhs); op == "=" && lit != nil && KindOf(lit) == "compound_literal_expression" {
				// *wr = (struct ib_send_wr){ ... }: zeroes what it omits.
				if l := lit.ChildByFieldName("value"); l != nil {
					in.zero(p, f.Line(lit), st)
					in.initList(p, l, st)
					return
				}
			}
			in.store(p, op, rhs, n, st)
			if c := in.createCall(rhs); c != nil {
				in.created(c, CondKey(f, lhs), st)
			}
		}
	case "call_expression":
		args := Named(n.ChildByFieldName("arguments"))
		for _, a := range args {
			in.expr(a, st)
		}
		name := f.Text(n.ChildByFieldName("function"))
		switch name {
		case "memset":
			if len(args) >= 1 {
				if obj := pointee(f, args[0], st.alias); obj != "" {
					for k := range st.Flags {
						if k == obj || strings.HasPrefix(k, obj+".") {
							st.Flags[k] = flagVal(FlagOff, "memset", f.Line(n))
						}
					}
					st.Flags[obj] = flagVal(FlagOff, "memset", f.Line(n))
					st.Nsge[obj] = NsgeZeroed
				}
			}
		case "memcpy":
			if len(args) >= 2 {
				if t := in.template(args[1]); t != nil {
					if obj := pointee(f, args[0], st.alias); obj != "" {
						in.initList(obj, t, st)
					}
				}
			}
		}
		if CreateFuncs[name] {
			in.created(n, CondKey(f, n), st)
		}
		in.applySummary(name, args, n, st)
		in.handedAt(name, args, n, st)
		if wr := in.postedWR(n, st); wr != "" {
			in.OnCheck(Checkpoint{Node: n, Wrs: in.chain(wr, st), State: st})
			// The callee's other exit paths post too.
			for _, fork := range in.forks {
				if w := in.postedWR(n, fork); w != "" {
					in.OnCheck(Checkpoint{Node: n, Wrs: in.chain(w, fork), State: fork})
				}
			}
		}
	case "update_expression":
		in.kill(strings.Join(strings.Fields(f.Text(n.ChildByFieldName("argument"))), ""), st)
		if wr, m := wrMember(PlaceOf(f, n.ChildByFieldName("argument"), st.alias)); m == "num_sge" {
			// sge = &sges[wr->num_sge++]: one SGE more.
			d := 1
			if strings.Contains(f.Text(n.ChildByFieldName("operator")), "-") {
				d = -1
			}
			st.Nsge[p0(wr)] = addCount(st.Nsge[p0(wr)], d)
		}
	case "conditional_expression":
		in.expr(n.ChildByFieldName("condition"), st)
		// Effects in the arms: both are applied (the value itself is a
		// choice the facts decide).
		in.expr(n.ChildByFieldName("consequence"), st)
		in.expr(n.ChildByFieldName("alternative"), st)
	case "compound_statement":
		// A statement expression: hoisted before this node by the CFG.
	case "identifier", "number_literal", "string_literal", "field_identifier", "comment":
	default:
		for _, c := range Named(n) {
			in.expr(c, st)
		}
	}
}

// createCall is the QP creation call an expression is (a create call
// in a cast or parentheses).
func (in *Interp) createCall(n *sitter.Node) *sitter.Node {
	n = StripParens(n)
	if n != nil && KindOf(n) == "call_expression" && CreateFuncs[in.F.Text(n.ChildByFieldName("function"))] && in.F.Text(n.ChildByFieldName("function")) != "ib_query_qp" {
		return n
	}
	return nil
}

// created records that call creates a QP with its attr argument, its
// result held by the condition res.
func (in *Interp) created(call *sitter.Node, res string, st *State) {
	if in.F.Text(call.ChildByFieldName("function")) == "ib_query_qp" {
		return
	}
	args := Named(call.ChildByFieldName("arguments"))
	// Only the init attr argument: the cm_id or pd passed along is no
	// attr the caps are written back into.
	if i, ok := createAttrArg[in.F.Text(call.ChildByFieldName("function"))]; ok && i < len(args) {
		args = args[i : i+1]
	}
	for _, a := range args {
		t := strings.TrimPrefix(strings.Join(strings.Fields(in.F.Text(a)), ""), "&")
		if KindOf(a) == "pointer_expression" || in.Ptrs[t] {
			st.created[t] = res
			delete(st.grant, t)
		}
	}
}

// createAttrArg is the position of the ib_qp_init_attr argument of each
// creation call.
var createAttrArg = map[string]int{"rdma_create_qp": 2, "ib_create_qp": 1, "ib_create_qp_kernel": 1}

// grantStatus says whether the QP created with attr was created, on
// this path, as far as its result's tests tell.
func (in *Interp) grantStatus(attr string, st *State) int {
	res, ok := st.created[attr]
	if !ok {
		return st.grant[attr]
	}
	if v, ok := st.Facts[res]; ok {
		if v {
			return grantFailed
		}
		return grantOK
	}
	for _, w := range []string{"IS_ERR(" + res + ")", "IS_ERR_OR_NULL(" + res + ")"} {
		if v, ok := st.Facts[w]; ok {
			if v {
				return grantFailed
			}
			return grantOK
		}
	}
	if v, ok := st.Nums[res]; ok {
		if v == 0 {
			return grantOK
		}
		return grantFailed
	}
	for k, v := range st.Facts {
		if !strings.HasPrefix(k, res) {
			continue
		}
		rest := k[len(res):]
		switch {
		case (rest == "<0" || rest == "!=0") && v, rest == "==0" && !v:
			return grantFailed
		case (rest == "<0" || rest == "!=0") && !v, rest == "==0" && v:
			return grantOK
		case strings.HasPrefix(rest, "==-") && v:
			return grantFailed
		}
	}
	return grantPending
}

// checkGrantStore checks a store of attr.cap.max_inline_data into an
// object (the size the sends are guarded by): on this path the QP must
// have been created with that attr, successfully.
func (in *Interp) checkGrantStore(n *sitter.Node, lhsPlace string, rhs *sitter.Node, st *State) {
	if in.OnGrant == nil || strings.HasPrefix(lhsPlace, "v:") || lhsPlace == "" {
		return
	}
	f := in.F
	if strings.HasSuffix(strings.Join(strings.Fields(f.Text(n.ChildByFieldName("left"))), ""), "cap.max_inline_data") {
		return // a request, not a record
	}
	e := in.decide(rhs, st)
	if KindOf(e) == "conditional_expression" {
		// Undecided here: each arm on the paths where it is taken.
		cond := e.ChildByFieldName("condition")
		for _, truth := range []bool{true, false} {
			arm := e.ChildByFieldName("alternative")
			if truth {
				arm = e.ChildByFieldName("consequence")
				if arm == nil {
					arm = cond
				}
			}
			if st2 := in.assume(cond, truth, st.clone()); st2 != nil && arm != nil {
				in.checkGrantStore(n, lhsPlace, arm, st2)
			}
		}
		return
	}
	var attr string
	Walk(e, func(c *sitter.Node) bool {
		if KindOf(c) == "field_expression" && strings.HasSuffix(strings.Join(strings.Fields(f.Text(c)), ""), "cap.max_inline_data") {
			t := strings.Join(strings.Fields(f.Text(c)), "")
			attr = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(t, "cap.max_inline_data"), "."), "->")
		}
		return attr == ""
	})
	if attr == "" {
		in.OnGrant(GrantRecord{Node: n})
		return
	}
	if _, queried := in.Facts.Queried[FieldKey(attr+".cap.max_inline_data")]; queried {
		in.OnGrant(GrantRecord{Node: n})
		return
	}
	lhs := f.Text(n.ChildByFieldName("left"))
	_, tracked := st.created[attr]
	status := in.grantStatus(attr, st)
	if !tracked && status == grantPending {
		if _, known := st.grant[attr]; !known {
			// Not created with on this path: created with another attr?
			for other := range st.created {
				if in.grantStatus(other, st) != grantFailed {
					in.OnGrant(GrantRecord{Node: n, Msg: fmt.Sprintf("%s records %s, but on this path the QP was created with %s: %s still holds the request", lhs, attr+".cap.max_inline_data", other, attr)})
					return
				}
			}
			in.OnGrant(GrantRecord{Node: n})
			return
		}
	}
	switch status {
	case grantOK:
		in.OnGrant(GrantRecord{Node: n})
	case grantFailed:
		for other := range st.created {
			if other != attr && in.grantStatus(other, st) != grantFailed {
				in.OnGrant(GrantRecord{Node: n, Msg: fmt.Sprintf("%s records %s, but on this path the QP was created with %s (the creation with %s failed): %s still holds the request", lhs, attr+".cap.max_inline_data", other, attr, attr)})
				return
			}
		}
		in.OnGrant(GrantRecord{Node: n, Msg: fmt.Sprintf("when QP creation fails (%s), %s records %s, not 0", st.created[attr], lhs, strings.Join(strings.Fields(f.Text(e)), " "))})
	default:
		res := st.created[attr]
		in.OnGrant(GrantRecord{Node: n, Msg: fmt.Sprintf("%s records the caps whether or not QP creation succeeded (%s): when it fails, they hold the request, and the recorded size must be 0", lhs, res)})
	}
}

// decide returns the arm of the ternaries in n that this path's facts
// choose (n itself when undecided).
func (in *Interp) decide(n *sitter.Node, st *State) *sitter.Node {
	n = StripParens(n)
	for n != nil && KindOf(n) == "conditional_expression" {
		c := stripCond(in.F, n.ChildByFieldName("condition"))
		truth, neg := factKey(in.F, c)
		if KindOf(c) == "unary_expression" && in.F.Text(c.ChildByFieldName("operator")) == "!" {
			truth, neg = factKey(in.F, stripCond(in.F, c.ChildByFieldName("argument")))
			neg = !neg
		}
		v, ok := st.Facts[truth]
		if !ok {
			// The result of a create call: success or failure.
			for attr, res := range st.created {
				if res == truth {
					switch in.grantStatus(attr, st) {
					case grantOK:
						v, ok = false, true
					case grantFailed:
						v, ok = true, true
					}
				}
			}
		}
		if !ok {
			return n
		}
		if neg {
			v = !v
		}
		if v {
			if cons := n.ChildByFieldName("consequence"); cons != nil {
				n = StripParens(cons)
				continue
			}
			return StripParens(n.ChildByFieldName("condition"))
		}
		n = StripParens(n.ChildByFieldName("alternative"))
	}
	return n
}

// postedWR returns the work request a call posts: ib_post_send, a
// device's post_send op, or a function that posts its parameter.
func (in *Interp) postedWR(call *sitter.Node, st *State) string {
	f := in.F
	fnNode := call.ChildByFieldName("function")
	name := f.Text(fnNode)
	args := Named(call.ChildByFieldName("arguments"))
	if name == "ib_post_send" || KindOf(fnNode) == "field_expression" && f.Text(fnNode.ChildByFieldName("field")) == "post_send" {
		if len(args) >= 2 {
			return in.postedPointee(args[1], st)
		}
	}
	if p, ok := in.Facts.PosterOf(name); ok && p.Param < len(args) {
		if base := in.postedPointee(args[p.Param], st); base != "" {
			return base + p.suffix
		}
	}
	return ""
}

// postedPointee is what a pointer argument points at; an element of a
// local array of pointers at a constant index, what that element was
// given (ib_post_send(qp, wrs[0], NULL) posts the request at wrs[0]).
func (in *Interp) postedPointee(n *sitter.Node, st *State) string {
	if e := StripParens(n); e != nil && KindOf(e) == "subscript_expression" && in.ptrArrays != nil {
		if a := StripParens(e.ChildByFieldName("argument")); a != nil && KindOf(a) == "identifier" {
			if targets, ok := in.ptrArrays[in.F.Text(a)]; ok {
				if k, ok := in.number(e.ChildByFieldName("index")); ok && k >= 0 && k < int64(len(targets)) {
					return targets[k]
				}
			}
		}
	}
	return pointee(in.F, n, st.alias)
}

// applySummary applies what a module function called here does to its
// pointer arguments: the flags and opcodes it sets.
func (in *Interp) applySummary(name string, args []*sitter.Node, call *sitter.Node, st *State) {
	s := in.Facts.Summary(name)
	if s == nil {
		return
	}
	if s.variants != nil {
		// One state per exit path of the callee.
		bases := make([]string, len(args))
		for i, a := range args {
			bases[i] = pointee(in.F, a, st.alias)
		}
		orig := st.clone()
		keys := keysOf(in.F, args)
		var feasible [][]varEffect
		for _, v := range s.variants {
			if variantFeasible(v, s.names, keys, st) {
				feasible = append(feasible, v)
			}
		}
		if len(feasible) == 0 {
			feasible = s.variants // the facts disagree with every exit: decide nothing
		}
		for vi, v := range feasible {
			target := st
			if vi > 0 {
				target = orig.clone()
				in.forks = append(in.forks, target)
			}
			in.applyVariant(v, s.names, args, bases, call, target)
		}
		return
	}
	for _, e := range s.effects {
		if e.param >= len(args) {
			continue
		}
		base := pointee(in.F, args[e.param], st.alias)
		if base == "" {
			continue
		}
		wr := base + e.suffix
		if e.opcode != "" {
			st.Opc[wr] = e.opcode
		}
		if e.flags != nil {
			v := e.flags
			if old, ok := st.Flags[wr]; ok && !e.assigns {
				v = compound("|=", old, v)
			}
			st.Flags[wr] = v
			if isOn(v) {
				st.FlagLine[wr] = in.F.Line(call)
				in.helperSites(call, st)
			}
		}
	}
}

func keysOf(f *File, args []*sitter.Node) []string {
	keys := make([]string, len(args))
	for i, a := range args {
		keys[i] = CondKey(f, a)
	}
	return keys
}

// variantFeasible reports whether the caller's path (st) can take a
// callee's exit path: no condition that exit established on the
// parameters, restated in the caller's terms (keys: the arguments),
// is one the caller's path decided the other way.
func variantFeasible(v []varEffect, names, keys []string, st *State) bool {
	for _, e := range v {
		if e.kind != 'c' {
			continue
		}
		if b, ok := st.Facts[substParams(e.rel, names, keys)]; ok && b != (e.s == "1") {
			return false
		}
	}
	return true
}

// applyVariant applies one exit path of a callee to the caller's state.
func (in *Interp) applyVariant(v []varEffect, names []string, args []*sitter.Node, bases []string, call *sitter.Node, st *State) {
	for _, e := range v {
		switch e.kind {
		case 'c':
			// An exit condition on the parameters, in the caller's
			// terms: the caller's later test of the same value
			// (if (small) after build(..., small)) takes this exit's
			// side.
			if i := slices.Index(names, e.rel); i >= 0 && i < len(args) {
				// The parameter itself: the argument's condition,
				// in its canonical form (a > b is !(a <= b)).
				k, neg := factKey(in.F, args[i])
				in.learn(k, (e.s == "1") != neg, st)
				continue
			}
			in.learn(substParams(e.rel, names, keysOf(in.F, args)), e.s == "1", st)
			continue
		case 'r':
			// The exit path's constant return: what the call's
			// value is on this path (if (helper(...)) decides).
			if call != nil {
				st.Facts[CondKey(in.F, call)] = e.s != "0"
			}
			continue
		case 'n':
			if e.param < len(bases) && bases[e.param] != "" {
				// num_sge in the callee's terms: the caller's.
				keys := make([]string, len(args))
				for i, a := range args {
					keys[i] = CondKey(in.F, a)
				}
				p := bases[e.param] + e.rel
				if d, ok := countDelta(e.s); ok {
					// The callee added SGEs to what the caller set.
					st.Nsge[p] = addCount(st.Nsge[p], d)
					continue
				}
				st.Nsge[p] = constChoice(substParams(e.s, names, keys))
			}
			continue
		}
		if e.param >= len(bases) || bases[e.param] == "" {
			continue
		}
		p := bases[e.param] + e.rel
		switch e.kind {
		case 'f':
			e.v = in.callerTerms(e.v, names, args, st)
			st.Flags[p] = e.v
			if maybeOn(e.v) {
				st.FlagLine[p] = in.F.Line(call)
				in.helperSites(call, st)
			} else {
				delete(st.FlagLine, p)
			}
		case 'o':
			st.Opc[p] = e.s
		case 'a':
			if x := bases[e.param]; e.rel == "" && !in.Ptrs[x] && (in.Locals[x] || in.Params[x]) && call != nil && in.outArg(call, e.param, x) {
				// f(&flags) with *flags |= IB_SEND_INLINE in f: the
				// caller's scalar holds what f stored (or-ed in: what
				// f sets is kept, what it clears may stay set).
				if maybeOn(e.v) || e.v.kind != Unknown {
					nv := e.v
					if old, ok := st.locals[x]; ok && e.v.kind == Unknown {
						nv = compound("|=", old, e.v)
					}
					in.kill(x, st)
					st.locals[x] = nv
					if maybeOn(e.v) {
						st.FlagLine[x] = in.F.Line(call)
					}
				}
				continue
			}
			st.Addr[p] = in.callerTerms(e.v, names, args, st)
		case 's':
			var j int
			_, _ = fmt.Sscanf(e.s, "%d", &j) // not a number: 0
			if j < len(bases) && bases[j] != "" {
				st.Sgl[p] = bases[j] + e.s[strings.IndexByte(e.s, ' ')+1:]
			}
		case 'n':
			st.Nsge[p] = e.s
		}
	}
}

// constChoice simplifies c?a:b whose condition is a literal.
func constChoice(e string) string {
	q := strings.IndexByte(e, '?')
	col := strings.LastIndexByte(e, ':')
	if q < 0 || col < q {
		return e
	}
	c, a, b := e[:q], e[q+1:col], e[col+1:]
	if n, err := strconv.ParseInt(strings.Trim(c, "()"), 0, 64); err == nil {
		if n != 0 {
			return a
		}
		return b
	}
	return e
}

// outArg reports whether argument i of call is &x.
func (in *Interp) outArg(call *sitter.Node, i int, x string) bool {
	args := Named(call.ChildByFieldName("arguments"))
	if i >= len(args) {
		return false
	}
	a := StripParens(args[i])
	return KindOf(a) == "pointer_expression" && in.F.Text(a.ChildByFieldName("operator")) == "&" && strings.TrimSpace(in.F.Text(a.ChildByFieldName("argument"))) == x
}

// chain lists a posted request and those chained after it with next.
func (in *Interp) chain(head string, st *State) []string {
	var out []string
	seen := map[string]bool{}
	for w := head; w != "" && !seen[w]; w = st.next[w] {
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// store records an assignment to a field place.
func (in *Interp) store(p, op string, rhs, at *sitter.Node, st *State) {
	f := in.F
	if ts := in.throughPtrArray(p); ts != nil {
		for _, t := range ts {
			in.store(t, op, rhs, at, st)
		}
		return
	}
	wr, member := wrMember(p)
	switch member {
	case "send_flags":
		v := in.scope(st).valueOf(rhs)
		if old, ok := st.Flags[p0(wr)]; ok && op != "=" {
			v = compound(op, old, v)
		} else if op == "&=" {
			v = compound(op, flagVal(FlagUnset, "", 0), v)
		} else if op == "|=" && !ok {
			// Or-ed into flags set elsewhere: only what is or-ed in
			// is known.
			v = compound(op, flagVal(FlagUnset, "", 0), v)
		}
		wr = p0(wr)
		st.Flags[wr] = v
		if isOn(v) || maybeOn(v) {
			st.FlagLine[wr] = f.Line(at)
		} else {
			delete(st.FlagLine, wr)
		}
	case "sg_list":
		st.Sgl[p0(wr)] = sgeList(pointee(f, rhs, st.alias))
	case "num_sge":
		st.Nsge[p0(wr)] = in.nsgeExpr(rhs, st)
	case "opcode":
		st.Opc[p0(wr)] = f.Text(rhs)
	case "next":
		st.next[p0(wr)] = pointee(f, rhs, st.alias)
	default:
		p = in.throughList(p, st)
		v := in.scope(st).valueOf(rhs)
		if op != "=" {
			if old, ok := st.Addr[p]; ok {
				v = compound(op, old, v)
			}
		}
		st.Addr[p] = v
	}
}

// throughList names a place reached through a request's sg_list
// (wr->sg_list->addr, wr->sg_list[1].addr) by the list it points at.
func (in *Interp) throughList(p string, st *State) string {
	for _, wr := range SortedKeys(st.Sgl) {
		pre := wr + ".sg_list"
		if strings.HasPrefix(p, pre) && (len(p) == len(pre) || p[len(pre)] == '.' || p[len(pre)] == '[') && st.Sgl[wr] != "" {
			return canon(st.Sgl[wr] + p[len(pre):])
		}
	}
	return p
}

// p0 is a request's place as the posts name it.
func p0(wr string) string { return wr }

// sgeList names the list sg_list points at: &a[0], a (an array decays)
// and a->x's pointee all name element 0 of the same list.
func sgeList(p string) string { return canon(p) }

// assume adds what a branch condition says on this path; nil when it
// contradicts what the path knows.
func (in *Interp) assume(cond *sitter.Node, truth bool, st *State) *State {
	if st == nil {
		return nil
	}
	f := in.F
	c := stripCond(f, cond)
	if c == nil {
		return st
	}
	// A test of the inline bit of flags whose value the path knows:
	// the branch the bit rules out is not taken.
	sc := in.scope(st)
	if x, set, ok := sc.inlineBitTest(c); ok {
		if !narrowFlag(sc.valueOf(x), set == truth, st.Facts) {
			return nil
		}
	}
	switch KindOf(c) {
	case "number_literal", "true", "false", "null":
		v := f.Text(c)
		nonzero := v != "0" && v != "false" && v != "NULL" && KindOf(c) != "null"
		if nonzero != truth {
			return nil
		}
		return st
	case "unary_expression":
		if f.Text(c.ChildByFieldName("operator")) == "!" {
			return in.assume(c.ChildByFieldName("argument"), !truth, st)
		}
	case "binary_expression":
		op := f.Text(c.ChildByFieldName("operator"))
		l, r := stripCond(f, c.ChildByFieldName("left")), stripCond(f, c.ChildByFieldName("right"))
		if l == nil || r == nil {
			return st
		}
		switch op {
		case "&&":
			if truth {
				return in.assume(r, true, in.assume(l, true, st))
			}
			return in.record(c, truth, st)
		case "||":
			if !truth {
				return in.assume(r, false, in.assume(l, false, st))
			}
			return in.record(c, truth, st)
		case "==", "!=":
			eq := (op == "==") == truth
			if v, ok := in.number(r); ok && eq {
				name := CondKey(f, l)
				if old, ok := st.Nums[name]; ok && old != v {
					return nil
				}
				if h, ok := st.Hi[name]; ok && v > h {
					return nil
				}
				if in.relevant[name] || in.nsgeExprs[name] {
					st.Nums[name] = v
				}
			} else if ok && !eq {
				if old, ok := st.Nums[CondKey(f, l)]; ok && old == v {
					return nil
				}
			}
		case "<", "<=", ">", ">=":
			// n < K, n <= K (or their negations K < n...) bound n.
			name, k, le := "", int64(0), false
			if v, ok := in.number(r); ok {
				name, k = CondKey(f, l), v
				switch {
				case op == "<" && truth, op == ">=" && !truth:
					k, le = v-1, true
				case op == "<=" && truth, op == ">" && !truth:
					le = true
				}
			} else if v, ok := in.number(l); ok {
				name, k = CondKey(f, r), v
				switch {
				case op == ">" && truth, op == "<=" && !truth:
					k, le = v-1, true
				case op == ">=" && truth, op == "<" && !truth:
					le = true
				}
			}
			if le && name != "" && (in.nsgeExprs[name] || in.relevant[name]) {
				if n, ok := st.Nums[name]; ok && n > k {
					return nil
				}
				if h, ok := st.Hi[name]; !ok || k < h {
					st.Hi[name] = k
				}
			}
		}
	case "assignment_expression":
		// if ((ret = f())): the value assigned decides.
		return in.assume(c.ChildByFieldName("left"), truth, st)
	}
	return in.record(c, truth, st)
}

// record keeps a condition's truth as a fact of the path.
func (in *Interp) record(c *sitter.Node, truth bool, st *State) *State {
	f := in.F
	k, neg := factKey(f, c)
	if neg {
		truth = !truth
	}
	if old, ok := st.Facts[k]; ok && old != truth {
		return nil
	}
	if !in.relevant[k] {
		// A create call's result is always worth knowing.
		held := false
		for _, r := range st.created {
			held = held || r == k || k == "IS_ERR("+r+")" || k == "IS_ERR_OR_NULL("+r+")" || strings.HasPrefix(k, r+"=") || strings.HasPrefix(k, r+"<") || strings.HasPrefix(k, r+"!")
		}
		if !held {
			return st
		}
	}
	st.Facts[k] = truth
	in.condNodes[k] = c
	// A boolean local stands for the condition it was set from.
	if KindOf(c) == "identifier" {
		if e, ok := st.localExpr[f.Text(c)]; ok && e != "" {
			t := truth
			if strings.HasPrefix(e, "!") {
				e, t = e[1:], !truth
			}
			if old, ok := st.Facts[e]; ok && old != t {
				return nil
			}
			st.Facts[e] = t
		}
	}
	return st
}

// callerTerms restates the choices of a callee's value (conditions on
// its parameters) in the caller's terms, the arguments, and makes those
// the caller's path decides.
func (in *Interp) callerTerms(v *Val, names []string, args []*sitter.Node, st *State) *Val {
	if v == nil || v.Cond == "" {
		return v
	}
	t, f := in.callerTerms(v.t, names, args, st), in.callerTerms(v.f, names, args, st)
	k := v.Cond
	if i := slices.Index(names, k); i >= 0 && i < len(args) {
		var neg bool
		k, neg = factKey(in.F, args[i])
		if neg {
			t, f = f, t
		}
	} else {
		k = substParams(k, names, keysOf(in.F, args))
	}
	if b, ok := st.Facts[k]; ok {
		if b {
			return t
		}
		return f
	}
	return &Val{Cond: k, t: t, f: f, Why: v.Why, Line: v.Line, File: v.File}
}

// learn keeps a condition key's truth, established by a callee's exit
// path, as a fact of the caller's path when the caller tests it (a
// bool local stands for the condition it was set from, as in record).
func (in *Interp) learn(k string, truth bool, st *State) {
	if k == "" || !in.relevant[k] {
		return
	}
	if _, ok := st.Facts[k]; ok {
		return
	}
	st.Facts[k] = truth
	if e, ok := st.localExpr[k]; ok && e != "" {
		t := truth
		if strings.HasPrefix(e, "!") {
			e, t = e[1:], !truth
		}
		if _, ok := st.Facts[e]; !ok {
			st.Facts[e] = t
		}
	}
}

// number evaluates a constant: a literal or a #define of the module.
func (in *Interp) number(n *sitter.Node) (int64, bool) {
	n = StripParens(n)
	if n == nil {
		return 0, false
	}
	switch KindOf(n) {
	case "number_literal":
		v, err := strconv.ParseInt(strings.TrimRight(in.F.Text(n), "uUlL"), 0, 64)
		return v, err == nil
	case "identifier":
		v, ok := in.Facts.Constants[in.F.Text(n)]
		return v, ok
	}
	return 0, false
}

// storeNum records the constant a num_sge source is assigned
// (req->num_sge = 1; ... wr.num_sge = req->num_sge): the path knows its
// value until it is assigned again.
func (in *Interp) storeNum(key, op string, rhs *sitter.Node, st *State) {
	if op != "=" || !in.nsgeExprs[key] {
		return
	}
	if v, ok := in.countBound(rhs, st); ok {
		st.Nums[key] = v
	}
}

// countBound is the value of an SGE count expression on the path: a
// constant (also in parentheses, as a macro's argument is) or a value
// the path assigned or tested. A ternary stays an expression (a
// summary substitutes the caller's arguments into it); the rule bounds
// it at the post.
func (in *Interp) countBound(n *sitter.Node, st *State) (int64, bool) {
	n = StripParens(n)
	if n == nil {
		return 0, false
	}
	if v, ok := in.number(n); ok {
		return v, true
	}
	if v, ok := st.Nums[CondKey(in.F, n)]; ok {
		return v, true
	}
	return 0, false
}

// nsgeExpr is what the path stores into num_sge: its bound when the path
// knows one, else the expression (bounded later by the path's tests).
func (in *Interp) nsgeExpr(rhs *sitter.Node, st *State) string {
	if v, ok := in.countBound(rhs, st); ok {
		return strconv.FormatInt(v, 10)
	}
	return CondKey(in.F, rhs)
}

// stripCond removes parentheses, likely()/unlikely() and !! from a
// condition.
func stripCond(f *File, n *sitter.Node) *sitter.Node {
	for {
		n = StripParens(n)
		if n == nil {
			return nil
		}
		if KindOf(n) == "call_expression" {
			name := f.Text(n.ChildByFieldName("function"))
			if args := Named(n.ChildByFieldName("arguments")); (name == "likely" || name == "unlikely") && len(args) == 1 {
				n = args[0]
				continue
			}
		}
		if KindOf(n) == "unary_expression" && f.Text(n.ChildByFieldName("operator")) == "!" {
			a := StripParens(n.ChildByFieldName("argument"))
			if a != nil && KindOf(a) == "unary_expression" && f.Text(a.ChildByFieldName("operator")) == "!" {
				n = a.ChildByFieldName("argument")
				continue
			}
		}
		return n
	}
}

// plainLocal keeps what a local's value says about addresses and the
// flag, and forgets where an uninformative value came from, so that
// paths that differ only in such values merge.
func plainLocal(name string, v *Val) *Val {
	if informative(v) {
		return v
	}
	i, _ := v.FlagsOn(nil)
	return &Val{kind: Unknown, inl: i, Why: name}
}

func informative(v *Val) bool {
	if v.Cond != "" {
		return informative(v.t) || informative(v.f)
	}
	return v.kind != Unknown || v.inl == FlagOn
}

// hasToken reports whether expression text k (spaces removed) mentions
// name as a whole operand: not as part of a longer identifier or as a
// member of something else.
func hasToken(k, name string) bool {
	for i := 0; ; {
		j := strings.Index(k[i:], name)
		if j < 0 {
			return false
		}
		j += i
		before := byte(' ')
		if j > 0 {
			before = k[j-1]
		}
		after := byte(' ')
		if j+len(name) < len(k) {
			after = k[j+len(name)]
		}
		if !isWord(before) && before != '.' && before != '>' && !isWord(after) {
			return true
		}
		i = j + 1
	}
}

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// factKey is a condition's canonical key, and whether the key states its
// negation: a > b is !(a <= b), a >= b is !(a < b), a != b is !(a == b),
// so a path that tested one form knows the other.
func factKey(f *File, n *sitter.Node) (string, bool) {
	n = stripCond(f, n)
	if n == nil {
		return "", false
	}
	if KindOf(n) == "binary_expression" {
		l, r := CondKey(f, n.ChildByFieldName("left")), CondKey(f, n.ChildByFieldName("right"))
		switch f.Text(n.ChildByFieldName("operator")) {
		case ">":
			return l + "<=" + r, true
		case ">=":
			return l + "<" + r, true
		case "!=":
			return l + "==" + r, true
		case "<", "<=", "==":
			return l + f.Text(n.ChildByFieldName("operator")) + r, false
		}
	}
	return CondKey(f, n), false
}

// localCond is the fact a local set from a condition stands for ("!"
// before the key when it is the negation).
func localCond(f *File, n *sitter.Node) string {
	k, neg := factKey(f, n)
	if neg {
		return "!" + k
	}
	return k
}

// addCount is a num_sge count after adding d SGEs: a number stays a
// number; a count the function did not set ("") becomes "+d", what it
// adds to its caller's; anything else is no longer bounded.
func addCount(old string, d int) string {
	if old == NsgeZeroed {
		old = "0"
	}
	if n, err := strconv.Atoi(old); err == nil && n+d >= 0 && n+d <= maxCount {
		return strconv.Itoa(n + d)
	}
	if old == "" {
		return fmt.Sprintf("%+d", d)
	}
	if k, ok := countDelta(old); ok && k+d >= -maxCount && k+d <= maxCount {
		return fmt.Sprintf("%+d", k+d)
	}
	return nsgeGrown
}

// A count grown past maxCount (a loop) or from an unknown one is
// nsgeGrown, one value, so that loops reach their fixed point.
const (
	maxCount  = 8
	nsgeGrown = "num_sge++"
)

// countDelta reads a count added to the caller's ("+1").
func countDelta(s string) (int, bool) {
	if len(s) < 2 || s[0] != '+' && s[0] != '-' {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
