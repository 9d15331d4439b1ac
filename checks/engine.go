package checks

import (
	"fmt"
	"strconv"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// The engine interprets one function path by path. A path forks at if,
// switch and loops (a loop body runs zero times or once; an assignment
// through a non-constant index inside it stands for every element), and
// ends at return. Each state holds, for that path, what was assigned to
// work requests (send_flags, sg_list, num_sge, opcode, next), to addresses
// and to locals, and the facts its branch conditions established. A path
// whose facts contradict each other is dropped. States that are equal are
// merged; past maxStates the function is reported as not fully analysed.

const maxStates = 512

type inline int

const (
	flagUnset inline = iota // not assigned in this function
	flagOff
	flagOn
)

type state struct {
	addr      map[string]*val   // SGE address places -> value
	flags     map[string]inline // work request place -> IB_SEND_INLINE status
	flagLine  map[string]int
	sgl       map[string]string // work request -> pointee of sg_list
	nsge      map[string]string // work request -> num_sge expression
	opc       map[string]string // work request -> opcode
	next      map[string]string // work request -> chained request
	alias     map[string]string
	locals    map[string]*val
	localExpr map[string]string // local -> the condition it was set from
	facts     map[string]bool
	nums      map[string]int64
}

func newState() *state {
	return &state{addr: map[string]*val{}, flags: map[string]inline{}, flagLine: map[string]int{}, sgl: map[string]string{},
		nsge: map[string]string{}, opc: map[string]string{}, next: map[string]string{}, alias: map[string]string{},
		locals: map[string]*val{}, localExpr: map[string]string{}, facts: map[string]bool{}, nums: map[string]int64{}}
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
		locals: cloneMap(s.locals), localExpr: cloneMap(s.localExpr), facts: cloneMap(s.facts), nums: cloneMap(s.nums)}
}

// key identifies a state for merging.
func (s *state) key() string {
	var b strings.Builder
	write := func(name string, keys []string, get func(string) string) {
		b.WriteString(name)
		for _, k := range keys {
			b.WriteString(k + "=" + get(k) + ";")
		}
	}
	write("A", sortedKeys(s.addr), func(k string) string { return fmt.Sprintf("%p", s.addr[k]) })
	write("F", sortedKeys(s.flags), func(k string) string { return strconv.Itoa(int(s.flags[k])) })
	write("S", sortedKeys(s.sgl), func(k string) string { return s.sgl[k] })
	write("N", sortedKeys(s.nsge), func(k string) string { return s.nsge[k] })
	write("O", sortedKeys(s.opc), func(k string) string { return s.opc[k] })
	write("X", sortedKeys(s.next), func(k string) string { return s.next[k] })
	write("P", sortedKeys(s.alias), func(k string) string { return s.alias[k] })
	write("L", sortedKeys(s.locals), func(k string) string { return fmt.Sprintf("%p", s.locals[k]) })
	write("C", sortedKeys(s.facts), func(k string) string { return strconv.FormatBool(s.facts[k]) })
	write("M", sortedKeys(s.nums), func(k string) string { return strconv.FormatInt(s.nums[k], 10) })
	return b.String()
}

// checkpoint is a place on a path where work requests leave the
// function: a post (of the listed requests) or the function's exit.
type checkpoint struct {
	node  *sitter.Node
	wrs   []string // posted requests (nil at exit)
	exit  bool
	state *state
}

// interp runs one function.
type interp struct {
	f       *file
	fn      *sitter.Node
	facts   *Facts
	types   map[string]string
	locals  map[string]bool // declared in the function
	params  map[string]bool
	onCheck func(checkpoint)
	capped  bool
}

func (in *interp) scope(st *state) *scope {
	return &scope{f: in.f, locals: st.locals, types: in.types, alias: st.alias, places: st.addr, facts: in.facts}
}

func (in *interp) run() {
	in.types, in.locals, in.params = map[string]string{}, map[string]bool{}, map[string]bool{}
	for _, p := range params(in.f, in.fn) {
		in.types[p.name] = p.typ
		in.params[p.name] = true
	}
	states := in.exec(in.fn.ChildByFieldName("body"), []*state{newState()})
	for _, st := range states {
		in.onCheck(checkpoint{node: in.fn, exit: true, state: st})
	}
}

func (in *interp) merge(states []*state) []*state {
	seen := map[string]bool{}
	var out []*state
	for _, s := range states {
		if s == nil {
			continue
		}
		k := s.key()
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, s)
		if len(out) >= maxStates {
			in.capped = true
			break
		}
	}
	return out
}

