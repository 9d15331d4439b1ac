package engine

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	sitter "github.com/tree-sitter/go-tree-sitter"
	tsc "github.com/tree-sitter/tree-sitter-c/bindings/go"
)

// File is one parsed C source.
type File struct {
	Rel  string // path relative to the tree
	Src  []byte // as parsed: the module's macros expanded (macro.go)
	Tree *sitter.Tree
	// Macros are the lines where a macro of the module was expanded.
	Macros map[int]macroUse

	callsOnce sync.Once
	calls     []string // callNames

	funcsOnce sync.Once
	funcs     []*sitter.Node // Functions

	// cached: the file belongs to the parse cache (parseCached), one
	// per content, shared by every check in this process: never closed.
	cached bool
}

// Cached says whether f belongs to the parse cache (the files LoadFiles
// returns): shared and never closed, one per content, so a cache keyed by
// such a file is keyed by its content. A file made by Parse is its
// caller's, to Close.
func (f *File) Cached() bool { return f.cached }

// Close frees the syntax tree of a file made by Parse. tree-sitter's
// trees are C memory, which Go's collector never frees: a process that
// parses a tree's every file and closes none holds them all (the
// whole-tree test over five kernels' default scope grew past 12 GB). A
// file of the parse cache is shared: Close leaves it, as it leaves a file
// closed before. The file's nodes must not be used after.
func (f *File) Close() {
	if f == nil || f.cached || f.Tree == nil {
		return
	}
	f.Tree.Close()
	f.Tree, f.funcs = nil, nil
	openTrees.Add(-1)
}

// openTrees counts the trees Parse made that are neither closed nor in
// the parse cache.
var openTrees atomic.Int64

// OpenTrees is the number of trees made by Parse and not closed, the
// parse cache's left out: what a test that parses and closes files
// expects back where it started (a tree it or the engine's helpers left
// open is C memory held until the process ends).
func OpenTrees() int64 { return openTrees.Load() }

// CallNames are the names the file calls directly (f(...)), in order,
// each once; computed once per parsed file (files are cached by content).
func (f *File) CallNames() []string {
	f.callsOnce.Do(func() {
		seen := map[string]bool{}
		Walk(f.Tree.RootNode(), func(n *sitter.Node) bool {
			if KindOf(n) == "call_expression" {
				if c := n.ChildByFieldName("function"); c != nil && KindOf(c) == "identifier" {
					if name := f.Text(c); !seen[name] {
						seen[name] = true
						f.calls = append(f.calls, name)
					}
				}
			}
			return true
		})
	})
	return f.calls
}

func (f *File) Text(n *sitter.Node) string {
	if n == nil {
		return ""
	}
	return string(f.Src[n.StartByte():n.EndByte()])
}

func (f *File) Line(n *sitter.Node) int { return int(n.StartPosition().Row) + 1 }

var Language = sitter.NewLanguage(tsc.Language())

// kinds are the grammar's node kinds by symbol, read once: Node.Kind
// copies the kind's C string into a new Go string on every call, and the
// engine asks for kinds more than for anything else.
var kinds = sync.OnceValue(func() []string {
	out := make([]string, Language.NodeKindCount())
	for i := range out {
		out[i] = Language.NodeKindForId(uint16(i))
	}
	return out
})

// KindOf is n.Kind() (the kind of a node's public symbol, its alias
// when it has one), looked up by the symbol's number; the builtin error
// symbols, past the grammar's table, are asked of tree-sitter.
func KindOf(n *sitter.Node) string {
	if k, id := kinds(), int(n.KindId()); id < len(k) {
		return k[id]
	}
	return n.Kind()
}

// Parse parses C source. The file is the caller's: Close frees its tree.
func Parse(rel string, src []byte) *File {
	p := sitter.NewParser()
	defer p.Close()
	_ = p.SetLanguage(Language) // compiled in; a version mismatch fails every test that parses
	f := &File{Rel: rel, Src: src, Tree: p.Parse(src, nil)}
	if f.Tree != nil {
		openTrees.Add(1)
	}
	return f
}

