package checks

import (
	"fmt"
	"slices"
	"strings"

	"github.com/patchctl/patchctl/checks/engine"
	sitter "github.com/tree-sitter/go-tree-sitter"
)

// Rule incapsule-bounds: NVMe-oF in-capsule data offsets and lengths
// come from the wire. A bounds check written as off + len > size, with
// off a 64-bit value read from the wire (le64_to_cpu(...)), wraps around:
// a huge off with a small len passes, and the data is then read or
// written far outside the in-capsule buffer (nvmet-rdma's
// nvmet_rdma_map_sgl_inline, reported on linux-rdma on 2026-05-29 as a
// pre-auth kernel-memory read and remote crash). A comparison that adds
// such a value is a finding unless, before it in the function, the value
// is checked alone on a path that leaves (if (off) return ...; if (off >
// size) goto err;), a wrap test on a path that leaves catches the sum
// (if (off + len < off) or (off + len < len) return ...), or
// check_add_overflow() takes it. A wrap test is no bound check, and a
// comparison without the addition (off > size - len) cannot wrap. The
// end of a range stored into a 32-bit (or narrower) integer (u32 end =
// off + len) is truncated: a comparison of it is a finding too, unless
// guarded in the same ways (check_add_overflow() into a u32 checks the
// u32's range, and is the fix). It applies to the NVMe target and host
// transports and the RDMA ULPs.

// IncapsuleDirs are where the rule looks.
var IncapsuleDirs = []string{"drivers/nvme/target", "drivers/nvme/host", "drivers/infiniband/ulp"}

// wire64Funcs read a 64-bit value from a wire-format field.
var wire64Funcs = map[string]bool{"le64_to_cpu": true, "be64_to_cpu": true, "get_unaligned_le64": true, "get_unaligned_be64": true,
	"le64_to_cpup": true, "__le64_to_cpu": true}

