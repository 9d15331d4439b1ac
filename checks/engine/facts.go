package engine

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// Facts is what the analysed files say about fields, learned from every
// assignment and declaration, whichever function makes it.
type Facts struct {
	// MrLkey is where the module first gives an SGE a memory region's
	// key (not the PD's local_dma_lkey); "" when it never does.
	MrLkey string
	// kinds of the values assigned to a field, by fieldKey.
	kinds map[string]map[Kind][]string
	// dmaMembers are struct members declared dma_addr_t.
	dmaMembers map[string]string
	// InlineWRs are the fieldKeys of work requests whose send_flags some
	// function sets IB_SEND_INLINE on.
	InlineWRs map[string]string
	// Posters are functions that post a parameter (or a member of one).
	Posters map[string]poster
	// granted are fields assigned from a QP's caps (fieldKey -> where).
	granted map[string][]Assign
	// Queried are the attr objects whose caps ib_query_qp fills (fieldKey).
	Queried map[string]string
	// Constants are #define NAME number.
	Constants map[string]int64
	// ptrMembers are struct members declared as pointers or arrays
	// (true), or as anything else somewhere (false wins).
	ptrMembers map[string]bool
	// ptrElems are struct members whose elements are pointers (arrays
	// of pointers, pointers to pointers) in every struct that has them.
	ptrElems map[string]bool
	// flagSet are the fields (FieldKey) that some assignment gives
	// IB_SEND_INLINE (a flag kept for later: queue->inline_flag), with
	// where; flagOther where they are given anything else.
	flagSet, flagOther map[string]map[string]bool
	// flagClear are the assignments among flagOther that store a value
	// with the bit clear (0).
	flagClear map[string]map[string]bool
	// numSGE are the values the module assigns to a request field's
	// num_sge (FieldKey of the request), with where.
	numSGE map[string]map[string]string
	// sgList are the lists the module points a request field's sg_list
	// at, relative to the object holding both (".sge" for
	// tx->wr.sg_list = tx->sge).
	sgList map[string]map[string]string
	// opcodes are the opcodes assigned to work requests (fieldKey of the
	// request -> opcode and where), whichever function assigns them.
	opcodes map[string][2]string
	// otherOps are the request fieldKeys also assigned a non-registration
	// opcode: what opcodes says of them is not known.
	otherOps map[string]bool
	// funcs are the module's function definitions, for summaries.
	funcs     map[string]funcDef
	summaries map[string]*summary
	computing map[string]bool
	templates map[*File]map[string]*sitter.Node
	// flagMacros are #defines whose value sets IB_SEND_INLINE.
	flagMacros map[string]string
	// retKinds are return types of the module's functions that are
	// address kinds (dma_addr_t, phys_addr_t).
	retKinds map[string]Kind
	// retPtr are the module's functions that return pointers.
	retPtr map[string]bool
	// sgeTakers are the functions that point a request's sg_list at
	// one of their parameters; handedAtCallers caches HandedAtCallers.
	sgeTakers map[string]bool
	// dmaUses are the fields (FieldKey) passed as the handle of a DMA
	// sync, unmap or mapping-error test, with the first such call.
	dmaUses map[string]string
	// passesOn are, per function, the functions it passes one of its
	// pointer parameters to.
	passesOn map[string][]string
	// takesMemo caches TakesSGEs.
	takesMemo       map[string]bool
	handedAtCallers map[string]bool
	// link resolves the calls of functions other modules define
	// (link.go); nil: the module alone.
	link *linker
}

type funcDef struct {
	f  *File
	fn *sitter.Node
}

// Summary is what a function of the module does, as its callers see it:
// the value it returns (address kind and flags, joined over its paths),
// what it sets on the requests its pointer parameters reach, and the
// comparisons its boolean result is computed from (a guard predicate).
type summary struct {
	// variants are what each of its exit paths leaves in the objects
	// its pointer parameters reach (nil when there are too many: then
	// effects, joined over the paths).
	variants [][]varEffect
	ret      *Val
	params   []string // the names its ret's conditions use
	names    []string // all its parameters' names
	effects  []effect
	Guards   []GuardRef
	// handed are the SGEs of its parameters it posts inline.
	handed []handedSGE
}

type effect struct {
	param   int
	suffix  string
	flags   *Val
	opcode  string
	assigns bool // send_flags assigned (not or-ed) on every path
}

// varEffect is one store an exit path of a function leaves behind:
// member kind ('f' send_flags, 'o' opcode, 'a' another place such as an
// SGE address, 's' sg_list, 'n' num_sge) at parameter param's place
// plus rel.
type varEffect struct {
	param int
	rel   string
	kind  byte
	v     *Val
	s     string
}

