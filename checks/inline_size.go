package checks

import (
	"cmp"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/patchctl/patchctl/checks/engine"
	"github.com/patchctl/patchctl/checks/findings"
	"github.com/patchctl/patchctl/internal/dwarflayout"
	sitter "github.com/tree-sitter/go-tree-sitter"
)

// Rule inline-size: a QP gets the inline size it asks for in
// cap.max_inline_data only if the device grants it, and the device writes
// the granted size back into the caps (ib_create_qp, rdma_create_qp) or
// reports it (ib_query_qp). So, for QPs whose sends are posted inline:
//
//   - the size requested must cover the largest payload posted inline
//     (sizes are computed: sizeof(struct T) by a C layout calculation over
//     the tree's headers, checked against the build's DWARF when a build
//     exists);
//   - the guard before IB_SEND_INLINE must compare with the granted size
//     (a caps field read after QP creation or query, or a field assigned
//     from one), not with the requested constant;
//   - where creation can fail, the size recorded on the failing path must
//     be 0, and a size read before the QP is created is the request, not
//     the grant.

type sizeCheck struct {
	posts     []engine.SiteVisit // the posts of the site being judged
	providers []ProviderRow
	files     []*engine.File
	reqMin    map[string]int64 // module -> smallest constant request (-1: none or not all constant)
	cmpCache  map[string][]engine.GuardRef
	// srcCache memoizes localSources: (file, function, name) -> what is
	// assigned to the name there. Every guard of every site asks it, and
	// each answer walks the whole function.
	srcCache map[string][]*sitter.Node
	opts     Options
	facts    map[string]*engine.Facts
	layouts  map[string]*LayoutRow
	findings []Finding
}

func checkInlineSize(opts Options, sites []engine.InlineSite, visits map[siteKey][]engine.SiteVisit, facts map[string]*engine.Facts, files []*engine.File, providers []ProviderRow) ([]Finding, []LayoutRow) {
	c := &sizeCheck{opts: opts, facts: facts, layouts: map[string]*LayoutRow{}, cmpCache: map[string][]engine.GuardRef{}, providers: providers, files: files, reqMin: map[string]int64{}}
	withSites := map[string]bool{}
	done := map[siteKey]bool{}
	for _, s := range sites {
		withSites[s.F.Rel] = true
		k := siteKey{s.F.Rel, s.Node.StartByte()}
		if done[k] {
			continue
		}
		done[k] = true
		c.guard(s, visits[k], visits[siteKey{s.F.Rel + postSuffix, uint(s.F.Line(s.Node))}])
	}
	for _, f := range files {
		if withSites[f.Rel] {
			c.requests(f)
		}
	}
	var rows []LayoutRow
	for _, k := range engine.SortedKeys(c.layouts) {
		rows = append(rows, *c.layouts[k])
	}
	return c.findings, rows
}

func (c *sizeCheck) add(f *engine.File, n *sitter.Node, fn string, sev, msg string, ev ...Evidence) {
	c.addSubject(f, n, fn, sev, msg, nil, ev...)
}

// unguarded is the Subject of a flag site that compares with no size.
func unguarded() *findings.Subject {
	return &findings.Subject{SGE: -1, Defect: findings.DefectUnguarded}
}

func (c *sizeCheck) addSubject(f *engine.File, n *sitter.Node, fn string, sev, msg string, subj *findings.Subject, ev ...Evidence) {
	c.findings = append(c.findings, Finding{Rule: RuleInlineSize, Severity: sev, File: f.Rel, Line: f.Line(n), Function: fn, Message: msg, Evidence: ev, Subject: subj})
}

