package build

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/tree"
)

// ccacheDir is the folder TestCcacheSameSourceAtAnotherPath compiles
// twice: fs/proc/, 57 compiles in defconfig of small files, the same kind
// of kbuild command lines as fs/ext4/'s 63 of large ones, which it
// compiled before (the whole test: 189 CPU-s against 219; the rest is
// defconfig and prepare, twice); ccacheObj is one of its objects, which
// must not land in the source tree.
const ccacheDir, ccacheObj = "fs/proc", "fs/proc/base.o"

// TestCcacheSameSourceAtAnotherPath: the same source in two caches at
// other paths, under other kernel names (a pinned kernel's work tree, then
// a local tree's: what `try --tree` builds), built the way Build runs
// make (ccache's base_dir the cache, hash_dir off, debug info on): the
// second build's compiles hit ccache (a private CCACHE_DIR) nearly all,
// and the source tree is left as it was. Non-short: kbuild's prepare and
// ccacheDir of the prepared default kernel's tree, twice.
func TestCcacheSameSourceAtAnotherPath(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds part of a kernel twice")
	}
	if !testenv.Full() {
		// make test proves a copy of a tree end to end instead: try
		// --tree's local tree (the pinned tree at another path) starts
		// its build folder as a copy of the pinned one's (seedLocal),
		// and kbuild's records there name the local tree (cmd/patchctl
		// TestTryTreeAndGit). ccache across paths, for a tree that
		// cannot be seeded (another Makefile, say), with its private
		// ccache and two kbuild configurations and prepares (about 110
		// CPU-s), runs in make test-matrix (docs/ci.md).
		t.Skip("make test: a copy of a tree is proved by TestTryTreeAndGit (seeded); PATCHCTL_TEST_FULL=1 runs this one")
	}
	for _, tool := range []string{"ccache", "gcc", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Unavailable(t, tool+" not installed")
		}
	}
	_, pristine := testenv.Kernel(t, testkernel.Default)
	ccdir := t.TempDir()
	t.Setenv("CCACHE_DIR", ccdir)
	t.Setenv("CCACHE_CONFIGPATH", filepath.Join(ccdir, "ccache.conf"))
	ccache := func(args ...string) string {
		out, err := exec.Command("ccache", args...).Output()
		if err != nil {
			t.Fatalf("ccache %v: %v", args, err)
		}
		return string(out)
	}
	stat := func(out, k string) int {
		m := regexp.MustCompile(`(?m)^` + k + `\t(\d+)$`).FindStringSubmatch(out)
		if m == nil {
			return 0
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	var built []string // the caches built so far
	build := func(cacheDir, name string) (hits, misses int) {
		t.Helper()
		c := &tree.Cache{Dir: cacheDir}
		k := &tree.Kernel{Name: name}
		src := c.WorkTreeDir(k)
		if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
			t.Fatal(err)
		}
		// A hardlink copy, as patchctl's work trees are: kbuild with O=
		// writes nothing into the source.
		if _, err := exec.Command("cp", "-al", pristine, src).CombinedOutput(); err != nil {
			if out, err := exec.Command("cp", "-a", pristine, src).CombinedOutput(); err != nil {
				t.Fatalf("copying the tree: %v\n%s", err, out)
			}
		}
		obj := filepath.Join(c.Dir, "build", name, "0123456789ab")
		if err := os.MkdirAll(obj, 0o755); err != nil {
			t.Fatal(err)
		}
		m := &maker{src: src, dir: obj, jobs: 2, ccache: true, cacheDir: c.Dir, log: io.Discard}
		ctx := context.Background()
		if _, err := m.make(ctx, "defconfig"); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(filepath.Join(obj, ".config"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=y\n")
		f.Close()
		if _, err := m.make(ctx, "olddefconfig"); err != nil {
			t.Fatal(err)
		}
		if _, err := m.make(ctx, "prepare"); err != nil {
			t.Fatal(err)
		}
		ccache("--zero-stats")
		start := time.Now()
		if _, err := m.make(ctx, ccacheDir+"/"); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s/ built in %s", name, ccacheDir, time.Since(start).Round(100*time.Millisecond))
		out := ccache("--print-stats")
		for _, p := range []string{".config", "include/generated", ccacheObj} {
			if _, err := os.Lstat(filepath.Join(src, p)); err == nil {
				t.Errorf("the build wrote %s into the source tree %s", p, src)
			}
		}
		// kbuild's record of what the object depends on (fixdep's
		// reading of the compiler's dependency file, which a hit
		// restores from the cache) names this build's sources: an
		// edit of them, not of the tree that filled the cache,
		// rebuilds the object.
		cmdFile := filepath.Join(obj, filepath.Dir(ccacheObj), "."+filepath.Base(ccacheObj)+".cmd")
		rec, err := os.ReadFile(cmdFile)
		if err != nil {
			t.Fatal(err)
		}
		for _, other := range built {
			if strings.Contains(string(rec), other) {
				t.Errorf("%s names %s, the tree that filled the cache", cmdFile, other)
			}
		}
		if !strings.Contains(string(rec), "include/linux/") {
			t.Errorf("%s lists no kernel header: kbuild would not rebuild %s after a header edit", cmdFile, ccacheObj)
		}
		built = append(built, cacheDir)
		return stat(out, "direct_cache_hit") + stat(out, "preprocessed_cache_hit"), stat(out, "cache_miss")
	}
	h1, m1 := build(filepath.Join(t.TempDir(), "cache"), testkernel.Default)
	h2, m2 := build(filepath.Join(t.TempDir(), "x", "another-cache"), "local-0123abcd")
	t.Logf("%s/: first tree %d hits %d misses; the same source at another path %d hits %d misses", ccacheDir, h1, m1, h2, m2)
	if h1+m1 < 20 {
		t.Fatalf("the first build compiled %d files: the target no longer exercises ccache", h1+m1)
	}
	if rate := float64(h2) / float64(h2+m2); h2+m2 < 20 || rate < 0.95 {
		t.Errorf("the same source at another path: %d hits, %d misses (%.0f %%), want >= 95 %%", h2, m2, 100*rate)
	}
}
