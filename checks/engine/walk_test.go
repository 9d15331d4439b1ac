package engine

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// cursorWalk is Walk as it was before the subtree was listed in C: a
// cursor moved from Go, one node at a time. The reference Walk must
// agree with.
func cursorWalk(n *sitter.Node, fn func(*sitter.Node) bool) {
	if n == nil {
		return
	}
	c := n.Walk()
	defer c.Close()
	depth := 0
	for {
		if fn(c.Node()) && c.GotoFirstChild() {
			depth++
			continue
		}
		for depth == 0 || !c.GotoNextSibling() {
			if depth == 0 || !c.GotoParent() {
				return
			}
			depth--
		}
	}
}

// visit is one node as a walk saw it, and what the walk was told.
type visit struct {
	kind       string
	start, end uint
	id         uintptr
	descend    bool
}

// record walks n with walk, descending where prune says so, and lists
// what it saw.
func record(walk func(*sitter.Node, func(*sitter.Node) bool), n *sitter.Node, prune func(*sitter.Node) bool) []visit {
	var out []visit
	walk(n, func(c *sitter.Node) bool {
		d := prune(c)
		out = append(out, visit{c.Kind(), c.StartByte(), c.EndByte(), c.Id(), d})
		return d
	})
	return out
}

// walkSources are C sources to walk: the checks' fixtures and shapes
// made here (deep nesting, empty files, errors, a lone token).
func walkSources(t *testing.T) map[string][]byte {
	t.Helper()
	srcs := map[string][]byte{
		"empty.c":  nil,
		"token.c":  []byte("x"),
		"error.c":  []byte("int f( { if (a) ] return; }}} /* unterminated"),
		"nested.c": []byte("int f(void) { return " + strings.Repeat("(", 3000) + "1" + strings.Repeat(")", 3000) + "; }\n"),
		"chain.c":  []byte("int g(void) { return a" + strings.Repeat(" + a", 5000) + "; }\n"),
		"blocks.c": []byte("void h(void) " + strings.Repeat("{ if (x) ", 500) + strings.Repeat("}", 500) + "\n"),
	}
	fixtures, err := filepath.Glob(filepath.Join("..", "testdata", "*.c"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range fixtures {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		srcs[filepath.Base(p)] = b
	}
	if len(fixtures) < 50 {
		t.Fatalf("only %d fixtures under checks/testdata", len(fixtures))
	}
	return srcs
}

// TestWalkAgreesWithCursor: Walk sees the nodes a cursor moved from Go
// sees, in the same order, and skips the same subtrees, from the root
// and from inner nodes, when fn prunes nowhere, everywhere, at one kind
// or at pseudo-random nodes; also when its first guess of the subtree's
// size is short (the listing is made again).
func TestWalkAgreesWithCursor(t *testing.T) {
	prunes := map[string]func(*sitter.Node) bool{
		"none":      func(*sitter.Node) bool { return true },
		"all":       func(*sitter.Node) bool { return false },
		"functions": func(n *sitter.Node) bool { return n.Kind() != "function_definition" },
		"random": func(n *sitter.Node) bool {
			h := fnv.New32a()
			fmt.Fprintf(h, "%d-%d-%s", n.StartByte(), n.EndByte(), n.Kind())
			return h.Sum32()%5 != 0
		},
	}
	short := func(n *sitter.Node, fn func(*sitter.Node) bool) {
		nodes, ends := preorderSized(n, 1)
		visitListed(nodes, ends, fn)
	}
	total := 0
	for name, src := range walkSources(t) {
		f := Parse(name, src)
		root := f.Tree.RootNode()
		// Inner roots: the root's children and grandchildren, and
		// every function body.
		starts := []*sitter.Node{root}
		for _, c := range Named(root) {
			starts = append(starts, c)
			starts = append(starts, Named(c)...)
		}
		cursorWalk(root, func(n *sitter.Node) bool {
			if n.Kind() == "compound_statement" {
				starts = append(starts, n)
			}
			return true
		})
		for pname, prune := range prunes {
			for i, s := range starts {
				want := record(cursorWalk, s, prune)
				for wname, walk := range map[string]func(*sitter.Node, func(*sitter.Node) bool){"Walk": Walk, "short guess": short} {
					got := record(walk, s, prune)
					if len(got) != len(want) {
						t.Fatalf("%s, start %d (%s), prune %s, %s: %d nodes, the cursor %d", name, i, s.Kind(), pname, wname, len(got), len(want))
					}
					for j := range want {
						if got[j] != want[j] {
							t.Fatalf("%s, start %d, prune %s, %s: node %d is %+v, the cursor's %+v", name, i, pname, wname, j, got[j], want[j])
						}
					}
				}
				total += len(want)
			}
		}
		f.Close()
	}
	if total < 100000 {
		t.Fatalf("only %d nodes compared", total)
	}
}

// TestWalkLayout: the C side's node, the Go copy and go-tree-sitter's
// Node have one size (a go-tree-sitter whose TSNode changed fails here
// and in the differential tests, not in a rule).
func TestWalkLayout(t *testing.T) {
	if a, b, c := unsafe.Sizeof(sitter.Node{}), unsafe.Sizeof(rawNode{}), uintptr(wNodeSize); a != b || b != c {
		t.Fatalf("sitter.Node %d bytes, rawNode %d, wNode %d", a, b, c)
	}
}

// TestWalkNodesOutliveTheWalk: a node fn keeps is still that node after
// the walk and after later walks (each walk lists into its own memory).
func TestWalkNodesOutliveTheWalk(t *testing.T) {
	f := Parse("a.c", []byte("int a(void) { return 1; }\nint b(void) { return 2; }\n"))
	var kept []*sitter.Node
	Walk(f.Tree.RootNode(), func(n *sitter.Node) bool {
		if n.Kind() == "function_definition" {
			kept = append(kept, n)
		}
		return true
	})
	for i := 0; i < 50; i++ {
		Walk(f.Tree.RootNode(), func(*sitter.Node) bool { return true })
	}
	if len(kept) != 2 || FunctionName(f, kept[0]) != "a" || FunctionName(f, kept[1]) != "b" {
		t.Fatalf("kept nodes changed: %d", len(kept))
	}
}

// cursorWalkDown is walkDown as it was: a cursor moved from Go.
func cursorWalkDown[T any](n *sitter.Node, root T, fn func(n *sitter.Node, v T) (T, bool)) {
	if n == nil {
		return
	}
	c := n.Walk()
	defer c.Close()
	stack := []T{root}
	for {
		v, down := fn(c.Node(), stack[len(stack)-1])
		if down && c.GotoFirstChild() {
			stack = append(stack, v)
			continue
		}
		for len(stack) == 1 || !c.GotoNextSibling() {
			if len(stack) == 1 || !c.GotoParent() {
				return
			}
			stack = stack[:len(stack)-1]
		}
	}
}

// cursorNamed is Named as it was: a cursor moved from Go.
func cursorNamed(n *sitter.Node) []*sitter.Node {
	if n == nil {
		return nil
	}
	var out []*sitter.Node
	c := n.Walk()
	defer c.Close()
	for ok := c.GotoFirstChild(); ok; ok = c.GotoNextSibling() {
		if k := c.Node(); k.IsNamed() && k.Kind() != "comment" {
			out = append(out, k)
		}
	}
	return out
}

// TestWalkDownAndNamedAgreeWithCursor: walkDown hands each node the value
// its parent passed on, as the cursor's walk did, with the same
// subtrees skipped; Named lists the children a cursor lists.
func TestWalkDownAndNamedAgreeWithCursor(t *testing.T) {
	type seen struct {
		id       uintptr
		inherits string
	}
	down := func(walk func(*sitter.Node, string, func(*sitter.Node, string) (string, bool)), n *sitter.Node) []seen {
		var out []seen
		walk(n, "root", func(c *sitter.Node, v string) (string, bool) {
			out = append(out, seen{c.Id(), v})
			h := fnv.New32a()
			fmt.Fprintf(h, "%d-%s", c.StartByte(), c.Kind())
			return fmt.Sprintf("%s/%s", v[max(0, len(v)-40):], c.Kind()), h.Sum32()%23 != 0
		})
		return out
	}
	compared, named := 0, 0
	for name, src := range walkSources(t) {
		f := Parse(name, src)
		root := f.Tree.RootNode()
		want, got := down(cursorWalkDown[string], root), down(walkDown[string], root)
		if len(got) != len(want) {
			t.Fatalf("%s: walkDown saw %d nodes, the cursor %d", name, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: walkDown's node %d got %+v, the cursor's %+v", name, i, got[i], want[i])
			}
		}
		compared += len(want)
		cursorWalk(root, func(n *sitter.Node) bool {
			w, g := cursorNamed(n), Named(n)
			if len(w) != len(g) {
				t.Fatalf("%s: Named of a %s at %d: %d children, the cursor %d", name, n.Kind(), n.StartByte(), len(g), len(w))
			}
			for i := range w {
				if w[i].Id() != g[i].Id() || w[i].Kind() != g[i].Kind() {
					t.Fatalf("%s: Named of a %s at %d: child %d differs", name, n.Kind(), n.StartByte(), i)
				}
			}
			named += len(w)
			return true
		})
		f.Close()
	}
	if compared < 20000 || named < 20000 {
		t.Fatalf("only %d walked and %d named nodes compared", compared, named)
	}
}