// guard checks, on every path that reaches an inline site, that a
// condition the path decided (an if, a loop, a goto guard, a bool local
// or helper, or the ternary in the site itself) compares with the size
// the QP was granted. With no path known to reach it (the analysis was
// cut short), the enclosing ifs are what guards it.
func (c *sizeCheck) guard(s engine.InlineSite, visits, posts []engine.SiteVisit) {
	f := s.F
	facts := c.facts[path.Dir(f.Rel)]
	name := engine.FunctionName(f, s.Fn)
	// The posts of the requests this site flags: with no SGE on any of
	// them there is nothing to copy, so no size to guard.
	c.posts = posts
	if len(posts) > 0 {
		zero := true
		for _, p := range posts {
			zero = zero && p.Nsge == 0
		}
		if zero {
			return
		}
	}
	own := c.ternaryComparisons(f, s.Node, s.Fn)
	if len(visits) == 0 {
		var cmps []engine.GuardRef
		for p := s.Node.Parent(); p != nil && !engine.Same(p, s.Fn); p = p.Parent() {
			if engine.KindOf(p) == "if_statement" {
				cmps = append(cmps, c.guardComparisons(f, s.Fn, p.ChildByFieldName("condition"), facts)...)
			}
		}
		c.judge(s, name, append(cmps, own...), facts)
		return
	}
	// A helper's site with no condition of its own on any path is
	// judged by its callers' paths (the visits the engine reports at
	// the calls); otherwise by its own.
	var mine, callers []engine.SiteVisit
	for _, v := range visits {
		if v.CondF != nil {
			callers = append(callers, v)
		} else {
			mine = append(mine, v)
		}
	}
	visits = mine
	if len(callers) > 0 && len(own) == 0 && !slices.ContainsFunc(mine, func(v engine.SiteVisit) bool { return len(v.Conds) > 0 }) {
		visits = callers
	}
	seen := map[string]bool{}
	for _, v := range visits {
		if v.Reg {
			continue // inline-on-registration's finding, not a size
		}
		cf, cfn := f, s.Fn
		if v.CondF != nil {
			cf, cfn = v.CondF, v.CondFn
		}
		var kb strings.Builder
		kb.WriteString(cf.Rel + ":")
		for _, c := range v.Conds {
			fmt.Fprintf(&kb, "%d-%d;", c.StartByte(), c.EndByte())
		}
		if seen[kb.String()] {
			continue
		}
		seen[kb.String()] = true
		cmps := append([]engine.GuardRef{}, own...)
		for _, cond := range v.Conds {
			cmps = append(cmps, c.guardComparisons(cf, cfn, cond, facts)...)
		}
		if !c.judge(s, name, cmps, facts) {
			return // one finding per site
		}
	}
}

// judge reports a site whose comparisons do not include the granted size.
func (c *sizeCheck) judge(s engine.InlineSite, name string, cmps []engine.GuardRef, facts *engine.Facts) bool {
	f := s.F
	// A caller that passes the guard as a constant false never has the
	// flag set through it: no size to compare.
	var asks []engine.GuardRef
	for _, g := range cmps {
		if e := engine.StripParens(g.Cmp); e == nil || engine.KindOf(e) != "false" && g.F.Text(e) != "0" {
			asks = append(asks, g)
		}
	}
	if len(cmps) > 0 && len(asks) == 0 {
		return true
	}
	cmps = asks
	if len(cmps) == 0 {
		if ok, dev := c.postsWithinRequest(f, s.Node); ok {
			if dev == "" {
				return true
			}
			c.addSubject(f, s.Node, name, SevError, "IB_SEND_INLINE is set without comparing the payload with the inline size the QP was granted; the payload is within the size requested, "+dev, unguarded())
			return false
		}
		c.addSubject(f, s.Node, name, SevError, "IB_SEND_INLINE is set without comparing the payload with the inline size the QP was granted", unguarded())
		return false
	}
	var tried []string
	for _, g := range cmps {
		sides := []*sitter.Node{g.Cmp.ChildByFieldName("left"), g.Cmp.ChildByFieldName("right")}
		for i, side := range sides {
			if ok, _ := c.granted(g.F, g.Fn, side, facts); ok {
				return c.partial(s, name, g, sides[1-i])
			}
		}
		t := strings.Join(strings.Fields(g.F.Text(g.Cmp)), " ")
		if !slices.Contains(tried, t) {
			tried = append(tried, t)
		}
	}
	dev := ""
	for _, g := range cmps {
		sides := []*sitter.Node{g.Cmp.ChildByFieldName("left"), g.Cmp.ChildByFieldName("right")}
		for i, side := range sides {
			if ok, d := c.withinRequest(g.F, g.Fn, side); ok {
				if d == "" {
					return c.partial(s, name, g, sides[1-i])
				}
				dev = d
			}
		}
	}
	if dev != "" {
		c.add(f, s.Node, name, SevError, fmt.Sprintf("the guard before IB_SEND_INLINE (%s) compares with the size requested, not the size granted after QP creation; %s", strings.Join(tried, "; "), dev))
		return false
	}
	c.add(f, s.Node, name, SevError, fmt.Sprintf("the guard before IB_SEND_INLINE (%s) does not compare with the inline size granted after QP creation: a device may grant less than was asked", strings.Join(tried, "; ")))
	return false
}

