package checks

import (
	"fmt"
	"strconv"
	"strings"
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

var registrationOps = map[string]bool{"IB_WR_REG_MR": true, "IB_WR_REG_MR_INTEGRITY": true, "IB_WR_LOCAL_INV": true}

// inlineSGE is rule 1's checkpoint handler for one function.
type inlineSGE struct {
	in       *interp
	fnName   string
	findings []Finding
}

func (r *inlineSGE) check(cp checkpoint) {
	st := cp.state
	var wrs []string
	if cp.exit {
		// Requests this function sets inline and that outlive it.
		// Requests this function only flags (its callers that post them
		// see the flag through its summary) are checked where posted.
		for _, w := range sortedKeys(st.flags) {
			if on, _ := st.flags[w].flagsOn(st.facts); on == flagOn && !r.in.locals[root(w)] && (r.pointsSGEs(w, st) || registrationOps[st.opc[w]]) {
				wrs = append(wrs, w)
			}
		}
	} else {
		wrs = cp.wrs
	}
	line := r.in.f.line(cp.node)
	where := "posted here"
	if cp.exit {
		line = r.exitLine(cp)
		where = "leaves the function here (stored in an object that outlives it)"
	}
	for _, w := range wrs {
		status := flagUnset
		var src *val
		if v, ok := st.flags[w]; ok {
			status, src = v.flagsOn(st.facts)
		}
		maybe := false
		if status == flagUnset && r.in.locals[root(w)] && !r.in.ptrs[root(w)] {
			continue // a local request nobody else can flag
		}
		if status == flagUnset {
			if _, ok := r.in.facts.inlineWRs[fieldKey(w)]; !ok {
				continue
			}
			maybe = true // set inline elsewhere
		}
		if status == flagOff {
			if !cp.exit {
				r.checkVirt(w, st, src, line)
			}
			continue
		}
		ev := []Evidence{{File: r.in.f.Rel, Line: line, Message: "work request " + display(w) + " " + where}}
		if l := st.flagLine[w]; l > 0 && !maybe {
			msg := "IB_SEND_INLINE set on this path"
			if src != nil && src.why != "" && src.why != "IB_SEND_INLINE" {
				msg += " (from " + src.why + ")"
			}
			ev = append(ev, Evidence{File: r.in.f.Rel, Line: l, Message: msg})
		} else if maybe {
			ev = append(ev, Evidence{File: r.in.f.Rel, Line: line, Message: "IB_SEND_INLINE is set on this request elsewhere (" + r.in.facts.inlineWRs[fieldKey(w)] + ")"})
		}
		op, opWhere := st.opc[w], ""
		if op == "" {
			if o, where, ok := r.in.facts.opcodeOf(fieldKey(w)); ok && !r.in.locals[root(w)] {
				op, opWhere = o, where
			}
		}
		if registrationOps[op] {
			e := ev
			if opWhere != "" {
				e = append(append([]Evidence{}, ev...), Evidence{File: r.in.f.Rel, Line: line, Message: "the opcode is set to " + op + " at " + opWhere})
			}
			r.add(RuleInlineReg, SevError, line, fmt.Sprintf("IB_SEND_INLINE on a %s work request (%s)", op, display(w)), e)
			continue // a registration carries no SGEs to check
		}
		if !cp.exit && !maybe && r.in.onPost != nil && st.flagLine[w] > 0 {
			r.in.onPost(st.flagLine[w], r.postVisit(w, st))
		}
		r.checkSGEs(w, st, maybe, line, ev)
	}
}

// checkVirt is the reverse rule at a post of w whose flags are clear of
// IB_SEND_INLINE on this path (flags is their value).
func (r *inlineSGE) checkVirt(w string, st *state, flags *val, line int) {
	list, ok := st.sgl[w]
	if !ok {
		list = w + ".sg_list"
	}
	if registrationOps[st.opc[w]] {
		return
	}
	n, bounded := r.numSGE(w, st)
	if !bounded {
		n = 1
		for k := 1; k < 16; k++ {
			if e, _ := sgePlace(list, k); st.addr[e+".addr"] != nil {
				n = k + 1
			}
		}
	}
	for k := 0; k < n; k++ {
		exact, wild := sgePlace(list, k)
		v := st.addr[exact+".addr"]
		if v == nil {
			v = st.addr[wild+".addr"]
		}
		if v == nil && k == 0 {
			v = st.addr[list+"[0].addr"]
		}
		if v == nil {
			continue
		}
		kind, leafv := v.resolve(st.facts)
		if kind != Virt {
			continue
		}
		// The key decides what the address means: the PD's DMA key
		// (or none assigned, in a module that never uses another)
		// makes it a bus address; a memory region's key makes it an
		// I/O virtual address in the region, which may be the kernel
		// virtual address (smc's vmalloc'ed send buffers).
		lk := st.addr[exact+".lkey"]
		if lk == nil {
			lk = st.addr[wild+".lkey"]
		}
		if lk != nil && !strings.Contains(lk.why, "dma_lkey") || lk == nil && r.in.facts.mrLkey != "" {
			continue
		}
		file := r.in.f.Rel
		if leafv.file != "" {
			file = leafv.file
		}
		at := leafv.line
		if at == 0 {
			at = line
		}
		ev := []Evidence{{File: r.in.f.Rel, Line: line, Message: "work request " + display(w) + " posted here without IB_SEND_INLINE"}}
		if flags != nil && flags.line > 0 {
			ev = append(ev, Evidence{File: r.in.f.Rel, Line: flags.line, Message: "send_flags without IB_SEND_INLINE on this path (" + flags.why + ")"})
		}
		ev = append(ev, Evidence{File: file, Line: at, Message: "address from " + leafv.why})
		r.add(RuleVirtSGE, SevError, line, fmt.Sprintf("SGE %d (%s.addr) of work request %s, posted without IB_SEND_INLINE, holds a kernel virtual address on this path (%s): the HCA would DMA from it; map it (ib_dma_map_single) or post it inline", k, display(exact), display(w), leafv.why), ev)
	}
}

// postVisit is what the size rule needs of an inline post: the SGE
// count and the lengths this path gives the SGEs.
func (r *inlineSGE) postVisit(w string, st *state) siteVisit {
	n, bounded := r.numSGE(w, st)
	if !bounded {
		return siteVisit{nsge: -1}
	}
	list, ok := st.sgl[w]
	if !ok {
		list = w + ".sg_list"
	}
	v := siteVisit{nsge: n}
	for k := 0; k < n && k < 16; k++ {
		exact, _ := sgePlace(list, k)
		l := st.addr[exact+".length"]
		if l == nil && k == 0 {
			l = st.addr[list+"[0].length"]
		}
		t := ""
		if l != nil && l.cond == "" {
			t = strings.Join(strings.Fields(l.why), "")
		}
		v.lens = append(v.lens, t)
	}
	return v
}

// pointsSGEs reports whether this path sets a request's sg_list or one
// of its SGE addresses.
func (r *inlineSGE) pointsSGEs(w string, st *state) bool {
	if _, ok := st.sgl[w]; ok {
		return true
	}
	list := w + ".sg_list"
	for p := range st.addr {
		if strings.HasPrefix(p, list) {
			return true
		}
	}
	return false
}

func (r *inlineSGE) exitLine(cp checkpoint) int {
	if cp.node.Kind() == "function_definition" {
		return int(cp.node.EndPosition().Row) + 1
	}
	return r.in.f.line(cp.node)
}

func display(p string) string { return strings.TrimPrefix(p, "v:") }

func (r *inlineSGE) checkSGEs(w string, st *state, maybe bool, line int, ev []Evidence) {
	list, ok := st.sgl[w]
	if !ok {
		list = w + ".sg_list"
	}
	if p, poster := r.in.facts.posters[r.fnName]; poster && r.in.params[root(w)] && !ok && !r.pointsSGEs(w, st) {
		if _, n := st.nsge[w]; !n && p.param < len(params(r.in.f, r.in.fn)) && params(r.in.f, r.in.fn)[p.param].name == root(w) {
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
			if e, _ := sgePlace(list, k); st.addr[e+".addr"] != nil {
				limit = k + 1
			}
		}
	}
	covered := 0
	wildcard := false
	for k := 0; k < limit; k++ {
		exact, wild := sgePlace(list, k)
		v := st.addr[exact+".addr"]
		if v == nil {
			v = st.addr[wild+".addr"]
			wildcard = wildcard || v != nil
		}
		if v == nil && k == 0 {
			v = st.addr[list+"[0].addr"]
		}
		sge := fmt.Sprintf("SGE %d (%s.addr)", k, display(exact))
		if v == nil {
			if maybe {
				continue
			}
			kind, why := r.in.facts.fieldKind(exact + ".addr")
			switch kind {
			case Virt:
				covered++
			case DMA, Phys:
				r.add(RuleInlineSGE, SevError, line, fmt.Sprintf("%s of inline work request %s holds a %s address (%s)", sge, display(w), kind, why), ev)
			default:
				r.add(RuleInlineSGE, SevWarning, line, fmt.Sprintf("%s of inline work request %s: cannot show this SGE holds a kernel virtual address: nothing on the path points it at one", sge, display(w)), ev)
			}
			continue
		}
		kind, leafv := v.resolve(st.facts)
		file := r.in.f.Rel
		if leafv.file != "" {
			file = leafv.file
		}
		at := leafv.line
		if at == 0 {
			at = line
		}
		e := append(append([]Evidence{}, ev...), Evidence{File: file, Line: at, Message: "address from " + leafv.why})
		switch kind {
		case Virt:
			covered++
		case DMA, Phys:
			r.add(RuleInlineSGE, SevError, line, fmt.Sprintf("%s of inline work request %s holds a %s address on this path: %s", sge, display(w), kind, leafv.why), e)
		default:
			if !maybe {
				r.add(RuleInlineSGE, SevWarning, line, fmt.Sprintf("%s of inline work request %s: cannot show this SGE holds a kernel virtual address on this path: %s is not known to be one", sge, display(w), leafv.why), e)
			}
		}
	}
	if !bounded && !wildcard && !maybe {
		r.add(RuleInlineSGE, SevError, line, fmt.Sprintf("num_sge of inline work request %s (%s) is not bounded on this path: SGEs past the %d re-pointed to virtual addresses keep what they held", display(w), st.nsge[w], covered), ev)
	}
}

// numSGE is the request's SGE count on this path, if the path bounds it.
func (r *inlineSGE) numSGE(w string, st *state) (int, bool) {
	e, ok := st.nsge[w]
	if !ok {
		return 0, false
	}
	if e == nsgeZeroed {
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
	if n, ok := st.nums[e]; ok {
		return int(n), true
	}
	if n, ok := st.hi[e]; ok && n >= 0 && n < 16 {
		return int(n), true
	}
	if n, ok := r.in.facts.constants[e]; ok {
		return int(n), true
	}
	return 0, false
}

func (r *inlineSGE) add(rule, sev string, line int, msg string, ev []Evidence) {
	r.findings = append(r.findings, Finding{Rule: rule, Severity: sev, File: r.in.f.Rel, Line: line, Function: r.fnName, Message: msg, Evidence: ev})
}
