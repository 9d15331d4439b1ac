package checks

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/patchctl/patchctl/checks/engine"
	"github.com/patchctl/patchctl/checks/findings"
	sitter "github.com/tree-sitter/go-tree-sitter"
)

// Rule inline-sge-addr: with IB_SEND_INLINE the provider's CPU copies the
// payload from sg_list[i].addr as a kernel virtual address. So on every
// path that reaches a post of a work request whose send_flags carry
// IB_SEND_INLINE, each of its num_sge SGEs must be shown to hold a
// virtual address: a pointer converted to an integer ((uintptr_t)p, &x),
// never what ib_dma_map_*, dma_map_*, sg_dma_address return, nor a field
// or variable assigned from those anywhere, nor arithmetic on them (a cast
// keeps the kind). What reaches the post counts, not the order of the
// statements: a later reassignment wins, an assignment after the post does
// not help. SGEs that num_sge can reach and no assignment on the path
// re-points are findings too.
//
// The post is ib_post_send, a device's post_send op, or a call to a
// function that posts its parameter. A request stored in an object that
// outlives the function (a parameter's field) is checked where the
// function sets IB_SEND_INLINE on it, at the function's exit; a post
// elsewhere of a request that some function sets inline is checked for
// the SGEs that the posting function itself assigns.
//
// Rule noninline-sge-virt (the reverse rule): without IB_SEND_INLINE the
// HCA reads the payload by DMA from sg_list[i].addr, so an SGE of a
// request posted on a path where its send_flags are known to be clear of
// IB_SEND_INLINE must not hold a kernel virtual address (a pointer made an
// integer): the device would DMA from whatever bus address equals it. It
// is checked with the same path sensitivity and evidence as
// inline-sge-addr (where the flags were cleared, where the address came
// from), for the SGEs num_sge reaches, in the modules the engine reads
// (those where some function sets IB_SEND_INLINE). The SGE's key must be
// the PD's local_dma_lkey on the path, or not assigned in a module that
// never gives an SGE another key: with a memory region's key the address
// is an I/O virtual address in that region, which may equal the kernel
// virtual address (a vmalloc'ed buffer registered by its address).
//
// Rule inline-on-registration: IB_SEND_INLINE on a REG_MR, REG_MR_INTEGRITY
// or LOCAL_INV request is a finding wherever it reaches.

// inlineSGE is rule 1's checkpoint handler for one function.
type inlineSGE struct {
	// bounds caches paramBound per parameter.
	bounds map[string]struct {
		n  int
		ok bool
	}
	in       *engine.Interp
	fnName   string
	findings []Finding
}

func (r *inlineSGE) check(cp engine.Checkpoint) {
	st := cp.State
	if len(cp.Handed) > 0 {
		r.checkHanded(cp)
		return
	}
	var wrs []string
	if cp.Exit {
		// Requests this function sets inline and that outlive it.
		// Requests this function only flags (its callers that post them
		// see the flag through its summary) are checked where posted.
		for _, w := range engine.SortedKeys(st.Flags) {
			if on, _ := st.Flags[w].FlagsOn(st.Facts); on == engine.FlagOn && !r.in.Locals[engine.Root(w)] && (r.pointsSGEs(w, st) || engine.RegistrationOps[st.Opc[w]]) {
				wrs = append(wrs, w)
			}
		}
	} else {
		wrs = cp.Wrs
	}
	line := r.in.F.Line(cp.Node)
	where := "posted here"
	if cp.Exit {
		line = r.exitLine(cp)
		where = exitWhere + " (stored in an object that outlives it)"
	}
	for _, w := range wrs {
		// Flags chosen by a condition the path leaves open (inl ?
		// IB_SEND_INLINE : 0) are judged on each side of it: an SGE
		// address chosen by the same condition follows it.
		if v, ok := st.Flags[w]; ok {
			if ks := v.Undecided(st.Facts); len(ks) > 0 && len(ks) <= maxSplit {
				for _, side := range splitFacts(st.Facts, ks) {
					s2 := *st
					s2.Facts = side
					r.checkWR(cp, w, &s2, line, where)
				}
				continue
			}
		}
		r.checkWR(cp, w, st, line, where)
	}
}

// maxSplit bounds the open conditions a request's flags are split on.
const maxSplit = 3

