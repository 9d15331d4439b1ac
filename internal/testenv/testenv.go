// Package testenv gives tests the repository root and the real, prepared
// kernel trees. A test that needs a tree it cannot get skips on a
// developer's machine but fails in CI (CI=true), so a test that could never
// run there is not mistaken for one that passed.
package testenv

import (
	"context"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/patchctl/patchctl/internal/progress"
	"github.com/patchctl/patchctl/internal/tree"
)

// RepoRoot finds the folder holding series/kernels.yaml above the test.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "series", "kernels.yaml")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no series/kernels.yaml above the test's folder")
		}
		dir = parent
	}
}

var mu sync.Mutex

// Cache is the user's patchctl cache, where trees are prepared once.
func Cache() *tree.Cache {
	return &tree.Cache{Dir: tree.DefaultCacheDir(), Progress: progress.New(os.Stderr)}
}

// Kernel returns the pinned kernel and its pristine tree, preparing it
// (download, verify, extract: about a minute the first time) when needed.
func Kernel(t testing.TB, name string) (*tree.Kernel, string) {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	lock, err := tree.LoadLock(filepath.Join(RepoRoot(t), "series", "kernels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := lock.Find(name)
	if err != nil {
		t.Fatal(err)
	}
	if testing.Short() && !Cache().Prepared(k) {
		t.Skipf("-short: kernel %s is not prepared", name)
	}
	dir, err := Cache().Prepare(context.Background(), k)
	if err != nil {
		Unavailable(t, "kernel "+name+": "+err.Error())
	}
	return k, dir
}

// KernelIfTested is Kernel for a test that compares pinned kernels: it
// runs on the kernels under test (PATCHCTL_TEST_KERNELS, the lock's
// default without it) and on any other whose tree is already prepared,
// and skips the rest, in CI too: `make test` on a fresh machine fetches
// and extracts the default kernel's tree only, and `make test-matrix`
// runs every test on every pinned kernel.
func KernelIfTested(t testing.TB, name string) (*tree.Kernel, string) {
	t.Helper()
	lock, err := tree.LoadLock(filepath.Join(RepoRoot(t), "series", "kernels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := lock.Find(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range EndToEndKernels(t, lock) {
		if n == k.Name {
			return Kernel(t, name)
		}
	}
	mu.Lock()
	prepared := Cache().Prepared(k)
	mu.Unlock()
	if !prepared {
		t.Skipf("kernel %s is neither under test (PATCHCTL_TEST_KERNELS) nor prepared; make test-matrix runs every pinned kernel", name)
	}
	return Kernel(t, name)
}

// Unavailable skips outside CI and fails in CI.
func Unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("needed in CI but not available: %s", why)
	}
	t.Skip(why)
}

// Full reports whether the tests run in full: PATCHCTL_TEST_FULL=1,
// which `make test-matrix` sets. Without it (`make test`), a test whose
// full version costs minutes of CPU (the engine over every file of a
// tree, ...) runs a fixed, deterministic part of it that still covers
// each class it proves, asserts on that part, and says in its log what
// it left to the full run (docs/ci.md lists these tests).
func Full() bool {
	return os.Getenv("PATCHCTL_TEST_FULL") == "1"
}

// Share reports whether name is in the fixed share of one in n that a
// test runs without Full: by a hash of the name (FNV-1a), so the same
// names are chosen on every run and machine, spread across folders.
func Share(name string, n uint32) bool {
	h := fnv.New32a()
	h.Write([]byte(name))
	return n <= 1 || h.Sum32()%n == 0
}

// EndToEndKernels are the kernels the end-to-end tests run: the names in
// $PATCHCTL_TEST_KERNELS (space or comma separated; "all" for every pinned
// kernel), else the lock's default kernel. `make test` sets it to its
// TEST_KERNELS (README says which and why), `make test-matrix` to all.
func EndToEndKernels(t testing.TB, lock *tree.Lock) []string {
	t.Helper()
	v := strings.TrimSpace(os.Getenv("PATCHCTL_TEST_KERNELS"))
	if v == "" {
		return []string{lock.Default}
	}
	if v == "all" {
		return lock.Names()
	}
	var out []string
	for _, n := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
		if _, err := lock.Find(n); err != nil {
			t.Fatalf("PATCHCTL_TEST_KERNELS: %v", err)
		}
		out = append(out, n)
	}
	return out
}
