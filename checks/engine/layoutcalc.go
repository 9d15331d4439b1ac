package engine

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// A C layout calculation (x86_64 LP64) over the tree's headers: natural
// alignment, padding, unions, arrays, nested and anonymous aggregates,
// __packed. The kernel's struct_group() macros are expanded first (they
// are an anonymous struct of the same members).

var primSizes = map[string]int64{
	"char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "_Bool": 1, "u8": 1, "__u8": 1, "s8": 1, "__s8": 1, "uint8_t": 1, "int8_t": 1,
	"short": 2, "unsigned short": 2, "u16": 2, "__u16": 2, "s16": 2, "__s16": 2, "__le16": 2, "__be16": 2, "uint16_t": 2, "int16_t": 2,
	"int": 4, "unsigned": 4, "unsigned int": 4, "u32": 4, "__u32": 4, "s32": 4, "__s32": 4, "__le32": 4, "__be32": 4, "uint32_t": 4, "int32_t": 4, "float": 4,
	"long": 8, "unsigned long": 8, "long long": 8, "unsigned long long": 8, "u64": 8, "__u64": 8, "s64": 8, "__s64": 8, "__le64": 8, "__be64": 8,
	"uint64_t": 8, "int64_t": 8, "size_t": 8, "dma_addr_t": 8, "double": 8, "uintptr_t": 8,
}

// LayoutDB holds the aggregates and constants of the files added to it.
// Its definitions are nodes of those files: Close, when it is no longer
// asked, frees the files' trees.
type LayoutDB struct {
	Defs      map[string]*AggDef // "struct x" / "union x" / typedef name
	Constants map[string]int64
	files     []*File
}

// Close frees the trees of the files added (File.Close); the
// definitions must not be asked after.
func (db *LayoutDB) Close() {
	for _, f := range db.files {
		f.Close()
	}
	db.files = nil
}

type AggDef struct {
	f      *File
	node   *sitter.Node // field_declaration_list
	union  bool
	packed bool
}

var structGroupRe = regexp.MustCompile(`\bstruct_group(_tagged|_attr)?\s*\(`)

// ExpandStructGroups rewrites struct_group(NAME, members) as an anonymous
// struct of the members (struct_group_tagged takes a tag first,
// struct_group_attr attributes second).
func ExpandStructGroups(src []byte) []byte {
	s := string(src)
	for {
		loc := structGroupRe.FindStringSubmatchIndex(s)
		if loc == nil {
			return []byte(s)
		}
		skip := 1
		if loc[2] >= 0 {
			skip = 2
		}
		i := loc[1]
		depth := 1
		args := 0
		bodyStart := -1
		j := i
		for ; j < len(s) && depth > 0; j++ {
			switch s[j] {
			case '(':
				depth++
			case ')':
				depth--
			case ',':
				if depth == 1 && args < skip {
					args++
					if args == skip {
						bodyStart = j + 1
					}
				}
			}
		}
		if bodyStart < 0 || depth != 0 {
			return []byte(s)
		}
		s = s[:loc[0]] + "struct {" + s[bodyStart:j-1] + "}" + s[j:]
	}
}

// LoadLayouts parses headers that define name, and what they use.
func LoadLayouts(tree string, dirs []string, name string) (*LayoutDB, error) {
	db := &LayoutDB{Defs: map[string]*AggDef{}, Constants: map[string]int64{}}
	for _, d := range dirs {
		matches := Glob(filepath.Join(globQuote(tree), globQuote(d), "*.h"))
		for _, m := range matches {
			b, err := readFile(m)
			if err != nil {
				db.Close()
				return nil, err
			}
			if !strings.Contains(string(b), name) {
				continue
			}
			rel, _ := filepath.Rel(tree, m)
			db.Add(Parse(rel, ExpandStructGroups(b)))
		}
	}
	return db, nil
}

// Add learns f's aggregates and constants; db keeps f until Close.
func (db *LayoutDB) Add(f *File) {
	db.files = append(db.files, f)
	Walk(f.Tree.RootNode(), func(n *sitter.Node) bool {
		switch KindOf(n) {
		case "struct_specifier", "union_specifier":
			body := n.ChildByFieldName("body")
			name := n.ChildByFieldName("name")
			if body != nil && name != nil {
				kw := "struct "
				if KindOf(n) == "union_specifier" {
					kw = "union "
				}
				db.Defs[kw+f.Text(name)] = &AggDef{f: f, node: body, union: KindOf(n) == "union_specifier", packed: packedAfter(f, n)}
			}
		case "type_definition":
			t := n.ChildByFieldName("type")
			if t != nil && (KindOf(t) == "struct_specifier" || KindOf(t) == "union_specifier") && t.ChildByFieldName("body") != nil {
				if d := n.ChildByFieldName("declarator"); d != nil {
					db.Defs[f.Text(d)] = &AggDef{f: f, node: t.ChildByFieldName("body"), union: KindOf(t) == "union_specifier", packed: packedAfter(f, t)}
				}
			}
		case "preproc_def":
			if v, err := strconv.ParseInt(strings.TrimSpace(f.Text(n.ChildByFieldName("value"))), 0, 64); err == nil {
				db.Constants[f.Text(n.ChildByFieldName("name"))] = v
			}
		case "enumerator":
			if v := n.ChildByFieldName("value"); v != nil {
				if x, err := strconv.ParseInt(f.Text(v), 0, 64); err == nil {
					db.Constants[f.Text(n.ChildByFieldName("name"))] = x
				}
			}
		}
		return true
	})
}

