package engine

import (
	"bytes"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// Whole-scope linking. Facts and summaries are learned per module (a
// folder: what a field holds in one driver says nothing of another's),
// and a module calls another's functions only through the ones it does
// not keep static. So a call a module cannot resolve among its own
// functions is resolved, like a linker would, to the one module of the
// scope that defines that name without static: its summary, computed
// with its own module's facts, is what the call does (a request built
// in one folder and posted in another, a flag set by a helper of
// another folder, a guard passed as a parameter from another folder).
//
// Which modules are read: those that set IB_SEND_INLINE (moduleFiles),
// and, of the other files of the scope that use RDMA requests
// (rdmaNeedles), those that call a function such a module exports
// (EXPORT_SYMBOL), define a function such a module calls without
// defining, or key SGEs with the PD's DMA key (the reverse rule's
// ground: a non-inline post of a virtual address), and so on for a few
// rounds (maxLinkRounds).

// RdmaNeedles select the files of the scope that use RDMA requests at
// all: only those can be linked.
var RdmaNeedles = []string{"ib_send_wr", "ib_sge"}

// MaxLinkRounds bounds how far from the inline users linking reaches (a
// module linked in may call into a third, ...).
const MaxLinkRounds = 3

// linker resolves a name to the module that defines it without static.
type linker struct {
	owner map[string]*Facts // nil value: defined non-static in several modules
	// callees are, per module, the other modules whose functions it
	// calls, in the order first called.
	callees map[*Facts][]*Facts
}

// NewLinker indexes the non-static function definitions of files by
// the module (facts) each belongs to.
func NewLinker(files []*File, byDir map[string]*Facts) *linker {
	l := &linker{owner: map[string]*Facts{}}
	for _, f := range files {
		fs := byDir[path.Dir(f.Rel)]
		if fs == nil || !strings.HasSuffix(f.Rel, ".c") {
			continue
		}
		for _, fn := range Functions(f) {
			name := FunctionName(f, fn)
			if name == "" || IsStatic(f, fn) {
				continue
			}
			if o, seen := l.owner[name]; seen && o != fs {
				l.owner[name] = nil // ambiguous: leave it unresolved
				continue
			}
			l.owner[name] = fs
		}
	}
	for _, fs := range byDir {
		fs.link = l
	}
	l.callees = map[*Facts][]*Facts{}
	for _, f := range files {
		fs := byDir[path.Dir(f.Rel)]
		if fs == nil {
			continue
		}
		for _, name := range f.CallNames() {
			if o := fs.Linked(name); o != nil && !slices.Contains(l.callees[fs], o) {
				l.callees[fs] = append(l.callees[fs], o)
			}
		}
	}
	return l
}

// Linked is the other module whose function a call of name in fs runs:
// nil when fs defines name itself, or no single module of the scope
// defines it without static.
func (fs *Facts) Linked(name string) *Facts {
	if fs == nil {
		return nil
	}
	if _, own := fs.funcs[name]; own || fs.link == nil {
		return nil
	}
	if o := fs.link.owner[name]; o != fs {
		return o
	}
	return nil
}

// GrantedAt are the assignments of the granted caps to field key: the
// module's own, else those of the modules whose functions it calls (the
// connection a core module creates and its user reads), with the
// module they were learned in.
func (fs *Facts) GrantedAt(key string) ([]Assign, *Facts) {
	if as, o := fs.grantedAt(key); len(as) > 0 {
		return as, o
	}
	// One object reached through two spellings: ep->re_max_inline_send
	// where ep = r_xprt->rx_ep (key rx_ep.re_max_inline_send) is the
	// member the create function records through its own ep (key
	// re_max_inline_send). The member alone, when one assignment set
	// names it.
	if i := strings.IndexByte(key, '.'); i >= 0 {
		return fs.grantedAt(key[i+1:])
	}
	return nil, fs
}

func (fs *Facts) grantedAt(key string) ([]Assign, *Facts) {
	if as := fs.granted[key]; len(as) > 0 || fs.link == nil {
		return as, fs
	}
	for _, o := range fs.link.callees[fs] {
		if as := o.granted[key]; len(as) > 0 {
			return as, o
		}
	}
	return nil, fs
}

// PosterOf says whether a call of name posts one of its parameters (a
// function of the module, or one another module exports).
func (fs *Facts) PosterOf(name string) (poster, bool) {
	if p, ok := fs.Posters[name]; ok {
		return p, true
	}
	if o := fs.Linked(name); o != nil {
		p, ok := o.Posters[name]
		return p, ok
	}
	return poster{}, false
}

// WorthLinked selects, in a module read because it is linked to the
// inline users (not one that sets the flag itself), the functions worth
// interpreting: those that key an SGE with the PD's DMA key and post
// (the reverse rule), and those that call another module's function
// that posts or mentions inline sizes or flags (the link itself). The
// rest of such a module is read for facts and summaries only.
func WorthLinked(f *File, fn *sitter.Node, facts *Facts) bool {
	keys := strings.Contains(f.Text(fn), "local_dma_lkey")
	posts, link := false, false
	var keyers map[string]bool
	Walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		if KindOf(n) != "call_expression" {
			return true
		}
		c := n.ChildByFieldName("function")
		name := f.Text(c)
		if !keys {
			// The key given by a helper of the file that fills the
			// SGE (p9_rdma_fill_sge(rdma, &sge, buf, len)).
			if keyers == nil {
				keyers = lkeyFuncs(f)
			}
			keys = keyers[name]
		}
		if _, p := facts.PosterOf(name); p || name == "ib_post_send" || KindOf(c) == "field_expression" && f.Text(c.ChildByFieldName("field")) == "post_send" {
			posts = true
		}
		if o := facts.Linked(name); o != nil {
			_, p := o.Posters[name]
			link = link || p || o.mentionsInline(name)
		}
		return !(link || keys && posts)
	})
	return link || keys && posts
}

