package build

import (
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestCcacheAcrossCaches: a compile as kbuild runs it (in the build
// folder, the sources by absolute path, debug info on) hits the result of
// the same compile in another patchctl cache at another path, with the
// settings the build gives ccache; a tree of another name misses, and
// compiles that name the sources relative to a build folder inside the
// tree (kbuild's srctree "..") hit whatever the tree's name.
func TestCcacheAcrossCaches(t *testing.T) {
	for _, tool := range []string{"ccache", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	ccdir := t.TempDir()
	hits := func() int {
		out, err := exec.Command("ccache", "--print-stats").Output()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, k := range []string{"direct_cache_hit", "preprocessed_cache_hit"} {
			m := regexp.MustCompile(`(?m)^` + k + `\t(\d+)$`).FindSubmatch(out)
			if m != nil {
				v, _ := strconv.Atoi(string(m[1]))
				n += v
			}
		}
		return n
	}
	t.Setenv("CCACHE_DIR", ccdir)
	t.Setenv("CCACHE_CONFIGPATH", filepath.Join(ccdir, "ccache.conf"))
	// cache/work/K holds the sources, cache/build/K/H is where make runs.
	tree := func(cache, k string) (src, obj string) {
		src = filepath.Join(cache, "work", k)
		obj = filepath.Join(cache, "build", k, "0123456789ab")
		os.MkdirAll(filepath.Join(src, "include"), 0o755)
		os.MkdirAll(obj, 0o755)
		os.WriteFile(filepath.Join(src, "include", "h.h"), []byte("#define V 7\n"), 0o644)
		os.WriteFile(filepath.Join(src, "a.c"), []byte("#include <h.h>\nint a(void) { return V; }\n"), 0o644)
		return src, obj
	}
	compile := func(dir string, env []string, args ...string) {
		t.Helper()
		cmd := exec.Command("ccache", append([]string{"gcc", "-g", "-c", "-o", "a.o"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
		}
	}
	kbuild := func(cache, k string) {
		src, obj := tree(cache, k)
		compile(obj, ccacheEnv(cache), "-I"+filepath.Join(src, "include"), filepath.Join(src, "a.c"))
	}
	a, b := filepath.Join(t.TempDir(), "one"), filepath.Join(t.TempDir(), "x", "another")
	kbuild(a, testkernel.Default)
	h0 := hits()
	kbuild(b, testkernel.Default)
	if hits() != h0+1 {
		t.Error("the same compile in a cache at another path missed ccache")
	}
	h1 := hits()
	kbuild(b, "local-5025")
	if hits() != h1 {
		t.Error("a tree of another name hit: the test no longer shows the limit docs/build.md states")
	}
	// The build folder a direct subdirectory of the tree: kbuild passes
	// ../include and ../a.c, the same for any tree.
	h2 := hits()
	for _, k := range []string{testkernel.Default, "local-5025"} {
		src, _ := tree(filepath.Join(t.TempDir(), "c"+k), k)
		obj := filepath.Join(src, ".build")
		os.MkdirAll(obj, 0o755)
		compile(obj, ccacheEnv(filepath.Dir(src)), "-I../include", "../a.c")
	}
	if hits() != h2+1 {
		t.Error("compiles relative to a build folder inside the tree missed across tree names")
	}
}
