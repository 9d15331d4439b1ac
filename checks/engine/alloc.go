package engine

/*
#include <stddef.h>

// ts_set_allocator is tree-sitter's (compiled into go-tree-sitter): NULLs
// select its default, the C library's malloc family.
extern void ts_set_allocator(void *(*)(size_t), void *(*)(size_t, size_t),
	void *(*)(void *, size_t), void (*)(void *));

static void patchctl_ts_c_allocator(void) { ts_set_allocator(NULL, NULL, NULL, NULL); }
*/
import "C"

// go-tree-sitter routes every allocation of the parser and its trees
// through exported Go functions that call C.malloc back: a cgo callback
// per node allocated, a tenth of a whole-tree check's CPU. Those Go
// functions only ever reach the C library's allocator, so tree-sitter is
// pointed at it directly; memory allocated before the switch came from
// the same malloc and is freed by the same free.
func init() {
	C.patchctl_ts_c_allocator()
}