func inIncapsuleScope(rel string) bool {
	for _, d := range IncapsuleDirs {
		if strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}

// incapsuleFiles are the files of rels the rule reads: those of its
// folders that read a 64-bit wire value.
func incapsuleFiles(tree string, rels []string, pp engine.Preprocessor) ([]*engine.File, error) {
	var scope []string
	for _, r := range rels {
		if strings.HasSuffix(r, ".c") && inIncapsuleScope(r) {
			scope = append(scope, r)
		}
	}
	return engine.LoadFilesOpt(tree, pp, false, scope, "le64_to_cpu", "be64_to_cpu", "get_unaligned_le64", "get_unaligned_be64")
}

func incapsuleFindings(files []*engine.File) []Finding {
	var out []Finding
	for _, f := range files {
		for _, fn := range engine.Functions(f) {
			out = append(out, incapsuleFunction(f, fn)...)
		}
	}
	for i := range out {
		if note := KnownNote(out[i].Rule, out[i].File, out[i].Function); note != "" {
			out[i].Message += " [" + note + "]"
		}
	}
	return out
}

type wireVal struct {
	origin string
	line   int
}

func incapsuleFunction(f *engine.File, fn *sitter.Node) []Finding {
	wire := map[string]wireVal{}
	isWire := func(n *sitter.Node) bool {
		n = stripCasts(n)
		if n == nil {
			return false
		}
		switch engine.KindOf(n) {
		case "identifier":
			_, ok := wire[f.Text(n)]
			return ok
		case "call_expression":
			return wire64Funcs[f.Text(n.ChildByFieldName("function"))]
		}
		return false
	}
	var out []Finding
	name := engine.FunctionName(f, fn)
	// trunc are the narrow locals holding a sum with a wire value.
	type truncVal struct {
		v, typ, sum string
		line        int
	}
	trunc := map[string]truncVal{}
	// wide are the 64-bit locals holding such a sum (it can wrap), with
	// the sum's addends.
	type wideVal struct {
		truncVal
		addends []string
	}
	wide := map[string]wideVal{}
	narrowSum := func(name, typ string, rhs *sitter.Node, at *sitter.Node) {
		delete(trunc, name)
		delete(wide, name)
		if rhs == nil {
			return
		}
		sum, v := wireSum(f, rhs, isWire)
		if sum == nil {
			return
		}
		tv := truncVal{v, typ, strings.Join(strings.Fields(f.Text(sum)), " "), f.Line(at)}
		switch {
		case narrowTypes[typ]:
			trunc[name] = tv
		case wideTypes[typ] && engine.Same(stripCasts(rhs), sum):
			wide[name] = wideVal{tv, []string{engine.CondKey(f, stripCasts(sum.ChildByFieldName("left"))), engine.CondKey(f, stripCasts(sum.ChildByFieldName("right")))}}
		}
	}
	types := map[string]string{}
	for _, p := range engine.Params(f, fn) {
		types[p.Name] = strings.TrimSpace(p.Typ)
		if p.Pointer {
			types[p.Name] += "*"
		}
	}
	// dropped are the sums check_add_overflow() stored while its result
	// was thrown away (check_add_overflow(off, len, &end); as a
	// statement): end may have wrapped, and nothing tested it.
	type droppedVal struct {
		v    string
		line int
	}
	dropped := map[string]droppedVal{}
	engine.Walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		switch engine.KindOf(n) {
		case "call_expression":
			if ovfDropped(f, n) {
				args := engine.Named(n.ChildByFieldName("arguments"))
				if len(args) == 3 {
					if d := engine.StripParens(args[2]); d != nil && engine.KindOf(d) == "pointer_expression" {
						for _, a := range args[:2] {
							if isWire(a) {
								dropped[f.Text(d.ChildByFieldName("argument"))] = droppedVal{engine.CondKey(f, stripCasts(a)), f.Line(n)}
							}
						}
					}
				}
			}
		case "declaration":
			typ := strings.Join(strings.Fields(f.Text(n.ChildByFieldName("type"))), " ")
			for _, d := range engine.Named(n) {
				if name, ptr := engine.DeclName(f, d); name != "" && !engine.Same(d, n.ChildByFieldName("type")) {
					types[name] = typ
					if ptr {
						types[name] += "*"
					}
				}
			}
		case "init_declarator":
			if v := n.ChildByFieldName("value"); v != nil && isWire(v) {
				if d, _ := engine.DeclName(f, n.ChildByFieldName("declarator")); d != "" {
					wire[d] = wireVal{strings.Join(strings.Fields(f.Text(v)), " "), f.Line(n)}
				}
			}
			if d, _ := engine.DeclName(f, n.ChildByFieldName("declarator")); d != "" {
				narrowSum(d, types[d], n.ChildByFieldName("value"), n)
			}
		case "assignment_expression":
			if l := n.ChildByFieldName("left"); l != nil && engine.KindOf(l) == "identifier" {
				if isWire(n.ChildByFieldName("right")) {
					wire[f.Text(l)] = wireVal{strings.Join(strings.Fields(f.Text(n.ChildByFieldName("right"))), " "), f.Line(n)}
				} else if f.Text(n.ChildByFieldName("operator")) == "=" {
					delete(wire, f.Text(l))
				}
				if f.Text(n.ChildByFieldName("operator")) == "=" {
					narrowSum(f.Text(l), types[f.Text(l)], n.ChildByFieldName("right"), n)
				}
			}
		case "if_statement", "while_statement":
			cond := n.ChildByFieldName("condition")
			for _, cmp := range engine.Comparisons(f, cond, nil) {
				if wrapTest(f, cmp) {
					continue // the overflow test itself
				}
				// A 64-bit local holding the sum: the wrap test is on
				// it (end < off), or the comparison can wrap.
				if w, wv, ok := storedSum(f, cmp, func(n string) (wideVal, bool) { x, ok := wide[n]; return x, ok }); ok {
					if wv.addends[0] == "" || storedWrapTest(f, cmp, w, wv.addends) {
						continue
					}
					if guarded(f, fn, wv.v, cmp) || storedGuarded(f, fn, cmp, w, wv.addends) {
						continue
					}
					wl := wire[wv.v]
					out = append(out, Finding{Rule: RuleIncapsule, Severity: SevError, File: f.Rel, Line: f.Line(cmp), Function: name,
						Message: fmt.Sprintf("the bound check %s can wrap: %s holds %s (line %d), and %s is a 64-bit value from the wire (%s), so a huge one with a small addend passes it; check %s alone first, or compare without the addition, or use check_add_overflow()",
							strings.Join(strings.Fields(f.Text(cmp)), " "), w, wv.sum, wv.line, wv.v, wl.origin, wv.v),
						Evidence: []Evidence{{File: f.Rel, Line: wl.line, Message: wv.v + " read from the wire: " + wl.origin},
							{File: f.Rel, Line: wv.line, Message: "the sum stored into " + w + ": " + wv.sum}}})
					continue
				}
				if d, end, ok := droppedSide(f, cmp, func(n string) (string, int, bool) { x, ok := dropped[n]; return x.v, x.line, ok }); ok {
					w := wire[d]
					out = append(out, Finding{Rule: RuleIncapsule, Severity: SevError, File: f.Rel, Line: f.Line(cmp), Function: name,
						Message: fmt.Sprintf("the bound check %s compares %s, which check_add_overflow() filled at line %d while its result was dropped: %s is a 64-bit value from the wire (%s), so the sum may have wrapped and a huge one passes; test check_add_overflow()'s result (if (check_add_overflow(...) || %s))",
							strings.Join(strings.Fields(f.Text(cmp)), " "), end, dropped[end].line, d, w.origin, strings.Join(strings.Fields(f.Text(cmp)), " ")),
						Evidence: []Evidence{{File: f.Rel, Line: w.line, Message: d + " read from the wire: " + w.origin},
							{File: f.Rel, Line: dropped[end].line, Message: "check_add_overflow()'s result dropped"}}})
					continue
				}
				for _, side := range []*sitter.Node{cmp.ChildByFieldName("left"), cmp.ChildByFieldName("right")} {
					var tv truncVal
					engine.Walk(side, func(c *sitter.Node) bool {
						if engine.KindOf(c) == "identifier" && tv.v == "" {
							if t, ok := trunc[f.Text(c)]; ok {
								tv = t
								tv.sum = f.Text(c) + " = " + t.sum
							}
						}
						return tv.v == "" && engine.KindOf(c) != "call_expression"
					})
					if tv.v != "" && !guarded(f, fn, tv.v, cmp) {
						w := wire[tv.v]
						out = append(out, Finding{Rule: RuleIncapsule, Severity: SevError, File: f.Rel, Line: f.Line(cmp), Function: name,
							Message: fmt.Sprintf("the bound check %s compares the end of a range truncated to %s (%s, line %d): %s is a 64-bit value from the wire (%s), so the sum's high bits are lost and a huge one passes; use check_add_overflow() into the %s, or check %s alone first",
								strings.Join(strings.Fields(f.Text(cmp)), " "), tv.typ, tv.sum, tv.line, tv.v, w.origin, tv.typ, tv.v),
							Evidence: []Evidence{{File: f.Rel, Line: w.line, Message: tv.v + " read from the wire: " + w.origin},
								{File: f.Rel, Line: tv.line, Message: "the sum stored into a " + tv.typ + ": " + tv.sum}}})
						continue
					}
					sum, v := wireSum(f, side, isWire)
					if sum == nil || guarded(f, fn, v, cmp) {
						continue
					}
					w := wire[v]
					origin := w.origin
					if origin == "" {
						origin = v
					}
					out = append(out, Finding{Rule: RuleIncapsule, Severity: SevError, File: f.Rel, Line: f.Line(cmp), Function: name,
						Message: fmt.Sprintf("the bound check %s can wrap: %s is a 64-bit value from the wire (%s), so a huge one with a small addend passes it; check %s alone first, or compare without the addition, or use check_add_overflow()",
							strings.Join(strings.Fields(f.Text(cmp)), " "), v, origin, v),
						Evidence: []Evidence{{File: f.Rel, Line: w.line, Message: v + " read from the wire: " + origin}}})
				}
			}
		}
		return true
	})
	return out
}