const maxVariants = 8

type GuardRef struct {
	F   *File
	Fn  *sitter.Node
	Cmp *sitter.Node
}

type poster struct {
	Param  int
	suffix string
}

type Assign struct {
	File     *File
	Fn       *sitter.Node
	Node     *sitter.Node
	Lhs, Rhs *sitter.Node
}

func NewFacts() *Facts {
	return &Facts{kinds: map[string]map[Kind][]string{}, dmaMembers: map[string]string{}, InlineWRs: map[string]string{},
		Posters: map[string]poster{}, granted: map[string][]Assign{}, Queried: map[string]string{}, Constants: map[string]int64{},
		ptrMembers: map[string]bool{}, ptrElems: map[string]bool{}, flagSet: map[string]map[string]bool{}, numSGE: map[string]map[string]string{}, sgList: map[string]map[string]string{}, flagOther: map[string]map[string]bool{}, flagClear: map[string]map[string]bool{}, opcodes: map[string][2]string{}, otherOps: map[string]bool{}, funcs: map[string]funcDef{}, summaries: map[string]*summary{},
		computing: map[string]bool{}, templates: map[*File]map[string]*sitter.Node{}, retKinds: map[string]Kind{}, flagMacros: map[string]string{}, retPtr: map[string]bool{}, sgeTakers: map[string]bool{}, dmaUses: map[string]string{}, passesOn: map[string][]string{}, takesMemo: map[string]bool{}, handedAtCallers: map[string]bool{}}
}

// FieldKind is what a field is known to hold: DMA if any assignment
// anywhere stores a DMA address or it is declared dma_addr_t, virtual if
// every assignment stores a virtual address.
func (fs *Facts) FieldKind(p string) (Kind, string) {
	key := FieldKey(p)
	if key == "" {
		return Unknown, ""
	}
	if _, ok := fs.kinds[key]; !ok && fs.dmaUses[key] == "" {
		// A place reached through more objects (tx_desc =
		// &task->desc: task.desc.dma_addr) than where the module
		// stores or uses the member (tx_desc->dma_addr): the member.
		if i := strings.IndexByte(key, '.'); i >= 0 {
			key = key[i+1:]
		}
	}
	if k, ok := fs.kinds[key]; ok {
		if w := k[DMA]; len(w) > 0 {
			return DMA, "assigned a DMA address at " + w[0]
		}
		if w := k[Virt]; len(w) > 0 && len(k[Unknown]) == 0 {
			return Virt, "assigned virtual addresses only, e.g. at " + w[0]
		}
	}
	if w := fs.dmaUses[key]; w != "" {
		return DMA, "passed as a DMA address to " + w
	}
	_, member := splitMember(strings.TrimLeft(p, "*"))
	member = indexRe.ReplaceAllString(member, "")
	if w, ok := fs.dmaMembers[member]; ok {
		return DMA, "declared dma_addr_t at " + w
	}
	return Unknown, ""
}

// learnFlagField records an assignment to a field that is not a
// request's send_flags: whether it stores IB_SEND_INLINE.
func (fs *Facts) learnFlagField(p string, sc *scope, n, rhs *sitter.Node, where string) {
	key := FieldKey(p)
	if key == "" {
		return
	}
	if mentions(sc.f, rhs, "IB_SEND_INLINE") && sc.f.Text(n.ChildByFieldName("operator")) == "=" {
		if on, _ := sc.valueOf(rhs).FlagsOn(nil); on == FlagOn {
			if fs.flagSet[key] == nil {
				fs.flagSet[key] = map[string]bool{}
			}
			fs.flagSet[key][where] = true
			return
		}
	}
	if fs.flagSet[key] != nil || strings.Contains(sc.f.Text(rhs), "IB_SEND") {
		if fs.flagOther[key] == nil {
			fs.flagOther[key] = map[string]bool{}
		}
		fs.flagOther[key][where] = true
		if on, _ := sc.valueOf(rhs).FlagsOn(nil); on == FlagOff {
			if fs.flagClear[key] == nil {
				fs.flagClear[key] = map[string]bool{}
			}
			fs.flagClear[key][where] = true
		}
	}
}

// FlagChoice says whether the field at place p holds IB_SEND_INLINE or
// nothing of it, as the module decides once (queue->inline_flags = 0;
// if (caps >= size) queue->inline_flags = IB_SEND_INLINE): some
// assignment stores the flag, every other one a value with the bit
// clear. set and clear name one assignment of each.
func (fs *Facts) FlagChoice(p string) (set, clear string, ok bool) {
	key := FieldKey(p)
	if key == "" || len(fs.flagSet[key]) == 0 || len(fs.flagOther[key]) == 0 {
		return "", "", false
	}
	for w := range fs.flagOther[key] {
		if !fs.flagClear[key][w] {
			return "", "", false
		}
	}
	return SortedKeys(fs.flagSet[key])[0], SortedKeys(fs.flagOther[key])[0], true
}