// parsed are the files parsed so far, by path and content as parsed
// (the module's macros expanded): a later check of the same tree (a
// warm run, the pristine and the patched tree of one kernel) parses only
// what changed. Parsed files are only read after loading.
var parsed sync.Map

func parseCached(rel string, src []byte, uses map[int]macroUse) *File {
	h := sha256.Sum256(src)
	key := rel + "\x00" + string(h[:])
	if len(uses) > 0 {
		// Where the macros are defined is not in src: the key names
		// every use too (offset, macro, where defined), so a file whose
		// expansion came from other definitions is parsed anew.
		key += "\x00" + usesKey(uses)
	}
	if f, ok := parsed.Load(key); ok {
		return f.(*File)
	}
	f := Parse(rel, src)
	f.Macros = uses
	f.cached = true // before it is published
	if prev, loaded := parsed.LoadOrStore(key, f); loaded {
		// Another goroutine parsed the same content first: its file is
		// the cache's, and this one, never published, is freed.
		f.cached = false
		f.Close()
		return prev.(*File)
	}
	if f.Tree != nil {
		openTrees.Add(-1)
	}
	return f
}

// usesKey is a digest of a file's macro uses, in offset order.
func usesKey(uses map[int]macroUse) string {
	offs := make([]int, 0, len(uses))
	for o := range uses {
		offs = append(offs, o)
	}
	sort.Ints(offs)
	h := sha256.New()
	for _, o := range offs {
		u := uses[o]
		fmt.Fprintf(h, "%d\x00%s\x00%s\x00%d\n", o, u.Name, u.File, u.Line)
	}
	return string(h.Sum(nil))
}

// LoadFiles reads and parses, in parallel, the files under root (relative
// paths) whose bytes contain any of the needles.
func LoadFiles(root string, rels []string, needles ...string) ([]*File, error) {
	return LoadFilesOpt(root, nil, false, rels, needles...)
}

// LoadFilesOpt is loadFiles with a Preprocessor (nil: raw C) and the
// module's macros expanded where expand is set and the file is read raw.
// A .c file a Preprocessor serves is kept when its raw text or its
// preprocessed text has a needle, and is preprocessed when its raw text
// could hide one behind a macro (it posts or sets send flags).
func LoadFilesOpt(root string, pp Preprocessor, expand bool, rels []string, needles ...string) ([]*File, error) {
	return LoadFilesScan(root, pp, expand, rels, nil, needles...)
}

// LoadFilesScan is loadFilesOpt that also hands every file's bytes, as
// read, to scan (when not nil; called concurrently), so one read of the
// scope serves two questions.
func LoadFilesScan(root string, pp Preprocessor, expand bool, rels []string, scan func(rel string, b []byte), needles ...string) ([]*File, error) {
	type result struct {
		f   *File
		err error
	}
	out := make([]result, len(rels))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.NumCPU())
	for i, rel := range rels {
		wg.Add(1)
		go func(i int, rel string) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			b, err := readSource(root, rel)
			if err != nil {
				out[i] = result{err: err}
				return
			}
			if scan != nil {
				scan(rel, b)
			}
			hit := len(needles) == 0 || ContainsAny(b, needles)
			if pp != nil && (hit || ContainsAny(b, ppHints)) {
				if src, uses, ok := pp.Source(rel, b); ok {
					if hit || ContainsAny(src, needles) {
						out[i] = result{f: parseCached(rel, src, uses)}
					}
					return
				}
			}
			if !hit {
				return
			}
			src, uses := b, map[int]macroUse(nil)
			if expand {
				src, uses = ExpandMacros(root, rel, b)
			}
			out[i] = result{f: parseCached(rel, src, uses)}
		}(i, rel)
	}
	wg.Wait()
	var files []*File
	for _, r := range out {
		if r.err != nil {
			return nil, r.err
		}
		if r.f != nil {
			files = append(files, r.f)
		}
	}
	return files, nil
}

// ppHints mark a file whose macros may set what the rules read.
var ppHints = []string{"post_send", "send_flags", "sg_list"}

func ContainsAny(b []byte, needles []string) bool {
	for _, n := range needles {
		if bytes.Contains(b, []byte(n)) {
			return true
		}
	}
	return false
}