// Grant semantics. The verbs contract (ib_create_qp(), rdma_create_qp():
// "the actual capabilities ... are returned in the caps"; the IB spec's
// Create QP: the values returned are at least those requested, or the
// call fails) makes a size the module requested for its QPs a safe bound
// once the creation succeeded: a guard against a constant no larger than
// every constant the module requests, or an unguarded inline post whose
// SGE lengths are constants summing to no more, is safe. A failed
// creation is rule inline-size's other half (the recorded size is then
// 0). Providers deviate: some write back less than was asked and still
// succeed (mlx4 for kernel QPs and pvrdma write 0). When the tree's
// provider table shows such a provider, the request is no bound and the
// guard must compare with the granted size; the finding names them.

// deviating names the providers of the tree that grant less than was
// requested without failing ("" when none): a grant of a constant 0.
func (c *sizeCheck) deviating() string {
	var out []string
	for _, r := range c.providers {
		for _, g := range r.Grants {
			if strings.HasPrefix(g, "0 (") {
				out = append(out, r.Provider+" ("+strings.TrimSuffix(strings.TrimPrefix(g, "0 ("), ")")+")")
				break
			}
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "but the verbs contract that a successful creation grants at least the request does not hold for every provider of this tree: " + strings.Join(out, ", ") + " grant 0 and succeed"
}

// requested is the smallest inline size the module of f requests for
// its QPs, when every request is a constant.
func (c *sizeCheck) requested(f *engine.File) (int64, bool) {
	dir := path.Dir(f.Rel)
	if r, ok := c.reqMin[dir]; ok {
		return r, r >= 0
	}
	min := int64(-1)
	for _, g := range c.files {
		if path.Dir(g.Rel) != dir {
			continue
		}
		for _, fn := range engine.Functions(g) {
			engine.Walk(fn, func(n *sitter.Node) bool {
				if min == -2 {
					return false
				}
				if engine.KindOf(n) != "assignment_expression" {
					return true
				}
				lt := strings.Join(strings.Fields(g.Text(n.ChildByFieldName("left"))), "")
				if !strings.HasSuffix(lt, "cap.max_inline_data") {
					return true
				}
				attr := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(lt, "cap.max_inline_data"), "."), "->")
				if !createdBefore(g, fn, attr, n) && !calledAfter(g, fn, attr, n) {
					return true // not a request
				}
				sz, _, ok := c.constSize(g, n.ChildByFieldName("right"))
				switch {
				case !ok:
					min = -2
				case min < 0 || sz < min:
					min = sz
				}
				return true
			})
		}
	}
	if min < 0 {
		min = -1
	}
	c.reqMin[dir] = min
	return min, min >= 0
}

// withinRequest reports whether expr is a constant bound (a literal, a
// #define, a sizeof, or a local only ever assigned those) no larger than
// what the module requests; with the deviating providers' note.
func (c *sizeCheck) withinRequest(f *engine.File, fn, expr *sitter.Node) (bool, string) {
	req, ok := c.requested(f)
	if !ok {
		return false, ""
	}
	v, ok := c.constBound(f, fn, expr)
	if !ok || v > req {
		return false, ""
	}
	return true, c.deviating()
}

func (c *sizeCheck) constBound(f *engine.File, fn, expr *sitter.Node) (int64, bool) {
	expr = stripCasts(expr)
	if expr == nil {
		return 0, false
	}
	if v, _, ok := c.constSize(f, expr); ok {
		return v, true
	}
	if engine.KindOf(expr) != "identifier" {
		return 0, false
	}
	srcs := c.localSources(f, fn, f.Text(expr))
	if len(srcs) == 0 {
		return 0, false
	}
	var max int64
	for _, src := range srcs {
		v, _, ok := c.constSize(f, stripCasts(src))
		if !ok {
			return 0, false
		}
		if v > max {
			max = v
		}
	}
	return max, true
}

// postsWithinRequest reports whether every post of the site being judged
// has SGE lengths that are constants summing to no more than the module
// requests (with the deviating providers' note).
func (c *sizeCheck) postsWithinRequest(f *engine.File, at *sitter.Node) (bool, string) {
	req, ok := c.requested(f)
	if !ok || len(c.posts) == 0 {
		return false, ""
	}
	for _, p := range c.posts {
		if p.Nsge < 0 {
			return false, ""
		}
		var sum int64
		for _, l := range p.Lens {
			v, ok := c.constText(f, at, l)
			if !ok {
				return false, ""
			}
			sum += v
		}
		if sum > req {
			return false, ""
		}
	}
	return true, c.deviating()
}

