package engine

import (
	"slices"
	"strconv"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// SGEs handed to an inline post. A function that points a request's
// sg_list at its SGE parameter (iser_post_ctrl(conn, struct ib_sge *sg,
// ...): wr.sg_list = sg) and posts it with IB_SEND_INLINE copies from
// whatever its caller put in that SGE: the address is the caller's, and
// so is the defect when it is a DMA address. Its summary lists, per
// post that is inline on a path, each such SGE the function itself does
// not point on that path (handedSGE); at each call, the caller's value
// of the SGE it passed is judged (Checkpoint.Handed), with the callee's
// post and flag as evidence. A caller that only passes on its own SGE
// parameter hands it on in its own summary.

// handedSGE is an SGE of a parameter a function posts inline.
type handedSGE struct {
	param    int    // the parameter the SGE list is
	rel      string // the list relative to the parameter ("" or "[1]")
	index    int    // the SGE's index in the list
	nsge     string // the request's num_sge, in the callee's terms ("" unknown)
	conds    []varEffect
	file     string // the file of the post
	post     int    // the post's line
	flagLine int
	flagWhy  string
	callee   string // the function that posts
	wr       string // the request it posts
}

// Handed is an SGE a caller passes to a function that posts it with
// IB_SEND_INLINE on some path: the SGE's place in the caller's terms and
// the callee's post.
type Handed struct {
	Place    string // the SGE's place (its .addr is the address)
	Index    int    // its index in the posted request's list
	Callee   string // the function that posts it (maybe through others)
	File     string // the callee's file
	Post     int    // the line of the callee's post
	FlagLine int    // where the callee sets IB_SEND_INLINE
	FlagWhy  string
	WR       string // the callee's request
}

// TakesSGEs says whether a function points a request's sg_list at one
// of its parameters (an SGE array passed in).
func (fs *Facts) TakesSGEs(name string) bool {
	if v, ok := fs.takesMemo[name]; ok {
		return v
	}
	// Directly, or by passing a parameter on to such a function (at
	// most maxSummaryDepth calls down, as summaries go), each function
	// looked at once.
	seen := map[string]bool{name: true}
	level := []string{name}
	found := false
	for depth := 0; depth <= maxSummaryDepth && len(level) > 0 && !found; depth++ {
		var next []string
		for _, n := range level {
			o := fs
			if l := fs.Linked(n); l != nil {
				o = l
			}
			if o.sgeTakers[n] {
				found = true
				break
			}
			for _, c := range o.passesOn[n] {
				if !seen[c] {
					seen[c] = true
					next = append(next, c)
				}
			}
		}
		level = next
	}
	fs.takesMemo[name] = found
	return found
}

// HandedAtCallers says whether the SGEs a function is handed are judged
// at its calls rather than at its post: it is static and its name is
// used only to call it (no caller is out of sight).
func (fs *Facts) HandedAtCallers(name string) bool {
	if v, ok := fs.handedAtCallers[name]; ok {
		return v
	}
	d, ok := fs.funcs[name]
	v := ok && d.f != nil && IsStatic(d.f, d.fn)
	if v {
		Walk(d.f.Tree.RootNode(), func(n *sitter.Node) bool {
			if !v {
				return false
			}
			if KindOf(n) == "identifier" && d.f.Text(n) == name {
				p := n.Parent()
				switch {
				case p != nil && KindOf(p) == "call_expression" && Same(p.ChildByFieldName("function"), n):
				case p != nil && KindOf(p) == "function_declarator":
				default:
					v = false
				}
			}
			return true
		})
	}
	fs.handedAtCallers[name] = v
	return v
}

// sgeParamRel is where a list place lies in a parameter that is an SGE
// array: the parameter's index and the rest ("" or "[k]"); ok false for
// a list that is no parameter, or a member of one.
func sgeParamRel(list string, ps []param) (int, string, bool) {
	for i, p := range ps {
		if !p.Pointer {
			continue
		}
		if list == p.Name {
			return i, "", true
		}
		if rest, ok := strings.CutPrefix(list, p.Name+"["); ok && !strings.ContainsAny(rest, ".") {
			return i, "[" + rest, true
		}
	}
	return 0, "", false
}

// recordHanded adds to a summary what a post (or a call that hands
// SGEs on) of the function being summarised leaves to its callers.
func (s *summary) recordHanded(in *Interp, cp Checkpoint, ps []param, name string) {
	st := cp.State
	for _, h := range cp.Handed {
		// Passed on: the caller's SGE is its own parameter's.
		list, k := h.Place, 0
		if m := indexRe.FindStringIndex(list); m != nil && m[1] == len(list) {
			k, _ = strconv.Atoi(strings.Trim(list[m[0]:], "[]"))
			list = list[:m[0]]
		}
		if st.Addr[h.Place+".addr"] != nil {
			continue
		}
		if j, rel, ok := sgeParamRel(list, ps); ok {
			s.handed = append(s.handed, handedSGE{param: j, rel: rel, index: k, conds: exitConditions(st, s.names),
				file: h.File, post: h.Post, flagLine: h.FlagLine, flagWhy: h.FlagWhy, callee: h.Callee, wr: h.WR})
		}
	}
	for _, w := range cp.Wrs {
		fl, ok := st.Flags[w]
		if !ok {
			continue
		}
		list, ok := st.Sgl[w]
		if !ok {
			continue
		}
		j, rel, ok := sgeParamRel(list, ps)
		if !ok {
			continue
		}
		// Each side of the conditions the path leaves open that sets
		// the flag, with those conditions as the caller's to decide.
		for _, side := range decideAll(st.Facts, fl.Undecided(st.Facts)) {
			on, src := fl.FlagsOn(side)
			if on != FlagOn {
				continue
			}
			n := 1
			if c, err := strconv.Atoi(st.Nsge[w]); err == nil {
				n = c
			}
			for k := 0; k < n && k < 16; k++ {
				exact, wild := SgePlace(list, k)
				if st.Addr[exact+".addr"] != nil || st.Addr[wild+".addr"] != nil {
					continue // pointed here: judged at this post
				}
				why := ""
				if src != nil {
					why = src.Why
				}
				s.handed = append(s.handed, handedSGE{param: j, rel: rel, index: k, nsge: st.Nsge[w], conds: exitConditions(&State{Facts: side}, s.names),
					file: in.F.Rel, post: in.F.Line(cp.Node), flagLine: st.FlagLine[w], flagWhy: why, callee: name, wr: w})
			}
		}
	}
}

// decideAll is facts with every combination of keys (at most 3) decided.
func decideAll(facts map[string]bool, keys []string) []map[string]bool {
	out := []map[string]bool{facts}
	if len(keys) > 3 {
		return out
	}
	for _, k := range keys {
		var next []map[string]bool
		for _, m := range out {
			for _, b := range []bool{true, false} {
				c := cloneMap(m)
				c[k] = b
				next = append(next, c)
			}
		}
		out = next
	}
	return out
}

// handedAt judges, at a call, the SGEs the callee posts inline from
// its parameters: each one the caller's path can reach the post with
// is listed for the rules (Checkpoint.Handed), in the caller's terms.
func (in *Interp) handedAt(name string, args []*sitter.Node, call *sitter.Node, st *State) {
	s := in.Facts.Summary(name)
	if s == nil || len(s.handed) == 0 {
		return
	}
	keys := keysOf(in.F, args)
	var hs []Handed
	seen := map[string]bool{}
	for _, h := range s.handed {
		if h.param >= len(args) || !variantFeasible(h.conds, s.names, keys, st) || !in.argsAgree(h.conds, s.names, args, st) {
			continue
		}
		if h.nsge != "" {
			// A count the caller passes bounds the SGEs.
			c := substParams(h.nsge, s.names, keys)
			if n, err := strconv.Atoi(c); err == nil && h.index >= n {
				continue
			}
			if n, ok := in.Facts.Constants[c]; ok && int64(h.index) >= n {
				continue
			}
		}
		base := pointee(in.F, args[h.param], st.alias)
		if base == "" {
			continue
		}
		exact, _ := SgePlace(sgeList(base+h.rel), h.index)
		k := exact + "\x00" + strconv.Itoa(h.post)
		if seen[k] {
			continue
		}
		seen[k] = true
		hs = append(hs, Handed{Place: exact, Index: h.index, Callee: h.callee, File: h.file, Post: h.post, FlagLine: h.flagLine, FlagWhy: h.flagWhy, WR: h.wr})
	}
	if len(hs) > 0 {
		in.OnCheck(Checkpoint{Node: call, Handed: hs, State: st})
	}
}

// argsAgree reports whether the arguments a caller passes can meet a
// callee's conditions on its parameters themselves (if (inl) with the
// caller passing false, or a local the path knows, or a comparison it
// decided).
func (in *Interp) argsAgree(conds []varEffect, names []string, args []*sitter.Node, st *State) bool {
	for _, c := range conds {
		i := slices.Index(names, c.rel)
		if c.kind != 'c' || i < 0 || i >= len(args) {
			continue
		}
		want := c.s == "1"
		a := StripParens(args[i])
		if a == nil {
			continue
		}
		switch KindOf(a) {
		case "true", "false":
			if (KindOf(a) == "true") != want {
				return false
			}
			continue
		}
		if v, ok := in.number(a); ok {
			if (v != 0) != want {
				return false
			}
			continue
		}
		k, neg := factKey(in.F, a)
		if b, ok := st.Facts[k]; ok && (b != neg) != want {
			return false
		}
	}
	return true
}

// WildSGE is the place that stands for every SGE of the list an SGE
// place (a[k], or a for a[0]) belongs to: a[*].
func WildSGE(p string) string {
	if m := indexRe.FindStringIndex(p); m != nil && m[1] == len(p) {
		return p[:m[0]] + "[*]"
	}
	return p + "[*]"
}