func (in *interp) exec(n *sitter.Node, states []*state) []*state {
	if n == nil || len(states) == 0 {
		return states
	}
	f := in.f
	switch n.Kind() {
	case "compound_statement":
		for _, c := range named(n) {
			states = in.exec(c, states)
		}
		return states
	case "expression_statement":
		for _, c := range named(n) {
			for _, st := range states {
				in.expr(c, st)
			}
		}
		return states
	case "declaration":
		for _, st := range states {
			in.declaration(n, st)
		}
		return states
	case "if_statement":
		cond := n.ChildByFieldName("condition")
		var yes, no []*state
		for _, st := range states {
			in.expr(cond, st) // calls in the condition (ret = f())
			yes = append(yes, in.assume(cond, true, st.clone()))
			no = append(no, in.assume(cond, false, st.clone()))
		}
		yes = in.exec(n.ChildByFieldName("consequence"), in.merge(yes))
		if alt := n.ChildByFieldName("alternative"); alt != nil {
			no = in.exec(alt, in.merge(no))
		}
		return in.merge(append(yes, no...))
	case "else_clause":
		for _, c := range named(n) {
			states = in.exec(c, states)
		}
		return states
	case "for_statement", "while_statement", "do_statement":
		if init := n.ChildByFieldName("initializer"); init != nil {
			states = in.exec(init, states)
			for _, st := range states {
				in.expr(init, st)
			}
		}
		body := n.ChildByFieldName("body")
		atLeastOnce := n.Kind() == "do_statement" || runsOnce(f, n)
		var once []*state
		for _, st := range states {
			c := st.clone()
			if cond := n.ChildByFieldName("condition"); cond != nil && n.Kind() != "do_statement" {
				c = in.assume(cond, true, c)
			}
			once = append(once, c)
		}
		once = in.exec(body, in.merge(once))
		if atLeastOnce {
			return once
		}
		return in.merge(append(states, once...))
	case "switch_statement":
		body := n.ChildByFieldName("body")
		var out []*state
		hasDefault := false
		for _, c := range named(body) {
			if c.Kind() != "case_statement" {
				continue
			}
			if c.ChildByFieldName("value") == nil {
				hasDefault = true
			}
			branch := make([]*state, 0, len(states))
			for _, st := range states {
				branch = append(branch, st.clone())
			}
			for _, s := range named(c) {
				if same(s, c.ChildByFieldName("value")) {
					continue
				}
				branch = in.exec(s, branch)
			}
			out = append(out, branch...)
		}
		if !hasDefault {
			out = append(out, states...)
		}
		return in.merge(out)
	case "return_statement":
		for _, st := range states {
			for _, c := range named(n) {
				in.expr(c, st)
			}
			in.onCheck(checkpoint{node: n, exit: true, state: st})
		}
		return nil
	case "goto_statement":
		return nil // error paths: what they skip is not posted here
	case "labeled_statement":
		for _, c := range named(n) {
			if c.Kind() != "statement_identifier" {
				states = in.exec(c, states)
			}
		}
		return states
	}
	_ = f
	return states
}

// runsOnce reports whether a loop's body surely runs: for (i = a; i < b;)
// with literals a < b, or a loop without a condition or with a nonzero
// literal condition.
func runsOnce(f *file, loop *sitter.Node) bool {
	cond := stripParens(loop.ChildByFieldName("condition"))
	if cond == nil {
		return true
	}
	if cond.Kind() == "number_literal" || cond.Kind() == "true" {
		return f.text(cond) != "0"
	}
	init := loop.ChildByFieldName("initializer")
	if loop.Kind() != "for_statement" || init == nil || cond.Kind() != "binary_expression" {
		return false
	}
	op := f.text(cond.ChildByFieldName("operator"))
	l, r := cond.ChildByFieldName("left"), cond.ChildByFieldName("right")
	if (op != "<" && op != "<=") || l.Kind() != "identifier" || r.Kind() != "number_literal" {
		return false
	}
	var start *sitter.Node
	walk(init, func(n *sitter.Node) bool {
		if n.Kind() == "assignment_expression" || n.Kind() == "init_declarator" {
			lhs := n.ChildByFieldName("left")
			if lhs == nil {
				lhs = n.ChildByFieldName("declarator")
			}
			if f.text(lhs) == f.text(l) {
				if v := n.ChildByFieldName("right"); v != nil {
					start = v
				} else {
					start = n.ChildByFieldName("value")
				}
			}
		}
		return true
	})
	if start == nil || start.Kind() != "number_literal" {
		return false
	}
	a, err1 := strconv.ParseInt(f.text(start), 0, 64)
	b, err2 := strconv.ParseInt(f.text(r), 0, 64)
	return err1 == nil && err2 == nil && (a < b || op == "<=" && a == b)
}

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
		if d.Kind() != "init_declarator" {
			continue
		}
		v := d.ChildByFieldName("value")
		if v == nil {
			continue
		}
		if v.Kind() == "initializer_list" {
			in.initList(name, v, st)
			continue
		}
		in.expr(v, st)
		if ptr {
			if p := pointee(f, v, st.alias); p != "" {
				st.alias[name] = p
			}
		}
		st.locals[name] = in.scope(st).valueOf(v)
		st.localExpr[name] = condKey(f, stripParens(v))
	}
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
				member = strings.TrimPrefix(f.text(d), ".")
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