// splitFacts are the facts with every combination of the keys decided.
func splitFacts(facts map[string]bool, keys []string) []map[string]bool {
	out := []map[string]bool{facts}
	for _, k := range keys {
		var next []map[string]bool
		for _, m := range out {
			for _, b := range []bool{true, false} {
				c := make(map[string]bool, len(m)+1)
				for x, y := range m {
					c[x] = y
				}
				c[k] = b
				next = append(next, c)
			}
		}
		out = next
	}
	return out
}

// checkWR judges one request at a checkpoint, on the state given.
func (r *inlineSGE) checkWR(cp engine.Checkpoint, w string, st *engine.State, line int, where string) {
	{
		status := engine.FlagUnset
		var src *engine.Val
		if v, ok := st.Flags[w]; ok {
			status, src = v.FlagsOn(st.Facts)
		}
		maybe := false
		if status == engine.FlagUnset && r.in.Locals[engine.Root(w)] && !r.in.Ptrs[engine.Root(w)] {
			return // a local request nobody else can flag
		}
		if status == engine.FlagUnset {
			if _, ok := r.in.Facts.InlineWRs[engine.FieldKey(w)]; !ok {
				return
			}
			maybe = true // set inline elsewhere
		}
		if status == engine.FlagOff {
			if !cp.Exit {
				r.checkVirt(w, st, src, line)
			}
			return
		}
		ev := []Evidence{{File: r.in.F.Rel, Line: line, Message: "work request " + display(w) + " " + where}}
		if l := st.FlagLine[w]; l > 0 && !maybe {
			msg := "IB_SEND_INLINE set on this path"
			if src != nil && src.Why != "" && src.Why != "IB_SEND_INLINE" {
				msg += " (from " + src.Why + ")"
			}
			ev = append(ev, Evidence{File: r.in.F.Rel, Line: l, Message: msg})
		} else if maybe {
			ev = append(ev, Evidence{File: r.in.F.Rel, Line: line, Message: "IB_SEND_INLINE is set on this request elsewhere (" + r.in.Facts.InlineWRs[engine.FieldKey(w)] + ")"})
		}
		op, opWhere := st.Opc[w], ""
		if op == "" {
			if o, where, ok := r.in.Facts.OpcodeOf(engine.FieldKey(w)); ok && !r.in.Locals[engine.Root(w)] {
				op, opWhere = o, where
			}
		}
		if engine.RegistrationOps[op] {
			e := ev
			if opWhere != "" {
				e = append(append([]Evidence{}, ev...), Evidence{File: r.in.F.Rel, Line: line, Message: "the opcode is set to " + op + " at " + opWhere})
			}
			r.add(RuleInlineReg, SevError, line, fmt.Sprintf("IB_SEND_INLINE on a %s work request (%s)", op, display(w)), e,
				&findings.Subject{WR: w, SGE: -1, Defect: findings.DefectReg, Detail: op, Exit: cp.Exit})
			return // a registration carries no SGEs to check
		}
		if !cp.Exit && !maybe && r.in.OnPost != nil && st.FlagLine[w] > 0 {
			r.in.OnPost(st.FlagLine[w], r.postVisit(w, st))
		}
		r.checkSGEs(w, st, maybe, cp.Exit, line, ev)
	}
}

