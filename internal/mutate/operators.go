package mutate

import (
	"bytes"
	"regexp"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// mutations lists the edits the operators make at node n (fn: the
// function around it, nil at file scope).
func (s *source) mutations(n, fn *sitter.Node) []edit {
	var out []edit
	add := func(e edit, ok bool) {
		if ok {
			out = append(out, e)
		}
	}
	switch n.Kind() {
	case "assignment_expression":
		if !s.onAdded(n) {
			break
		}
		left, right := n.ChildByFieldName("left"), n.ChildByFieldName("right")
		op := n.ChildByFieldName("operator")
		if left == nil || right == nil {
			break
		}
		if fieldName(s, left) == "addr" {
			out = append(out, s.addrKind(n, right)...)
		}
		if op != nil && s.text(op) == "|=" && mentions(s, right, "IB_SEND_INLINE") {
			add(s.replace(FlagCleared, "the inline flag cleared where the patch sets it", n, s.text(left)+" &= ~("+s.text(right)+")"))
		} else if op != nil && s.text(op) == "=" && fieldName(s, left) == "send_flags" {
			// send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE: the flag
			// left out of the value.
			walkNamed(right, func(c *sitter.Node) {
				if c.Kind() == "identifier" && s.text(c) == "IB_SEND_INLINE" {
					add(s.replace(FlagCleared, "the inline flag left out where the patch sets send_flags", c, "0"))
				}
			})
		}
	case "if_statement":
		cond, body := n.ChildByFieldName("condition"), n.ChildByFieldName("consequence")
		if cond == nil || !s.onAdded(cond) {
			break
		}
		if body != nil && mentions(s, body, "IB_SEND_INLINE") {
			add(s.replace(InlineAlways, "IB_SEND_INLINE set whatever the guard says", cond, "(1)"))
		}
		if isErrorTest(s, cond) {
			add(s.replace(ErrorIgnored, "the failure branch never taken", cond, "(0)"))
		}
		walkNamed(cond, func(b *sitter.Node) {
			if b.Kind() != "binary_expression" {
				return
			}
			l, r, o := b.ChildByFieldName("left"), b.ChildByFieldName("right"), b.ChildByFieldName("operator")
			if l == nil || r == nil || o == nil {
				return
			}
			switch s.text(o) {
			case "&&":
				add(s.replace(GuardDropped, "the guard's test "+s.text(l)+" dropped", l, "1"))
				add(s.replace(GuardDropped, "the guard's test "+s.text(r)+" dropped", r, "1"))
			case "<=":
				add(s.replace(GuardWidened, "the bound lets one more through", b, s.text(l)+" <= "+s.text(r)+" + 1"))
			case "<":
				add(s.replace(GuardWidened, "the bound lets one more through", b, s.text(l)+" <= "+s.text(r)))
			case ">":
				add(s.replace(GuardWidened, "the bound lets one more through", b, s.text(l)+" >= "+s.text(r)))
			case ">=":
				add(s.replace(GuardWidened, "the bound lets one more through", b, s.text(l)+" + 1 >= "+s.text(r)))
			}
		})
	case "conditional_expression":
		cond, alt := n.ChildByFieldName("condition"), n.ChildByFieldName("alternative")
		if s.onAdded(n) && cond != nil && alt != nil && isErrorTest(s, cond) {
			add(s.replace(ErrorIgnored, "the value of the success case taken after a failure", n, s.text(alt)))
		}
	case "sizeof_expression":
		if s.onAdded(n) {
			add(s.replace(OffByOne, "a size one byte short", n, "("+s.text(n)+" - 1)"))
			add(s.replace(OffByOne, "a size one byte long", n, "("+s.text(n)+" + 1)"))
		}
	case "field_expression":
		if !s.onAdded(n) || fn == nil || isWritten(n) {
			break
		}
		if f := s.capField(n); f != "" {
			if req := s.requested(fn, n, f); req != "" {
				add(s.replace(RequestForGrant, "the size requested used where the granted one was read", n, req))
			}
		}
	}
	return out
}

// addrKind swaps an SGE's address between a CPU address and the DMA
// address of the same buffer, or drops the assignment (the SGE keeps the
// address it had).
func (s *source) addrKind(assign, right *sitter.Node) []edit {
	var out []edit
	rt := s.text(right)
	base, field := baseOf(s, right)
	switch {
	case right.Kind() == "cast_expression":
		// A CPU address: use the buffer's DMA address if the file names
		// one on the same base, and in any case keep the old address.
		if base != "" {
			for _, dma := range []string{"dma", "dma_addr"} {
				cand := base + dma
				if bytes.Contains(s.src, []byte(cand)) {
					if e, ok := s.replace(AddrKind, "the SGE carries the DMA address "+cand+" instead of the CPU address "+rt, right, cand); ok {
						out = append(out, e)
					}
					break
				}
			}
		}
		if e, ok := s.replace(AddrKind, "the SGE keeps the address it had instead of "+rt, assign, "(void)0"); ok {
			out = append(out, e)
		}
	case strings.Contains(field, "dma"):
		// A DMA address: use the CPU address of the same buffer if the
		// file names one.
		for _, cpu := range []string{"data", "buf", "addr", "vaddr"} {
			cand := base + cpu
			if bytes.Contains(s.src, []byte(cand)) {
				if e, ok := s.replace(AddrKind, "the SGE carries the CPU address of "+cand+" instead of the DMA address "+rt, right, "(uintptr_t)"+cand); ok {
					out = append(out, e)
				}
				break
			}
		}
	}
	return out
}

// baseOf: for "(cast)p->data" or "q->dma", the base with its arrow or dot
// ("p->", "q->") and the field name.
func baseOf(s *source, n *sitter.Node) (string, string) {
	for n != nil && (n.Kind() == "cast_expression" || n.Kind() == "parenthesized_expression") {
		if v := n.ChildByFieldName("value"); v != nil {
			n = v
		} else {
			n = n.NamedChild(n.NamedChildCount() - 1)
		}
	}
	if n == nil || n.Kind() != "field_expression" {
		return "", ""
	}
	arg, f := n.ChildByFieldName("argument"), n.ChildByFieldName("field")
	op := n.ChildByFieldName("operator")
	if arg == nil || f == nil || op == nil {
		return "", ""
	}
	return s.text(arg) + s.text(op), s.text(f)
}

func fieldName(s *source, n *sitter.Node) string {
	if n.Kind() != "field_expression" {
		return ""
	}
	if f := n.ChildByFieldName("field"); f != nil {
		return s.text(f)
	}
	return ""
}

func mentions(s *source, n *sitter.Node, ident string) bool {
	found := false
	walkNamed(n, func(c *sitter.Node) {
		if c.Kind() == "identifier" && s.text(c) == ident {
			found = true
		}
	})
	return found
}

func walkNamed(n *sitter.Node, fn func(*sitter.Node)) {
	fn(n)
	for i := uint(0); i < n.NamedChildCount(); i++ {
		walkNamed(n.NamedChild(i), fn)
	}
}

var errorNames = regexp.MustCompile(`^(ret|rc|err|error|status|rv)$`)

// isErrorTest: (ret), (err < 0), (!ret) style tests of a status variable.
func isErrorTest(s *source, cond *sitter.Node) bool {
	n := cond
	for n.Kind() == "parenthesized_expression" && n.NamedChildCount() == 1 {
		n = n.NamedChild(0)
	}
	switch n.Kind() {
	case "identifier":
		return errorNames.MatchString(s.text(n))
	case "binary_expression":
		l, r, o := n.ChildByFieldName("left"), n.ChildByFieldName("right"), n.ChildByFieldName("operator")
		return l != nil && r != nil && o != nil && l.Kind() == "identifier" && errorNames.MatchString(s.text(l)) &&
			(s.text(o) == "<" || s.text(o) == "!=") && s.text(r) == "0"
	}
	return false
}

// isWritten: the node is the left side of an assignment.
func isWritten(n *sitter.Node) bool {
	p := n.Parent()
	if p == nil || p.Kind() != "assignment_expression" {
		return false
	}
	l := p.ChildByFieldName("left")
	return l != nil && l.StartByte() == n.StartByte() && l.EndByte() == n.EndByte()
}

// capField: for "attr.cap.max_inline_data" the capability's field name.
func (s *source) capField(n *sitter.Node) string {
	arg, f := n.ChildByFieldName("argument"), n.ChildByFieldName("field")
	if arg == nil || f == nil || arg.Kind() != "field_expression" || fieldName(s, arg) != "cap" {
		return ""
	}
	return s.text(f)
}

// requested: the value the function last assigned to a QP capability
// field of that name before the read (the request), or "".
func (s *source) requested(fn, read *sitter.Node, field string) string {
	var val string
	walkNamed(fn, func(c *sitter.Node) {
		if c.Kind() != "assignment_expression" || c.EndByte() > read.StartByte() {
			return
		}
		l, r := c.ChildByFieldName("left"), c.ChildByFieldName("right")
		if l != nil && r != nil && l.Kind() == "field_expression" && s.capField(l) == field {
			val = s.text(r)
		}
	})
	return val
}
