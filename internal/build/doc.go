// Package build configures and builds kernels: tinyconfig plus the
// repository's kconfig/ fragments, verified symbol by symbol after
// olddefconfig, built out of tree (O=) in folders per kernel, variant and
// configuration that are kept between runs.
//
// Each variant has its own folder: the baseline builds in <hash> from
// the pristine work tree only, once per (source, configuration), and is
// never rebuilt; the patched variant builds in <hash>.patched, made when
// absent as a copy of the baseline's objects (times kept; the few command
// records objtool writes with absolute paths rewritten to the copy's
// path) and incremental from then on: a series, another series or an
// edit recompiles there exactly the files whose content changed. Each
// variant's artifacts are snapshotted under variants/<variant>-<state>/
// (the image). Objects of files the series touches are built explicitly
// (compile-test), so a patch to a driver the boot does not run is still
// compiled. The configuration has no CONFIG_DEBUG_INFO; module objects
// get DWARF from CFLAGS_MODULE=-g (makeFlags), which is what the boot's
// layouts and the checks read.
package build