// checkVirt is the reverse rule at a post of w whose flags are clear of
// IB_SEND_INLINE on this path (flags is their value).
func (r *inlineSGE) checkVirt(w string, st *engine.State, flags *engine.Val, line int) {
	list, ok := st.Sgl[w]
	if !ok {
		list = w + ".sg_list"
	}
	if engine.RegistrationOps[st.Opc[w]] {
		return
	}
	n, bounded := r.numSGE(w, st)
	if !bounded {
		n = 1
		for k := 1; k < 16; k++ {
			if e, _ := engine.SgePlace(list, k); st.Addr[e+".addr"] != nil {
				n = k + 1
			}
		}
	}
	for k := 0; k < n; k++ {
		exact, wild := engine.SgePlace(list, k)
		v := st.Addr[exact+".addr"]
		if v == nil {
			v = st.Addr[wild+".addr"]
		}
		if v == nil && k == 0 {
			v = st.Addr[list+"[0].addr"]
		}
		if v == nil {
			continue
		}
		kind, leafv := v.Resolve(st.Facts)
		if kind != engine.Virt {
			continue
		}
		// The key decides what the address means: the PD's DMA key
		// (or none assigned, in a module that never uses another)
		// makes it a bus address; a memory region's key makes it an
		// I/O virtual address in the region, which may be the kernel
		// virtual address (smc's vmalloc'ed send buffers).
		lk := st.Addr[exact+".lkey"]
		if lk == nil {
			lk = st.Addr[wild+".lkey"]
		}
		if lk != nil && !strings.Contains(lk.Why, "dma_lkey") || lk == nil && r.in.Facts.MrLkey != "" {
			continue
		}
		file := r.in.F.Rel
		if leafv.File != "" {
			file = leafv.File
		}
		at := leafv.Line
		if at == 0 {
			at = line
		}
		ev := []Evidence{{File: r.in.F.Rel, Line: line, Message: "work request " + display(w) + " posted here without IB_SEND_INLINE"}}
		if flags != nil && flags.Line > 0 {
			ev = append(ev, Evidence{File: r.in.F.Rel, Line: flags.Line, Message: "send_flags without IB_SEND_INLINE on this path (" + flags.Why + ")"})
		}
		ev = append(ev, Evidence{File: file, Line: at, Message: "address from " + leafv.Why})
		r.add(RuleVirtSGE, SevError, line, fmt.Sprintf("SGE %d (%s.addr) of work request %s, posted without IB_SEND_INLINE, holds a kernel virtual address on this path (%s): the HCA would DMA from it; map it (ib_dma_map_single) or post it inline", k, display(exact), display(w), leafv.Why), ev,
			&findings.Subject{WR: w, SGE: k, Defect: findings.DefectVirt, Detail: leafv.Why, Addr: &findings.Origin{File: file, Line: at, What: leafv.Why}})
	}
}

// postVisit is what the size rule needs of an inline post: the SGE
// count and the lengths this path gives the SGEs.
func (r *inlineSGE) postVisit(w string, st *engine.State) engine.SiteVisit {
	n, bounded := r.numSGE(w, st)
	if !bounded {
		return engine.SiteVisit{Nsge: -1}
	}
	list, ok := st.Sgl[w]
	if !ok {
		list = w + ".sg_list"
	}
	v := engine.SiteVisit{Nsge: n}
	for k := 0; k < n && k < 16; k++ {
		exact, _ := engine.SgePlace(list, k)
		l := st.Addr[exact+".length"]
		if l == nil && k == 0 {
			l = st.Addr[list+"[0].length"]
		}
		t := ""
		if l != nil && l.Cond == "" {
			t = strings.Join(strings.Fields(l.Why), "")
		}
		v.Lens = append(v.Lens, t)
	}
	return v
}

// pointsSGEs reports whether this path sets a request's sg_list or one
// of its SGE addresses.
func (r *inlineSGE) pointsSGEs(w string, st *engine.State) bool {
	if _, ok := st.Sgl[w]; ok {
		return true
	}
	list := w + ".sg_list"
	for p := range st.Addr {
		if strings.HasPrefix(p, list) {
			return true
		}
	}
	return false
}

func (r *inlineSGE) exitLine(cp engine.Checkpoint) int {
	if engine.KindOf(cp.Node) == "function_definition" {
		return int(cp.Node.EndPosition().Row) + 1
	}
	return r.in.F.Line(cp.Node)
}

func display(p string) string { return strings.TrimPrefix(p, "v:") }

