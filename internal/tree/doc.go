// Package tree prepares pinned kernel source trees and the work trees that
// patches are applied to.
//
// A lock (series/kernels.yaml, see LoadLock) pins each target kernel to an
// exact source: a Debian linux-source package version with the sha256 of
// the .deb and of the source tarball inside it (fetched and extracted by
// internal/debian, reached as Cache.Debian), or a git repository with a
// tag or commit (fetched with go-git, shallow, commit verified); a local
// tree (--tree, see Local) is used in place. Prepare puts a pristine tree
// under the cache dir, checked and complete or not there at all, with a
// manifest of every file that Verify checks stages' reads against, and
// never touches it again. A work tree is a hardlink farm of the pristine
// tree: cheap to make and to reset. Files in it are only ever replaced by
// rename, never written in place, so the pristine tree cannot change
// through a link; changes are journaled so a failure or a kill mid-way is
// rolled back to the state before. The work tree lives beside the
// kernel's build folders (build/K/src), so compiles name the sources by
// the same relative path for any kernel name and cache (ccache hits for a
// copy of a tree). A checkpatch kit (CheckpatchFiles) is the few files of
// a pinned tree that scripts/checkpatch.pl reads, for a kernel whose
// checkpatch judges others' patches without its whole tree. The cache's
// locks (Cache.Lock) are internal/cachelock's.
package tree