// packedAfter reports whether __packed or __attribute__((packed)) follows
// the aggregate's closing brace.
func packedAfter(f *File, n *sitter.Node) bool {
	rest := f.Src[n.EndByte():]
	if len(rest) > 64 {
		rest = rest[:64]
	}
	t := string(rest)
	if i := strings.IndexAny(t, ";{"); i >= 0 {
		t = t[:i]
	}
	return strings.Contains(t, "__packed") || strings.Contains(t, "packed")
}

// Sizeof computes size and alignment of a type name ("struct x", "__le32").
func (db *LayoutDB) Sizeof(typ string, depth int) (int64, int64, error) {
	typ = strings.Join(strings.Fields(strings.TrimPrefix(strings.TrimPrefix(typ, "const "), "volatile ")), " ")
	if depth > 32 {
		return 0, 0, fmt.Errorf("types nest too deep at %s", typ)
	}
	if s, ok := primSizes[typ]; ok {
		return s, s, nil
	}
	if strings.HasPrefix(typ, "enum ") {
		return 4, 4, nil
	}
	d, ok := db.Defs[typ]
	if !ok {
		return 0, 0, fmt.Errorf("no definition of %s in the headers read", typ)
	}
	return db.aggregate(d, depth+1)
}

func (db *LayoutDB) aggregate(d *AggDef, depth int) (int64, int64, error) {
	var size, align int64 = 0, 1
	f := d.f
	for _, fd := range Named(d.node) {
		if KindOf(fd) != "field_declaration" {
			continue
		}
		tn := fd.ChildByFieldName("type")
		elem := func() (int64, int64, error) {
			switch {
			case tn == nil:
				return 0, 0, fmt.Errorf("a member without a type at %s:%d", f.Rel, f.Line(fd))
			case (KindOf(tn) == "struct_specifier" || KindOf(tn) == "union_specifier") && tn.ChildByFieldName("body") != nil:
				return db.aggregate(&AggDef{f: f, node: tn.ChildByFieldName("body"), union: KindOf(tn) == "union_specifier", packed: packedAfter(f, tn)}, depth+1)
			}
			return db.Sizeof(f.Text(tn), depth)
		}
		decls := 0
		for _, c := range Named(fd) {
			if Same(c, tn) || KindOf(c) == "bitfield_clause" || KindOf(c) == "comment" {
				continue
			}
			decls++
			s, a, err := db.declarator(f, c, elem)
			if err != nil {
				return 0, 0, err
			}
			size, align = place(d, size, align, s, a)
		}
		if decls == 0 { // an anonymous struct or union member
			es, ea, err := elem()
			if err != nil {
				return 0, 0, err
			}
			size, align = place(d, size, align, es, ea)
		}
	}
	if d.packed {
		align = 1
	}
	if size%align != 0 {
		size += align - size%align
	}
	return size, align, nil
}

func place(d *AggDef, size, align, s, a int64) (int64, int64) {
	if d.packed {
		a = 1
	}
	if d.union {
		return max(size, s), max(align, a)
	}
	if size%a != 0 {
		size += a - size%a
	}
	return size + s, max(align, a)
}

// declarator applies pointers and arrays to an element type (computed
// only when needed: a pointer member needs no definition of its pointee).
func (db *LayoutDB) declarator(f *File, d *sitter.Node, elem func() (int64, int64, error)) (int64, int64, error) {
	switch KindOf(d) {
	case "pointer_declarator":
		return 8, 8, nil
	case "array_declarator":
		n, err := db.eval(f, d.ChildByFieldName("size"))
		if err != nil {
			return 0, 0, err
		}
		s, a, err := db.declarator(f, d.ChildByFieldName("declarator"), elem)
		return s * n, a, err
	}
	return elem()
}

// eval evaluates a constant expression: literals, #defines, enumerators,
// + - * / and sizeof(type).
func (db *LayoutDB) eval(f *File, n *sitter.Node) (int64, error) {
	if n == nil {
		return 0, nil // flexible array
	}
	switch KindOf(n) {
	case "number_literal":
		return strconv.ParseInt(strings.TrimRight(f.Text(n), "uUlL"), 0, 64)
	case "identifier":
		if v, ok := db.Constants[f.Text(n)]; ok {
			return v, nil
		}
	case "parenthesized_expression":
		if c := Named(n); len(c) == 1 {
			return db.eval(f, c[0])
		}
	case "sizeof_expression":
		if t := n.ChildByFieldName("type"); t != nil {
			s, _, err := db.Sizeof(f.Text(t), 0)
			return s, err
		}
	case "binary_expression":
		a, err := db.eval(f, n.ChildByFieldName("left"))
		if err != nil {
			return 0, err
		}
		b, err := db.eval(f, n.ChildByFieldName("right"))
		if err != nil {
			return 0, err
		}
		switch f.Text(n.ChildByFieldName("operator")) {
		case "+":
			return a + b, nil
		case "-":
			return a - b, nil
		case "*":
			return a * b, nil
		case "/":
			if b != 0 {
				return a / b, nil
			}
		}
	}
	return 0, fmt.Errorf("cannot evaluate %q at %s:%d", f.Text(n), f.Rel, f.Line(n))
}

// globQuote quotes the characters a glob pattern gives a meaning (a
// tree at /src/linux[2] is a folder, not a class of characters).
func globQuote(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