// wideTypes are the 64-bit integer types a stored sum can wrap in.
var wideTypes = map[string]bool{"u64": true, "__u64": true, "uint64_t": true, "unsigned long long": true, "unsigned long": true, "size_t": true, "loff_t": true, "s64": true}

// storedSum finds a side of cmp that is a local holding a wire sum.
func storedSum[V any](f *engine.File, cmp *sitter.Node, get func(string) (V, bool)) (string, V, bool) {
	for _, side := range []*sitter.Node{cmp.ChildByFieldName("left"), cmp.ChildByFieldName("right")} {
		if side = stripCasts(side); side != nil && engine.KindOf(side) == "identifier" {
			if v, ok := get(f.Text(side)); ok {
				return f.Text(side), v, true
			}
		}
	}
	var zero V
	return "", zero, false
}

// storedWrapTest reports whether cmp is the wrap test of the local w
// holding a sum: w < a, a > w (and <=, >=) for an addend a.
func storedWrapTest(f *engine.File, cmp *sitter.Node, w string, addends []string) bool {
	op := f.Text(cmp.ChildByFieldName("operator"))
	l, r := stripCasts(cmp.ChildByFieldName("left")), stripCasts(cmp.ChildByFieldName("right"))
	if l == nil || r == nil {
		return false
	}
	if op == ">" || op == ">=" {
		l, r = r, l
	} else if op != "<" && op != "<=" {
		return false
	}
	return engine.CondKey(f, l) == w && slices.Contains(addends, engine.CondKey(f, r))
}

