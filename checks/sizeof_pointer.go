package checks

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/patchctl/patchctl/checks/engine"
	sitter "github.com/tree-sitter/go-tree-sitter"
)

// Rule sizeof-pointer: sizeof applied to a pointer is the pointer's size
// (8 bytes), not that of what it points at. Used as a length the device
// reads or an inline or capsule size, it sends, maps or reserves 8 bytes
// of a larger object. A finding is such a sizeof (sizeof(p), sizeof p,
// sizeof(q->p)) where p is declared a pointer (not an array: the
// innermost declarator decides) as a local, a parameter or, in every
// struct of the module that has such a member, a member, stored into an
// SGE's length, a QP's cap.max_inline_data or a field or variable whose
// name says it is an inline or capsule size, or given as the length of a
// DMA mapping; alone or as a term of a sum. sizeof(*p) is the fix.

// sizeofSinks are the names a size is stored into that make it a length
// the device uses.
func sizeofSink(lhs string) bool {
	l := strings.ToLower(lhs)
	if strings.HasSuffix(l, ".length") || strings.HasSuffix(l, "->length") {
		return strings.Contains(l, "sg")
	}
	return strings.HasSuffix(l, "max_inline_data") || strings.Contains(l, "capsule") ||
		strings.Contains(l, "inline") && (strings.Contains(l, "size") || strings.Contains(l, "len"))
}

// mapLenArg is the length argument's position of the DMA mapping calls.
var mapLenArg = map[string]int{"ib_dma_map_single": 2, "dma_map_single": 2, "ib_dma_sync_single_for_device": 2,
	"ib_dma_sync_single_for_cpu": 2, "dma_sync_single_for_device": 2, "dma_sync_single_for_cpu": 2}

// sizeofCandidate: a .c file the rule must read. Every finding of the
// rule is a sizeof and a sink in one statement (an assignment, a
// declaration's initializer, a designated initializer, a mapping call's
// arguments), so a file qualifies only if one of its statements (the
// text between two semicolons outside parentheses: statement
// expressions stay whole, a for header only joins statements) takes a
// sizeof and names what a sink's text must contain (sizeofSink,
// mapLenArg):
//   - max_inline_data or capsule (any case);
//   - an identifier holding "inline" (not the keyword or an inlining
//     attribute) and "size" or "len" anywhere;
//   - ".length" or "->length" and "sg";
//   - a mapping or sync call's name.
//
// The file's own text is read (as before the preprocessor): a sizeof
// or a sink that only a macro of another file spells is not seen here.
func sizeofCandidate(b []byte) bool {
	if !bytes.Contains(b, sizeofTok) {
		return false
	}
	depth, start := 0, 0
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '(':
			depth++
		case ')':
			depth = max(0, depth-1)
		case ';':
			if depth == 0 {
				if sizeofStatement(b[start:i]) {
					return true
				}
				start = i + 1
			}
		case '/':
			// A comment's semicolons and parentheses are not the code's.
			if i+1 < len(b) && b[i+1] == '/' {
				i = endOf(b, i+2, "\n") - 1
			} else if i+1 < len(b) && b[i+1] == '*' {
				i = endOf(b, i+2, "*/") - 1
			}
		case '"', '\'':
			i = endOfLiteral(b, i)
		}
	}
	return sizeofStatement(b[start:])
}

// endOf is the offset just past the first end at or after from (len(b)
// if there is none).
func endOf(b []byte, from int, end string) int {
	if j := bytes.Index(b[from:], []byte(end)); j >= 0 {
		return from + j + len(end)
	}
	return len(b)
}

// endOfLiteral is the offset of the quote that closes the string or
// character literal opening at i (escapes skipped; a literal a line end
// cuts short ends there).
func endOfLiteral(b []byte, i int) int {
	q := b[i]
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case q, '\n':
			return j
		}
	}
	return len(b)
}

var (
	sizeofTok   = []byte("sizeof")
	sgLengthRe  = regexp.MustCompile(`(?i)(\.|->)\s*length\b`)
	identRe     = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	inliningKws = map[string]bool{"inline": true, "__inline": true, "__inline__": true, "__always_inline": true, "noinline": true, "__noinline": true}
)

// sizeofStatement: a statement's text with a sizeof and a sink's words.
func sizeofStatement(st []byte) bool {
	if !bytes.Contains(st, sizeofTok) {
		return false
	}
	if bytes.Contains(st, []byte("dma_map_single")) || bytes.Contains(st, []byte("dma_sync_single_for")) {
		return true
	}
	l := bytes.ToLower(st)
	switch {
	case bytes.Contains(l, []byte("max_inline_data")), bytes.Contains(l, []byte("capsule")):
		return true
	case bytes.Contains(l, []byte("sg")) && sgLengthRe.Match(st):
		return true
	case bytes.Contains(l, []byte("inline")) && (bytes.Contains(l, []byte("size")) || bytes.Contains(l, []byte("len"))):
		for _, id := range identRe.FindAll(st, -1) {
			if !inliningKws[string(id)] && bytes.Contains(bytes.ToLower(id), []byte("inline")) {
				return true
			}
		}
	}
	return false
}

