// Verbs vocabulary the engine and the rules share, and where a function
// sets IB_SEND_INLINE.

package engine

import (
	"sync"
	"unsafe"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// CreateFuncs are the calls that create a QP (or read back its caps).
var CreateFuncs = map[string]bool{"rdma_create_qp": true, "ib_create_qp": true, "ib_create_qp_kernel": true, "ib_query_qp": true}

// RegistrationOps are the opcodes of registration requests.
var RegistrationOps = map[string]bool{"IB_WR_REG_MR": true, "IB_WR_REG_MR_INTEGRITY": true, "IB_WR_LOCAL_INV": true}

// InlineSite is a statement that sets IB_SEND_INLINE on a request.
type InlineSite struct {
	F    *File
	Fn   *sitter.Node
	Node *sitter.Node
}

func FindInlineSites(f *File, fn *sitter.Node) []InlineSite {
	var out []InlineSite
	// What setsFlag and siteStatement read of a mention's ancestors is
	// passed down the walk, once per node: tree-sitter finds a node's
	// parent from the root down, so asking each use of the flag for its
	// parents cost a deep expression (a | b | ... of 2,000 terms) its
	// depth cubed.
	type ctx struct {
		sets int8 // 1 sets, -1 does not, 0 no ancestor decided
		site *sitter.Node
		cond *sitter.Node // the condition of the parent ternary
	}
	walkDown(fn, ctx{}, func(n *sitter.Node, c ctx) (ctx, bool) {
		if c.cond != nil && c.cond.Equals(*n) {
			c.sets = -1 // a mention in a ternary's condition tests
		}
		c.cond = nil
		if KindOf(n) == "identifier" && c.sets > 0 && c.site != nil && f.Text(n) == "IB_SEND_INLINE" {
			out = append(out, InlineSite{f, fn, c.site})
		}
		// The nearest ancestor that decides wins: n's decision
		// replaces what its own ancestors said.
		if v, ok := setsFlagAt(f, n); ok {
			c.sets = -1
			if v {
				c.sets = 1
			}
		}
		switch KindOf(n) {
		case "assignment_expression", "init_declarator", "initializer_pair", "return_statement":
			c.site = n
		case "conditional_expression":
			c.cond = n.ChildByFieldName("condition")
		}
		return c, true
	})
	return out
}

// walkDown is Walk passing each node an inherited value: fn gets the
// value its parent passed on and returns the one for its children.
func walkDown[T any](n *sitter.Node, root T, fn func(n *sitter.Node, v T) (T, bool)) {
	if n == nil {
		return
	}
	nodes, ends := preorder(n)
	// The values passed on by the open nodes, each until its subtree's
	// end; the first, n's own, until the listing's.
	type open struct {
		end int
		v   T
	}
	stack := []open{{len(nodes), root}}
	for i := 0; i < len(nodes); {
		for stack[len(stack)-1].end <= i {
			stack = stack[:len(stack)-1]
		}
		v, down := fn((*sitter.Node)(unsafe.Pointer(&nodes[i])), stack[len(stack)-1].v)
		end := max(int(ends[i]), i+1)
		if !down {
			i = end
			continue
		}
		if end > i+1 {
			stack = append(stack, open{end, v})
		}
		i++
	}
}

// FindInlineSitesFacts are the sites of a function as the module's facts
// show them: a store of IB_SEND_INLINE into a field kept for later
// (FlagField: conn->inline_flag = IB_SEND_INLINE) is no site, the
// assignments of send_flags that read such a field are.
func FindInlineSitesFacts(f *File, fn *sitter.Node, facts *Facts) []InlineSite {
	if facts == nil {
		return FindInlineSites(f, fn)
	}
	var out []InlineSite
	for _, s := range FindInlineSites(f, fn) {
		if KindOf(s.Node) == "assignment_expression" {
			p := PlaceOf(f, s.Node.ChildByFieldName("left"), nil)
			if _, m := wrMember(p); m != "" && m != "send_flags" {
				if _, ok := facts.FlagField(p); ok {
					continue
				}
			}
		}
		out = append(out, s)
	}
	alias := StaticAlias(f, fn)
	Walk(fn, func(n *sitter.Node) bool {
		if KindOf(n) != "assignment_expression" {
			return true
		}
		if _, m := wrMember(PlaceOf(f, n.ChildByFieldName("left"), alias)); m != "send_flags" || mentions(f, n.ChildByFieldName("right"), "IB_SEND_INLINE") {
			return true
		}
		Walk(n.ChildByFieldName("right"), func(c *sitter.Node) bool {
			if KindOf(c) == "field_expression" {
				if _, ok := facts.FlagField(PlaceOf(f, c, alias)); ok {
					out = append(out, InlineSite{f, fn, n})
					return false
				}
			}
			return true
		})
		return true
	})
	return out
}

// StaticAlias maps the local pointers of a function declared to point
// into an object (struct iser_ib_conn *ib_conn = &c->ib_conn) to the
// place they point at, as the engine's paths see them: for the readers
// of places outside a path (sites, guards).
func StaticAlias(f *File, fn *sitter.Node) map[string]string {
	alias := map[string]string{}
	Walk(fn, func(n *sitter.Node) bool {
		if KindOf(n) == "init_declarator" {
			if name, ptr := DeclName(f, n.ChildByFieldName("declarator")); ptr && name != "" && n.ChildByFieldName("value") != nil {
				if p := pointee(f, n.ChildByFieldName("value"), alias); p != "" && p != name {
					alias[name] = p
				}
			}
		}
		return true
	})
	return alias
}

// setsFlagAt is what node p decides about a mention of IB_SEND_INLINE
// below it (ok false: p decides nothing, its own ancestors do): whether
// the mention sets the flag (is or-ed or assigned into a value), rather
// than testing or clearing it (x & IB_SEND_INLINE, ~IB_SEND_INLINE, ==
// and the like). A conditional_expression decides for its condition
// only; the arms inherit.
func setsFlagAt(f *File, p *sitter.Node) (sets, ok bool) {
	switch KindOf(p) {
	case "unary_expression":
		return false, true
	case "binary_expression":
		if op := f.Text(p.ChildByFieldName("operator")); op != "|" {
			return false, true
		}
	case "assignment_expression":
		return f.Text(p.ChildByFieldName("operator")) != "&=", true
	case "if_statement", "while_statement", "for_statement", "do_statement", "switch_statement", "case_statement", "call_expression":
		return false, true
	case "init_declarator", "initializer_pair", "return_statement":
		return true, true
	case "expression_statement", "compound_statement", "function_definition":
		return false, true
	}
	return false, false
}

// Comparisons lists the <, <=, >, >= in a condition, following boolean
// Locals to the comparison they were set from.
func Comparisons(f *File, cond *sitter.Node, fn *sitter.Node) []*sitter.Node {
	return comparisonsSeen(f, cond, fn, map[string]bool{})
}

func comparisonsSeen(f *File, cond *sitter.Node, fn *sitter.Node, seen map[string]bool) []*sitter.Node {
	var out []*sitter.Node
	Walk(cond, func(n *sitter.Node) bool {
		switch KindOf(n) {
		case "binary_expression":
			switch f.Text(n.ChildByFieldName("operator")) {
			case "<", "<=", ">", ">=":
				out = append(out, n)
			}
		case "identifier":
			if fn == nil {
				break
			}
			if seen[f.Text(n)] {
				break
			}
			seen[f.Text(n)] = true
			if init := localInit(f, fn, f.Text(n)); init != nil {
				out = append(out, comparisonsSeen(f, init, fn, seen)...)
			}
		}
		return true
	})
	return out
}

// localInit is the initializer of a local variable declared in fn.
func localInit(f *File, fn *sitter.Node, name string) *sitter.Node {
	key := localKey{f, fn.StartByte(), name}
	localInitMu.Lock()
	n, ok := localInitCache[key]
	localInitMu.Unlock()
	if ok {
		return n
	}
	n = localInit1(f, fn, name)
	localInitMu.Lock()
	if len(localInitCache) > 1<<16 {
		localInitCache = map[localKey]*sitter.Node{}
	}
	localInitCache[key] = n
	localInitMu.Unlock()
	return n
}

type localKey struct {
	f     *File
	start uint
	name  string
}

var (
	localInitMu    sync.Mutex
	localInitCache = map[localKey]*sitter.Node{}
)

func localInit1(f *File, fn *sitter.Node, name string) *sitter.Node {
	var init *sitter.Node
	Walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		if KindOf(n) == "init_declarator" {
			if d, _ := DeclName(f, n.ChildByFieldName("declarator")); d == name {
				init = n.ChildByFieldName("value")
			}
		}
		return init == nil
	})
	return init
}