// constText evaluates a length as the engine wrote it (spaces removed):
// a number, a #define of the module, sizeof(struct T).
func (c *sizeCheck) constText(f *engine.File, at *sitter.Node, t string) (int64, bool) {
	if v, err := strconv.ParseInt(strings.TrimRight(t, "uUlL"), 0, 64); err == nil {
		return v, true
	}
	if v, ok := c.facts[path.Dir(f.Rel)].Constants[t]; ok {
		return v, true
	}
	if strings.HasPrefix(t, "sizeof(struct") && strings.HasSuffix(t, ")") {
		typ := "struct " + strings.TrimSuffix(strings.TrimPrefix(t, "sizeof(struct"), ")")
		if v, _, ok := c.sizeofType(f, at, typ); ok {
			return v, true
		}
	}
	return 0, false
}

// partial reports a guard that compares with the granted size only one
// of the lengths of the SGEs posted inline (len <= max with a header SGE
// besides): the payload copied is their sum. False when it reported.
func (c *sizeCheck) partial(s engine.InlineSite, name string, g engine.GuardRef, other *sitter.Node) bool {
	// The guarded value, as the sum of its terms: each must be one SGE's
	// length for the guard to say which SGEs it covers.
	var terms []string
	var split func(n *sitter.Node)
	split = func(n *sitter.Node) {
		n = stripCasts(n)
		if n != nil && engine.KindOf(n) == "binary_expression" && g.F.Text(n.ChildByFieldName("operator")) == "+" {
			split(n.ChildByFieldName("left"))
			split(n.ChildByFieldName("right"))
			return
		}
		terms = append(terms, engine.CondKey(g.F, n))
	}
	split(other)
	o := strings.Join(terms, " + ")
	for _, p := range c.posts {
		if p.Nsge < 2 {
			continue
		}
		covered := map[int]bool{}
		for _, t := range terms {
			hit := -1
			for i, l := range p.Lens {
				if l == t && !covered[i] {
					hit = i
					break
				}
			}
			if hit < 0 {
				covered = nil // a term that is no SGE's length: cannot tell
				break
			}
			covered[hit] = true
		}
		if covered == nil {
			continue
		}
		var rest []string
		var hits []string
		for i, l := range p.Lens {
			if covered[i] {
				hits = append(hits, strconv.Itoa(i))
			} else if l != "0" {
				rest = append(rest, cmp.Or(l, "?"))
			}
		}
		if len(rest) == 0 {
			continue
		}
		what := "SGE " + hits[0] + "'s length"
		if len(hits) > 1 {
			what = "the lengths of SGEs " + strings.Join(hits, ", ")
		}
		c.add(s.F, s.Node, name, SevError, fmt.Sprintf("the guard before IB_SEND_INLINE (%s) covers only %s: %d SGEs are posted inline, and the device copies their sum (%s + %s) into the inline space",
			strings.Join(strings.Fields(g.F.Text(g.Cmp)), " "), what, p.Nsge, o, strings.Join(rest, " + ")),
			Evidence{File: g.F.Rel, Line: g.F.Line(g.Cmp), Message: "the guard"})
		return false
	}
	return true
}

// guardComparisons are the comparisons a condition is made of, through
// bool locals and the module's predicate helpers.
func (c *sizeCheck) guardComparisons(f *engine.File, fn, cond *sitter.Node, facts *engine.Facts) []engine.GuardRef {
	key := fmt.Sprintf("%s:%d-%d", f.Rel, cond.StartByte(), cond.EndByte())
	if out, ok := c.cmpCache[key]; ok {
		return out
	}
	out := c.guardComparisons1(f, fn, cond, facts)
	c.cmpCache[key] = out
	return out
}