// storedGuarded reports whether an if around cmp or before it tests the
// local w for wrapping (storedWrapTest) and leaves the path.
func storedGuarded(f *engine.File, fn, cmp *sitter.Node, w string, addends []string) bool {
	ok := false
	engine.Walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		if ok || n.StartByte() >= cmp.EndByte() {
			return false
		}
		if engine.KindOf(n) == "if_statement" && exitsPath(f, n.ChildByFieldName("consequence")) {
			for _, c := range engine.Comparisons(f, n.ChildByFieldName("condition"), nil) {
				if storedWrapTest(f, c, w, addends) {
					ok = true
				}
			}
		}
		return !ok
	})
	return ok
}

// narrowTypes are integer types narrower than 64 bits.
var narrowTypes = map[string]bool{"u32": true, "__u32": true, "u16": true, "u8": true, "int": true, "unsigned int": true,
	"unsigned": true, "s32": true, "uint32_t": true, "__le32": true, "unsigned short": true, "short": true}

// wrapTest reports whether a comparison is an overflow test of a sum:
// a + b < a, a + b < b, a > a + b (and <=, >=): one side a sum, the
// other one of its operands.
func wrapTest(f *engine.File, cmp *sitter.Node) bool {
	op := f.Text(cmp.ChildByFieldName("operator"))
	l, r := stripCasts(cmp.ChildByFieldName("left")), stripCasts(cmp.ChildByFieldName("right"))
	if l == nil || r == nil {
		return false
	}
	sum, other := l, r
	if op == ">" || op == ">=" {
		sum, other = r, l
	}
	if engine.KindOf(sum) != "binary_expression" || f.Text(sum.ChildByFieldName("operator")) != "+" {
		return false
	}
	o := engine.CondKey(f, stripCasts(other))
	return o == engine.CondKey(f, stripCasts(sum.ChildByFieldName("left"))) || o == engine.CondKey(f, stripCasts(sum.ChildByFieldName("right")))
}

// wireSum finds an addition with a wire value as an operand in a side of
// a comparison (not inside a call's arguments) and names the value.
func wireSum(f *engine.File, side *sitter.Node, isWire func(*sitter.Node) bool) (*sitter.Node, string) {
	var sum *sitter.Node
	var v string
	engine.Walk(side, func(n *sitter.Node) bool {
		if sum != nil || engine.KindOf(n) == "call_expression" {
			return false
		}
		if engine.KindOf(n) == "binary_expression" && f.Text(n.ChildByFieldName("operator")) == "+" {
			for _, op := range []*sitter.Node{n.ChildByFieldName("left"), n.ChildByFieldName("right")} {
				if isWire(op) {
					sum, v = n, strings.Join(strings.Fields(f.Text(stripCasts(op))), "")
					return false
				}
			}
		}
		return true
	})
	return sum, v
}

