package build

import (
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/tree"
)

// TestCcacheAcrossCaches: a compile as kbuild runs it (in the build
// folder, the sources by absolute path, debug info on) hits the result of
// the same compile in another patchctl cache at another path, with the
// settings the build gives ccache; in the former layout (work/K beside
// build/K/H) a tree of another name misses, and
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
	// The former layout: cache/work/K holds the sources, cache/build/K/H
	// is where make runs (TestCcacheWorkTreeLayout: today's).
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
		compile(obj, CcacheEnv(cache), "-I"+filepath.Join(src, "include"), filepath.Join(src, "a.c"))
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
		t.Error("a tree of another name hit in the former layout (work/K): the test no longer shows why the work tree moved beside the build folders")
	}
	// The build folder a direct subdirectory of the tree: kbuild passes
	// ../include and ../a.c, the same for any tree.
	h2 := hits()
	for _, k := range []string{testkernel.Default, "local-5025"} {
		src, _ := tree(filepath.Join(t.TempDir(), "c"+k), k)
		obj := filepath.Join(src, ".build")
		os.MkdirAll(obj, 0o755)
		compile(obj, CcacheEnv(filepath.Dir(src)), "-I../include", "../a.c")
	}
	if hits() != h2+1 {
		t.Error("compiles relative to a build folder inside the tree missed across tree names")
	}
}

// TestCcacheWorkTreeLayout: with the cache's own layout (the work tree
// WorkTreeDir, the build folder Dir), a compile as kbuild runs it hits
// the result of the same source under another kernel name in another
// cache: what lets a local tree (--tree) reuse a pinned kernel's objects.
func TestCcacheWorkTreeLayout(t *testing.T) {
	for _, tool := range []string{"ccache", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	ccdir := t.TempDir()
	t.Setenv("CCACHE_DIR", ccdir)
	t.Setenv("CCACHE_CONFIGPATH", filepath.Join(ccdir, "ccache.conf"))
	hits := func() string {
		out, err := exec.Command("ccache", "--print-stats").Output()
		if err != nil {
			t.Fatal(err)
		}
		return regexp.MustCompile(`(?m)^direct_cache_hit\t(\d+)$`).FindString(string(out))
	}
	build := func(cacheDir, name string) {
		c := &tree.Cache{Dir: cacheDir}
		k := &tree.Kernel{Name: name}
		src, obj := c.WorkTreeDir(k), Dir(c, k, "0123456789abcdef")
		os.MkdirAll(filepath.Join(src, "include"), 0o755)
		os.MkdirAll(obj, 0o755)
		os.WriteFile(filepath.Join(src, "include", "h.h"), []byte("#define V 7\n"), 0o644)
		os.WriteFile(filepath.Join(src, "a.c"), []byte("#include <h.h>\nint a(void) { return V; }\n"), 0o644)
		cmd := exec.Command("ccache", "gcc", "-g", "-c", "-o", "a.o", "-I"+filepath.Join(src, "include"), "-fmacro-prefix-map="+src+"/=", filepath.Join(src, "a.c"))
		cmd.Dir = obj
		cmd.Env = append(os.Environ(), CcacheEnv(cacheDir)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
		}
	}
	build(filepath.Join(t.TempDir(), "one"), testkernel.Default)
	before := hits()
	build(filepath.Join(t.TempDir(), "x", "two"), "local-0123abcd")
	if after := hits(); after == before {
		t.Errorf("the same source under another kernel name in another cache missed ccache (%s)", after)
	}
}

// TestCcacheLogCounts: ccache's own stats log, written with the settings
// the build gives ccache (depend mode, kbuild's -Wp,-MMD dependency
// file), counts as ReadCcacheLog reads it: a miss, then a hit of the same
// compile, and kbuild-like probes (input /dev/null, stdin) not at all.
func TestCcacheLogCounts(t *testing.T) {
	for _, tool := range []string{"ccache", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	t.Setenv("CCACHE_DIR", filepath.Join(dir, "cc"))
	t.Setenv("CCACHE_CONFIGPATH", filepath.Join(dir, "ccache.conf"))
	log := filepath.Join(dir, "ccache.log")
	if st := ReadCcacheLog(log); st == nil || *st != (CcacheStats{}) {
		t.Errorf("no log (ccache never called): %+v, want no counts", st)
	}
	os.WriteFile(filepath.Join(dir, "a.c"), []byte("int a(void) { return 7; }\n"), 0o644)
	run := func(stdin string, args ...string) {
		t.Helper()
		cmd := exec.Command("ccache", append([]string{"gcc"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(append(os.Environ(), CcacheEnv(dir)...), "CCACHE_STATSLOG="+log)
		cmd.Stdin = strings.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil && stdin == "" {
			t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
		}
	}
	compile := func() { run("", "-Wp,-MMD,.a.o.d", "-c", "-o", "a.o", "a.c") }
	compile()
	compile()
	run("", "-Werror", "-c", "-x", "c", "/dev/null", "-o", "probe.o")
	run("", "-Werror", "-c", "-x", "c", "/dev/null", "-o", "probe.o")
	run("nop\n", "-c", "-x", "assembler-with-cpp", "-o", "/dev/null", "-")
	if st := ReadCcacheLog(log); st == nil || *st != (CcacheStats{Hits: 1, Misses: 1}) {
		b, _ := os.ReadFile(log)
		t.Errorf("counts %+v, want 1 hit and 1 miss\n%s", st, b)
	}
}