func (c *sizeCheck) guardComparisons1(f *engine.File, fn, cond *sitter.Node, facts *engine.Facts) []engine.GuardRef {
	var out []engine.GuardRef
	for _, cmp := range engine.Comparisons(f, cond, fn) {
		out = append(out, engine.GuardRef{F: f, Fn: fn, Cmp: cmp})
	}
	// A guard passed in as a parameter (bool small): what the callers
	// pass. Every caller must pass a comparison with the granted size:
	// when all do, one stands for them; else those that do not.
	ps := engine.Params(f, fn)
	engine.Walk(cond, func(n *sitter.Node) bool {
		if engine.KindOf(n) != "identifier" {
			return true
		}
		for i, p := range ps {
			if p.Name != f.Text(n) || p.Pointer {
				continue
			}
			var good, bad []engine.GuardRef
			for _, a := range c.callerArgs(f, fn, i) {
				var cmps []engine.GuardRef
				for _, cmp := range engine.Comparisons(a.f, a.arg, a.fn) {
					cmps = append(cmps, engine.GuardRef{F: a.f, Fn: a.fn, Cmp: cmp})
				}
				if len(cmps) == 0 {
					// A constant or a flag from elsewhere: no
					// comparison is made for this caller.
					bad = append(bad, engine.GuardRef{F: a.f, Fn: a.fn, Cmp: a.arg})
					continue
				}
				ok := false
				callerFacts := facts
				if cf := c.facts[path.Dir(a.f.Rel)]; cf != nil {
					callerFacts = cf // the caller's module knows its fields
				}
				for _, g := range cmps {
					for _, side := range []*sitter.Node{g.Cmp.ChildByFieldName("left"), g.Cmp.ChildByFieldName("right")} {
						if side != nil {
							if yes, _ := c.granted(g.F, g.Fn, side, callerFacts); yes {
								ok = true
							}
						}
					}
				}
				if ok {
					good = append(good, cmps...)
				} else {
					bad = append(bad, cmps...)
				}
			}
			switch {
			case len(bad) > 0:
				out = append(out, bad...)
			case len(good) > 0:
				out = append(out, good...)
			}
		}
		return true
	})
	engine.Walk(cond, func(n *sitter.Node) bool {
		if engine.KindOf(n) == "call_expression" {
			if s := facts.Summary(f.Text(n.ChildByFieldName("function"))); s != nil {
				out = append(out, s.Guards...)
			}
		}
		return true
	})
	return out
}

type callerArg struct {
	f       *engine.File
	fn, arg *sitter.Node
}

// callerArgs are the arguments the module's calls of fn pass for its
// parameter i.
func (c *sizeCheck) callerArgs(f *engine.File, fn *sitter.Node, i int) []callerArg {
	name := engine.FunctionName(f, fn)
	if name == "" {
		return nil
	}
	// A static function is called from its module; another from any
	// module that links to this one's definition (link.go).
	own := c.facts[path.Dir(f.Rel)]
	exported := !engine.IsStatic(f, fn)
	var out []callerArg
	for _, g := range c.files {
		if !strings.Contains(string(g.Src), name+"(") {
			continue
		}
		if path.Dir(g.Rel) != path.Dir(f.Rel) && (!exported || own == nil || c.facts[path.Dir(g.Rel)].Linked(name) != own) {
			continue
		}
		for _, cfn := range engine.Functions(g) {
			engine.Walk(cfn.ChildByFieldName("body"), func(n *sitter.Node) bool {
				if engine.KindOf(n) == "call_expression" && g.Text(n.ChildByFieldName("function")) == name {
					if args := engine.Named(n.ChildByFieldName("arguments")); i < len(args) {
						out = append(out, callerArg{g, cfn, args[i]})
					}
				}
				return true
			})
		}
	}
	return out
}

// ternaryComparisons are the comparisons of the ternaries in a site
// (flags = len <= max ? IB_SEND_INLINE : 0).
func (c *sizeCheck) ternaryComparisons(f *engine.File, site, fn *sitter.Node) []engine.GuardRef {
	var out []engine.GuardRef
	facts := c.facts[path.Dir(f.Rel)]
	engine.Walk(site, func(n *sitter.Node) bool {
		if engine.KindOf(n) == "conditional_expression" {
			out = append(out, c.guardComparisons(f, fn, n.ChildByFieldName("condition"), facts)...)
		}
		return true
	})
	return out
}

// granted reports whether expr is the inline size a device granted: a
// caps field of an attr that a create or query call filled before this
// point, or a field assigned only from such.
func (c *sizeCheck) granted(f *engine.File, fn, expr *sitter.Node, facts *engine.Facts) (bool, string) {
	return c.grantedDepth(f, fn, expr, facts, 0)
}

