// Package build configures and builds kernels: tinyconfig plus the
// repository's kconfig/ fragments, verified symbol by symbol after
// olddefconfig, built out of tree (O=) in a folder per kernel, variant and
// configuration that is kept between runs.
//
// Both variants build in one folder per kernel and configuration, from
// the same work tree path: baseline from the work tree reset to pristine,
// patched from the work tree with the series. Switching variant recompiles
// only what the series changes; each variant's artifacts are snapshotted
// under variants/<variant>/. (A copied build folder would not do: kbuild
// and tools such as 6.1's objtool record absolute paths, so a copy
// rebuilds everything.) Objects of files the series
// touches are built explicitly (compile-test), so a patch to a driver the
// boot does not run is still compiled.
package build
