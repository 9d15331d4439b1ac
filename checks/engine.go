package checks

import (
	"fmt"
	"hash/fnv"
	"io"
	"regexp"
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
	maxStates = 64
	maxSteps  = 20000
	// maxPending bounds the states waiting to be processed (memory).
	maxPending = 2048
)

type inline int

const (
	flagUnset inline = iota // not assigned in this function
	flagOff
	flagOn
)

type state struct {
	addr      map[string]*val // SGE address places -> value
	flags     map[string]*val // work request place -> send_flags value
	flagLine  map[string]int
	sgl       map[string]string // work request -> pointee of sg_list
	nsge      map[string]string // work request -> num_sge expression
	opc       map[string]string // work request -> opcode
	next      map[string]string // work request -> chained request
	alias     map[string]string
	locals    map[string]*val
	localExpr map[string]string // local -> the condition it was set from
	facts     map[string]bool
	nums      map[string]int64  // expression -> its value on this path
	hi        map[string]int64  // expression -> an upper bound on this path
	created   map[string]string // attr -> the condition that holds the create call's result
	grant     map[string]int    // attr -> grantOK / grantFailed once the result is decided and overwritten
}

// nsgeZeroed is the num_sge of a request zeroed by its initializer or
// memset and not assigned since: 0 while nothing points its sg_list.
const nsgeZeroed = "=0"

const (
	grantPending = iota
	grantOK
	grantFailed
)

func newState() *state {
	return &state{addr: map[string]*val{}, flags: map[string]*val{}, flagLine: map[string]int{}, sgl: map[string]string{},
		nsge: map[string]string{}, opc: map[string]string{}, next: map[string]string{}, alias: map[string]string{},
		locals: map[string]*val{}, localExpr: map[string]string{}, facts: map[string]bool{}, nums: map[string]int64{},
		hi: map[string]int64{}, created: map[string]string{}, grant: map[string]int{}}
}

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (s *state) clone() *state {
	return &state{addr: cloneMap(s.addr), flags: cloneMap(s.flags), flagLine: cloneMap(s.flagLine), sgl: cloneMap(s.sgl),
		nsge: cloneMap(s.nsge), opc: cloneMap(s.opc), next: cloneMap(s.next), alias: cloneMap(s.alias),
		locals: cloneMap(s.locals), localExpr: cloneMap(s.localExpr), facts: cloneMap(s.facts), nums: cloneMap(s.nums),
		hi: cloneMap(s.hi), created: cloneMap(s.created), grant: cloneMap(s.grant)}
}

// hash identifies a state for merging (a 64-bit FNV-1a of its key).
func (s *state) hash() uint64 {
	h := fnv.New64a()
	s.write(h)
	return h.Sum64()
}

func (s *state) write(b io.Writer) {
	write := func(name string, keys []string, get func(string) string) {
		io.WriteString(b, name)
		for _, k := range keys {
			io.WriteString(b, k)
			io.WriteString(b, "=")
			io.WriteString(b, get(k))
			io.WriteString(b, ";")
		}
	}
	write("A", sortedKeys(s.addr), func(k string) string { return s.addr[k].key() })
	write("F", sortedKeys(s.flags), func(k string) string { return s.flags[k].key() + "@" + strconv.Itoa(s.flagLine[k]) })
	write("S", sortedKeys(s.sgl), func(k string) string { return s.sgl[k] })
	write("N", sortedKeys(s.nsge), func(k string) string { return s.nsge[k] })
	write("O", sortedKeys(s.opc), func(k string) string { return s.opc[k] })
	write("X", sortedKeys(s.next), func(k string) string { return s.next[k] })
	write("P", sortedKeys(s.alias), func(k string) string { return s.alias[k] })
	write("L", sortedKeys(s.locals), func(k string) string { return s.locals[k].key() })
	write("E", sortedKeys(s.localExpr), func(k string) string { return s.localExpr[k] })
	write("C", sortedKeys(s.facts), func(k string) string { return strconv.FormatBool(s.facts[k]) })
	write("M", sortedKeys(s.nums), func(k string) string { return strconv.FormatInt(s.nums[k], 10) })
	write("H", sortedKeys(s.hi), func(k string) string { return strconv.FormatInt(s.hi[k], 10) })
	write("Q", sortedKeys(s.created), func(k string) string { return s.created[k] })
	write("G", sortedKeys(s.grant), func(k string) string { return strconv.Itoa(s.grant[k]) })
}

// checkpoint is a place on a path where work requests leave the
// function: a post (of the listed requests) or the function's exit.
type checkpoint struct {
	node  *sitter.Node
	wrs   []string // posted requests (nil at exit)
	exit  bool
	state *state
	ret   *sitter.Node // the returned expression at a return
}

// siteVisit is one path reaching a statement that sets IB_SEND_INLINE.
type siteVisit struct {
	node  *sitter.Node
	reg   bool           // the request it flags is a registration
	conds []*sitter.Node // the conditions whose truth the path knows
	// At a post (onPost): the request's SGE count on the path (-1 when
	// not bounded) and the lengths of its SGEs ("" when not assigned on
	// the path).
	nsge int
	lens []string
}

