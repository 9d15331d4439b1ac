package checks

import (
	"fmt"
	"sort"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// Facts is what the analysed files say about fields, learned from every
// assignment and declaration, whichever function makes it.
type Facts struct {
	// kinds of the values assigned to a field, by fieldKey.
	kinds map[string]map[Kind][]string
	// dmaMembers are struct members declared dma_addr_t.
	dmaMembers map[string]string
	// inlineWRs are the fieldKeys of work requests whose send_flags some
	// function sets IB_SEND_INLINE on.
	inlineWRs map[string]string
	// posters are functions that post a parameter (or a member of one).
	posters map[string]poster
	// granted are fields assigned from a QP's caps (fieldKey -> where).
	granted map[string][]assign
	// queried are the attr objects whose caps ib_query_qp fills (fieldKey).
	queried map[string]string
	// constants are #define NAME number.
	constants map[string]int64
}

type poster struct {
	param  int
	suffix string
}

type assign struct {
	file     *file
	fn       *sitter.Node
	node     *sitter.Node
	lhs, rhs *sitter.Node
}

func newFacts() *Facts {
	return &Facts{kinds: map[string]map[Kind][]string{}, dmaMembers: map[string]string{}, inlineWRs: map[string]string{},
		posters: map[string]poster{}, granted: map[string][]assign{}, queried: map[string]string{}, constants: map[string]int64{}}
}

// fieldKind is what a field is known to hold: DMA if any assignment
// anywhere stores a DMA address or it is declared dma_addr_t, virtual if
// every assignment stores a virtual address.
func (fs *Facts) fieldKind(p string) (Kind, string) {
	key := fieldKey(p)
	if key == "" {
		return Unknown, ""
	}
	if k, ok := fs.kinds[key]; ok {
		if w := k[DMA]; len(w) > 0 {
			return DMA, "assigned a DMA address at " + w[0]
		}
		if w := k[Virt]; len(w) > 0 && len(k[Unknown]) == 0 {
			return Virt, "assigned virtual addresses only, e.g. at " + w[0]
		}
	}
	_, member := splitMember(strings.TrimLeft(p, "*"))
	member = indexRe.ReplaceAllString(member, "")
	if w, ok := fs.dmaMembers[member]; ok {
		return DMA, "declared dma_addr_t at " + w
	}
	return Unknown, ""
}

// learn reads one file's assignments and declarations. It runs twice so
// that fields assigned from other fields settle.
func (fs *Facts) learn(f *file) {
	walk(f.Tree.RootNode(), func(n *sitter.Node) bool {
		switch n.Kind() {
		case "field_declaration":
			if strings.Contains(f.text(n.ChildByFieldName("type")), "dma_addr_t") {
				for _, d := range named(n) {
					if d.Kind() == "field_identifier" || strings.HasSuffix(d.Kind(), "declarator") {
						if name, _ := declName(f, d); name != "" {
							fs.dmaMembers[name] = fmt.Sprintf("%s:%d", f.Rel, f.line(n))
						}
					}
				}
			}
		case "preproc_def":
			name := f.text(n.ChildByFieldName("name"))
			var v int64
			if _, err := fmt.Sscanf(strings.TrimSpace(f.text(n.ChildByFieldName("value"))), "%v", &v); err == nil {
				fs.constants[name] = v
			}
		case "function_definition":
			fs.learnFunction(f, n)
			return false
		}
		return true
	})
}

func (fs *Facts) learnFunction(f *file, fn *sitter.Node) {
	types := map[string]string{}
	ps := params(f, fn)
	for _, p := range ps {
		types[p.name] = p.typ
	}
	alias := map[string]string{}
	walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		if n.Kind() == "declaration" {
			typ := f.text(n.ChildByFieldName("type"))
			for _, d := range named(n) {
				name, _ := declName(f, d)
				if name != "" {
					types[name] = typ
				}
			}
		}
		return true
	})
	sc := &scope{f: f, locals: map[string]*val{}, types: types, alias: alias, places: map[string]*val{}, facts: fs}
	walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		switch n.Kind() {
		case "assignment_expression":
			lhs, rhs := n.ChildByFieldName("left"), n.ChildByFieldName("right")
			p := placeOf(f, lhs, alias)
			if p == "" || strings.HasPrefix(p, "v:") {
				return true
			}
			_, member := splitMember(p)
			where := fmt.Sprintf("%s:%d", f.Rel, f.line(n))
			if member == "send_flags" && mentions(f, rhs, "IB_SEND_INLINE") && f.text(n.ChildByFieldName("operator")) != "&=" {
				wr, _ := splitMember(p)
				if k := fieldKey(wr + ".x"); k != "" {
					fs.inlineWRs[strings.TrimSuffix(k, ".x")] = where
				}
			}
			if strings.Contains(f.text(rhs), "max_inline_data") {
				fs.granted[fieldKey(p)] = append(fs.granted[fieldKey(p)], assign{f, fn, n, lhs, rhs})
			}
			key := fieldKey(p)
			if key == "" {
				return true
			}
			k, _ := sc.valueOf(rhs).resolve(nil)
			if fs.kinds[key] == nil {
				fs.kinds[key] = map[Kind][]string{}
			}
			fs.kinds[key][k] = append(fs.kinds[key][k], where)
		case "call_expression":
			name := f.text(n.ChildByFieldName("function"))
			args := named(n.ChildByFieldName("arguments"))
			if (name == "ib_post_send" || strings.HasSuffix(name, "post_send")) && len(args) >= 2 {
				target := pointee(f, args[1], alias)
				for i, p := range ps {
					if root(target) == p.name && target != "" {
						fs.posters[functionName(f, fn)] = poster{param: i, suffix: strings.TrimPrefix(target, p.name)}
					}
				}
			}
			if name == "ib_query_qp" && len(args) >= 2 {
				if q := pointee(f, args[1], alias); q != "" {
					fs.queried[fieldKey(q+".cap.max_inline_data")] = fmt.Sprintf("%s:%d", f.Rel, f.line(n))
				}
			}
		}
		return true
	})
}

// sortedKeys is for deterministic output.
func sortedKeys[M ~map[string]V, V any](m M) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
