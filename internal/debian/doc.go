// Package debian is patchctl's Debian side: what a kernel pinned to a
// Debian package is (Source, and the Binary kernel built from it), the
// suites that serve it, and the packages in the cache.
//
// patchctl keeps its own apt state, one folder per suite under the cache
// (apt/<suite>/ with sources.list, lists/ and cache/), used through
// apt-get's -o options; the system's apt configuration is only read (to
// find the machine's Debian mirror), never written. Packages are fetched
// with apt-get download into debs/, kept only when their sha256 is the
// pin's, and the source tarball is extracted out of the .deb in one pass
// with its own sha256 checked. CheckPin and Repin compare a pin with what
// its suite serves now and move it there, sums computed from the download.
//
// The trees made from these packages are internal/tree's; the
// --kernel-from distro path (Debian's binary kernel, modules rebuilt
// against its headers) is the distro package below this one.
package debian