// sizeofScope is what the rule reads: the files already parsed for the
// other rules, and the candidates of the scope they leave out (their
// members are known from the structs those .c files declare).
func sizeofScope(tree string, pp engine.Preprocessor, have []*engine.File, cands []string) ([]*engine.File, error) {
	seen := map[string]bool{}
	for _, f := range have {
		seen[f.Rel] = true
	}
	var more []string
	for _, r := range cands {
		if !seen[r] {
			more = append(more, r)
		}
	}
	if len(more) == 0 {
		return have, nil
	}
	// Raw, as the in-capsule rule reads its scope: a file parsed with
	// the module's macros expanded is parsed anew on every run.
	fs, err := engine.LoadFilesOpt(tree, pp, false, more)
	if err != nil {
		return nil, err
	}
	return append(append([]*engine.File{}, have...), fs...), nil
}

func checkSizeofPointer(files []*engine.File) []Finding {
	// Members declared pointers in every struct of a module that has
	// them (false once one declares an array or scalar of that name).
	members := map[string]map[string]bool{}
	for _, f := range files {
		m := members[path.Dir(f.Rel)]
		if m == nil {
			m = map[string]bool{}
			members[path.Dir(f.Rel)] = m
		}
		for _, d := range fileMembers(f) {
			if old, ok := m[d.name]; !ok || old {
				m[d.name] = d.ptr
			}
		}
	}
	sigs := map[string]string{}
	for dir, m := range members {
		var b strings.Builder
		for _, k := range engine.SortedKeys(m) {
			fmt.Fprintf(&b, "%s=%v;", k, m[k])
		}
		sigs[dir] = b.String()
	}
	var out []Finding
	for _, f := range files {
		if !strings.HasSuffix(f.Rel, ".c") {
			continue
		}
		// A file parsed before (the same content) with the same
		// members in its module: its findings as before.
		key := sizeofKey{f, sigs[path.Dir(f.Rel)]}
		if c, ok := sizeofCache.Load(key); ok {
			out = append(out, c.([]Finding)...)
			continue
		}
		var fo []Finding
		for _, fn := range engine.Functions(f) {
			// Only a function that takes a sizeof and names a sink.
			if src := f.Src[fn.StartByte():fn.EndByte()]; !sizeofCandidate(src) {
				continue
			}
			fo = append(fo, sizeofFunction(f, fn, members[path.Dir(f.Rel)], false)...)
		}
		if f.Macros == nil && f.Cached() {
			sizeofCache.Store(key, fo)
		}
		out = append(out, fo...)
	}
	return out
}

// sizeofKey caches a file's findings: the parsed file (one per content,
// engine's parse cache) and its module's members. Only the parse cache's
// files are cached by: a file made by Parse is its caller's to close, and
// its pointer says nothing of its content.
type sizeofKey struct {
	f   *engine.File
	sig string
}

var sizeofCache, membersCache sync.Map

type memberDecl struct {
	name string
	ptr  bool
}

// fileMembers are the struct members a file declares, in order.
func fileMembers(f *engine.File) []memberDecl {
	if c, ok := membersCache.Load(f); ok {
		return c.([]memberDecl)
	}
	var out []memberDecl
	engine.Walk(f.Tree.RootNode(), func(n *sitter.Node) bool {
		if engine.KindOf(n) == "field_declaration" {
			for _, d := range engine.Named(n) {
				if engine.Same(d, n.ChildByFieldName("type")) {
					continue
				}
				if name, ptr := pointerDecl(f, d); name != "" {
					out = append(out, memberDecl{name, ptr})
				}
			}
		}
		return engine.KindOf(n) != "function_definition"
	})
	if f.Macros == nil && f.Cached() {
		membersCache.Store(f, out)
	}
	return out
}

