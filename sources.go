// Package patchctl holds patchctl's own sources, embedded in every program
// that runs a stage: the Go and assembly files of every package (tests
// and their data included), the files those packages embed, and go.mod
// and go.sum. A stage's key names the code that made its output by these
// contents (internal/stagecache, CodeKey), so that patchctl and the test
// binary of a command, built from the same sources, share stage records,
// and a commit that changes no source (documentation, the Makefile)
// changes no key, where the program's own bytes carry the commit.
//
// sources_test.go checks that the patterns below match every file a build
// of a package of the module reads.
package patchctl

import "embed"

// Sources are the module's sources as the running program was built
// from them.
//
//go:embed go.mod go.sum *.go
//go:embed cmd/*/*.go checks/*.go checks/*/*.go qemu/*/*.go
//go:embed internal/*/*.go internal/*/*/*.go internal/*/*.s
//go:embed qemu/harness/dma-faithful/*.patch qemu/harness/incapsule-wrap/*.patch
//go:embed internal/report/reportcheck/junit.xsd internal/report/reportcheck/kcidb-v5.3.schema.json
var Sources embed.FS
