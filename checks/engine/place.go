package engine

import (
	"regexp"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// A place names an lvalue canonically, so the same object reached two
// ways has one name: p->f and p[0].f are "p.f", a constant index k is
// "[k]" (0 is dropped), any other index is "[*]", and a local pointer that
// aliases an object is replaced by the object's place. The object a
// pointer-valued or array field points at has the field's own place: an
// array decays to its first element, so p->f->x, p->f[0].x and (with
// q = p->f) q[0].x and q->x all name one object.

// PlaceOf names the object an lvalue expression denotes ("" if unknown).
// Plain local variables are "v:name".
func PlaceOf(f *File, n *sitter.Node, alias map[string]string) string {
	switch KindOf(n) {
	case "identifier":
		return "v:" + f.Text(n)
	case "parenthesized_expression":
		if c := Named(n); len(c) == 1 {
			return PlaceOf(f, c[0], alias)
		}
	case "field_expression":
		arg := n.ChildByFieldName("argument")
		field := f.Text(n.ChildByFieldName("field"))
		var base string
		if f.Text(n.ChildByFieldName("operator")) == "->" {
			base = pointee(f, arg, alias)
		} else {
			base = objectPlace(f, arg, alias)
		}
		if base == "" {
			return ""
		}
		return base + "." + field
	case "subscript_expression":
		arg := n.ChildByFieldName("argument")
		base := arrayBase(f, arg, alias)
		if base == "" {
			return ""
		}
		return canon(base + indexOf(f, n.ChildByFieldName("index")))
	case "pointer_expression":
		if f.Text(n.ChildByFieldName("operator")) == "*" {
			return pointee(f, n.ChildByFieldName("argument"), alias)
		}
	}
	return ""
}

// objectPlace is the place of a struct-valued expression (x in x.f).
func objectPlace(f *File, n *sitter.Node, alias map[string]string) string {
	if KindOf(n) == "identifier" {
		return f.Text(n) // a struct variable: its own name is its place
	}
	return PlaceOf(f, n, alias)
}

// arrayBase is what a[i] indexes: for a variable, what it points at (an
// array variable is its own place); for a field, the field's place.
func arrayBase(f *File, n *sitter.Node, alias map[string]string) string {
	if k := StripParens(n); k != nil && KindOf(k) == "identifier" {
		return pointee(f, k, alias)
	}
	return PlaceOf(f, n, alias)
}

// pointee is the place of the object a pointer expression points at.
func pointee(f *File, n *sitter.Node, alias map[string]string) string {
	switch KindOf(n) {
	case "identifier":
		if a, ok := alias[f.Text(n)]; ok {
			return a
		}
		return f.Text(n)
	case "parenthesized_expression":
		if c := Named(n); len(c) == 1 {
			return pointee(f, c[0], alias)
		}
	case "cast_expression":
		return pointee(f, n.ChildByFieldName("value"), alias)
	case "pointer_expression":
		if f.Text(n.ChildByFieldName("operator")) == "&" {
			return objectPlace(f, n.ChildByFieldName("argument"), alias)
		}
	case "field_expression", "subscript_expression":
		p := PlaceOf(f, n, alias)
		if p == "" {
			return ""
		}
		return p
	}
	return ""
}

func indexOf(f *File, n *sitter.Node) string {
	if n != nil && KindOf(n) == "number_literal" {
		return "[" + f.Text(n) + "]"
	}
	return "[*]"
}

var zeroIndex = regexp.MustCompile(`\[0\]`)

// canon drops [0]: p[0].f is p.f.
func canon(p string) string { return zeroIndex.ReplaceAllString(p, "") }

// splitMember splits "a.b.c" into "a.b" and "c".
// wrMember is splitMember for the members of a request: a place with no
// member (*send_flags, an out-parameter that happens to be named like
// the field) is no request's send_flags.
func wrMember(p string) (string, string) {
	if !strings.Contains(p, ".") {
		return p, ""
	}
	return splitMember(p)
}

func splitMember(p string) (string, string) {
	i := strings.LastIndexByte(p, '.')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

// Root is a place's base variable name.
func Root(p string) string {
	p = strings.TrimLeft(p, "*")
	p = strings.TrimPrefix(p, "v:")
	if i := strings.IndexAny(p, ".["); i >= 0 {
		return p[:i]
	}
	return p
}

var indexRe = regexp.MustCompile(`\[[^\]]*\]`)

// FieldKey names a field across functions: the last two members of a
// place, without its root variable and indexes ("lnk.wr_tx_sges[*].addr"
// is "wr_tx_sges.addr", "qe.dma" is "dma").
func FieldKey(p string) string {
	p = indexRe.ReplaceAllString(strings.TrimLeft(p, "*"), "")
	parts := strings.Split(p, ".")
	if len(parts) <= 1 {
		return ""
	}
	parts = parts[1:]
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	return strings.Join(parts, ".")
}

// SgePlace is the place of SGE k in the list that p points at, and the
// wildcard place that covers every SGE of that list.
func SgePlace(p string, k int) (exact, wild string) {
	base, idx := p, 0
	if m := regexp.MustCompile(`^(.*)\[(\d+|\*)\]$`).FindStringSubmatch(p); m != nil {
		base = m[1]
		if m[2] == "*" {
			return p, p
		}
		for _, c := range m[2] {
			idx = idx*10 + int(c-'0')
		}
	}
	if i := idx + k; i == 0 {
		exact = base
	} else {
		exact = base + "[" + Itoa(i) + "]"
	}
	return exact, base + "[*]"
}

func Itoa(i int) string {
	if i == 0 {
		return "0"
	}
	s := ""
	for ; i > 0; i /= 10 {
		s = string(rune('0'+i%10)) + s
	}
	return s
}