// lkeyFuncs are the functions of f that mention the PD's DMA key.
func lkeyFuncs(f *File) map[string]bool {
	out := map[string]bool{}
	if !bytes.Contains(f.Src, []byte("local_dma_lkey")) {
		return out
	}
	for _, fn := range Functions(f) {
		if strings.Contains(f.Text(fn), "local_dma_lkey") {
			out[FunctionName(f, fn)] = true
		}
	}
	return out
}

// IsStatic reports whether a function definition is static (file
// scope, not callable from another module).
func IsStatic(f *File, fn *sitter.Node) bool {
	for _, c := range Named(fn) {
		if KindOf(c) == "storage_class_specifier" && f.Text(c) == "static" {
			return true
		}
	}
	return false
}

// exportedNames are the functions the modules' files export
// (EXPORT_SYMBOL*(name)) and define without static.
func exportedNames(files []*File) map[string]bool {
	out := map[string]bool{}
	for _, f := range files {
		if !bytes.Contains(f.Src, []byte("EXPORT_SYMBOL")) {
			continue
		}
		for _, fn := range Functions(f) {
			name := FunctionName(f, fn)
			if name != "" && !IsStatic(f, fn) && bytes.Contains(f.Src, []byte("("+name+")")) {
				out[name] = true
			}
		}
	}
	return out
}

// unresolvedCalls are the names the files call and their modules do not
// define.
func unresolvedCalls(files []*File) map[string]bool {
	defined := map[string]map[string]bool{}
	for _, f := range files {
		d := path.Dir(f.Rel)
		if defined[d] == nil {
			defined[d] = map[string]bool{}
		}
		for _, fn := range Functions(f) {
			defined[d][FunctionName(f, fn)] = true
		}
	}
	out := map[string]bool{}
	for _, f := range files {
		for _, name := range f.CallNames() {
			if !defined[path.Dir(f.Rel)][name] {
				out[name] = true
			}
		}
	}
	return out
}