// grantRecord is one path reaching a store of a QP's granted caps.
type grantRecord struct {
	node *sitter.Node
	msg  string // "" when the path records the grant correctly
}

// interp runs one function.
type interp struct {
	f       *file
	fn      *sitter.Node
	facts   *Facts
	types   map[string]string
	ptrs    map[string]bool // locals and parameters declared as pointers or arrays
	locals  map[string]bool // declared in the function
	params  map[string]bool
	onCheck func(checkpoint)
	onSite  func(siteVisit)
	onGrant func(grantRecord)
	// onPost hears of a post of a request flagged inline on a path: the
	// line that set the flag, its SGE count and lengths.
	onPost func(flagLine int, v siteVisit)
	capped bool
	steps  int
	budget int // steps allowed, when below maxSteps
	g      *cfg
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
	forks     []*state               // states a callee's exit paths split the current one into
}

func (in *interp) scope(st *state) *scope {
	return &scope{f: in.f, locals: st.locals, types: in.types, ptrs: in.ptrs, alias: st.alias, places: st.addr, flags: st.flags, facts: in.facts, st: st, in: in}
}

func (in *interp) run() {
	in.types, in.ptrs, in.locals, in.params = map[string]string{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	in.condNodes = map[string]*sitter.Node{}
	for _, p := range params(in.f, in.fn) {
		in.types[p.name] = p.typ
		in.params[p.name] = true
		in.ptrs[p.name] = p.pointer
	}
	in.prescan()
	in.templates = in.facts.templatesOf(in.f)
	in.g = buildCFG(in.f, in.fn)
	g := in.g
	in.sites = map[int][]*sitter.Node{}
	if in.onSite != nil {
		sites := findInlineSites(in.f, in.fn)
		for id, nd := range g.nodes {
			if nd.ast == nil || nd.kind == cBranch {
				continue
			}
			for _, s := range sites {
				if nd.ast.StartByte() <= s.node.StartByte() && s.node.EndByte() <= nd.ast.EndByte() && !inNestedBlock(nd.ast, s.node) {
					in.sites[id] = append(in.sites[id], s.node)
				}
			}
		}
	}
	seen := make([]map[uint64]bool, len(g.nodes))
	type item struct {
		id int
		st *state
	}
	start := newState()
	seen[g.entry] = map[uint64]bool{start.hash(): true}
	work := []item{{g.entry, start}}
	for len(work) > 0 {
		it := work[len(work)-1]
		work = work[:len(work)-1]
		in.steps++
		if in.steps > maxSteps || in.budget > 0 && in.steps > in.budget {
			in.capped = true
			return
		}
		nd := g.nodes[it.id]
		for _, o := range in.transfer(nd, it.st) {
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
			if len(seen[o.id]) >= maxStates {
				if debugCap != nil && !in.capped {
					debugCap(in, o.id, o.st)
				}
				in.capped = true
				continue
			}
			seen[o.id][k] = true
			if len(work) >= maxPending {
				in.capped = true
				continue
			}
			work = append(work, item(o))
		}
	}
}

var debugCap func(in *interp, id int, st *state)

type out struct {
	id int
	st *state
}

// transfer applies a node to a state and returns its successors' states.
func (in *interp) transfer(nd *cfgNode, st *state) []out {
	switch nd.kind {
	case cExit:
		in.onCheck(checkpoint{node: in.fn, exit: true, state: st})
		return nil
	case cReturn:
		st = st.clone()
		in.forks = nil
		var ret *sitter.Node
		for _, c := range named(nd.ast) {
			in.expr(c, st)
			ret = c
		}
		for _, s := range append([]*state{st}, in.takeForks()...) {
			in.visitSites(nd, s)
			in.onCheck(checkpoint{node: nd.ast, exit: true, state: s, ret: ret})
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
		for _, s := range append([]*state{st}, in.takeForks()...) {
			yes := in.assume(nd.ast, true, s.clone())
			no := in.assume(nd.ast, false, s)
			outs = append(outs, out{nd.succ[0], yes}, out{nd.succ[1], no})
		}
		return outs
	}
	var outs []out
	for _, s := range append([]*state{st}, in.takeForks()...) {
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

func (in *interp) takeForks() []*state {
	f := in.forks
	in.forks = nil
	return f
}

// visitSites reports the inline sites a node evaluates with the
// conditions the path knows.
func (in *interp) visitSites(nd *cfgNode, st *state) {
	if in.onSite == nil || in.sites == nil {
		return
	}
	for _, s := range in.sites[nd.id] {
		var conds []*sitter.Node
		for _, k := range sortedKeys(st.facts) {
			if c, ok := in.condNodes[k]; ok {
				conds = append(conds, c)
			}
		}
		reg := false
		if s.Kind() == "assignment_expression" {
			if wr, m := splitMember(placeOf(in.f, s.ChildByFieldName("left"), st.alias)); m == "send_flags" {
				op := st.opc[wr]
				if op == "" && !in.locals[root(wr)] {
					op, _, _ = in.facts.opcodeOf(fieldKey(wr))
				}
				reg = registrationOps[op]
			}
		}
		in.onSite(siteVisit{node: s, conds: conds, reg: reg})
	}
}

// inNestedBlock reports whether s lies in a statement expression inside
// n (evaluated by a node of its own).
func inNestedBlock(n, s *sitter.Node) bool {
	for p := s; p != nil && !same(p, n); p = p.Parent() {
		if p.Kind() == "compound_statement" {
			return true
		}
	}
	return false
}

func exprsOf(n *sitter.Node) []*sitter.Node {
	if n.Kind() == "expression_statement" {
		return named(n)
	}
	return []*sitter.Node{n}
}

// prescan finds which conditions the function tests more than once and
// the expressions stored into num_sge.
func (in *interp) prescan() {
	f := in.f
	count := map[string]int{}
	in.relevant = map[string]bool{}
	in.nsgeExprs = map[string]bool{}
	var conds func(n *sitter.Node)
	conds = func(n *sitter.Node) {
		n = stripCond(f, n)
		if n == nil {
			return
		}
		if n.Kind() == "binary_expression" {
			if op := f.text(n.ChildByFieldName("operator")); op == "&&" || op == "||" {
				conds(n.ChildByFieldName("left"))
				conds(n.ChildByFieldName("right"))
				return
			}
		}
		if n.Kind() == "unary_expression" && f.text(n.ChildByFieldName("operator")) == "!" {
			conds(n.ChildByFieldName("argument"))
			return
		}
		k, _ := factKey(f, n)
		count[k]++
	}
	walk(in.fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		switch n.Kind() {
		case "if_statement", "while_statement", "do_statement", "for_statement", "conditional_expression":
			conds(n.ChildByFieldName("condition"))
		case "assignment_expression":
			if l := n.ChildByFieldName("left"); l.Kind() == "field_expression" && f.text(l.ChildByFieldName("field")) == "num_sge" {
				in.nsgeExprs[condKey(f, n.ChildByFieldName("right"))] = true
			}
		case "initializer_pair":
			if strings.Contains(f.text(n), "num_sge") {
				if v := n.ChildByFieldName("value"); v != nil {
					in.nsgeExprs[condKey(f, v)] = true
				}
			}
		}
		return true
	})
	// Locals that hold an inline size or decision.
	inlineLocals := map[string]bool{}
	bools := map[string]bool{}
	for _, p := range params(f, in.fn) {
		if strings.TrimSpace(p.typ) == "bool" && !p.pointer {
			bools[p.name] = true // a guard passed in
		}
	}
	walk(in.fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		switch n.Kind() {
		case "declaration":
			if strings.TrimSpace(f.text(n.ChildByFieldName("type"))) == "bool" {
				for _, d := range named(n) {
					if name, _ := declName(f, d); name != "" {
						bools[name] = true
					}
				}
			}
		case "init_declarator":
			if v := n.ChildByFieldName("value"); v != nil && strings.Contains(strings.ToLower(f.text(v)), "inline") {
				name, _ := declName(f, n.ChildByFieldName("declarator"))
				inlineLocals[name] = true
			}
		case "assignment_expression":
			if l := n.ChildByFieldName("left"); l.Kind() == "identifier" && strings.Contains(strings.ToLower(f.text(n.ChildByFieldName("right"))), "inline") {
				inlineLocals[f.text(l)] = true
			}
		}
		return true
	})
	for k, c := range count {
		lk := strings.ToLower(k)
		keep := c >= 2 || strings.Contains(lk, "inline") || strings.Contains(lk, "sge") || bools[k] || in.nsgeExprs[k]
		for l := range inlineLocals {
			keep = keep || hasToken(k, l)
		}
		if m := callNameRe.FindStringSubmatch(k); m != nil && in.facts.mentionsInline(m[1]) {
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
func (in *interp) declaration(n *sitter.Node, st *state) {
	f := in.f
	typ := f.text(n.ChildByFieldName("type"))
	for _, d := range named(n) {
		if same(d, n.ChildByFieldName("type")) {
			continue
		}
		name, ptr := declName(f, d)
		if name == "" {
			continue
		}
		in.types[name] = typ
		in.locals[name] = true
		in.ptrs[name] = ptr
		in.kill(name, st)
		if d.Kind() != "init_declarator" {
			continue
		}
		v := d.ChildByFieldName("value")
		if v == nil {
			continue
		}
		if v.Kind() == "initializer_list" && ptr && in.pointerArray(name, v) {
			continue
		}
		if v.Kind() == "compound_literal_expression" && !ptr {
			if l := v.ChildByFieldName("value"); l != nil {
				v = l
			}
		}
		if v.Kind() == "initializer_list" {
			// = {} and designated initializers zero what they omit.
			st.flags[name] = flagVal(flagOff, "initializer", f.line(v))
			st.nsge[name] = nsgeZeroed
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
func (in *interp) pointerArray(name string, list *sitter.Node) bool {
	var targets []string
	for _, c := range named(list) {
		c = stripParens(c)
		if c.Kind() == "comment" {
			continue
		}
		if c.Kind() != "pointer_expression" || in.f.text(c.ChildByFieldName("operator")) != "&" {
			return false
		}
		t := objectPlace(in.f, c.ChildByFieldName("argument"), nil)
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

// throughPtrArray names the places a place reached through an array of
// pointers stands for: arr[k].x is element k's target's x, arr[*].x each
// target's (a loop over the array, or an index the path does not know).
func (in *interp) throughPtrArray(p string) []string {
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
func (in *interp) template(n *sitter.Node) *sitter.Node {
	n = stripParens(n)
	if n == nil {
		return nil
	}
	if n.Kind() == "pointer_expression" && in.f.text(n.ChildByFieldName("operator")) == "*" {
		n = stripParens(n.ChildByFieldName("argument"))
	}
	if n.Kind() == "pointer_expression" && in.f.text(n.ChildByFieldName("operator")) == "&" {
		n = stripParens(n.ChildByFieldName("argument"))
	}
	if n != nil && n.Kind() == "identifier" && !in.locals[in.f.text(n)] && !in.params[in.f.text(n)] {
		return in.templates[in.f.text(n)]
	}
	return nil
}

// initList reads { .send_flags = ..., .wr = { ... } } for object obj.
func (in *interp) initList(obj string, list *sitter.Node, st *state) {
	f := in.f
	for _, c := range named(list) {
		if c.Kind() != "initializer_pair" {
			continue
		}
		var member string
		for _, d := range named(c) {
			if d.Kind() == "field_designator" {
				if member != "" {
					member += "."
				}
				member += strings.TrimPrefix(f.text(d), ".")
			}
		}
		v := c.ChildByFieldName("value")
		if member == "" || v == nil {
			continue
		}
		if v.Kind() == "initializer_list" {
			in.initList(obj+"."+member, v, st)
			continue
		}
		in.store(obj+"."+member, "=", v, c, st)
	}
}

// zero records an object zeroed by an initializer that omits members.
func (in *interp) zero(obj string, line int, st *state) {
	for k := range st.flags {
		if strings.HasPrefix(k, obj+".") {
			st.flags[k] = flagVal(flagOff, "initializer", line)
		}
	}
	st.flags[obj] = flagVal(flagOff, "initializer", line)
	delete(st.flagLine, obj)
	st.nsge[obj] = nsgeZeroed
	delete(st.sgl, obj)
	delete(st.opc, obj)
}

// kill drops what the path knew about a variable or place that changes.
func (in *interp) kill(name string, st *state) {
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
	for k := range st.facts {
		if hasToken(k, name) {
			delete(st.facts, k)
		}
	}
	for k := range st.nums {
		if hasToken(k, name) {
			delete(st.nums, k)
		}
	}
	for k := range st.hi {
		if hasToken(k, name) {
			delete(st.hi, k)
		}
	}
	for k, e := range st.localExpr {
		if hasToken(e, name) {
			delete(st.localExpr, k)
		}
	}
}

// expr interprets an expression's effects: assignments and calls.
func (in *interp) expr(n *sitter.Node, st *state) {
	if n == nil {
		return
	}
	f := in.f
	switch n.Kind() {
	case "assignment_expression":
		lhs, rhs := n.ChildByFieldName("left"), n.ChildByFieldName("right")
		if rhs == nil || lhs == nil {
			return
		}
		in.expr(rhs, st)
		op := f.text(n.ChildByFieldName("operator"))
		p := placeOf(f, lhs, st.alias)
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
			if pt := pointee(f, rhs, st.alias); pt != "" && in.ptrs[name] {
				st.alias[name] = pt
			} else if pt != "" && (rhs.Kind() == "pointer_expression" || st.alias[f.text(rhs)] != "") {
				st.alias[name] = pt
			}
			if t := in.template(rhs); t != nil && !in.ptrs[name] {
				in.initList(name, t, st)
			}
			if lit := stripParens(rhs); op == "=" && !in.ptrs[name] && lit != nil && lit.Kind() == "compound_literal_expression" {
				if l := lit.ChildByFieldName("value"); l != nil {
					in.zero(name, f.line(lit), st)
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
				in.created(c, condKey(f, lhs), st)
			}
			return
		}
		if p != "" {
			in.kill(strings.Join(strings.Fields(f.text(lhs)), ""), st)
			if t := in.template(rhs); t != nil {
				in.initList(p, t, st)
				return
			}
			if lit := stripParens(rhs); op == "=" && lit != nil && lit.Kind() == "compound_literal_expression" {
				// *wr = (struct ib_send_wr){ ... }: zeroes what it omits.
				if l := lit.ChildByFieldName("value"); l != nil {
					in.zero(p, f.line(lit), st)
					in.initList(p, l, st)
					return
				}
			}
			in.store(p, op, rhs, n, st)
			if c := in.createCall(rhs); c != nil {
				in.created(c, condKey(f, lhs), st)
			}
		}
	case "call_expression":
		args := named(n.ChildByFieldName("arguments"))
		for _, a := range args {
			in.expr(a, st)
		}
		name := f.text(n.ChildByFieldName("function"))
		switch name {
		case "memset":
			if len(args) >= 1 {
				if obj := pointee(f, args[0], st.alias); obj != "" {
					for k := range st.flags {
						if k == obj || strings.HasPrefix(k, obj+".") {
							st.flags[k] = flagVal(flagOff, "memset", f.line(n))
						}
					}
					st.flags[obj] = flagVal(flagOff, "memset", f.line(n))
					st.nsge[obj] = nsgeZeroed
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
		if createFuncs[name] {
			in.created(n, condKey(f, n), st)
		}
		in.applySummary(name, args, n, st)
		if wr := in.postedWR(n, st); wr != "" {
			in.onCheck(checkpoint{node: n, wrs: in.chain(wr, st), state: st})
			// The callee's other exit paths post too.
			for _, fork := range in.forks {
				if w := in.postedWR(n, fork); w != "" {
					in.onCheck(checkpoint{node: n, wrs: in.chain(w, fork), state: fork})
				}
			}
		}
	case "update_expression":
		in.kill(strings.Join(strings.Fields(f.text(n.ChildByFieldName("argument"))), ""), st)
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
		for _, c := range named(n) {
			in.expr(c, st)
		}
	}
}

// createCall is the QP creation call an expression is (a create call
// in a cast or parentheses).
func (in *interp) createCall(n *sitter.Node) *sitter.Node {
	n = stripParens(n)
	if n != nil && n.Kind() == "call_expression" && createFuncs[in.f.text(n.ChildByFieldName("function"))] && in.f.text(n.ChildByFieldName("function")) != "ib_query_qp" {
		return n
	}
	return nil
}

// created records that call creates a QP with its attr argument, its
// result held by the condition res.
func (in *interp) created(call *sitter.Node, res string, st *state) {
	if in.f.text(call.ChildByFieldName("function")) == "ib_query_qp" {
		return
	}
	args := named(call.ChildByFieldName("arguments"))
	// Only the init attr argument: the cm_id or pd passed along is no
	// attr the caps are written back into.
	if i, ok := createAttrArg[in.f.text(call.ChildByFieldName("function"))]; ok && i < len(args) {
		args = args[i : i+1]
	}
	for _, a := range args {
		t := strings.TrimPrefix(strings.Join(strings.Fields(in.f.text(a)), ""), "&")
		if a.Kind() == "pointer_expression" || in.ptrs[t] {
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
func (in *interp) grantStatus(attr string, st *state) int {
	res, ok := st.created[attr]
	if !ok {
		return st.grant[attr]
	}
	if v, ok := st.facts[res]; ok {
		if v {
			return grantFailed
		}
		return grantOK
	}
	for _, w := range []string{"IS_ERR(" + res + ")", "IS_ERR_OR_NULL(" + res + ")"} {
		if v, ok := st.facts[w]; ok {
			if v {
				return grantFailed
			}
			return grantOK
		}
	}
	if v, ok := st.nums[res]; ok {
		if v == 0 {
			return grantOK
		}
		return grantFailed
	}
	for k, v := range st.facts {
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
func (in *interp) checkGrantStore(n *sitter.Node, lhsPlace string, rhs *sitter.Node, st *state) {
	if in.onGrant == nil || strings.HasPrefix(lhsPlace, "v:") || lhsPlace == "" {
		return
	}
	f := in.f
	if strings.HasSuffix(strings.Join(strings.Fields(f.text(n.ChildByFieldName("left"))), ""), "cap.max_inline_data") {
		return // a request, not a record
	}
	e := in.decide(rhs, st)
	if e.Kind() == "conditional_expression" {
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
	walk(e, func(c *sitter.Node) bool {
		if c.Kind() == "field_expression" && strings.HasSuffix(strings.Join(strings.Fields(f.text(c)), ""), "cap.max_inline_data") {
			t := strings.Join(strings.Fields(f.text(c)), "")
			attr = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(t, "cap.max_inline_data"), "."), "->")
		}
		return attr == ""
	})
	if attr == "" {
		in.onGrant(grantRecord{node: n})
		return
	}
	if _, queried := in.facts.queried[fieldKey(attr+".cap.max_inline_data")]; queried {
		in.onGrant(grantRecord{node: n})
		return
	}
	lhs := f.text(n.ChildByFieldName("left"))
	_, tracked := st.created[attr]
	status := in.grantStatus(attr, st)
	if !tracked && status == grantPending {
		if _, known := st.grant[attr]; !known {
			// Not created with on this path: created with another attr?
			for other := range st.created {
				if in.grantStatus(other, st) != grantFailed {
					in.onGrant(grantRecord{node: n, msg: fmt.Sprintf("%s records %s, but on this path the QP was created with %s: %s still holds the request", lhs, attr+".cap.max_inline_data", other, attr)})
					return
				}
			}
			in.onGrant(grantRecord{node: n})
			return
		}
	}
	switch status {
	case grantOK:
		in.onGrant(grantRecord{node: n})
	case grantFailed:
		for other := range st.created {
			if other != attr && in.grantStatus(other, st) != grantFailed {
				in.onGrant(grantRecord{node: n, msg: fmt.Sprintf("%s records %s, but on this path the QP was created with %s (the creation with %s failed): %s still holds the request", lhs, attr+".cap.max_inline_data", other, attr, attr)})
				return
			}
		}
		in.onGrant(grantRecord{node: n, msg: fmt.Sprintf("when QP creation fails (%s), %s records %s, not 0", st.created[attr], lhs, strings.Join(strings.Fields(f.text(e)), " "))})
	default:
		res := st.created[attr]
		in.onGrant(grantRecord{node: n, msg: fmt.Sprintf("%s records the caps whether or not QP creation succeeded (%s): when it fails, they hold the request, and the recorded size must be 0", lhs, res)})
	}
}

// decide returns the arm of the ternaries in n that this path's facts
// choose (n itself when undecided).
func (in *interp) decide(n *sitter.Node, st *state) *sitter.Node {
	n = stripParens(n)
	for n != nil && n.Kind() == "conditional_expression" {
		c := stripCond(in.f, n.ChildByFieldName("condition"))
		truth, neg := factKey(in.f, c)
		if c.Kind() == "unary_expression" && in.f.text(c.ChildByFieldName("operator")) == "!" {
			truth, neg = factKey(in.f, stripCond(in.f, c.ChildByFieldName("argument")))
			neg = !neg
		}
		v, ok := st.facts[truth]
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
				n = stripParens(cons)
				continue
			}
			return stripParens(n.ChildByFieldName("condition"))
		}
		n = stripParens(n.ChildByFieldName("alternative"))
	}
	return n
}

// postedWR returns the work request a call posts: ib_post_send, a
// device's post_send op, or a function that posts its parameter.
func (in *interp) postedWR(call *sitter.Node, st *state) string {
	f := in.f
	fnNode := call.ChildByFieldName("function")
	name := f.text(fnNode)
	args := named(call.ChildByFieldName("arguments"))
	if name == "ib_post_send" || fnNode.Kind() == "field_expression" && f.text(fnNode.ChildByFieldName("field")) == "post_send" {
		if len(args) >= 2 {
			return pointee(f, args[1], st.alias)
		}
	}
	if p, ok := in.facts.posterOf(name); ok && p.param < len(args) {
		if base := pointee(f, args[p.param], st.alias); base != "" {
			return base + p.suffix
		}
	}
	return ""
}

// applySummary applies what a module function called here does to its
// pointer arguments: the flags and opcodes it sets.
func (in *interp) applySummary(name string, args []*sitter.Node, call *sitter.Node, st *state) {
	s := in.facts.summary(name)
	if s == nil {
		return
	}
	if s.variants != nil {
		// One state per exit path of the callee.
		bases := make([]string, len(args))
		for i, a := range args {
			bases[i] = pointee(in.f, a, st.alias)
		}
		orig := st.clone()
		keys := keysOf(in.f, args)
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
		base := pointee(in.f, args[e.param], st.alias)
		if base == "" {
			continue
		}
		wr := base + e.suffix
		if e.opcode != "" {
			st.opc[wr] = e.opcode
		}
		if e.flags != nil {
			v := e.flags
			if old, ok := st.flags[wr]; ok && !e.assigns {
				v = compound("|=", old, v)
			}
			st.flags[wr] = v
			if isOn(v) {
				st.flagLine[wr] = in.f.line(call)
			}
		}
	}
}

func keysOf(f *file, args []*sitter.Node) []string {
	keys := make([]string, len(args))
	for i, a := range args {
		keys[i] = condKey(f, a)
	}
	return keys
}

// variantFeasible reports whether the caller's path (st) can take a
// callee's exit path: no condition that exit established on the
// parameters, restated in the caller's terms (keys: the arguments),
// is one the caller's path decided the other way.
func variantFeasible(v []varEffect, names, keys []string, st *state) bool {
	for _, e := range v {
		if e.kind != 'c' {
			continue
		}
		if b, ok := st.facts[substParams(e.rel, names, keys)]; ok && b != (e.s == "1") {
			return false
		}
	}
	return true
}

// applyVariant applies one exit path of a callee to the caller's state.
func (in *interp) applyVariant(v []varEffect, names []string, args []*sitter.Node, bases []string, call *sitter.Node, st *state) {
	for _, e := range v {
		switch e.kind {
		case 'c':
			continue // an exit condition: variantFeasible reads it
		case 'r':
			// The exit path's constant return: what the call's
			// value is on this path (if (helper(...)) decides).
			if call != nil {
				st.facts[condKey(in.f, call)] = e.s != "0"
			}
			continue
		case 'n':
			if e.param < len(bases) && bases[e.param] != "" {
				// num_sge in the callee's terms: the caller's.
				keys := make([]string, len(args))
				for i, a := range args {
					keys[i] = condKey(in.f, a)
				}
				st.nsge[bases[e.param]+e.rel] = constChoice(substParams(e.s, names, keys))
			}
			continue
		}
		if e.param >= len(bases) || bases[e.param] == "" {
			continue
		}
		p := bases[e.param] + e.rel
		switch e.kind {
		case 'f':
			st.flags[p] = e.v
			if maybeOn(e.v) {
				st.flagLine[p] = in.f.line(call)
			} else {
				delete(st.flagLine, p)
			}
		case 'o':
			st.opc[p] = e.s
		case 'a':
			if x := bases[e.param]; e.rel == "" && !in.ptrs[x] && (in.locals[x] || in.params[x]) && call != nil && in.outArg(call, e.param, x) {
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
						st.flagLine[x] = in.f.line(call)
					}
				}
				continue
			}
			st.addr[p] = e.v
		case 's':
			var j int
			_, _ = fmt.Sscanf(e.s, "%d", &j) // not a number: 0
			if j < len(bases) && bases[j] != "" {
				st.sgl[p] = bases[j] + e.s[strings.IndexByte(e.s, ' ')+1:]
			}
		case 'n':
			st.nsge[p] = e.s
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
func (in *interp) outArg(call *sitter.Node, i int, x string) bool {
	args := named(call.ChildByFieldName("arguments"))
	if i >= len(args) {
		return false
	}
	a := stripParens(args[i])
	return a.Kind() == "pointer_expression" && in.f.text(a.ChildByFieldName("operator")) == "&" && strings.TrimSpace(in.f.text(a.ChildByFieldName("argument"))) == x
}

// chain lists a posted request and those chained after it with next.
func (in *interp) chain(head string, st *state) []string {
	var out []string
	seen := map[string]bool{}
	for w := head; w != "" && !seen[w]; w = st.next[w] {
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// store records an assignment to a field place.
func (in *interp) store(p, op string, rhs, at *sitter.Node, st *state) {
	f := in.f
	if ts := in.throughPtrArray(p); ts != nil {
		for _, t := range ts {
			in.store(t, op, rhs, at, st)
		}
		return
	}
	wr, member := splitMember(p)
	switch member {
	case "send_flags":
		v := in.scope(st).valueOf(rhs)
		if old, ok := st.flags[p0(wr)]; ok && op != "=" {
			v = compound(op, old, v)
		} else if op == "&=" {
			v = compound(op, flagVal(flagUnset, "", 0), v)
		} else if op == "|=" && !ok {
			// Or-ed into flags set elsewhere: only what is or-ed in
			// is known.
			v = compound(op, flagVal(flagUnset, "", 0), v)
		}
		wr = p0(wr)
		st.flags[wr] = v
		if isOn(v) || maybeOn(v) {
			st.flagLine[wr] = f.line(at)
		} else {
			delete(st.flagLine, wr)
		}
	case "sg_list":
		st.sgl[p0(wr)] = sgeList(pointee(f, rhs, st.alias))
	case "num_sge":
		st.nsge[p0(wr)] = condKey(f, rhs)
	case "opcode":
		st.opc[p0(wr)] = f.text(rhs)
	case "next":
		st.next[p0(wr)] = pointee(f, rhs, st.alias)
	default:
		p = in.throughList(p, st)
		v := in.scope(st).valueOf(rhs)
		if op != "=" {
			if old, ok := st.addr[p]; ok {
				v = compound(op, old, v)
			}
		}
		st.addr[p] = v
	}
}

// throughList names a place reached through a request's sg_list
// (wr->sg_list->addr, wr->sg_list[1].addr) by the list it points at.
func (in *interp) throughList(p string, st *state) string {
	for _, wr := range sortedKeys(st.sgl) {
		pre := wr + ".sg_list"
		if strings.HasPrefix(p, pre) && (len(p) == len(pre) || p[len(pre)] == '.' || p[len(pre)] == '[') && st.sgl[wr] != "" {
			return canon(st.sgl[wr] + p[len(pre):])
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
func (in *interp) assume(cond *sitter.Node, truth bool, st *state) *state {
	if st == nil {
		return nil
	}
	f := in.f
	c := stripCond(f, cond)
	if c == nil {
		return st
	}
	switch c.Kind() {
	case "number_literal", "true", "false", "null":
		v := f.text(c)
		nonzero := v != "0" && v != "false" && v != "NULL" && c.Kind() != "null"
		if nonzero != truth {
			return nil
		}
		return st
	case "unary_expression":
		if f.text(c.ChildByFieldName("operator")) == "!" {
			return in.assume(c.ChildByFieldName("argument"), !truth, st)
		}
	case "binary_expression":
		op := f.text(c.ChildByFieldName("operator"))
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
				name := condKey(f, l)
				if old, ok := st.nums[name]; ok && old != v {
					return nil
				}
				if h, ok := st.hi[name]; ok && v > h {
					return nil
				}
				if in.relevant[name] || in.nsgeExprs[name] {
					st.nums[name] = v
				}
			} else if ok && !eq {
				if old, ok := st.nums[condKey(f, l)]; ok && old == v {
					return nil
				}
			}
		case "<", "<=", ">", ">=":
			// n < K, n <= K (or their negations K < n...) bound n.
			name, k, le := "", int64(0), false
			if v, ok := in.number(r); ok {
				name, k = condKey(f, l), v
				switch {
				case op == "<" && truth, op == ">=" && !truth:
					k, le = v-1, true
				case op == "<=" && truth, op == ">" && !truth:
					le = true
				}
			} else if v, ok := in.number(l); ok {
				name, k = condKey(f, r), v
				switch {
				case op == ">" && truth, op == "<=" && !truth:
					k, le = v-1, true
				case op == ">=" && truth, op == "<" && !truth:
					le = true
				}
			}
			if le && name != "" && (in.nsgeExprs[name] || in.relevant[name]) {
				if n, ok := st.nums[name]; ok && n > k {
					return nil
				}
				if h, ok := st.hi[name]; !ok || k < h {
					st.hi[name] = k
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
func (in *interp) record(c *sitter.Node, truth bool, st *state) *state {
	f := in.f
	k, neg := factKey(f, c)
	if neg {
		truth = !truth
	}
	if old, ok := st.facts[k]; ok && old != truth {
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
	st.facts[k] = truth
	in.condNodes[k] = c
	// A boolean local stands for the condition it was set from.
	if c.Kind() == "identifier" {
		if e, ok := st.localExpr[f.text(c)]; ok && e != "" {
			t := truth
			if strings.HasPrefix(e, "!") {
				e, t = e[1:], !truth
			}
			if old, ok := st.facts[e]; ok && old != t {
				return nil
			}
			st.facts[e] = t
		}
	}
	return st
}

// number evaluates a constant: a literal or a #define of the module.
func (in *interp) number(n *sitter.Node) (int64, bool) {
	n = stripParens(n)
	if n == nil {
		return 0, false
	}
	switch n.Kind() {
	case "number_literal":
		v, err := strconv.ParseInt(strings.TrimRight(in.f.text(n), "uUlL"), 0, 64)
		return v, err == nil
	case "identifier":
		v, ok := in.facts.constants[in.f.text(n)]
		return v, ok
	}
	return 0, false
}

// stripCond removes parentheses, likely()/unlikely() and !! from a
// condition.
func stripCond(f *file, n *sitter.Node) *sitter.Node {
	for {
		n = stripParens(n)
		if n == nil {
			return nil
		}
		if n.Kind() == "call_expression" {
			name := f.text(n.ChildByFieldName("function"))
			if args := named(n.ChildByFieldName("arguments")); (name == "likely" || name == "unlikely") && len(args) == 1 {
				n = args[0]
				continue
			}
		}
		if n.Kind() == "unary_expression" && f.text(n.ChildByFieldName("operator")) == "!" {
			a := stripParens(n.ChildByFieldName("argument"))
			if a != nil && a.Kind() == "unary_expression" && f.text(a.ChildByFieldName("operator")) == "!" {
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
func plainLocal(name string, v *val) *val {
	if informative(v) {
		return v
	}
	i, _ := v.flagsOn(nil)
	return &val{kind: Unknown, inl: i, why: name}
}

func informative(v *val) bool {
	if v.cond != "" {
		return informative(v.t) || informative(v.f)
	}
	return v.kind != Unknown || v.inl == flagOn
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
func factKey(f *file, n *sitter.Node) (string, bool) {
	n = stripCond(f, n)
	if n == nil {
		return "", false
	}
	if n.Kind() == "binary_expression" {
		l, r := condKey(f, n.ChildByFieldName("left")), condKey(f, n.ChildByFieldName("right"))
		switch f.text(n.ChildByFieldName("operator")) {
		case ">":
			return l + "<=" + r, true
		case ">=":
			return l + "<" + r, true
		case "!=":
			return l + "==" + r, true
		case "<", "<=", "==":
			return l + f.text(n.ChildByFieldName("operator")) + r, false
		}
	}
	return condKey(f, n), false
}

// localCond is the fact a local set from a condition stands for ("!"
// before the key when it is the negation).
func localCond(f *file, n *sitter.Node) string {
	k, neg := factKey(f, n)
	if neg {
		return "!" + k
	}
	return k
}
