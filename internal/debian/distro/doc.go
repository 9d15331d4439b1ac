// Package distro is the distro-kernel path (--kernel-from distro): the
// kernels under test are Debian's own binary kernel for the pinned source
// version (baseline), and the same kernel with the modules the series
// touches rebuilt from the patched work tree against Debian's matching
// headers (patched).
//
// The packages (linux-image-*-unsigned, linux-headers-*, -common,
// linux-kbuild-*) are pinned by sha256 in series/kernels.yaml next to the
// source package, fetched with apt-get download (internal/debian) and extracted
// into the cache, never into the system: the headers' Makefile, which
// includes an absolute /usr/src/... path, is relocated to the extracted
// copy. Modules are built with `make -C <headers> M=<dir>` and a Kbuild
// generated from the directory's own Makefile, keeping only the touched
// modules. A touched file that the distro config builds in (=y), or does
// not build at all, is refused with the file and the symbol named: a
// module build cannot test it. So is a binary kernel whose Debian version
// is not the pinned source's.
//
// Boot needs the modules of the test (guestconf.ConfigModules) and their
// dependency closure, read from each module's .modinfo depends= with
// debug/elf (no kmod on the host or the guest); Debian's are .ko.xz and
// are decompressed with the xz tool through internal/command.
//
// Layout of the kprobe evidence: Debian ships DWARF only in the -dbg
// package (hundreds of MB); the nvme-rdma module built here with the
// distro's own CONFIG_DEBUG_INFO flags carries struct ib_send_wr and the
// verbs enums in its DWARF, from the very headers the distro kernel was
// built with. Both variants build it (the baseline from the pristine
// tree, not loaded) and boot reads the offsets from it.
package distro