// FlagField says whether the field at place p holds IB_SEND_INLINE
// wherever the module reads it: every assignment to it in the module
// stores the flag (queue->inline_flag = IB_SEND_INLINE). where is the
// first such assignment.
func (fs *Facts) FlagField(p string) (where string, ok bool) {
	key := FieldKey(p)
	set := fs.flagSet[key]
	if key == "" || len(set) == 0 || len(fs.flagOther[key]) > 0 {
		return "", false
	}
	return SortedKeys(set)[0], true
}

// NumSGE bounds the num_sge of a request kept in a field (FieldKey of
// the request) when a path does not set it: the largest of the values
// the module assigns it (at allocation, in a builder), when all are
// constants; where names one such assignment.
func (fs *Facts) NumSGE(key string) (n int, where string, ok bool) {
	vals := fs.numSGE[key]
	if key == "" || len(vals) == 0 {
		return 0, "", false
	}
	for _, v := range SortedKeys(vals) {
		x, err := strconv.Atoi(v)
		if err != nil {
			c, known := fs.Constants[v]
			if !known {
				return 0, "", false
			}
			x = int(c)
		}
		if x >= n {
			n, where = x, vals[v]
		}
	}
	return n, where, true
}

// SgList is the SGE list of a request kept in an object (place w) when a
// path does not point it: the one list the module ever points that
// field at, in the same object ("" when none or several).
func (fs *Facts) SgList(w string) string {
	l := fs.sgList[FieldKey(w)]
	if len(l) != 1 {
		return ""
	}
	for rel := range l {
		return Root(w) + rel
	}
	return ""
}

// Func is the module's definition of a function: its file and node.
func (fs *Facts) Func(name string) (*File, *sitter.Node, bool) {
	d, ok := fs.funcs[name]
	return d.f, d.fn, ok && d.f != nil
}

// Learn reads one file's assignments and declarations. It runs twice so
// that fields assigned from other fields settle.
func (fs *Facts) Learn(f *File) {
	Walk(f.Tree.RootNode(), func(n *sitter.Node) bool {
		switch KindOf(n) {
		case "field_declaration":
			for _, d := range Named(n) {
				if Same(d, n.ChildByFieldName("type")) {
					continue
				}
				if name, ptr := DeclName(f, d); name != "" {
					if old, seen := fs.ptrMembers[name]; !seen || old {
						fs.ptrMembers[name] = ptr
					}
					if old, seen := fs.ptrElems[name]; !seen || old {
						fs.ptrElems[name] = DeclDepth(d) >= 2
					}
				}
			}
			if strings.Contains(f.Text(n.ChildByFieldName("type")), "dma_addr_t") {
				for _, d := range Named(n) {
					if KindOf(d) == "field_identifier" || strings.HasSuffix(KindOf(d), "declarator") {
						if name, _ := DeclName(f, d); name != "" {
							fs.dmaMembers[name] = fmt.Sprintf("%s:%d", f.Rel, f.Line(n))
						}
					}
				}
			}
		case "preproc_def":
			name := f.Text(n.ChildByFieldName("name"))
			if v := f.Text(n.ChildByFieldName("value")); strings.Contains(v, "IB_SEND_INLINE") && !strings.Contains(v, "~") {
				fs.flagMacros[name] = fmt.Sprintf("%s:%d", f.Rel, f.Line(n))
			}
			var v int64
			if _, err := fmt.Sscanf(strings.TrimSpace(f.Text(n.ChildByFieldName("value"))), "%v", &v); err == nil {
				fs.Constants[name] = v
			}
		case "function_definition":
			name := FunctionName(f, n)
			if _, dup := fs.funcs[name]; !dup && name != "" {
				fs.funcs[name] = funcDef{f, n}
			}
			if d := n.ChildByFieldName("declarator"); d != nil && KindOf(d) == "pointer_declarator" {
				fs.retPtr[name] = true
			}
			switch t := strings.TrimSpace(f.Text(n.ChildByFieldName("type"))); t {
			case "dma_addr_t":
				fs.retKinds[name] = DMA
			case "phys_addr_t":
				fs.retKinds[name] = Phys
			}
			fs.learnFunction(f, n)
			return false
		case "initializer_pair":
			fs.learnOpcode(f, n, "")
			fs.learnLkey(f, n)
		case "declaration":
			// A file-scope static initializer is a template: its
			// opcodes are learned here, its members applied where it
			// is copied.
			for _, d := range Named(n) {
				if KindOf(d) != "init_declarator" {
					continue
				}
				if v := d.ChildByFieldName("value"); v != nil && KindOf(v) == "initializer_list" {
					name, _ := DeclName(f, d.ChildByFieldName("declarator"))
					Walk(v, func(c *sitter.Node) bool {
						if KindOf(c) == "initializer_pair" {
							fs.learnOpcode(f, c, name)
						}
						return true
					})
				}
			}
			return false
		}
		return true
	})
}

