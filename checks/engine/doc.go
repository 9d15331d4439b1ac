// Package engine is the dataflow engine under patchctl's RDMA checks: it
// reads kernel C (raw, with the module's macros expanded line for line,
// macro.go, or the preprocessed translation unit, preprocessed.go), builds
// one control-flow graph per function (cfg.go: goto, loops with back
// edges, switch fall-through, #if arms, statement expressions), and runs a
// path-sensitive dataflow to a fixed point within a budget (engine.go) on
// abstract values: address kinds and the IB_SEND_INLINE bit, with where
// they came from (kind.go). What a field holds, which opcodes requests
// get, which functions post their parameters, and summaries of the
// module's functions come from the module's files (facts.go), linked
// across modules of the tree (link.go); struct layouts are computed from
// the sources (layoutcalc.go).
//
// The engine knows no rule. It reports what it sees through the
// interpreter's hooks (Interp.OnCheck at posts and exits, OnSite at
// statements that set IB_SEND_INLINE, OnGrant at stores of a QP's granted
// caps, OnPost), and the rules in package checks judge those states. This
// package must never import package checks (TestEngineImportsNoRules).
package engine