func (r *inlineSGE) checkSGEs(w string, st *engine.State, maybe, exit bool, line int, ev []Evidence) {
	list, ok := st.Sgl[w]
	if !ok {
		list = w + ".sg_list"
		// A request kept in an object whose list and count the module
		// sets once (at allocation): what it set.
		if l := r.in.Facts.SgList(w); l != "" && !r.in.Locals[engine.Root(w)] {
			if n, where, known := r.in.Facts.NumSGE(engine.FieldKey(w)); known {
				list, ok = l, true
				ev = append(ev, Evidence{File: r.in.F.Rel, Line: line, Message: fmt.Sprintf("%s points at %s and num_sge is %d as the module sets them (%s)", display(w), display(l), n, where)})
			}
		}
	}
	if p, poster := r.in.Facts.Posters[r.fnName]; poster && r.in.Params[engine.Root(w)] && !ok && !r.pointsSGEs(w, st) {
		if _, n := st.Nsge[w]; !n && p.Param < len(engine.Params(r.in.F, r.in.Fn)) && engine.Params(r.in.F, r.in.Fn)[p.Param].Name == engine.Root(w) {
			// A request a caller built and passed in to be posted
			// here: its SGEs are checked at the callers' calls, where
			// this function's summary sets the flag.
			return
		}
	}
	n, bounded := r.numSGE(w, st)
	limit := n
	if !bounded {
		limit = 1
		for k := 1; k < 16; k++ {
			if e, _ := engine.SgePlace(list, k); st.Addr[e+".addr"] != nil {
				limit = k + 1
			}
		}
	}
	covered := 0
	wildcard := false
	for k := 0; k < limit; k++ {
		exact, wild := engine.SgePlace(list, k)
		v := st.Addr[exact+".addr"]
		if v == nil {
			v = st.Addr[wild+".addr"]
			wildcard = wildcard || v != nil
		}
		if v == nil && k == 0 {
			v = st.Addr[list+"[0].addr"]
		}
		sge := fmt.Sprintf("SGE %d (%s.addr)", k, display(exact))
		if v == nil {
			if maybe {
				continue
			}
			if r.handedHere(list) {
				continue // the caller's SGE: judged at each call (checkHanded)
			}
			kind, why := r.in.Facts.FieldKind(exact + ".addr")
			switch kind {
			case engine.Virt:
				covered++
			case engine.DMA, engine.Phys:
				r.add(RuleInlineSGE, SevError, line, fmt.Sprintf("%s of inline work request %s holds a %s address (%s)", sge, display(w), kind, why), ev,
					&findings.Subject{WR: w, SGE: k, Defect: defectOf(kind), Detail: why, Exit: exit})
			default:
				r.add(RuleInlineSGE, SevWarning, line, fmt.Sprintf("%s of inline work request %s: cannot show this SGE holds a kernel virtual address: nothing on the path points it at one", sge, display(w)), ev,
					&findings.Subject{WR: w, SGE: k, Defect: findings.DefectUnplaced, Exit: exit})
			}
			continue
		}
		kind, leafv := v.Resolve(st.Facts)
		file := r.in.F.Rel
		if leafv.File != "" {
			file = leafv.File
		}
		at := leafv.Line
		if at == 0 {
			at = line
		}
		e := append(append([]Evidence{}, ev...), Evidence{File: file, Line: at, Message: "address from " + leafv.Why})
		origin := &findings.Origin{File: file, Line: at, What: leafv.Why}
		switch kind {
		case engine.Virt:
			covered++
		case engine.DMA, engine.Phys:
			r.add(RuleInlineSGE, SevError, line, fmt.Sprintf("%s of inline work request %s holds a %s address on this path: %s", sge, display(w), kind, leafv.Why), e,
				&findings.Subject{WR: w, SGE: k, Defect: defectOf(kind), Detail: leafv.Why, Exit: exit, Addr: origin})
		default:
			if !maybe {
				r.add(RuleInlineSGE, SevWarning, line, fmt.Sprintf("%s of inline work request %s: cannot show this SGE holds a kernel virtual address on this path: %s is not known to be one", sge, display(w), leafv.Why), e,
					&findings.Subject{WR: w, SGE: k, Defect: findings.DefectUnknown, Detail: leafv.Why, Exit: exit, Addr: origin})
			}
		}
	}
	if !bounded && !wildcard && !maybe {
		r.add(RuleInlineSGE, SevError, line, fmt.Sprintf("num_sge of inline work request %s (%s) is not bounded on this path: SGEs past the %d re-pointed to virtual addresses keep what they held", display(w), st.Nsge[w], covered), ev,
			&findings.Subject{WR: w, SGE: -1, Defect: findings.DefectNsge, Detail: st.Nsge[w] + "/" + strconv.Itoa(covered), Exit: exit})
	}
}

// numSGE is the request's SGE count on this path, if the path bounds it.
func (r *inlineSGE) numSGE(w string, st *engine.State) (int, bool) {
	e, ok := st.Nsge[w]
	if !ok {
		// Not set on this path: a request kept in an object gets its
		// count where the module sets it (at allocation, a builder).
		if !r.in.Locals[engine.Root(w)] {
			if n, _, ok := r.in.Facts.NumSGE(engine.FieldKey(w)); ok {
				return n, true
			}
		}
		return 0, false
	}
	if e == engine.NsgeZeroed {
		// Zeroed and never assigned: no SGE unless sg_list was
		// pointed somewhere (then the count is set where the engine
		// does not see).
		if r.pointsSGEs(w, st) {
			return 0, false
		}
		return 0, true
	}
	if n, err := strconv.Atoi(e); err == nil {
		return n, true
	}
	if n, ok := st.Nums[e]; ok {
		return int(n), true
	}
	if n, ok := st.Hi[e]; ok && n >= 0 && n < 16 {
		return int(n), true
	}
	if n, ok := r.in.Facts.Constants[e]; ok {
		return int(n), true
	}
	if n, ok := ternaryCount(e, st); ok {
		return n, true
	}
	return r.paramBound(e)
}