// learnLkey notes an SGE key from a memory region rather than the PD's
// DMA key: that SGE's address is an I/O virtual address in the region,
// which may be a kernel virtual address.
func (fs *Facts) learnLkey(f *File, n *sitter.Node) {
	if fs.MrLkey != "" {
		return
	}
	var l, r *sitter.Node
	if KindOf(n) == "assignment_expression" {
		l, r = n.ChildByFieldName("left"), n.ChildByFieldName("right")
	} else {
		r = n.ChildByFieldName("value")
		for _, d := range Named(n) {
			if KindOf(d) == "field_designator" {
				l = d
			}
		}
	}
	if l != nil && r != nil && strings.HasSuffix(strings.TrimSpace(f.Text(l)), "lkey") && !strings.Contains(f.Text(r), "dma_lkey") {
		fs.MrLkey = fmt.Sprintf("%s:%d", f.Rel, f.Line(n))
	}
}

func (fs *Facts) learnFunction(f *File, fn *sitter.Node) {
	types := map[string]string{}
	ps := Params(f, fn)
	for _, p := range ps {
		types[p.Name] = p.Typ
	}
	alias := map[string]string{}
	Walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		if k := KindOf(n); k == "assignment_expression" || k == "initializer_pair" {
			fs.learnLkey(f, n)
		}
		if KindOf(n) == "declaration" {
			typ := f.Text(n.ChildByFieldName("type"))
			for _, d := range Named(n) {
				name, _ := DeclName(f, d)
				if name != "" {
					types[name] = typ
				}
			}
		}
		return true
	})
	sc := &scope{f: f, locals: map[string]*Val{}, types: types, alias: alias, places: map[string]*Val{}, facts: fs}
	Walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		switch KindOf(n) {
		case "assignment_expression":
			lhs, rhs := n.ChildByFieldName("left"), n.ChildByFieldName("right")
			p := PlaceOf(f, lhs, alias)
			if p == "" || strings.HasPrefix(p, "v:") {
				return true
			}
			_, member := wrMember(p)
			where := fmt.Sprintf("%s:%d", f.Rel, f.Line(n))
			if member != "" && member != "send_flags" {
				fs.learnFlagField(p, sc, n, rhs, where)
			}
			if member == "send_flags" && mentions(f, rhs, "IB_SEND_INLINE") && f.Text(n.ChildByFieldName("operator")) != "&=" {
				wr, _ := splitMember(p)
				if k := FieldKey(wr); k != "" && k != "wr" {
					fs.InlineWRs[k] = where
				}
			}
			if strings.Contains(f.Text(rhs), "max_inline_data") {
				fs.granted[FieldKey(p)] = append(fs.granted[FieldKey(p)], Assign{f, fn, n, lhs, rhs})
			}
			if member == "opcode" {
				wr, _ := splitMember(p)
				fs.addOpcode(FieldKey(wr), f.Text(rhs), where)
			}
			if member == "sg_list" && f.Text(n.ChildByFieldName("operator")) == "=" {
				// tx->wr.sg_list = tx->sge: the list, relative to the
				// object both live in.
				wr, _ := splitMember(p)
				if _, _, ok := sgeParamRel(sgeList(pointee(f, rhs, alias)), ps); ok {
					fs.sgeTakers[FunctionName(f, fn)] = true
				}
				if k, l := FieldKey(wr), pointee(f, rhs, alias); k != "" && l != "" && Root(l) == Root(wr) && strings.HasPrefix(l, Root(wr)) {
					if fs.sgList[k] == nil {
						fs.sgList[k] = map[string]string{}
					}
					fs.sgList[k][strings.TrimPrefix(l, Root(wr))] = where
				}
			}
			if member == "num_sge" && f.Text(n.ChildByFieldName("operator")) == "=" {
				wr, _ := splitMember(p)
				if k := FieldKey(wr); k != "" {
					if fs.numSGE[k] == nil {
						fs.numSGE[k] = map[string]string{}
					}
					fs.numSGE[k][CondKey(f, rhs)] = where
				}
			}
			key := FieldKey(p)
			if key == "" {
				return true
			}
			k, _ := sc.valueOf(rhs).Resolve(nil)
			if fs.kinds[key] == nil {
				fs.kinds[key] = map[Kind][]string{}
			}
			fs.kinds[key][k] = append(fs.kinds[key][k], where)
		case "call_expression":
			name := f.Text(n.ChildByFieldName("function"))
			args := Named(n.ChildByFieldName("arguments"))
			if (name == "ib_post_send" || strings.HasSuffix(name, "post_send")) && len(args) >= 2 {
				target := pointee(f, args[1], alias)
				for i, p := range ps {
					if Root(target) == p.Name && target != "" {
						fs.Posters[FunctionName(f, fn)] = poster{Param: i, suffix: strings.TrimPrefix(target, p.Name)}
					}
				}
			}
			for _, a := range args {
				// A parameter passed on (a list handed further down).
				if a = StripParens(a); a != nil && KindOf(a) == "identifier" {
					for _, p := range ps {
						if p.Pointer && p.Name == f.Text(a) {
							fs.passesOn[FunctionName(f, fn)] = append(fs.passesOn[FunctionName(f, fn)], name)
						}
					}
				}
			}
			if i, ok := dmaHandleArg[name]; ok && i < len(args) {
				// The handle a DMA sync, unmap or error test takes is a
				// DMA address, whatever field holds it.
				if p := PlaceOf(f, StripParens(args[i]), alias); p != "" && !strings.HasPrefix(p, "v:") {
					if key := FieldKey(p); key != "" && fs.dmaUses[key] == "" {
						fs.dmaUses[key] = fmt.Sprintf("%s at %s:%d", name, f.Rel, f.Line(n))
					}
				}
			}
			if name == "ib_query_qp" && len(args) >= 2 {
				if q := pointee(f, args[1], alias); q != "" {
					fs.Queried[FieldKey(q+".cap.max_inline_data")] = fmt.Sprintf("%s:%d", f.Rel, f.Line(n))
				}
			}
			// An attr kept in an object that outlives the creating
			// function holds the grant once the QP exists.
			if CreateFuncs[name] && name != "ib_query_qp" {
				for _, a := range args {
					if KindOf(a) != "pointer_expression" {
						continue
					}
					if q := pointee(f, a, alias); strings.Contains(q, ".") && FieldKey(q+".cap.max_inline_data") != "" {
						fs.Queried[FieldKey(q+".cap.max_inline_data")] = fmt.Sprintf("created by %s at %s:%d", name, f.Rel, f.Line(n))
					}
				}
			}
		}
		return true
	})
}

