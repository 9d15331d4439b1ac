package tree

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
)

const lockEntry = `  - name: %q
    debian:
      package: linux-source-6.12
      version: 6.12.117-1~deb12u1
      deb_sha256: e849faf31ca3555757f3a8877cb01af92122f744f75d1f3102734651c4e14703
      tarball: usr/src/linux-source-6.12.tar.xz
      tarball_sha256: 585a4a074597aefa2b1a68ada83a3184ba351c127544dea80618bbcceaa3961f
`

func writeLock(t testing.TB, body string) string {
	p := filepath.Join(t.TempDir(), "kernels.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLockRefusesPathNames: names that would leave the cache folder are
// refused when the lock is read, with the file and line.
func TestLockRefusesPathNames(t *testing.T) {
	for _, name := range []string{"..", ".", "", "a/b", "../../etc", "x\x00y", `a\b`, "tab\there", strings.Repeat("k", 101)} {
		// 6.12 itself: the entry's own tarball name
		p := writeLock(t, "kernels:\n"+fmt.Sprintf(lockEntry, "6.12")+fmt.Sprintf(lockEntry, name))
		_, err := LoadLock(p)
		if !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), p+":9:") {
			t.Errorf("kernel name %q: %v", name, err)
		}
	}
	// A typo'd field is not ignored.
	// 6.12 itself: the entry's own tarball name
	p := writeLock(t, "kernels:\n"+fmt.Sprintf(lockEntry, "6.12")+"    expcet: x\n")
	if _, err := LoadLock(p); !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "expcet") || !strings.Contains(err.Error(), "line 9") {
		t.Errorf("unknown field: %v", err)
	}
	// 6.12 itself: the entry's own tarball name
	p = writeLock(t, "kernels:\n"+strings.Replace(fmt.Sprintf(lockEntry, "6.12"), "usr/src/linux-source-6.12.tar.xz", "../../x.tar.xz", 1))
	if _, err := LoadLock(p); !errors.Is(err, errs.ErrInput) {
		t.Errorf("a tarball path outside the package: %v", err)
	}
}

// TestNamesStayInCache feeds generated kernel names (unicode, dots,
// separators, empty) through the lock and every path the cache makes of
// a name: a name is accepted only when every such path stays inside the
// cache, below its own folder.
func TestNamesStayInCache(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	t.Logf("seed 1")
	alphabet := []string{".", "..", "/", "\\", "a", "Z", "6", "-", "_", " ", "é", "修", "\x00", "\n", "~", "$", "*"}
	// 6.12 itself: a name that is a version
	names := []string{"..", ".", "", "/", "6.12", "x/..", "..."}
	for i := 0; i < 2000; i++ {
		var b strings.Builder
		for j := rng.Intn(6); j >= 0; j-- {
			b.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		names = append(names, b.String())
	}
	cache := &Cache{Dir: t.TempDir()}
	for _, n := range names {
		checkName(t, cache, n)
	}
}

func checkName(t *testing.T, cache *Cache, name string) {
	t.Helper()
	p := writeLock(t, "kernels:\n"+fmt.Sprintf(lockEntry, name))
	l, err := LoadLock(p)
	if err != nil {
		return
	}
	k := &l.Kernels[0]
	// Each path is the kernel's name under its folder of the cache (the
	// work tree: build/<name>/src).
	for path, depth := range map[string]int{cache.PristineDir(k): 1, cache.WorkTreeDir(k): 2, cache.markerPath(k): 1, cache.LockPath("work-" + k.Name): 1} {
		rel, err := filepath.Rel(cache.Dir, path)
		if err != nil || strings.HasPrefix(rel, "..") || strings.Count(rel, string(filepath.Separator)) != depth {
			t.Errorf("kernel name %q makes %s, outside its place in the cache", name, path)
		}
	}
}

func FuzzKernelName(f *testing.F) {
	// 6.12 itself: a name that is a version
	for _, s := range []string{"..", ".", "", "6.12", "a/b", "修正"} {
		f.Add(s)
	}
	cache := &Cache{Dir: f.TempDir()}
	f.Fuzz(func(t *testing.T, name string) { checkName(t, cache, name) })
}
