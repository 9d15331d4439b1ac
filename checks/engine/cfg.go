package engine

import (
	"strconv"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// The control-flow graph of one function. Nodes are the statements'
// effects (an expression, a declaration, a branch condition, a return)
// and joins; edges follow C's control flow: sequences, if/else, loops
// with their back edges (a body may run zero or more times), switch with
// fall-through between cases, break and continue, goto to its label,
// return to the exit, #if/#else arms (either may be compiled) and GNU
// statement expressions ({ ... }), whose statements run before the
// expression that holds them. An iterator macro followed by a block
// (list_for_each_entry(...) { ... }) is a loop.

type cfgKind int

const (
	cNop    cfgKind = iota // a join or jump
	cExpr                  // evaluate ast for its effects
	cDecl                  // a declaration
	cBranch                // ast is a condition: succ[0] when true, succ[1] when false
	cReturn                // a return statement; succ is the exit
	cExit                  // the function's end
)

type cfgNode struct {
	id   int
	kind cfgKind
	ast  *sitter.Node
	succ []int
}

type cfg struct {
	nodes []*cfgNode
	entry int
	exit  int
	// skipped counts node kinds that the graph leaves out, with why
	// (nodeKinds).
	skipped map[string]int
}

type loopCtx struct{ brk, cont int }

type cfgBuilder struct {
	f      *File
	g      *cfg
	labels map[string]int
	gotos  map[int]string // goto node -> label
	loops  []loopCtx
	depth  int
}

// maxNest bounds the nesting the builder follows (tree-sitter's own
// recursion on pathological input is deeper than any kernel function).
const maxNest = 400

func buildCFG(f *File, fn *sitter.Node) *cfg {
	g := &cfg{skipped: map[string]int{}}
	b := &cfgBuilder{f: f, g: g, labels: map[string]int{}, gotos: map[int]string{}}
	g.exit = b.node(cExit, nil)
	g.entry = b.stmt(fn.ChildByFieldName("body"), g.exit)
	for id, l := range b.gotos {
		if t, ok := b.labels[l]; ok {
			g.nodes[id].succ = []int{t}
		} else {
			// A label the parse lost (inside an ERROR node): the
			// jump leaves the function.
			g.nodes[id].succ = []int{g.exit}
		}
	}
	return g
}

func (b *cfgBuilder) node(k cfgKind, ast *sitter.Node, succ ...int) int {
	b.g.nodes = append(b.g.nodes, &cfgNode{id: len(b.g.nodes), kind: k, ast: ast, succ: succ})
	return len(b.g.nodes) - 1
}

func (b *cfgBuilder) loop() loopCtx {
	if len(b.loops) == 0 {
		return loopCtx{brk: b.g.exit, cont: b.g.exit}
	}
	return b.loops[len(b.loops)-1]
}

// hoisted puts the statement expressions inside expression n before
// the node that evaluates n (entry), in source order.
func (b *cfgBuilder) hoisted(n *sitter.Node, entry int) int {
	var blocks []*sitter.Node
	Walk(n, func(c *sitter.Node) bool {
		if KindOf(c) == "compound_statement" && !Same(c, n) {
			blocks = append(blocks, c)
			return false
		}
		return true
	})
	for i := len(blocks) - 1; i >= 0; i-- {
		entry = b.stmt(blocks[i], entry)
	}
	return entry
}

// stmt builds statement n to continue at next and returns its entry.
// Each statement kind has its own step below; nodekinds.go says what
// each kind becomes.
func (b *cfgBuilder) stmt(n *sitter.Node, next int) int {
	if n == nil {
		return next
	}
	b.depth++
	defer func() { b.depth-- }()
	if b.depth > maxNest {
		b.g.skipped["nesting deeper than the analysis follows"]++
		return next
	}
	switch KindOf(n) {
	case "compound_statement", "ERROR", "translation_unit":
		return b.sequence(n, next)
	case "expression_statement":
		if len(Named(n)) == 0 {
			return next
		}
		return b.hoisted(n, b.node(cExpr, n, next))
	case "declaration":
		return b.hoisted(n, b.node(cDecl, n, next))
	case "if_statement":
		return b.ifStmt(n, next)
	case "else_clause", "attributed_statement":
		return b.children(n, next, func(k *sitter.Node) bool { return KindOf(k) != "attribute_declaration" })
	case "while_statement":
		return b.whileStmt(n, next)
	case "do_statement":
		return b.doStmt(n, next)
	case "for_statement":
		return b.forStmt(n, next)
	case "switch_statement":
		return b.switchStmt(n, next)
	case "case_statement": // outside a switch: its statements
		return b.caseBody(n, next)
	case "break_statement":
		return b.node(cNop, nil, b.loop().brk)
	case "continue_statement":
		return b.node(cNop, nil, b.loop().cont)
	case "return_statement":
		return b.hoisted(n, b.node(cReturn, n, b.g.exit))
	case "goto_statement":
		id := b.node(cNop, nil)
		b.gotos[id] = b.f.Text(n.ChildByFieldName("label"))
		return id
	case "labeled_statement":
		return b.labeled(n, next)
	case "preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef", "preproc_else":
		return b.preprocIf(n, next)
	}
	return b.unknownStmt(n, next)
}

// children builds n's named children that keep passes, in order, to
// continue at next.
func (b *cfgBuilder) children(n *sitter.Node, next int, keep func(*sitter.Node) bool) int {
	kids := Named(n)
	for i := len(kids) - 1; i >= 0; i-- {
		if keep(kids[i]) {
			next = b.stmt(kids[i], next)
		}
	}
	return next
}

// sequence builds a block's statements in order; a for_each-style
// iterator macro followed by its block becomes a loop.
func (b *cfgBuilder) sequence(n *sitter.Node, next int) int {
	kids := Named(n)
	for i := len(kids) - 1; i >= 0; i-- {
		c := kids[i]
		// iterator(...) { body }: the macro call parses as a
		// statement missing its ';', then the block.
		if KindOf(c) == "compound_statement" && i > 0 && iteratorCall(kids[i-1]) {
			head := b.node(cNop, nil)
			body := b.loopBody(c, next, head)
			b.g.nodes[head].succ = []int{body, next}
			expr := b.node(cExpr, kids[i-1], head)
			next = b.hoisted(kids[i-1], expr)
			i--
			continue
		}
		next = b.stmt(c, next)
	}
	return next
}

// loopBody builds a loop's body, where break goes to brk and continue
// to cont, continuing at cont.
func (b *cfgBuilder) loopBody(body *sitter.Node, brk, cont int) int {
	b.loops = append(b.loops, loopCtx{brk: brk, cont: cont})
	entry := b.stmt(body, cont)
	b.loops = b.loops[:len(b.loops)-1]
	return entry
}

// ifStmt: a branch on the condition to either arm, both continuing at
// next.
func (b *cfgBuilder) ifStmt(n *sitter.Node, next int) int {
	t := b.stmt(n.ChildByFieldName("consequence"), next)
	e := next
	if alt := n.ChildByFieldName("alternative"); alt != nil {
		e = b.stmt(alt, next)
	}
	cond := n.ChildByFieldName("condition")
	return b.hoisted(cond, b.node(cBranch, cond, t, e))
}

// whileStmt: the condition, the body, the back edge; a loop the
// analysis knows runs once (do-while(0)-style macros) is its body.
func (b *cfgBuilder) whileStmt(n *sitter.Node, next int) int {
	cond := n.ChildByFieldName("condition")
	head := b.node(cBranch, cond)
	body := b.loopBody(n.ChildByFieldName("body"), next, head)
	b.g.nodes[head].succ = []int{body, next}
	if runsOnce(b.f, n) {
		return body
	}
	return b.hoisted(cond, head)
}

// doStmt: the body first, then the condition and the back edge.
func (b *cfgBuilder) doStmt(n *sitter.Node, next int) int {
	head := b.node(cBranch, n.ChildByFieldName("condition"))
	body := b.loopBody(n.ChildByFieldName("body"), next, head)
	b.g.nodes[head].succ = []int{body, next}
	return body
}

// forStmt: initializer, condition, body, update, back edge.
func (b *cfgBuilder) forStmt(n *sitter.Node, next int) int {
	var head int
	cond := n.ChildByFieldName("condition")
	if cond != nil {
		head = b.node(cBranch, cond)
	} else {
		head = b.node(cNop, nil)
	}
	cont := head
	if u := n.ChildByFieldName("update"); u != nil {
		cont = b.node(cExpr, u, head)
	}
	body := b.loopBody(n.ChildByFieldName("body"), next, cont)
	if cond != nil {
		b.g.nodes[head].succ = []int{body, next}
	} else {
		b.g.nodes[head].succ = []int{body}
	}
	entry := head
	if runsOnce(b.f, n) && cond != nil {
		entry = body // the first test of the condition surely holds
	}
	if init := n.ChildByFieldName("initializer"); init != nil {
		k := cExpr
		if KindOf(init) == "declaration" {
			k = cDecl
		}
		entry = b.node(k, init, entry)
	}
	return entry
}

// switchStmt: a dispatch to every case (and past them without a
// default), each case falling through to the next.
func (b *cfgBuilder) switchStmt(n *sitter.Node, next int) int {
	body := n.ChildByFieldName("body")
	disp := b.node(cNop, nil)
	b.loops = append(b.loops, loopCtx{brk: next, cont: b.loop().cont})
	var entries []int
	hasDefault := false
	fall := next
	cases := Named(body)
	for i := len(cases) - 1; i >= 0; i-- {
		c := cases[i]
		if KindOf(c) != "case_statement" {
			fall = b.stmt(c, fall)
			continue
		}
		if c.ChildByFieldName("value") == nil {
			hasDefault = true
		}
		fall = b.caseBody(c, fall)
		entries = append(entries, fall)
	}
	b.loops = b.loops[:len(b.loops)-1]
	if !hasDefault {
		entries = append(entries, next)
	}
	b.g.nodes[disp].succ = entries
	cond := n.ChildByFieldName("condition")
	return b.hoisted(cond, b.node(cExpr, cond, disp))
}

// caseBody builds a case's statements (not its value).
func (b *cfgBuilder) caseBody(c *sitter.Node, next int) int {
	value := c.ChildByFieldName("value")
	return b.children(c, next, func(k *sitter.Node) bool { return !Same(k, value) })
}

// labeled: a join where gotos land, then the labelled statement.
func (b *cfgBuilder) labeled(n *sitter.Node, next int) int {
	l := b.node(cNop, nil)
	b.labels[b.f.Text(n.ChildByFieldName("label"))] = l
	inner := b.children(n, next, func(k *sitter.Node) bool { return KindOf(k) != "statement_identifier" })
	b.g.nodes[l].succ = []int{inner}
	return l
}

// preprocIf: either arm may be what the configuration compiles.
func (b *cfgBuilder) preprocIf(n *sitter.Node, next int) int {
	alt := next
	altNode := n.ChildByFieldName("alternative")
	if altNode != nil {
		alt = b.stmt(altNode, next)
	}
	name, cond := n.ChildByFieldName("name"), n.ChildByFieldName("condition")
	body := b.children(n, next, func(k *sitter.Node) bool {
		return !Same(k, altNode) && !Same(k, name) && !Same(k, cond)
	})
	if KindOf(n) == "preproc_else" {
		return body
	}
	return b.node(cNop, nil, body, alt)
}

// unknownStmt: an expression where a statement goes (macro damage) is
// evaluated; any other kind is skipped with its note.
func (b *cfgBuilder) unknownStmt(n *sitter.Node, next int) int {
	if note, ok := NodeKinds[KindOf(n)]; ok && note.stmt == "" {
		if isExpression(KindOf(n)) {
			return b.node(cExpr, n, next)
		}
		b.g.skipped[KindOf(n)+": "+note.note]++
		return next
	}
	b.g.skipped[KindOf(n)+": not a C statement kind this analysis knows"]++
	return next
}

// iteratorCall reports whether a statement is a macro call that the
// parser closed with a missing ';' (a for_each-style iterator before its
// block).
func iteratorCall(n *sitter.Node) bool {
	if KindOf(n) != "expression_statement" {
		return false
	}
	kids := Named(n)
	if len(kids) != 1 || KindOf(kids[0]) != "call_expression" {
		return false
	}
	last := n.Child(n.ChildCount() - 1)
	return last != nil && last.IsMissing()
}

func isExpression(k string) bool {
	return NodeKinds[k].expr
}

// runsOnce reports whether a loop's body surely runs: for (i = a; i < b;)
// with literals a < b, or a loop with a nonzero literal condition.
func runsOnce(f *File, loop *sitter.Node) bool {
	cond := StripParens(loop.ChildByFieldName("condition"))
	if cond == nil {
		return KindOf(loop) == "for_statement"
	}
	if KindOf(cond) == "number_literal" || KindOf(cond) == "true" {
		return f.Text(cond) != "0"
	}
	init := loop.ChildByFieldName("initializer")
	if KindOf(loop) != "for_statement" || init == nil || KindOf(cond) != "binary_expression" {
		return false
	}
	op := f.Text(cond.ChildByFieldName("operator"))
	l, r := cond.ChildByFieldName("left"), cond.ChildByFieldName("right")
	if (op != "<" && op != "<=") || KindOf(l) != "identifier" || KindOf(r) != "number_literal" {
		return false
	}
	var start *sitter.Node
	Walk(init, func(n *sitter.Node) bool {
		if KindOf(n) == "assignment_expression" || KindOf(n) == "init_declarator" {
			lhs := n.ChildByFieldName("left")
			if lhs == nil {
				lhs = n.ChildByFieldName("declarator")
			}
			if f.Text(lhs) == f.Text(l) {
				if v := n.ChildByFieldName("right"); v != nil {
					start = v
				} else {
					start = n.ChildByFieldName("value")
				}
			}
		}
		return true
	})
	if start == nil || KindOf(start) != "number_literal" {
		return false
	}
	a, err1 := strconv.ParseInt(f.Text(start), 0, 64)
	b, err2 := strconv.ParseInt(f.Text(r), 0, 64)
	return err1 == nil && err2 == nil && (a < b || op == "<=" && a == b)
}