// guarded reports whether, before cmp, the wire value v is checked alone
// by an if whose branch leaves (return, goto, break), or handed to
// check_add_overflow().
func guarded(f *engine.File, fn *sitter.Node, v string, cmp *sitter.Node) bool {
	ok := false
	engine.Walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		if ok || n.StartByte() >= cmp.StartByte() {
			return false
		}
		switch engine.KindOf(n) {
		case "call_expression":
			if name := f.Text(n.ChildByFieldName("function")); (name == "check_add_overflow" || name == "check_sub_overflow") && !ovfDropped(f, n) {
				ok = mentionsText(f, n.ChildByFieldName("arguments"), v)
			}
		case "if_statement":
			cond := n.ChildByFieldName("condition")
			if cond.EndByte() <= cmp.StartByte() && (testsAlone(f, cond, v) || wrapTests(f, cond, v)) && exitsPath(f, n.ChildByFieldName("consequence")) {
				ok = true
			}
			// if (off + len < off || off + len > size) return ...: the
			// wrap test before it in the same condition.
			if cond.StartByte() <= cmp.StartByte() && cmp.EndByte() <= cond.EndByte() && exitsPath(f, n.ChildByFieldName("consequence")) {
				for _, c := range engine.Comparisons(f, cond, nil) {
					if c.EndByte() <= cmp.StartByte() && wrapTest(f, c) && mentionsText(f, c, v) {
						ok = true
					}
				}
			}
		}
		return !ok
	})
	return ok
}

// wrapTests reports whether a condition holds a wrap test of a sum
// with v.
func wrapTests(f *engine.File, cond *sitter.Node, v string) bool {
	for _, c := range engine.Comparisons(f, cond, nil) {
		if wrapTest(f, c) && mentionsText(f, c, v) {
			return true
		}
	}
	return false
}

// testsAlone reports whether a condition uses v outside any addition.
func testsAlone(f *engine.File, cond *sitter.Node, v string) bool {
	found := false
	engine.Walk(cond, func(n *sitter.Node) bool {
		if found {
			return false
		}
		if engine.KindOf(n) == "binary_expression" && f.Text(n.ChildByFieldName("operator")) == "+" {
			return false
		}
		if engine.KindOf(n) == "identifier" && f.Text(n) == v {
			found = true
		}
		return true
	})
	return found
}

// exitsPath reports whether a statement ends its path in the function.
func exitsPath(f *engine.File, n *sitter.Node) bool {
	found := false
	engine.Walk(n, func(c *sitter.Node) bool {
		switch engine.KindOf(c) {
		case "return_statement", "goto_statement", "break_statement":
			found = true
		}
		return !found
	})
	return found
}

func stripCasts(n *sitter.Node) *sitter.Node {
	for {
		n = engine.StripParens(n)
		if n == nil || engine.KindOf(n) != "cast_expression" {
			return n
		}
		n = n.ChildByFieldName("value")
	}
}

// ovfDropped reports whether n is a check_add_overflow() or
// check_sub_overflow() call whose result nothing reads (the call is a
// statement of its own, or cast to void).
func ovfDropped(f *engine.File, n *sitter.Node) bool {
	if engine.KindOf(n) != "call_expression" {
		return false
	}
	if name := f.Text(n.ChildByFieldName("function")); name != "check_add_overflow" && name != "check_sub_overflow" {
		return false
	}
	p := n.Parent()
	for p != nil && (engine.KindOf(p) == "parenthesized_expression" || engine.KindOf(p) == "cast_expression") {
		p = p.Parent()
	}
	return p != nil && engine.KindOf(p) == "expression_statement"
}

// droppedSide finds, on a side of cmp, a local that a dropped
// check_add_overflow() filled; it returns the wire value and the local.
func droppedSide(f *engine.File, cmp *sitter.Node, dropped func(string) (string, int, bool)) (string, string, bool) {
	for _, side := range []*sitter.Node{cmp.ChildByFieldName("left"), cmp.ChildByFieldName("right")} {
		if s := engine.StripParens(side); s != nil && engine.KindOf(s) == "identifier" {
			if v, _, ok := dropped(f.Text(s)); ok {
				return v, f.Text(s), true
			}
		}
	}
	return "", "", false
}
