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
//   - inline_sge.go also: rule noninline-sge-virt (the reverse rule): an
//     SGE of a request posted without IB_SEND_INLINE, keyed with the PD's
//     DMA key, holds no kernel virtual address.
//   - incapsule_bounds.go: rule incapsule-bounds: wire offsets added in a
//     bound check wrap, a range end truncated into a u32 loses bits.
//   - sizeof_pointer.go: rule sizeof-pointer: sizeof of a pointer used as
//     a length or an inline or capsule size.
//   - checkpatch.go: rule checkpatch: the tree's own checkpatch.pl on every
//     generated patch.
//
// The analyses run on raw kernel C parsed by tree-sitter (no
// preprocessor; the module's own macros that touch what the rules read
// are expanded line for line first, macro.go). Each function becomes a control-flow graph (cfg.go:
// goto, loops with back edges, switch fall-through, #if arms, statement
// expressions) over which a path-sensitive dataflow runs to a fixed point
// within a budget (engine.go), on abstract values: address kinds and the
// IB_SEND_INLINE bit, with where they came from (kind.go). What a field
// holds, which opcodes requests get, which functions post their
// parameters, and summaries of the module's functions (their returns and
// what each exit path leaves in their parameters' requests) come from the
// module's files (facts.go). Every tree-sitter node kind is handled or
// skipped with a note (nodekinds.go). Grepping lines is not analysis: a
// rule reads assignments, branches and the order of statements.
package checks