// DefinesAny reports whether C source defines (at the start of a line,
// kernel style: "int foo(" or "foo(" after the type's line) a function
// of names.
func DefinesAny(src []byte, names map[string]bool) bool {
	for len(src) > 0 {
		line := src
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			line, src = src[:i], src[i+1:]
		} else {
			src = nil
		}
		if len(line) == 0 || !(line[0] == '_' || line[0] >= 'a' && line[0] <= 'z' || line[0] >= 'A' && line[0] <= 'Z') || bytes.HasPrefix(line, []byte("static ")) {
			continue // not a definition, or one no other module can call
		}
		p := bytes.IndexByte(line, '(')
		if p <= 0 || bytes.IndexByte(line[:p], '=') >= 0 {
			continue // no call, or an initializer's
		}
		e := p
		for e > 0 && line[e-1] == ' ' {
			e--
		}
		s := e
		for s > 0 && isIdentByte(line[s-1]) {
			s--
		}
		if s < e && names[string(line[s:e])] {
			return true
		}
	}
	return false
}

func isIdentByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// LinkedModules are the folders, outside the modules already read
// (have), whose files are linked to them: they call a function the read
// files export, define one they call without defining, or key SGEs with
// the PD's DMA key (outside the providers, whose own posts are theirs to
// test). rdma are the scope's .c files that use RDMA requests, by path,
// with their bytes.
func LinkedModules(rdma map[string][]byte, have map[string]bool, read []*File) ([]string, error) {
	exported, unresolved := exportedNames(read), unresolvedCalls(read)
	seen := map[string]bool{}
	var out []string
	for _, r := range SortedKeys(rdma) {
		d := path.Dir(r)
		if have[d] || seen[d] || strings.HasPrefix(r, apiDir) {
			continue
		}
		if linkedFile(r, rdma[r], exported, unresolved) {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out, nil
}

// apiDir holds the verbs API itself (ib_create_qp, rdma_create_qp, the
// CM, ib_post_send's wrappers): the engine models what it promises
// (createFuncs, the mapping functions, posts) rather than reading its
// implementation, so it is never linked.
const apiDir = "drivers/infiniband/core/"

// intCast is a pointer made an integer: the only way a kernel virtual
// address gets into an SGE's u64 addr (a pointer does not convert
// implicitly), here or in a helper that returns one.
var intCast = regexp.MustCompile(`\(\s*(?:u64|__u64|uint64_t|uintptr_t|unsigned long|unsigned long long|dma_addr_t)\s*\)\s*[&(A-Za-z_]`)

// mayMakeVA reports whether C source makes a pointer an integer
// anywhere but a request's wr_id (the cookie every user casts a context
// pointer into): a module without one cannot put a virtual address in
// an SGE itself, so the reverse rule has nothing to judge there.
func mayMakeVA(b []byte) bool {
	for _, m := range intCast.FindAllIndex(b, -1) {
		s := bytes.LastIndexByte(b[:m[0]], '\n') + 1
		e := bytes.IndexByte(b[m[0]:], '\n')
		if e < 0 {
			e = len(b) - m[0]
		}
		line := b[s : m[0]+e]
		if !bytes.Contains(line, []byte("wr_id")) && !bytes.Contains(line, []byte("wr_cqe")) {
			return true
		}
	}
	return false
}

// providerDirs hold the RDMA providers (drivers), not their users: what
// they grant is read into the provider table, their own posts are theirs
// to test, and they are never linked.
var providerDirs = []string{"drivers/infiniband/hw/", "drivers/infiniband/sw/"}

func linkedFile(rel string, b []byte, exported, unresolved map[string]bool) bool {
	for _, p := range providerDirs {
		if strings.HasPrefix(rel, p) {
			return false
		}
	}
	if bytes.Contains(b, []byte("local_dma_lkey")) && mayMakeVA(b) {
		return true
	}
	for name := range exported {
		if bytes.Contains(b, []byte(name+"(")) {
			return true
		}
	}
	return DefinesAny(b, unresolved)
}

// readSource reads the C source of a file of the tree (rel relative to
// tree) for analysis: the one place the checks read a C file's bytes
// (loadFilesScan; linking reuses the bytes read there). A preprocessed
// translation unit would be plugged in here.
func readSource(tree, rel string) ([]byte, error) {
	return readFile(filepath.Join(tree, rel))
}
