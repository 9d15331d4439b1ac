// Package checks holds patchctl's static checks for RDMA inline sends, one
// analyzer per file, each with a doc comment that explains its rule:
//
//   - inline_sge.go: rule inline-sge-addr (and inline-on-registration):
//     every SGE of a work request posted with IB_SEND_INLINE holds a kernel
//     virtual address on every path that reaches the post.
//   - inline_size.go: rule inline-size: the inline size a QP asks for covers
//     what is posted inline, the guard compares with the size granted after
//     QP creation, and a failed creation records 0; plus the table of what
//     each provider in the tree grants.
//   - checkpatch.go: rule checkpatch: the tree's own checkpatch.pl on every
//     generated patch.
//
// The analyses run on raw kernel C parsed by tree-sitter (no preprocessor):
// files are prefiltered by their bytes, functions are interpreted path by
// path (engine.go), and what a field holds is learned from every assignment
// to it in the analysed files (facts.go). Grepping lines is not analysis:
// a rule reads assignments, branches and the order of statements.
package checks
