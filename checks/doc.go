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
// The rules are judges over the dataflow engine of package
// checks/engine (CFG, abstract values, function summaries, cross-module
// linking), which knows no rule: each rule reads the states the engine
// hands to its hooks, or walks the parsed functions the engine loaded.
// Output formats (text, JSON, SARIF) live in checks/findings. Grepping
// lines is not analysis: a rule reads assignments, branches and the
// order of statements.
package checks
