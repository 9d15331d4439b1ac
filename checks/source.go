package checks

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	sitter "github.com/tree-sitter/go-tree-sitter"
	tsc "github.com/tree-sitter/tree-sitter-c/bindings/go"
)

// file is one parsed C source.
type file struct {
	Rel  string // path relative to the tree
	Src  []byte // as parsed: the module's macros expanded (macro.go)
	Tree *sitter.Tree
	// Macros are the lines where a macro of the module was expanded.
	Macros map[int]macroUse
}

func (f *file) text(n *sitter.Node) string {
	if n == nil {
		return ""
	}
	return string(f.Src[n.StartByte():n.EndByte()])
}

func (f *file) line(n *sitter.Node) int { return int(n.StartPosition().Row) + 1 }

var language = sitter.NewLanguage(tsc.Language())

// parse parses C source.
func parse(rel string, src []byte) *file {
	p := sitter.NewParser()
	defer p.Close()
	_ = p.SetLanguage(language) // compiled in; a version mismatch fails every test that parses
	return &file{Rel: rel, Src: src, Tree: p.Parse(src, nil)}
}

// loadFiles reads and parses, in parallel, the files under root (relative
// paths) whose bytes contain any of the needles.
func loadFiles(root string, rels []string, needles ...string) ([]*file, error) {
	return loadFilesOpt(root, nil, false, rels, needles...)
}

// loadModuleFiles is loadFiles with the module's macros expanded
// (macro.go): the files the engine interprets.
func loadModuleFiles(root string, rels []string, needles ...string) ([]*file, error) {
	return loadFilesOpt(root, nil, true, rels, needles...)
}

// loadFilesOpt is loadFiles with a Preprocessor (nil: raw C) and the
// module's macros expanded where expand is set and the file is read raw.
// A .c file a Preprocessor serves is kept when its raw text or its
// preprocessed text has a needle, and is preprocessed when its raw text
// could hide one behind a macro (it posts or sets send flags).
func loadFilesOpt(root string, pp Preprocessor, expand bool, rels []string, needles ...string) ([]*file, error) {
	type result struct {
		f   *file
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
			b, err := os.ReadFile(filepath.Join(root, rel))
			if err != nil {
				out[i] = result{err: err}
				return
			}
			hit := len(needles) == 0 || containsAny(b, needles)
			if pp != nil && (hit || containsAny(b, ppHints)) {
				if src, uses, ok := pp.Source(rel, b); ok {
					if hit || containsAny(src, needles) {
						f := parse(rel, src)
						f.Macros = uses
						out[i] = result{f: f}
					}
					return
				}
			}
			if !hit {
				return
			}
			src, uses := b, map[int]macroUse(nil)
			if expand {
				src, uses = expandMacros(root, rel, b)
			}
			f := parse(rel, src)
			f.Macros = uses
			out[i] = result{f: f}
		}(i, rel)
	}
	wg.Wait()
	var files []*file
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

func containsAny(b []byte, needles []string) bool {
	for _, n := range needles {
		if bytes.Contains(b, []byte(n)) {
			return true
		}
	}
	return false
}

// listC lists the .c and .h files under dirs (relative to root).
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

// walk calls fn on n and its descendants, in order; fn returns false to
// skip a node's children.
func walk(n *sitter.Node, fn func(*sitter.Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	for i := uint(0); i < n.ChildCount(); i++ {
		walk(n.Child(i), fn)
	}
}

func named(n *sitter.Node) []*sitter.Node {
	if n == nil {
		return nil
	}
	var out []*sitter.Node
	for i := uint(0); i < n.NamedChildCount(); i++ {
		out = append(out, n.NamedChild(i))
	}
	return out
}

// functionName is the name a function_definition defines.
func functionName(f *file, fn *sitter.Node) string {
	d := fn.ChildByFieldName("declarator")
	for d != nil && d.Kind() != "function_declarator" {
		d = d.ChildByFieldName("declarator")
	}
	if d == nil {
		return ""
	}
	return f.text(d.ChildByFieldName("declarator"))
}

// params lists a function's parameters: name and declared type text.
func params(f *file, fn *sitter.Node) []param {
	d := fn.ChildByFieldName("declarator")
	for d != nil && d.Kind() != "function_declarator" {
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
	for _, p := range named(pl) {
		if p.Kind() != "parameter_declaration" {
			continue
		}
		name, ptr := declName(f, p.ChildByFieldName("declarator"))
		out = append(out, param{name: name, typ: f.text(p.ChildByFieldName("type")), pointer: ptr})
	}
	return out
}

type param struct {
	name, typ string
	pointer   bool
}

// declName finds the identifier a declarator declares and whether it is a
// pointer or array.
func declName(f *file, d *sitter.Node) (string, bool) {
	ptr := false
	for d != nil {
		switch d.Kind() {
		case "identifier", "field_identifier":
			return f.text(d), ptr
		case "pointer_declarator", "array_declarator":
			ptr = true
		}
		next := d.ChildByFieldName("declarator")
		if next == nil {
			for _, c := range named(d) {
				if c.Kind() == "identifier" {
					return f.text(c), ptr
				}
			}
			return "", ptr
		}
		d = next
	}
	return "", ptr
}

// functions lists a file's function definitions.
func functions(f *file) []*sitter.Node {
	var out []*sitter.Node
	walk(f.Tree.RootNode(), func(n *sitter.Node) bool {
		if n.Kind() == "function_definition" {
			out = append(out, n)
			return false
		}
		return true
	})
	return out
}

// same reports whether two nodes are the same node (go-tree-sitter hands
// out a new Node value on every call, so pointers do not compare).
func same(a, b *sitter.Node) bool {
	return a != nil && b != nil && a.StartByte() == b.StartByte() && a.EndByte() == b.EndByte() && a.KindId() == b.KindId()
}
