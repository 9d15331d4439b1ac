package engine

/*
#include <stdbool.h>
#include <stdint.h>

// tree-sitter's TSNode and TSTreeCursor (tree_sitter/api.h of the
// go-tree-sitter module, v0.25), the same layout: the library is linked
// into the program by go-tree-sitter, whose header is not on this
// package's include path. The pointers are uintptr_t so that Go sees no
// pointers in them (they point into C memory): cgo then has no Go
// pointers to check in each call.
typedef struct { uint32_t context[4]; uintptr_t id; uintptr_t tree; } wNode;
typedef struct { uintptr_t tree; uintptr_t id; uint32_t context[3]; } wCursor;

extern wCursor ts_tree_cursor_new(wNode);
extern void ts_tree_cursor_delete(wCursor *);
extern wNode ts_tree_cursor_current_node(const wCursor *);
extern bool ts_tree_cursor_goto_first_child(wCursor *);
extern bool ts_tree_cursor_goto_next_sibling(wCursor *);
extern bool ts_tree_cursor_goto_parent(wCursor *);
extern bool ts_node_is_named(wNode);
extern uint16_t ts_node_symbol(wNode);

// namedChildren writes n's named children (at most cap) and their
// symbols, and returns how many there are.
static int64_t namedChildren(wNode n, wNode *out, uint16_t *syms, int64_t cap) {
	wCursor c = ts_tree_cursor_new(n);
	int64_t k = 0;
	if (ts_tree_cursor_goto_first_child(&c)) {
		do {
			wNode ch = ts_tree_cursor_current_node(&c);
			if (!ts_node_is_named(ch)) {
				continue;
			}
			if (k < cap) {
				out[k] = ch;
				syms[k] = ts_node_symbol(ch);
			}
			k++;
		} while (ts_tree_cursor_goto_next_sibling(&c));
	}
	ts_tree_cursor_delete(&c);
	return k;
}

// preorder writes root's subtree in preorder: nodes[i] and ends[i], the
// index just past node i's subtree. It writes at most cap entries and
// returns how many there are (more than cap: call again with that many).
// While a node is open, ends holds its parent's index: no stack.
static int64_t preorder(wNode root, wNode *nodes, uint32_t *ends, int64_t cap) {
	wCursor c = ts_tree_cursor_new(root);
	int64_t n = 0, cur = -1;
	int64_t depth = 0;
	for (;;) {
		if (n < cap) {
			nodes[n] = ts_tree_cursor_current_node(&c);
			ends[n] = (uint32_t)cur;
		}
		cur = n++;
		if (ts_tree_cursor_goto_first_child(&c)) {
			depth++;
			continue;
		}
		// cur has no children: close it, and each ancestor that has no
		// next sibling, up to the root.
		for (;;) {
			int64_t parent = -1;
			if (cur >= 0 && cur < cap) {
				parent = (int64_t)(int32_t)ends[cur];
				ends[cur] = (uint32_t)n;
			}
			if (depth == 0) {
				ts_tree_cursor_delete(&c);
				return n;
			}
			if (ts_tree_cursor_goto_next_sibling(&c)) {
				cur = parent; // the sibling's parent, written at the top
				break;
			}
			ts_tree_cursor_goto_parent(&c);
			depth--;
			cur = parent;
		}
	}
}
*/
import "C"

import (
	"unsafe"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// wNodeSize is the size of C's wNode, which must be tree-sitter's TSNode
// and sitter.Node (TestWalkLayout).
const wNodeSize = C.sizeof_wNode

// rawNode has sitter.Node's layout (one C TSNode) without pointers.
type rawNode struct {
	context  [4]uint32
	id, tree uintptr
}

// Walk calls fn on n and its descendants, in order; fn returns false to
// skip a node's children. The subtree is listed by a tree cursor in C
// (each move O(1): Node.Child(i) walks the siblings before i, so a loop
// over Child would make a block of n statements cost n² and a 10k-line
// function minutes), in one call, and visited in Go: a cursor moved from
// Go costs three calls into C per node, more than most rules' own work
// on it. Every node fn gets is its own value (fn may keep it).
func Walk(n *sitter.Node, fn func(*sitter.Node) bool) {
	if n == nil {
		return
	}
	nodes, ends := preorder(n)
	visitListed(nodes, ends, fn)
}

// visitListed calls fn on a listed subtree's nodes in order, skipping the
// children of those fn returns false for.
func visitListed(nodes []rawNode, ends []uint32, fn func(*sitter.Node) bool) {
	for i := 0; i < len(nodes); {
		if fn((*sitter.Node)(unsafe.Pointer(&nodes[i]))) {
			i++
		} else {
			i = max(int(ends[i]), i+1) // always forward
		}
	}
}

// preorder lists n's subtree (C.preorder).
func preorder(n *sitter.Node) ([]rawNode, []uint32) {
	// About one node in four bytes of kernel C (2 million nodes in 7.7 MB
	// of the default scope): a guess that is seldom short.
	start, end := n.StartByte(), n.EndByte()
	if end < start || end-start > 1<<26 {
		end = start // no guess from sizes tree-sitter should not give
	}
	return preorderSized(n, int(end-start)/2+16)
}

// preorderSized is preorder with a first guess of the subtree's size.
func preorderSized(n *sitter.Node, size int) ([]rawNode, []uint32) {
	root := *(*C.wNode)(unsafe.Pointer(n))
	size = max(size, 1)
	for {
		nodes, ends := make([]rawNode, size), make([]uint32, size)
		got := int(C.preorder(root, (*C.wNode)(unsafe.Pointer(&nodes[0])), (*C.uint32_t)(unsafe.Pointer(&ends[0])), C.int64_t(size)))
		if got <= size {
			return nodes[:got:got], ends[:got:got]
		}
		size = got
	}
}

// Named is n's named children but comments, in order (listed in one call
// into C, as Walk). A comment is an extra tree-sitter puts anywhere:
// between a call's arguments it would shift their positions.
func Named(n *sitter.Node) []*sitter.Node {
	if n == nil {
		return nil
	}
	root := *(*C.wNode)(unsafe.Pointer(n))
	size := 8
	for {
		nodes, syms := make([]rawNode, size), make([]uint16, size)
		got := int(C.namedChildren(root, (*C.wNode)(unsafe.Pointer(&nodes[0])), (*C.uint16_t)(unsafe.Pointer(&syms[0])), C.int64_t(size)))
		if got > size {
			size = got
			continue
		}
		var out []*sitter.Node
		k := kinds()
		for i := range got {
			c := (*sitter.Node)(unsafe.Pointer(&nodes[i]))
			kind := ""
			if int(syms[i]) < len(k) {
				kind = k[syms[i]]
			} else {
				kind = c.Kind()
			}
			if kind != "comment" {
				out = append(out, c)
			}
		}
		return out
	}
}