// SortedKeys is for deterministic output.
func SortedKeys[M ~map[string]V, V any](m M) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// learnOpcode reads .opcode = IB_WR_... in an initializer of object obj.
func (fs *Facts) learnOpcode(f *File, pair *sitter.Node, obj string) {
	var path []string
	for p := pair; p != nil && KindOf(p) == "initializer_pair"; {
		var m string
		for _, d := range Named(p) {
			if KindOf(d) == "field_designator" {
				m = strings.TrimPrefix(f.Text(d), ".")
			}
		}
		path = append([]string{m}, path...)
		up := p.Parent()
		if up == nil || KindOf(up) != "initializer_list" {
			break
		}
		p = up.Parent()
	}
	if len(path) == 0 || path[len(path)-1] != "opcode" {
		return
	}
	v := pair.ChildByFieldName("value")
	if v == nil {
		return
	}
	key := strings.Join(path[:len(path)-1], ".")
	if obj != "" {
		key = FieldKey(obj + "." + key)
	}
	if key == "" {
		return
	}
	fs.addOpcode(key, f.Text(v), fmt.Sprintf("%s:%d", f.Rel, f.Line(pair)))
}

// addOpcode records an opcode assigned to the requests named key ("wr"
// alone names too many).
func (fs *Facts) addOpcode(key, op, where string) {
	if key == "" || key == "wr" {
		return // names too many requests
	}
	if !RegistrationOps[op] {
		fs.otherOps[key] = true
		return
	}
	if _, ok := fs.opcodes[key]; !ok {
		fs.opcodes[key] = [2]string{op, where}
	}
}

// OpcodeOf is the registration opcode every assignment gives the requests
// named key, if that is what they get.
func (fs *Facts) OpcodeOf(key string) (string, string, bool) {
	o, ok := fs.opcodes[key]
	if !ok || fs.otherOps[key] {
		return "", "", false
	}
	return o[0], o[1], true
}

// pointerMember reports whether a struct member is declared, everywhere
// the module declares it, as a pointer or array.
func (fs *Facts) pointerMember(name string) bool { return fs.ptrMembers[name] }

