// Verbs vocabulary the engine and the rules share, and where a function
// sets IB_SEND_INLINE.

package engine

import (
	"sync"

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
	Walk(fn, func(n *sitter.Node) bool {
		if n.Kind() == "identifier" && f.Text(n) == "IB_SEND_INLINE" && setsFlag(f, n) {
			if s := siteStatement(n); s != nil {
				out = append(out, InlineSite{f, fn, s})
			}
		}
		return true
	})
	return out
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
		if s.Node.Kind() == "assignment_expression" {
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
		if n.Kind() != "assignment_expression" {
			return true
		}
		if _, m := wrMember(PlaceOf(f, n.ChildByFieldName("left"), alias)); m != "send_flags" || mentions(f, n.ChildByFieldName("right"), "IB_SEND_INLINE") {
			return true
		}
		Walk(n.ChildByFieldName("right"), func(c *sitter.Node) bool {
			if c.Kind() == "field_expression" {
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
		if n.Kind() == "init_declarator" {
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

// setsFlag reports whether this mention of IB_SEND_INLINE sets the flag
// (is or-ed or assigned into a value), rather than testing or clearing it
// (x & IB_SEND_INLINE, ~IB_SEND_INLINE, == and the like).
func setsFlag(f *File, n *sitter.Node) bool {
	for p := n.Parent(); p != nil; p = p.Parent() {
		switch p.Kind() {
		case "unary_expression":
			return false
		case "binary_expression":
			if op := f.Text(p.ChildByFieldName("operator")); op != "|" {
				return false
			}
		case "assignment_expression":
			return f.Text(p.ChildByFieldName("operator")) != "&="
		case "if_statement", "while_statement", "for_statement", "do_statement", "switch_statement", "case_statement", "call_expression":
			return false
		case "init_declarator", "initializer_pair", "return_statement":
			return true
		case "conditional_expression":
			if c := p.ChildByFieldName("condition"); c != nil && c.StartByte() <= n.StartByte() && n.EndByte() <= c.EndByte() {
				return false
			}
		case "expression_statement", "compound_statement", "function_definition":
			return false
		}
	}
	return false
}

// siteStatement is the assignment, declaration or return that a mention
// belongs to.
func siteStatement(n *sitter.Node) *sitter.Node {
	for p := n.Parent(); p != nil; p = p.Parent() {
		switch p.Kind() {
		case "assignment_expression", "init_declarator", "initializer_pair", "return_statement":
			return p
		}
	}
	return nil
}

// Comparisons lists the <, <=, >, >= in a condition, following boolean
// Locals to the comparison they were set from.
func Comparisons(f *File, cond *sitter.Node, fn *sitter.Node) []*sitter.Node {
	return comparisonsSeen(f, cond, fn, map[string]bool{})
}

func comparisonsSeen(f *File, cond *sitter.Node, fn *sitter.Node, seen map[string]bool) []*sitter.Node {
	var out []*sitter.Node
	Walk(cond, func(n *sitter.Node) bool {
		switch n.Kind() {
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
		if n.Kind() == "init_declarator" {
			if d, _ := DeclName(f, n.ChildByFieldName("declarator")); d == name {
				init = n.ChildByFieldName("value")
			}
		}
		return init == nil
	})
	return init
}