// expr interprets an expression's effects: assignments and calls.
func (in *interp) expr(n *sitter.Node, st *state) {
	f := in.f
	switch n.Kind() {
	case "assignment_expression":
		in.expr(n.ChildByFieldName("right"), st)
		lhs, rhs := n.ChildByFieldName("left"), n.ChildByFieldName("right")
		op := f.text(n.ChildByFieldName("operator"))
		p := placeOf(f, lhs, st.alias)
		if strings.HasPrefix(p, "v:") {
			name := strings.TrimPrefix(p, "v:")
			if pt := pointee(f, rhs, st.alias); pt != "" && (rhs.Kind() == "pointer_expression" || st.alias[f.text(rhs)] != "" || rhs.Kind() == "identifier") {
				st.alias[name] = pt
			}
			st.locals[name] = in.scope(st).valueOf(rhs)
			st.localExpr[name] = condKey(f, stripParens(rhs))
			return
		}
		if p != "" {
			in.store(p, op, rhs, n, st)
		}
	case "call_expression":
		for _, a := range named(n.ChildByFieldName("arguments")) {
			in.expr(a, st)
		}
		name := f.text(n.ChildByFieldName("function"))
		args := named(n.ChildByFieldName("arguments"))
		if name == "memset" && len(args) >= 1 {
			if obj := pointee(f, args[0], st.alias); obj != "" {
				for _, m := range []map[string]inline{st.flags} {
					for k := range m {
						if k == obj || strings.HasPrefix(k, obj+".") {
							m[k] = flagOff
						}
					}
				}
				st.flags[obj] = flagOff
			}
		}
		if wr := in.postedWR(n, st); wr != "" {
			in.onCheck(checkpoint{node: n, wrs: in.chain(wr, st), state: st})
		}
	case "parenthesized_expression", "comma_expression":
		for _, c := range named(n) {
			in.expr(c, st)
		}
	}
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
	if p, ok := in.facts.posters[name]; ok && p.param < len(args) {
		if base := pointee(f, args[p.param], st.alias); base != "" {
			return base + p.suffix
		}
	}
	return ""
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
	wr, member := splitMember(p)
	switch member {
	case "send_flags":
		has := mentions(f, rhs, "IB_SEND_INLINE")
		switch {
		case op == "&=" && has:
			st.flags[wr] = flagOff
		case op == "|=" && has, op == "=" && has:
			st.flags[wr] = flagOn
			st.flagLine[wr] = f.line(at)
		case op == "=":
			st.flags[wr] = flagOff
		}
	case "sg_list":
		st.sgl[wr] = pointee(f, rhs, st.alias)
	case "num_sge":
		st.nsge[wr] = strings.Join(strings.Fields(f.text(rhs)), "")
	case "opcode":
		st.opc[wr] = f.text(rhs)
	case "next":
		st.next[wr] = pointee(f, rhs, st.alias)
	default:
		v := in.scope(st).valueOf(rhs)
		if op != "=" {
			if old, ok := st.addr[p]; ok {
				v = combine(old, v, func(x, y *val) *val {
					if x.kind == DMA || y.kind == DMA {
						return leaf(DMA, y.why, y.line)
					}
					return leaf(x.kind, x.why, x.line)
				})
			}
		}
		st.addr[p] = v
	}
}

// assume adds what a branch condition says on this path; nil when it
// contradicts what the path knows.
func (in *interp) assume(cond *sitter.Node, truth bool, st *state) *state {
	if st == nil {
		return nil
	}
	f := in.f
	c := stripParens(cond)
	if c == nil {
		return st
	}
	switch c.Kind() {
	case "unary_expression":
		if f.text(c.ChildByFieldName("operator")) == "!" {
			return in.assume(c.ChildByFieldName("argument"), !truth, st)
		}
	case "binary_expression":
		op := f.text(c.ChildByFieldName("operator"))
		l, r := stripParens(c.ChildByFieldName("left")), stripParens(c.ChildByFieldName("right"))
		switch op {
		case "&&":
			if truth {
				return in.assume(r, true, in.assume(l, true, st))
			}
			return st
		case "||":
			if !truth {
				return in.assume(r, false, in.assume(l, false, st))
			}
			return st
		case "==", "!=":
			eq := (op == "==") == truth
			if r.Kind() == "number_literal" && l.Kind() == "identifier" && eq {
				v, err := strconv.ParseInt(f.text(r), 0, 64)
				if err == nil {
					name := f.text(l)
					if old, ok := st.nums[name]; ok && old != v {
						return nil
					}
					st.nums[name] = v
				}
			}
		}
	case "assignment_expression":
		// if ((ret = f())): the value assigned decides.
		return in.assume(c.ChildByFieldName("left"), truth, st)
	}
	k := condKey(f, c)
	if old, ok := st.facts[k]; ok && old != truth {
		return nil
	}
	st.facts[k] = truth
	// A boolean local stands for the condition it was set from.
	if c.Kind() == "identifier" {
		if e, ok := st.localExpr[f.text(c)]; ok && e != "" {
			st.facts[e] = truth
		}
	}
	return st
}
