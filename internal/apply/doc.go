// Package apply puts patches onto a kernel tree the way a maintainer's
// tools do and says what happened to each.
//
// go-gitdiff parses and splices; it applies strictly, so locate.go adds
// what GNU patch does on top: search for each hunk near its stated line
// (carrying the offset of the hunk before), and when no exact match is
// found, drop up to two outer context lines (fuzz), never an inner one.
// Each patch gets a disposition computed from the tree: applies (clean,
// with offset, with fuzz), already applied (the reverse applies), already
// upstream (most of its added lines are in the tree, perhaps moved to other
// files: upstream.go says where), or conflict (with the closest place the
// failing hunk nearly matched). A series is applied in memory first and
// reaches the work tree whole or not at all (see package tree).
//
// regen.go writes, for every patch that applies, the patch regenerated for
// that kernel: exact line numbers, the file's own context, correct index
// lines, so git am applies it to the pristine tree with no offset or fuzz.
package apply
