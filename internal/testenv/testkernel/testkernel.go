// Package testkernel names, for tests, the default pinned kernel: the
// one series/kernels.yaml marks default (its source of truth;
// TestDefaultIsTheLocks keeps the two equal), which make run builds and
// the tests' prepared trees and builds are made of. It imports nothing,
// so that every package's tests can use it (internal/tree's too).
//
// A test that means "the default kernel" says testkernel.Default; one
// about a version's own facts (a layout, a recorded trace, the list of
// every pin) writes the version and says so in a comment holding
// "<version> itself" on its line or the line above (TestNoBareDefault).
package testkernel

// Default is the default pinned kernel (series/kernels.yaml's default).
const Default = "6.12"