// returnKind is the address kind a module function's return type says.
func (fs *Facts) returnKind(name string) (Kind, string) {
	if o := fs.Linked(name); o != nil {
		return o.returnKind(name)
	}
	if k, ok := fs.retKinds[name]; ok {
		d := fs.funcs[name]
		return k, fmt.Sprintf("%s() returns %s, %s:%d", name, strings.TrimSpace(d.f.Text(d.fn.ChildByFieldName("type"))), d.f.Rel, d.f.Line(d.fn))
	}
	return Unknown, ""
}

// templatesOf lists a file's file-scope initializers by name.
func (fs *Facts) templatesOf(f *File) map[string]*sitter.Node {
	if t, ok := fs.templates[f]; ok {
		return t
	}
	t := map[string]*sitter.Node{}
	root := f.Tree.RootNode()
	for _, n := range Named(root) {
		if KindOf(n) != "declaration" {
			continue
		}
		for _, d := range Named(n) {
			if KindOf(d) != "init_declarator" {
				continue
			}
			if v := d.ChildByFieldName("value"); v != nil && KindOf(v) == "initializer_list" {
				if name, _ := DeclName(f, d.ChildByFieldName("declarator")); name != "" {
					t[name] = v
				}
			}
		}
	}
	fs.templates[f] = t
	return t
}

// Summary computes (once, bottom-up: a callee's summary is computed when
// its caller's analysis first needs it) what a module function does for
// its callers; nil for functions outside the module and while the
// function's own summary is being computed (recursion).
func (fs *Facts) Summary(name string) *summary {
	if s, ok := fs.summaries[name]; ok {
		return s
	}
	if o := fs.Linked(name); o != nil {
		return o.Summary(name)
	}
	d, ok := fs.funcs[name]
	if !ok || fs.computing[name] || len(fs.computing) >= maxSummaryDepth {
		return nil
	}
	if !summaryWorthy.MatchString(d.f.Text(d.fn)) {
		fs.summaries[name] = nil
		return nil
	}
	fs.computing[name] = true
	defer delete(fs.computing, name)
	s := &summary{}
	ps := Params(d.f, d.fn)
	for _, p := range ps {
		s.names = append(s.names, p.Name)
	}
	type eff struct {
		flags  *Val
		opcode string
		all    bool
		n      int
	}
	effs := map[string]*eff{}
	type retPath struct {
		v     *Val
		facts map[string]bool
	}
	var rets []*Val
	var paths []retPath
	exits := 0
	variants := map[string][]varEffect{}
	in := &Interp{F: d.f, Fn: d.fn, Facts: fs, budget: maxSummarySteps}
	in.OnCheck = func(cp Checkpoint) {
		if !cp.Exit {
			s.recordHanded(in, cp, ps, name)
			return
		}
		exits++
		if len(variants) <= maxVariants {
			v := exitVariant(cp.State, ps, d.f.Rel)
			v = append(v, exitConditions(cp.State, s.names)...)
			if r := StripParens(cp.ret); r != nil {
				// A constant return (return true;) tells the caller
				// which exit path it took.
				switch t := d.f.Text(r); {
				case KindOf(r) == "true", t == "1":
					v = append(v, varEffect{kind: 'r', s: "1"})
				case KindOf(r) == "false", t == "0":
					v = append(v, varEffect{kind: 'r', s: "0"})
				}
			}
			var kb strings.Builder
			for _, e := range v {
				fmt.Fprintf(&kb, "%d%s%c%s%s;", e.param, e.rel, e.kind, e.v.key(), e.s)
			}
			variants[kb.String()] = v
		}
		if cp.ret != nil {
			rv := in.scope(cp.State).valueOf(cp.ret)
			rets = append(rets, rv)
			paths = append(paths, retPath{rv, cloneMap(cp.State.Facts)})
			for _, c := range Comparisons(d.f, cp.ret, d.fn) {
				s.Guards = append(s.Guards, GuardRef{d.f, d.fn, c})
			}
			if c := stripCond(d.f, cp.ret); c != nil && KindOf(c) == "call_expression" {
				if sub := fs.Summary(d.f.Text(c.ChildByFieldName("function"))); sub != nil {
					s.Guards = append(s.Guards, sub.Guards...)
				}
			}
		}
		st := cp.State
		for i, p := range ps {
			if !p.Pointer {
				continue
			}
			for w, fl := range st.Flags {
				if w != p.Name && !strings.HasPrefix(w, p.Name+".") {
					continue
				}
				k := strconv.Itoa(i) + " " + strings.TrimPrefix(w, p.Name)
				e := effs[k]
				if e == nil {
					e = &eff{all: true}
					effs[k] = e
				}
				e.n++
				if e.flags == nil || maybeOn(fl) && !maybeOn(e.flags) {
					e.flags = fl
				}
			}
			for w, op := range st.Opc {
				if w != p.Name && !strings.HasPrefix(w, p.Name+".") {
					continue
				}
				k := strconv.Itoa(i) + " " + strings.TrimPrefix(w, p.Name)
				e := effs[k]
				if e == nil {
					e = &eff{all: true}
					effs[k] = e
				}
				if e.opcode == "" || RegistrationOps[op] {
					e.opcode = op
				}
			}
		}
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				s.ret, s.effects = nil, nil // no summary rather than a wrong one
			}
		}()
		in.Run()
	}()
	for _, k := range SortedKeys(effs) {
		e := effs[k]
		var i int
		var suffix string
		_, _ = fmt.Sscanf(k, "%d", &i) // not a number: 0
		suffix = k[strings.IndexByte(k, ' ')+1:]
		fl := e.flags
		if fl != nil {
			fl = mapLeaves(fl, func(l *Val) *Val {
				return &Val{kind: l.kind, inl: l.inl, Why: name + "() sets " + l.Why, Line: l.Line, File: d.f.Rel}
			})
		}
		s.effects = append(s.effects, effect{param: i, suffix: suffix, flags: fl, opcode: e.opcode, assigns: e.n == exits && !in.Capped})
	}
	if len(variants) <= maxVariants && !in.Capped {
		for _, k := range SortedKeys(variants) {
			s.variants = append(s.variants, variants[k])
		}
	}
	if len(rets) > 0 {
		s.ret = joinReturns(rets, d.f.Rel)
		// A predicate on the parameters that decides what is returned
		// (len > max_inline ? flags : flags | IB_SEND_INLINE) is kept
		// as a choice the caller's path may decide.
		for _, p := range ps {
			s.params = append(s.params, p.Name)
		}
		for _, k := range SortedKeys(paths[0].facts) {
			if !onlyParams(k, s.params) {
				continue
			}
			var yes, no []*Val
			for _, p := range paths {
				b, ok := p.facts[k]
				if !ok {
					yes, no = nil, nil
					break
				}
				if b {
					yes = append(yes, p.v)
				} else {
					no = append(no, p.v)
				}
			}
			if len(yes) > 0 && len(no) > 0 {
				t, f := joinReturns(yes, d.f.Rel), joinReturns(no, d.f.Rel)
				if t.key() != f.key() {
					s.ret = &Val{Cond: k, t: t, f: f, Why: s.ret.Why, Line: s.ret.Line, File: d.f.Rel}
					break
				}
			}
		}
	}
	fs.summaries[name] = s
	return s
}

