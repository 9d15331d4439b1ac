// Package build configures and builds kernels: tinyconfig plus the
// repository's kconfig/ fragments, verified symbol by symbol after
// olddefconfig, built out of tree (O=) in a folder per kernel, variant and
// configuration that is kept between runs.
//
// Both variants build from the same work tree path, so their build
// folders are interchangeable: baseline builds from the work tree reset to
// pristine, patched from the work tree with the series. A patched build
// that has no folder yet starts from a copy of the baseline's, and make
// redoes only what the series touched. Objects of files the series
// touches are built explicitly (compile-test), so a patch to a driver the
// boot does not run is still compiled.
package build