func (c *sizeCheck) grantedDepth(f *engine.File, fn, expr *sitter.Node, facts *engine.Facts, depth int) (bool, string) {
	expr = engine.StripParens(expr)
	if expr == nil || depth > 8 {
		return false, ""
	}
	switch engine.KindOf(expr) {
	case "call_expression":
		// READ_ONCE(q->max_inline_data) and the like are the value.
		if args := engine.Named(expr.ChildByFieldName("arguments")); engine.PassThrough[f.Text(expr.ChildByFieldName("function"))] && len(args) == 1 {
			return c.grantedDepth(f, fn, args[0], facts, depth+1)
		}
		return false, ""
	case "cast_expression":
		return c.grantedDepth(f, fn, expr.ChildByFieldName("value"), facts, depth+1)
	case "identifier":
		// A local copy of the granted size (u32 max = READ_ONCE(...)):
		// granted when everything assigned to it is.
		srcs := c.localSources(f, fn, f.Text(expr))
		if len(srcs) == 0 {
			return false, ""
		}
		for _, src := range srcs {
			if ok, _ := c.grantedDepth(f, fn, src, facts, depth+1); !ok {
				return false, ""
			}
		}
		return true, "a local copy of the granted size"
	}
	t := f.Text(expr)
	if strings.HasSuffix(t, "cap.max_inline_data") {
		attr := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(t, "cap.max_inline_data"), "."), "->")
		if createdBefore(f, fn, attr, expr) {
			return true, "filled by QP creation in this function"
		}
		if w, ok := facts.Queried[engine.FieldKey(engine.PlaceOf(f, expr, engine.StaticAlias(f, fn)))]; ok {
			return true, "filled by ib_query_qp at " + w
		}
		return false, ""
	}
	if engine.KindOf(expr) != "field_expression" {
		return false, ""
	}
	as, owner := facts.GrantedAt(engine.FieldKey(engine.PlaceOf(f, expr, engine.StaticAlias(f, fn))))
	if len(as) == 0 {
		return false, ""
	}
	for _, a := range as {
		ok := false
		engine.Walk(a.Rhs, func(n *sitter.Node) bool {
			if engine.KindOf(n) == "field_expression" && strings.HasSuffix(a.File.Text(n), "cap.max_inline_data") {
				if g, _ := c.granted(a.File, a.Fn, n, owner); g {
					ok = true
				}
			}
			return !ok
		})
		if !ok {
			return false, ""
		}
	}
	return true, "assigned from granted caps"
}

// createdBefore reports whether attr was passed to a QP create or query
// call in fn before node.
func createdBefore(f *engine.File, fn *sitter.Node, attr string, node *sitter.Node) bool {
	found := false
	engine.Walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		if engine.KindOf(n) == "call_expression" && n.EndByte() <= node.StartByte() && engine.CreateFuncs[f.Text(n.ChildByFieldName("function"))] {
			for _, a := range engine.Named(n.ChildByFieldName("arguments")) {
				if strings.TrimPrefix(strings.Join(strings.Fields(f.Text(a)), ""), "&") == attr {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// localSources are the values assigned to a local variable of fn.
func (c *sizeCheck) localSources(f *engine.File, fn *sitter.Node, name string) []*sitter.Node {
	k := fmt.Sprintf("%s:%d:%s", f.Rel, fn.StartByte(), name)
	if srcs, ok := c.srcCache[k]; ok {
		return srcs
	}
	if c.srcCache == nil {
		c.srcCache = map[string][]*sitter.Node{}
	}
	srcs := localSources(f, fn, name)
	c.srcCache[k] = srcs
	return srcs
}

// localSources lists what is assigned to name in function fn: the
// initializers of its declarations and the right sides of assignments.
func localSources(f *engine.File, fn *sitter.Node, name string) []*sitter.Node {
	var out []*sitter.Node
	engine.Walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		switch engine.KindOf(n) {
		case "init_declarator":
			if d, _ := engine.DeclName(f, n.ChildByFieldName("declarator")); d == name {
				if v := n.ChildByFieldName("value"); v != nil {
					out = append(out, v)
				}
			}
		case "assignment_expression":
			if l := n.ChildByFieldName("left"); l != nil && engine.KindOf(l) == "identifier" && f.Text(l) == name {
				out = append(out, n.ChildByFieldName("right"))
			}
		}
		return true
	})
	return out
}

func mentionsText(f *engine.File, n *sitter.Node, name string) bool {
	found := false
	engine.Walk(n, func(c *sitter.Node) bool {
		if (engine.KindOf(c) == "identifier" || engine.KindOf(c) == "field_expression") && f.Text(c) == name {
			found = true
		}
		return !found
	})
	return found
}

// requests checks the size a QP asks for against the payloads posted
// inline in the same file, and that a size read back is read after the
// create call.
func (c *sizeCheck) requests(f *engine.File) {
	// Payloads: constant lengths given to SGEs in this file.
	type payload struct {
		size int64
		expr string
		node *sitter.Node
		fn   *sitter.Node
	}
	var payloads []payload
	var reqs []engine.Assign
	for _, fn := range engine.Functions(f) {
		engine.Walk(fn, func(n *sitter.Node) bool {
			if engine.KindOf(n) != "assignment_expression" {
				return true
			}
			lhs := n.ChildByFieldName("left")
			lt := strings.Join(strings.Fields(f.Text(lhs)), "")
			switch {
			case strings.HasSuffix(lt, "cap.max_inline_data"):
				reqs = append(reqs, engine.Assign{File: f, Fn: fn, Node: n, Lhs: lhs, Rhs: n.ChildByFieldName("right")})
			case engine.KindOf(lhs) == "field_expression" && f.Text(lhs.ChildByFieldName("field")) == "length" && strings.Contains(strings.ToLower(f.Text(lhs.ChildByFieldName("argument"))), "sge"):
				if sz, expr, ok := c.constSize(f, n.ChildByFieldName("right")); ok {
					payloads = append(payloads, payload{sz, expr, n, fn})
				}
			}
			return true
		})
	}
	var max payload
	for _, p := range payloads {
		if p.size > max.size {
			max = p
		}
	}
	for _, r := range reqs {
		name := engine.FunctionName(f, r.Fn)
		attr := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(strings.Join(strings.Fields(f.Text(r.Lhs)), ""), "cap.max_inline_data"), "."), "->")
		if !createdBefore(f, r.Fn, attr, r.Node) && !calledAfter(f, r.Fn, attr, r.Node) {
			continue // not a QP's caps
		}
		sz, expr, ok := c.constSize(f, r.Rhs)
		if !ok || max.size == 0 {
			continue
		}
		if sz == 0 && anyCreateBefore(f, r.Fn, r.Node) {
			continue // a fallback retrying without inline data after a failed creation
		}
		if sz < max.size {
			msg := fmt.Sprintf("requests %s = %d bytes of inline data, but %s = %d bytes is posted inline (line %d)", expr, sz, max.expr, max.size, f.Line(max.node))
			if i := c.unguardedSite(f, engine.FunctionName(f, max.fn)); i >= 0 {
				// One defect, one report: the payload's unguarded
				// inline post is already reported where the flag is
				// set; the request that does not cover it is its
				// evidence.
				c.findings[i].Evidence = append(c.findings[i].Evidence, Evidence{File: f.Rel, Line: f.Line(r.Node), Message: msg})
				continue
			}
			c.add(f, r.Node, name, SevError, msg,
				Evidence{File: f.Rel, Line: f.Line(max.node), Message: "inline payload " + max.expr})
		}
	}
}