// sizeofFunction is the rule on one function. anyOperand takes every
// sizeof for one of a pointer: the sinks the rule sees, whatever is
// measured (the prefilter's test).
func sizeofFunction(f *engine.File, fn *sitter.Node, members map[string]bool, anyOperand bool) (out []Finding) {
	defer func() {
		if r := recover(); r != nil {
			out = []Finding{{Rule: RuleIncomplete, Severity: SevNote, File: f.Rel, Line: f.Line(fn), Function: engine.FunctionName(f, fn),
				Message: fmt.Sprintf("internal error in the sizeof-pointer check of this function (%v): its findings are incomplete", r)}}
		}
	}()
	ptrs := map[string]bool{}
	for _, p := range engine.Params(f, fn) {
		ptrs[p.Name] = p.Pointer
	}
	// Parameters declared as arrays are pointers too; locals by their
	// innermost declarator.
	engine.Walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		if engine.KindOf(n) == "declaration" {
			for _, d := range engine.Named(n) {
				if engine.Same(d, n.ChildByFieldName("type")) {
					continue
				}
				if name, ptr := pointerDecl(f, d); name != "" {
					ptrs[name] = ptr
				}
			}
		}
		return true
	})
	name := engine.FunctionName(f, fn)
	report := func(sink string, rhs, at *sitter.Node) {
		for _, s := range sizeofTerms(f, rhs) {
			obj, ok := sizeofOperand(f, s)
			if !ok && !anyOperand {
				continue
			} else if !ok {
				obj = s
			}
			ptr := anyOperand
			if engine.KindOf(obj) == "identifier" {
				ptr = ptr || ptrs[f.Text(obj)]
			} else if engine.KindOf(obj) == "field_expression" {
				ptr = ptr || members[f.Text(obj.ChildByFieldName("field"))]
			}
			if !ptr {
				continue
			}
			o := strings.Join(strings.Fields(f.Text(obj)), "")
			out = append(out, Finding{Rule: RuleSizeofPtr, Severity: SevError, File: f.Rel, Line: f.Line(s), Function: name,
				Message: fmt.Sprintf("%s is the size of the pointer %s (8 bytes), not of what it points at, and it is used as %s: use sizeof(*%s)",
					strings.Join(strings.Fields(f.Text(s)), ""), o, sink, o),
				Evidence: []Evidence{{File: f.Rel, Line: f.Line(at), Message: "used as " + sink}}})
		}
	}
	engine.Walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		switch engine.KindOf(n) {
		case "assignment_expression":
			lhs := strings.Join(strings.Fields(f.Text(n.ChildByFieldName("left"))), "")
			if sizeofSink(lhs) {
				report(lhs, n.ChildByFieldName("right"), n)
			}
		case "init_declarator":
			if d, _ := engine.DeclName(f, n.ChildByFieldName("declarator")); d != "" && sizeofSink(d) && !strings.HasSuffix(strings.ToLower(d), "length") {
				report(d, n.ChildByFieldName("value"), n)
			}
		case "initializer_pair":
			var member string
			for _, d := range engine.Named(n) {
				if engine.KindOf(d) == "field_designator" {
					member += f.Text(d)
				}
			}
			ctx := n.Parent()
			if ctx != nil && ctx.Parent() != nil {
				ctx = ctx.Parent()
			}
			if member != "" && (member == ".length" && ctx != nil && strings.Contains(strings.ToLower(f.Text(ctx)), "sg") || member != ".length" && sizeofSink(member)) {
				report(strings.TrimPrefix(member, "."), n.ChildByFieldName("value"), n)
			}
		case "call_expression":
			if i, ok := mapLenArg[f.Text(n.ChildByFieldName("function"))]; ok {
				if args := engine.Named(n.ChildByFieldName("arguments")); i < len(args) {
					report("the length of "+f.Text(n.ChildByFieldName("function"))+"()", args[i], n)
				}
			}
		}
		return true
	})
	return out
}

// sizeofTerms are the sizeofs an expression is a sum of (through
// parentheses, casts and + only).
func sizeofTerms(f *engine.File, n *sitter.Node) []*sitter.Node {
	n = stripCasts(n)
	if n == nil {
		return nil
	}
	switch engine.KindOf(n) {
	case "sizeof_expression":
		return []*sitter.Node{n}
	case "binary_expression":
		if f.Text(n.ChildByFieldName("operator")) == "+" {
			return append(sizeofTerms(f, n.ChildByFieldName("left")), sizeofTerms(f, n.ChildByFieldName("right"))...)
		}
	}
	return nil
}

// sizeofOperand is the object a sizeof measures when it is a variable or
// member: sizeof x, sizeof(x), and sizeof(x) parsed as a type name.
func sizeofOperand(f *engine.File, s *sitter.Node) (*sitter.Node, bool) {
	if v := s.ChildByFieldName("value"); v != nil {
		v = engine.StripParens(v)
		if v != nil && (engine.KindOf(v) == "identifier" || engine.KindOf(v) == "field_expression") {
			return v, true
		}
		return nil, false
	}
	if t := s.ChildByFieldName("type"); t != nil {
		// sizeof(hdr): read as the type named hdr.
		if c := engine.Named(t); len(c) == 1 && engine.KindOf(c[0]) == "type_identifier" {
			return c[0], true
		}
	}
	return nil, false
}

// pointerDecl names what a declarator declares and whether it is a
// pointer: the declarator nearest the name decides (*p[4] is an array of
// pointers, (*p)[4] a pointer).
func pointerDecl(f *engine.File, d *sitter.Node) (string, bool) {
	last := ""
	for d != nil {
		switch engine.KindOf(d) {
		case "identifier", "field_identifier":
			return f.Text(d), last == "pointer_declarator"
		case "pointer_declarator", "array_declarator", "function_declarator":
			last = engine.KindOf(d)
		}
		next := d.ChildByFieldName("declarator")
		if next == nil {
			for _, c := range engine.Named(d) {
				if engine.KindOf(c) == "identifier" || engine.KindOf(c) == "field_identifier" {
					return f.Text(c), last == "pointer_declarator"
				}
			}
			return "", false
		}
		d = next
	}
	return "", false
}
