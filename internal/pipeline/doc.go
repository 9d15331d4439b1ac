// Package pipeline runs every stage for each pinned kernel: prepare the
// tree, apply the series (dispositions must match the manifest and the
// regenerated patches must match series/<kernel>/), check, build baseline
// and patched, boot both over every transport, compare, verdict.
//
// Each stage has an input hash (the tree's source key and the content of
// what it reads: manifest, patches, fragments, applied files, the kernel
// image, the guest agent's source, the patchctl binary for the checks).
// A stage whose input hash is the one recorded from its last successful
// run is reused, so a second run after a one-line edit to a patch redoes
// only what that edit reaches: apply, check, the patched build
// (incremental) and the patched boot.
package pipeline