// Summaries are computed for functions that can say something about
// inline sends (their text mentions flags, opcodes, addresses or sizes),
// nested at most maxSummaryDepth deep, each within maxSummarySteps.
const (
	maxSummaryDepth = 6
	maxSummarySteps = 4000
)

var summaryWorthy = regexp.MustCompile(`send_flags|opcode|IB_SEND_|dma|_pa\(|phys|max_inline|sge|sg_list|addr`)

// mentionsInline reports whether a module function's text mentions an
// inline size or flag (a candidate guard predicate).
func (fs *Facts) mentionsInline(name string) bool {
	if o := fs.Linked(name); o != nil {
		return o.mentionsInline(name)
	}
	d, ok := fs.funcs[name]
	return ok && strings.Contains(strings.ToLower(d.f.Text(d.fn)), "inline")
}

// joinReturns joins the values a function returns on its paths: DMA or
// physical on any path wins, virtual needs every path; the flag bit is
// set when any path sets it.
func joinReturns(rets []*Val, file string) *Val {
	var kind Kind = Virt
	var w *Val
	inl := FlagOff
	var wi *Val
	for _, r := range rets {
		k, l := r.Resolve(nil)
		switch {
		case k == DMA:
			kind, w = DMA, l
		case k == Phys && kind != DMA:
			kind, w = Phys, l
		case k == Unknown && kind == Virt:
			kind, w = Unknown, l
		case w == nil:
			w = l
		}
		i, li := r.FlagsOn(nil)
		switch {
		case i == FlagOn:
			inl, wi = FlagOn, li
		case i == FlagUnset && inl == FlagOff:
			inl = FlagUnset
		}
	}
	if wi != nil && inl == FlagOn {
		w = wi
	}
	return &Val{kind: kind, inl: inl, Why: w.Why, Line: w.Line, File: file}
}

var identTok = regexp.MustCompile(`[A-Za-z_]\w*`)

