// Package kbuild gives tests real kernel builds through patchctl's build stage.
package kbuild

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/vocab"
)

var mu sync.Mutex

// Build builds (incrementally) kernel name's variant with the default
// fragments, as patchctl build does. Missing host tools skip outside CI
// and fail in CI.
func Build(t testing.TB, name, variant string, edit ...func(*build.Options)) *build.Metadata {
	t.Helper()
	if err := build.CheckHostTools(); err != nil {
		testenv.Unavailable(t, err.Error())
	}
	k, pristine := testenv.Kernel(t, name)
	if testing.Short() {
		t.Skip("-short: no kernel builds")
	}
	mu.Lock()
	defer mu.Unlock()
	c := testenv.Cache()
	root := testenv.RepoRoot(t)
	out, err := apply.Run(context.Background(), apply.In{Root: root, Kernel: k, Pristine: pristine})
	if err != nil {
		t.Fatalf("applying %s: %v", name, err)
	}
	o := build.Options{Root: root, Cache: c, Kernel: k, Apply: out, Variant: variant, Progress: c.Progress}
	for _, e := range edit {
		e(&o)
	}
	md, err := build.Build(context.Background(), o)
	if err != nil {
		if errors.Is(err, errs.ErrEnv) && build.CheckHostTools() != nil {
			testenv.Unavailable(t, err.Error())
		}
		t.Fatalf("building %s %s: %v", name, variant, err)
	}
	return md
}

// Exclusive keeps other test processes from building kernel name until
// the test ends (for tests that need several builds in a row to see the
// same work tree).
func Exclusive(t testing.TB, name string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no kernel builds")
	}
	unlock, err := testenv.Cache().Lock(context.Background(), "test-"+name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
}

// HoldPatched puts kernel name's work tree into its patched state and
// holds it until the test ends, so no build or apply of another test
// process changes the files the test reads; it returns the tree's folder.
// (A build's SourceDir is that work tree, in whatever state the last
// stage to hold it left.)
func HoldPatched(t testing.TB, name string) string {
	t.Helper()
	k, pristine := testenv.Kernel(t, name)
	if testing.Short() {
		t.Skip("-short: no kernel trees")
	}
	out, err := apply.Run(context.Background(), apply.In{Root: testenv.RepoRoot(t), Kernel: k, Pristine: pristine})
	if err != nil {
		t.Fatalf("applying %s: %v", name, err)
	}
	wt, release, err := testenv.Cache().HoldWorkTree(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	if err := apply.Checkout(wt, out, vocab.Patched); err != nil {
		t.Fatal(err)
	}
	return wt.Dir
}