// outerParens reports whether e is one parenthesized expression: its
// first parenthesis closes at its end ((a)+(b) is not).
func outerParens(e string) bool {
	if len(e) < 2 || e[0] != '(' || e[len(e)-1] != ')' {
		return false
	}
	depth := 0
	for i := 0; i < len(e); i++ {
		switch e[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 && i != len(e)-1 {
				return false
			}
		}
	}
	return true
}

// ternaryRe is a count chosen between two constants: c?1:0.
var ternaryRe = regexp.MustCompile(`^(.+)\?(\d+):(\d+)$`)

// ternaryCount bounds num_sge = c ? A : B (hdrlen ? 1 : 0): the arm the
// path's facts (or a constant condition) decide, else the larger.
func ternaryCount(e string, st *engine.State) (int, bool) {
	for outerParens(e) {
		e = e[1 : len(e)-1]
	}
	m := ternaryRe.FindStringSubmatch(e)
	if m == nil {
		return 0, false
	}
	a, _ := strconv.Atoi(m[2])
	b, _ := strconv.Atoi(m[3])
	c := strings.Trim(m[1], "()")
	if v, err := strconv.ParseInt(c, 0, 64); err == nil {
		if v != 0 {
			return a, true
		}
		return b, true
	}
	if truth, ok := st.Facts[c]; ok {
		if truth {
			return a, true
		}
		return b, true
	}
	return max(a, b), true
}

// paramBound bounds a count that is a parameter of a static function by
// what its callers in the file pass: the largest, when every caller
// passes a constant (iser_post_ctrl(conn, &sge, 1, len)).
func (r *inlineSGE) paramBound(e string) (int, bool) {
	if !r.in.Params[e] || !engine.IsStatic(r.in.F, r.in.Fn) {
		return 0, false
	}
	if b, ok := r.bounds[e]; ok {
		return b.n, b.ok
	}
	idx := -1
	for i, p := range engine.Params(r.in.F, r.in.Fn) {
		if p.Name == e {
			idx = i
		}
	}
	name := engine.FunctionName(r.in.F, r.in.Fn)
	hi, calls, ok := 0, 0, idx >= 0 && name != ""
	if ok {
		f := r.in.F
		engine.Walk(f.Tree.RootNode(), func(n *sitter.Node) bool {
			if !ok {
				return false
			}
			if engine.KindOf(n) != "call_expression" || f.Text(n.ChildByFieldName("function")) != name {
				return true
			}
			args := engine.Named(n.ChildByFieldName("arguments"))
			if idx >= len(args) {
				ok = false
				return false
			}
			t := engine.CondKey(f, args[idx])
			v, err := strconv.Atoi(t)
			if err != nil {
				c, known := r.in.Facts.Constants[t]
				if !known {
					ok = false
					return false
				}
				v = int(c)
			}
			calls++
			hi = max(hi, v)
			return true
		})
	}
	ok = ok && calls > 0
	if r.bounds == nil {
		r.bounds = map[string]struct {
			n  int
			ok bool
		}{}
	}
	r.bounds[e] = struct {
		n  int
		ok bool
	}{hi, ok}
	return hi, ok
}

// exitWhere begins the evidence of a finding made at a function's exit.
const exitWhere = "leaves the function here"

// postedFirst drops a finding made where a request leaves the function
// when the function posts that request with the same defect (the same
// request, SGE, defect and address, by their Subject): the post is
// where it is reported (rds's xmit reports its header at ib_post_send,
// not again at each return after it).
func (r *inlineSGE) postedFirst() []Finding {
	atPost := map[defectKey]bool{}
	for _, f := range r.findings {
		if f.Subject != nil && !f.Subject.Exit {
			atPost[keyOfDefect(f)] = true
		}
	}
	var out []Finding
	for _, f := range r.findings {
		if f.Subject != nil && f.Subject.Exit && atPost[keyOfDefect(f)] {
			continue
		}
		out = append(out, f)
	}
	return out
}

// defectKey is one defect of one request, wherever it is judged: the
// request, the SGE, what is wrong and what the value was.
type defectKey struct {
	rule, sev, wr, defect, detail string
	sge                           int
}