// onlyParams reports whether a condition key names only the parameters
// (and constants, members, calls) so that a caller can restate it.
func onlyParams(k string, params []string) bool {
	for _, m := range identTok.FindAllStringIndex(k, -1) {
		if m[0] > 0 && (k[m[0]-1] == '.' || k[m[0]-1] == '>') {
			continue
		}
		name := k[m[0]:m[1]]
		if m[1] < len(k) && k[m[1]] == '(' || strings.ToUpper(name) == name || slices.Contains(params, name) {
			continue
		}
		return false
	}
	return true
}

// substParams restates a condition key of a callee in the caller's
// terms: each parameter becomes the argument passed for it.
func substParams(k string, params, args []string) string {
	var b strings.Builder
	last := 0
	for _, m := range identTok.FindAllStringIndex(k, -1) {
		if m[0] > 0 && (k[m[0]-1] == '.' || k[m[0]-1] == '>') {
			continue
		}
		if i := slices.Index(params, k[m[0]:m[1]]); i >= 0 && i < len(args) {
			b.WriteString(k[last:m[0]])
			b.WriteString(args[i])
			last = m[1]
		}
	}
	b.WriteString(k[last:])
	return b.String()
}

// exitConditions are the facts an exit path established on the
// function's parameters alone (if (len <= q->max_inline) ...): a caller
// whose path decided the same condition the other way cannot take that
// exit (kind 'c': rel the condition key in the callee's terms, s "1" or
// "0").
func exitConditions(st *State, names []string) []varEffect {
	var out []varEffect
	for _, k := range SortedKeys(st.Facts) {
		if k == "" || !onlyParams(k, names) || !strings.ContainsAny(k, "<>=!") && !identTok.MatchString(k) {
			continue
		}
		b := "0"
		if st.Facts[k] {
			b = "1"
		}
		out = append(out, varEffect{kind: 'c', rel: k, s: b})
	}
	return out
}

// exitVariant lists what an exit state leaves in the objects the
// function's pointer parameters reach.
func exitVariant(st *State, ps []param, file string) []varEffect {
	var out []varEffect
	rel := func(w string) (int, string, bool) {
		for i, p := range ps {
			if p.Pointer && (w == p.Name || strings.HasPrefix(w, p.Name+".") || strings.HasPrefix(w, p.Name+"[")) {
				return i, strings.TrimPrefix(w, p.Name), true
			}
		}
		return 0, "", false
	}
	prov := func(v *Val) *Val {
		// The choices this exit path decided (inline_ok ? va : dma
		// after if (inline_ok)) are made.
		return mapLeaves(restrict(v, st.Facts), func(l *Val) *Val {
			f := l.File
			if f == "" {
				f = file
			}
			return &Val{kind: l.kind, inl: l.inl, Why: l.Why, Line: l.Line, File: f}
		})
	}
	for _, w := range SortedKeys(st.Flags) {
		if i, r, ok := rel(w); ok {
			out = append(out, varEffect{param: i, rel: r, kind: 'f', v: prov(st.Flags[w])})
		}
	}
	for _, w := range SortedKeys(st.Opc) {
		if i, r, ok := rel(w); ok {
			out = append(out, varEffect{param: i, rel: r, kind: 'o', s: st.Opc[w]})
		}
	}
	for _, w := range SortedKeys(st.Addr) {
		if i, r, ok := rel(w); ok {
			out = append(out, varEffect{param: i, rel: r, kind: 'a', v: prov(st.Addr[w])})
		}
	}
	for _, w := range SortedKeys(st.Sgl) {
		if i, r, ok := rel(w); ok {
			if j, r2, ok := rel(st.Sgl[w]); ok {
				out = append(out, varEffect{param: i, rel: r, kind: 's', s: strconv.Itoa(j) + " " + r2})
			}
		}
	}
	for _, w := range SortedKeys(st.Nsge) {
		if i, r, ok := rel(w); ok {
			out = append(out, varEffect{param: i, rel: r, kind: 'n', s: st.Nsge[w]})
		}
	}
	return out
}

// dmaHandleArg is the argument of the DMA API's calls that is a DMA
// address (the handle a mapping returned).
var dmaHandleArg = map[string]int{
	"ib_dma_sync_single_for_cpu": 1, "ib_dma_sync_single_for_device": 1,
	"ib_dma_unmap_single": 1, "ib_dma_unmap_page": 1, "ib_dma_mapping_error": 1,
	"dma_sync_single_for_cpu": 1, "dma_sync_single_for_device": 1,
	"dma_unmap_single": 1, "dma_unmap_page": 1, "dma_mapping_error": 1,
}