// unguardedSite is the index of an inline-size finding of function fn
// (of file f) that sets IB_SEND_INLINE without comparing with the
// granted size, or -1.
func (c *sizeCheck) unguardedSite(f *engine.File, fn string) int {
	for i, x := range c.findings {
		if x.File == f.Rel && x.Function == fn && x.Subject != nil && x.Subject.Defect == findings.DefectUnguarded {
			return i
		}
	}
	return -1
}

// anyCreateBefore reports whether a QP create call precedes node in fn.
func anyCreateBefore(f *engine.File, fn, node *sitter.Node) bool {
	found := false
	engine.Walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		if engine.KindOf(n) == "call_expression" && n.EndByte() <= node.StartByte() && engine.CreateFuncs[f.Text(n.ChildByFieldName("function"))] && f.Text(n.ChildByFieldName("function")) != "ib_query_qp" {
			found = true
		}
		return !found
	})
	return found
}

// calledAfter reports whether attr is passed to a create call after node.
func calledAfter(f *engine.File, fn *sitter.Node, attr string, node *sitter.Node) bool {
	found := false
	engine.Walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		if engine.KindOf(n) == "call_expression" && n.StartByte() >= node.EndByte() && engine.CreateFuncs[f.Text(n.ChildByFieldName("function"))] {
			for _, a := range engine.Named(n.ChildByFieldName("arguments")) {
				if strings.TrimPrefix(strings.Join(strings.Fields(f.Text(a)), ""), "&") == attr {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// constSize evaluates a size: a literal, a #define, or sizeof(struct T)
// (from the headers, checked against DWARF when a build exists).
func (c *sizeCheck) constSize(f *engine.File, n *sitter.Node) (int64, string, bool) {
	n = engine.StripParens(n)
	expr := strings.Join(strings.Fields(f.Text(n)), " ")
	switch engine.KindOf(n) {
	case "number_literal":
		var v int64
		if _, err := fmt.Sscanf(f.Text(n), "%v", &v); err == nil {
			return v, expr, true
		}
	case "identifier":
		if v, ok := c.facts[path.Dir(f.Rel)].Constants[f.Text(n)]; ok {
			return v, expr, true
		}
	case "sizeof_expression":
		t := n.ChildByFieldName("type")
		if t == nil {
			return 0, expr, false
		}
		typ := strings.Join(strings.Fields(f.Text(t)), " ")
		return c.sizeofType(f, n, typ)
	}
	return 0, expr, false
}

func (c *sizeCheck) sizeofType(f *engine.File, at *sitter.Node, typ string) (int64, string, bool) {
	expr := "sizeof(" + typ + ")"
	if row, ok := c.layouts[typ]; ok {
		return row.Headers, expr, true
	}
	name := strings.TrimPrefix(strings.TrimPrefix(typ, "struct "), "union ")
	db, err := engine.LoadLayouts(c.opts.Tree, []string{path.Dir(f.Rel), "include/linux", "include/rdma", "include/uapi/linux"}, name)
	if err != nil {
		return 0, expr, false
	}
	defer db.Close() // the headers' trees: only the size is kept
	if _, ok := db.Defs[typ]; !ok && strings.HasSuffix(f.Rel, ".c") && strings.Contains(string(f.Src), name) {
		// A struct the .c file itself defines.
		db.Add(engine.Parse(f.Rel, engine.ExpandStructGroups(f.Src)))
	}
	size, _, err := db.Sizeof(typ, 0)
	if err != nil {
		return 0, expr, false
	}
	row := &LayoutRow{Struct: typ, Headers: size}
	c.layouts[typ] = row
	if c.opts.BuildDir != "" {
		obj := filepath.Join(c.opts.BuildDir, strings.TrimSuffix(f.Rel, ".c")+".o")
		// Read through the recorder: a kept report is reused only while
		// the object reads the same (reuse.go).
		if b, err := engine.ReadFile(obj); err == nil {
			if r, err := dwarflayout.FromBytes(obj, b); err == nil {
				if st, err := r.Struct(name); err == nil {
					row.DWARF, row.Object = st.Size, obj
					if st.Size != size {
						c.add(f, at, "", SevError, fmt.Sprintf("%s is %d bytes by the headers but %d bytes in the build's DWARF (%s): the layout calculation is wrong here", typ, size, st.Size, obj))
					}
				}
			}
		}
	}
	return size, expr, true
}

// providerTable reads, for each provider under drivers/infiniband/hw and
// sw, the limits it puts on a requested inline size and what it writes
// back as granted.
func providerTable(tree string) ([]ProviderRow, error) {
	var rows []ProviderRow
	for _, kind := range []string{"hw", "sw"} {
		ents, err := engine.ReadDirNames(filepath.Join(tree, "drivers", "infiniband", kind))
		if err != nil {
			continue
		}
		for _, e := range ents {
			name, isDir := strings.CutSuffix(e, "/")
			if !isDir {
				continue
			}
			dir := path.Join("drivers/infiniband", kind, name)
			rels, _ := engine.ListC(tree, []string{dir})
			files, err := engine.LoadFiles(tree, rels, "max_inline")
			if err != nil {
				return nil, err
			}
			row := ProviderRow{Provider: name}
			for _, f := range files {
				engine.Walk(f.Tree.RootNode(), func(n *sitter.Node) bool {
					switch engine.KindOf(n) {
					case "if_statement":
						for _, cmp := range engine.Comparisons(f, n.ChildByFieldName("condition"), nil) {
							l := f.Text(cmp.ChildByFieldName("left"))
							if strings.HasSuffix(l, "max_inline_data") && f.Text(cmp.ChildByFieldName("operator")) == ">" {
								row.Rejects = append(row.Rejects, fmt.Sprintf("%s (%s:%d)", strings.Join(strings.Fields(f.Text(cmp.ChildByFieldName("right"))), " "), path.Base(f.Rel), f.Line(cmp)))
							}
						}
					case "assignment_expression":
						l := strings.Join(strings.Fields(f.Text(n.ChildByFieldName("left"))), "")
						// Through a pointer: the caller's caps written
						// back (a local attr is a request of its own).
						if (strings.HasSuffix(l, "cap.max_inline_data") || strings.HasSuffix(l, "cap->max_inline_data")) && strings.Contains(l, "->") && !strings.Contains(l, "props") {
							row.Grants = append(row.Grants, fmt.Sprintf("%s (%s:%d)", strings.Join(strings.Fields(f.Text(n.ChildByFieldName("right"))), " "), path.Base(f.Rel), f.Line(n)))
						}
					}
					return true
				})
			}
			if len(row.Rejects)+len(row.Grants) > 0 {
				rows = append(rows, row)
			}
		}
	}
	sortRows(rows)
	return rows, nil
}