// ListC lists the .c and .h files under dirs (relative to root),
// reported to the recorders (reads.go).
func ListC(root string, dirs []string) ([]string, error) {
	out, err := listC(root, dirs)
	if recordingOn() {
		noteRead("listc", absPath(root)+"\x00"+strings.Join(dirs, "\x00"), listDigest(out, err))
	}
	return out, err
}

func listC(root string, dirs []string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		base := filepath.Join(root, d)
		st, err := os.Stat(base)
		if err != nil {
			continue
		}
		if !st.IsDir() {
			out = append(out, d)
			continue
		}
		err = filepath.WalkDir(base, func(p string, e os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() {
				return nil
			}
			if strings.HasSuffix(p, ".c") || strings.HasSuffix(p, ".h") {
				rel, _ := filepath.Rel(root, p)
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", d, err)
		}
	}
	sort.Strings(out)
	return out, nil
}

// FunctionName is the name a function_definition defines.
func FunctionName(f *File, fn *sitter.Node) string {
	d := fn.ChildByFieldName("declarator")
	for d != nil && KindOf(d) != "function_declarator" {
		d = d.ChildByFieldName("declarator")
	}
	if d == nil {
		return ""
	}
	return f.Text(d.ChildByFieldName("declarator"))
}

// Params lists a function's parameters: name and declared type text.
func Params(f *File, fn *sitter.Node) []param {
	d := fn.ChildByFieldName("declarator")
	for d != nil && KindOf(d) != "function_declarator" {
		d = d.ChildByFieldName("declarator")
	}
	if d == nil {
		return nil
	}
	var out []param
	pl := d.ChildByFieldName("parameters")
	if pl == nil {
		return nil
	}
	for _, p := range Named(pl) {
		if KindOf(p) != "parameter_declaration" {
			continue
		}
		name, ptr := DeclName(f, p.ChildByFieldName("declarator"))
		out = append(out, param{Name: name, Typ: f.Text(p.ChildByFieldName("type")), Pointer: ptr})
	}
	return out
}

type param struct {
	Name, Typ string
	Pointer   bool
}

// DeclName finds the identifier a declarator declares and whether it is a
// pointer or array.
func DeclName(f *File, d *sitter.Node) (string, bool) {
	ptr := false
	for d != nil {
		switch KindOf(d) {
		case "identifier", "field_identifier":
			return f.Text(d), ptr
		case "pointer_declarator", "array_declarator":
			ptr = true
		}
		next := d.ChildByFieldName("declarator")
		if next == nil {
			for _, c := range Named(d) {
				if KindOf(c) == "identifier" {
					return f.Text(c), ptr
				}
			}
			return "", ptr
		}
		d = next
	}
	return "", ptr
}

// DeclDepth counts the pointer and array declarators around the name a
// declarator declares: 2 for void *bufs[8] or char **v, whose elements
// are pointers themselves.
func DeclDepth(d *sitter.Node) int {
	n := 0
	for d != nil {
		switch KindOf(d) {
		case "pointer_declarator", "array_declarator":
			n++
		}
		d = d.ChildByFieldName("declarator")
	}
	return n
}

// Functions lists a file's function definitions, in the order of the
// source. The list is walked once per file and kept with it (a file of
// the parse cache serves every check of its content in the process: a
// check after a one-line edit walks the edited file alone), so callers
// share it: read it, never write it (its capacity is its length, so an
// append copies).
func Functions(f *File) []*sitter.Node {
	f.funcsOnce.Do(func() {
		var out []*sitter.Node
		Walk(f.Tree.RootNode(), func(n *sitter.Node) bool {
			if KindOf(n) == "function_definition" {
				out = append(out, n)
				return false
			}
			return true
		})
		f.funcs = slices.Clip(out)
	})
	return f.funcs
}

// Same reports whether two nodes are the same node (go-tree-sitter hands
// out a new Node value on every call, so pointers do not compare).
func Same(a, b *sitter.Node) bool {
	return a != nil && b != nil && a.StartByte() == b.StartByte() && a.EndByte() == b.EndByte() && a.KindId() == b.KindId()
}