func keyOfDefect(f Finding) defectKey {
	s := f.Subject
	return defectKey{rule: f.Rule, sev: f.Severity, wr: s.WR, defect: s.Defect, detail: s.Detail, sge: s.SGE}
}

// defectOf is the defect of an inline SGE that holds an address of kind k.
func defectOf(k engine.Kind) string {
	if k == engine.Phys {
		return findings.DefectPhys
	}
	return findings.DefectDMA
}

func (r *inlineSGE) add(rule, sev string, line int, msg string, ev []Evidence, subj *findings.Subject) {
	r.findings = append(r.findings, Finding{Rule: rule, Severity: sev, File: r.in.F.Rel, Line: line, Function: r.fnName, Message: msg, Evidence: ev, Subject: subj})
}

// handedHere says whether an SGE list is this function's SGE parameter
// (or an element of it) whose SGEs are judged at its calls: every
// caller is in sight (engine.Facts.HandedAtCallers).
func (r *inlineSGE) handedHere(list string) bool {
	root := engine.Root(list)
	return r.in.Params[root] && r.in.Ptrs[root] && !strings.Contains(list, ".") && r.in.Facts.HandedAtCallers(r.fnName)
}

// checkHanded judges, at a call, the SGEs the caller hands to a function
// that posts them with IB_SEND_INLINE: the address is the caller's, so
// a DMA or physical one is reported here, the callee's post and flag as
// evidence.
func (r *inlineSGE) checkHanded(cp engine.Checkpoint) {
	st := cp.State
	line := r.in.F.Line(cp.Node)
	for _, h := range cp.Handed {
		sge := fmt.Sprintf("SGE %d (%s.addr)", h.Index, display(h.Place))
		ev := []Evidence{
			{File: r.in.F.Rel, Line: line, Message: fmt.Sprintf("the SGE is handed here to %s()", h.Callee)},
			{File: h.File, Line: h.Post, Message: "work request " + display(h.WR) + " posted here"},
		}
		if h.FlagLine > 0 {
			msg := "IB_SEND_INLINE set on this path"
			if h.FlagWhy != "" && h.FlagWhy != "IB_SEND_INLINE" {
				msg += " (from " + h.FlagWhy + ")"
			}
			ev = append(ev, Evidence{File: h.File, Line: h.FlagLine, Message: msg})
		}
		subj := &findings.Subject{WR: h.Callee + "()." + h.WR, SGE: h.Index}
		what := fmt.Sprintf("%s handed to %s() (inline work request %s posted there)", sge, h.Callee, display(h.WR))
		v := st.Addr[h.Place+".addr"]
		if v == nil {
			// Stored at an index the path does not know (a loop).
			v = st.Addr[engine.WildSGE(h.Place)+".addr"]
		}
		if v == nil {
			if r.handedHere(h.Place) {
				continue // this function's own SGE parameter: judged at its calls
			}
			kind, why := r.in.Facts.FieldKind(h.Place + ".addr")
			switch kind {
			case engine.DMA, engine.Phys:
				subj.Defect, subj.Detail = defectOf(kind), why
				r.add(RuleInlineSGE, SevError, line, fmt.Sprintf("%s holds a %s address (%s)", what, kind, why), ev, subj)
			case engine.Unknown:
				subj.Defect = findings.DefectUnplaced
				r.add(RuleInlineSGE, SevWarning, line, fmt.Sprintf("%s: cannot show this SGE holds a kernel virtual address: nothing on the path points it at one", what), ev, subj)
			}
			continue
		}
		kind, leafv := v.Resolve(st.Facts)
		file := r.in.F.Rel
		if leafv.File != "" {
			file = leafv.File
		}
		at := leafv.Line
		if at == 0 {
			at = line
		}
		ev = append(ev, Evidence{File: file, Line: at, Message: "address from " + leafv.Why})
		subj.Detail, subj.Addr = leafv.Why, &findings.Origin{File: file, Line: at, What: leafv.Why}
		switch kind {
		case engine.DMA, engine.Phys:
			subj.Defect = defectOf(kind)
			r.add(RuleInlineSGE, SevError, line, fmt.Sprintf("%s holds a %s address on this path: %s", what, kind, leafv.Why), ev, subj)
		case engine.Unknown:
			subj.Defect = findings.DefectUnknown
			r.add(RuleInlineSGE, SevWarning, line, fmt.Sprintf("%s: cannot show this SGE holds a kernel virtual address on this path: %s is not known to be one", what, leafv.Why), ev, subj)
		}
	}
}
