// Package kconfig reads, merges and verifies kernel configurations.
//
// Fragments are small .config files (kconfig/*.config in the repository).
// Merge has the semantics of the kernel's scripts/kconfig/merge_config.sh:
// start from a base (the output of `make tinyconfig`), apply fragments in
// order, a later value wins. After `make olddefconfig` resolves the
// dependencies, Verify checks every requested symbol against the final
// .config: Kconfig silently drops a symbol whose dependencies are not met,
// and Verify names each one with its "depends on" and the symbols in it
// that are off, read from the tree's Kconfig files.
package kconfig
