package build

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/cachelock"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/tree"
)

// seedLocalFixture is a cache with a pinned kernel (9.9.117, a made-up one) prepared
// and its baseline folder of configuration hash built: two objects whose
// records list the headers they read, a generated header whose record
// has no such list, a module's .ko; and the files of the pinned tree.
type seedLocalFixture struct {
	cache, pristine, folder, pinnedSrc string
}

const (
	seedKey  = "debian linux-source-9.9=9.9.117-1"
	seedHash = "abcdef012345"
)

func newSeedLocalFixture(t *testing.T) *seedLocalFixture {
	t.Helper()
	f := &seedLocalFixture{cache: t.TempDir()}
	f.pristine = filepath.Join(f.cache, "trees", "9.9")
	f.pinnedSrc = filepath.Join(f.cache, "build", "9.9", "src")
	f.folder = filepath.Join(f.cache, "build", "9.9", seedHash)
	old := time.Now().Add(-48 * time.Hour)
	for p, s := range map[string]string{
		"Makefile":                               "VERSION = 9\nPATCHLEVEL = 9\nSUBLEVEL = 117\nEXTRAVERSION =\n",
		"init/Kconfig":                           "config X\n\tbool\n",
		"include/linux/a.h":                      "#define A 1\n",
		"include/linux/b.h":                      "#define B 1\n",
		"kernel/fork.c":                          "#include <linux/a.h>\n",
		"kernel/other.c":                         "#include <linux/b.h>\n",
		"arch/x86/entry/syscalls/syscall_64.tbl": "0 common read sys_read\n",
		"Documentation/index.rst":                "Docs\n",
	} {
		writeAt(t, filepath.Join(f.pristine, p), s, old)
	}
	os.Symlink("a.h", filepath.Join(f.pristine, "include/linux/a-link.h"))
	writeAt(t, filepath.Join(f.cache, "trees", "9.9.prepared"), seedKey+"\n", old)
	src := f.pinnedSrc
	rec := func(target string, deps ...string) string {
		s := "savedcmd_" + target + " := gcc -I" + src + "/include -c -o " + target + "\n\n"
		if len(deps) > 0 {
			s += "source_" + target + " := " + deps[0] + "\n\ndeps_" + target + " := \\\n"
			for _, d := range deps[1:] {
				s += "  " + d + " \\\n"
			}
			s += "\n" + target + ": $(deps_" + target + ")\n\n$(deps_" + target + "):\n"
		}
		return s
	}
	for p, s := range map[string]string{
		".patchctl-kernel":           seedKey + "\n",
		".config":                    "CONFIG_X=y\n",
		"kernel/.fork.o.cmd":         rec("kernel/fork.o", src+"/kernel/fork.c", "../src/include/linux/./a.h", "$(wildcard include/config/X)"),
		"kernel/fork.o":              "fork",
		"kernel/.other.o.cmd":        rec("kernel/other.o", "../src/kernel/other.c", "../src/include/linux/b.h"),
		"kernel/other.o":             "other",
		"tools/objtool/.objtool.cmd": "savedcmd := " + f.folder + "/tools/objtool/objtool\n",
		"arch/x86/include/generated/asm/.syscalls_64.h.cmd": "savedcmd_arch/x86/include/generated/asm/syscalls_64.h := sh " + src + "/scripts/syscalltbl.sh " + src + "/arch/x86/entry/syscalls/syscall_64.tbl arch/x86/include/generated/asm/syscalls_64.h\n",
		"arch/x86/include/generated/asm/syscalls_64.h":      "table",
		"drivers/nvme/host/nvme-rdma.ko":                    "ko",
	} {
		writeAt(t, filepath.Join(f.folder, p), s, old)
	}
	os.Symlink(src, filepath.Join(f.folder, "source"))
	if err := fsutil.WriteJSON(filepath.Join(f.folder, ".patchctl-config.json"), configState{Hash: seedHash, Fragments: []string{"base"}}); err != nil {
		t.Fatal(err)
	}
	if err := fsutil.WriteJSON(sourcesPath(f.folder), sources{Complete: true, Files: map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	return f
}

func writeAt(t *testing.T, p, s string, at time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
}

// local makes a local tree named name of hard links to the pinned tree's
// files, then edit changes it; it returns the kernel, its work tree and
// the build folder a build of it would use.
func (f *seedLocalFixture) local(t *testing.T, name string, edit func(dir string)) (*tree.Kernel, *tree.WorkTree, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("cp", "-al", f.pristine, dir).CombinedOutput(); err != nil {
		t.Fatalf("cp -al: %v\n%s", err, out)
	}
	if edit != nil {
		edit(dir)
	}
	k := &tree.Kernel{Name: "local-" + name, Local: &tree.LocalSource{Dir: dir, Release: "9.9.117", Content: name}}
	if rel, _, err := tree.MakefileRelease(dir); err == nil {
		k.Local.Release = rel
	}
	wt := &tree.WorkTree{Dir: filepath.Join(f.cache, "build", k.Name, "src"), Pristine: dir}
	return k, wt, filepath.Join(f.cache, "build", k.Name, seedHash)
}

// TestSeedLocal: a local tree's new build folder is a copy of a pinned
// kernel's folder of the same configuration and release, its records
// naming the local tree, with every target whose recorded inputs differ
// removed; and no folder at all when the records cannot say what a
// difference reaches, the release differs, the pinned folder is
// unfinished or its kernel's work lock is held.
func TestSeedLocal(t *testing.T) {
	f := newSeedLocalFixture(t)
	old := time.Now().Add(-72 * time.Hour) // older than the pinned objects
	seed := func(t *testing.T, k *tree.Kernel, wt *tree.WorkTree, dir string) {
		t.Helper()
		if err := seedLocal(context.Background(), &tree.Cache{Dir: f.cache}, k, wt, dir, nil); err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
	}
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }

	t.Run("a copy and a note", func(t *testing.T) {
		k, wt, dir := f.local(t, "copy", func(d string) { writeAt(t, filepath.Join(d, "Documentation/notes.rst"), "mine\n", old) })
		seed(t, k, wt, dir)
		for _, p := range []string{"kernel/fork.o", "kernel/other.o", "arch/x86/include/generated/asm/syscalls_64.h"} {
			if !exists(filepath.Join(dir, p)) {
				t.Errorf("%s not kept", p)
			}
		}
		if exists(filepath.Join(dir, "drivers/nvme/host/nvme-rdma.ko")) {
			t.Error("a module's .ko was copied")
		}
		b, _ := os.ReadFile(filepath.Join(dir, "kernel/.fork.o.cmd"))
		if strings.Contains(string(b), f.pinnedSrc) || !strings.Contains(string(b), wt.Dir+"/kernel/fork.c") {
			t.Errorf("the record does not name the local work tree:\n%s", b)
		}
		b, _ = os.ReadFile(filepath.Join(dir, "tools/objtool/.objtool.cmd"))
		if !strings.Contains(string(b), dir+"/tools/objtool/objtool") {
			t.Errorf("objtool's record does not name the new folder:\n%s", b)
		}
		b, _ = os.ReadFile(filepath.Join(dir, ".patchctl-kernel"))
		if string(b) != k.Key()+"\n" {
			t.Errorf(".patchctl-kernel = %q, want the local key", b)
		}
		if st, _ := os.Stat(filepath.Join(dir, "kernel/fork.o")); st == nil || st.ModTime().After(time.Now().Add(-47*time.Hour)) {
			t.Error("the copied object's time was not kept")
		}
	})
	t.Run("a header changed, older than the objects", func(t *testing.T) {
		k, wt, dir := f.local(t, "header", func(d string) {
			os.Remove(filepath.Join(d, "include/linux/b.h")) // a link: replace, never write through
			writeAt(t, filepath.Join(d, "include/linux/b.h"), "#define B 2\n", old)
		})
		seed(t, k, wt, dir)
		if !exists(filepath.Join(dir, "kernel/fork.o")) || exists(filepath.Join(dir, "kernel/other.o")) {
			t.Errorf("fork.o kept %v (want true), other.o kept %v (want false)", exists(filepath.Join(dir, "kernel/fork.o")), exists(filepath.Join(dir, "kernel/other.o")))
		}
		if !exists(filepath.Join(dir, "kernel/.other.o.cmd")) {
			t.Error("the removed target's record went too")
		}
	})
	t.Run("a source changed, at the same size, named by absolute path", func(t *testing.T) {
		k, wt, dir := f.local(t, "source", func(d string) {
			os.Remove(filepath.Join(d, "kernel/fork.c"))
			writeAt(t, filepath.Join(d, "kernel/fork.c"), "#include <linux/b.h>\n", old)
		})
		seed(t, k, wt, dir)
		if exists(filepath.Join(dir, "kernel/fork.o")) || !exists(filepath.Join(dir, "kernel/other.o")) {
			t.Error("fork.o (its source changed) kept, or other.o removed")
		}
	})
	t.Run("a header gone", func(t *testing.T) {
		k, wt, dir := f.local(t, "gone", func(d string) {
			os.Remove(filepath.Join(d, "include/linux/a.h"))
		})
		seed(t, k, wt, dir)
		if exists(filepath.Join(dir, "kernel/fork.o")) || !exists(filepath.Join(dir, "kernel/other.o")) {
			t.Error("fork.o (read the removed header) kept, or other.o removed")
		}
	})
	for _, c := range []struct {
		name string
		edit func(d string)
	}{
		{"a table a rule without a list reads", func(d string) {
			os.Remove(filepath.Join(d, "arch/x86/entry/syscalls/syscall_64.tbl"))
			writeAt(t, filepath.Join(d, "arch/x86/entry/syscalls/syscall_64.tbl"), "0 common write sys_read\n", old)
		}},
		{"a Kconfig changed", func(d string) {
			os.Remove(filepath.Join(d, "init/Kconfig"))
			writeAt(t, filepath.Join(d, "init/Kconfig"), "config Y\n\tbool\n", old)
		}},
		{"a header added", func(d string) { writeAt(t, filepath.Join(d, "include/linux/c.h"), "\n", old) }},
		{"a shipped file added", func(d string) { writeAt(t, filepath.Join(d, "kernel/gen.h_shipped"), "\n", old) }},
		{"another release", func(d string) {
			os.Remove(filepath.Join(d, "Makefile"))
			writeAt(t, filepath.Join(d, "Makefile"), "VERSION = 9\nPATCHLEVEL = 9\nSUBLEVEL = 118\n", old)
		}},
	} {
		t.Run("declined: "+c.name, func(t *testing.T) {
			k, wt, dir := f.local(t, strings.ReplaceAll(c.name, " ", "-"), c.edit)
			seed(t, k, wt, dir)
			if exists(dir) {
				t.Errorf("seeded %s", dir)
			}
			if left, _ := filepath.Glob(dir + ".tmp-*"); len(left) > 0 {
				t.Errorf("left %v", left)
			}
		})
	}
	for _, lock := range []string{"work-9.9", "tree-9.9"} {
		t.Run("declined: the pinned kernel's lock "+lock+" held", func(t *testing.T) {
			release, ok, err := cachelock.TryTake(f.cache, lock)
			if err != nil || !ok {
				t.Fatalf("TryTake: %v %v", ok, err)
			}
			k, wt, dir := f.local(t, "locked-"+lock, nil)
			seed(t, k, wt, dir)
			release()
			if exists(dir) {
				t.Errorf("seeded while %s was held", lock)
			}
			again, ok, _ := cachelock.TryTake(f.cache, lock)
			if !ok {
				t.Errorf("%s stayed taken", lock)
			} else {
				again()
			}
		})
	}
	t.Run("declined: the pinned build unfinished", func(t *testing.T) {
		fsutil.WriteJSON(sourcesPath(f.folder), sources{Complete: false, Files: map[string]string{}})
		defer fsutil.WriteJSON(sourcesPath(f.folder), sources{Complete: true, Files: map[string]string{}})
		k, wt, dir := f.local(t, "unfinished", nil)
		seed(t, k, wt, dir)
		if exists(dir) {
			t.Error("seeded from an unfinished build")
		}
	})
	t.Run("kept: a folder already there", func(t *testing.T) {
		k, wt, dir := f.local(t, "there", nil)
		os.MkdirAll(dir, 0o755)
		seed(t, k, wt, dir)
		if exists(filepath.Join(dir, "kernel/fork.o")) {
			t.Error("an existing folder was seeded over")
		}
	})
}

// TestTreeDiffAgreesWithDiff: treeDiff names the files GNU diff -rq
// (symlinks compared as links) names, on generated pairs of trees: files
// hard-linked, copied, changed at one size or another, removed, added,
// symlinks retargeted or turned into files.
func TestTreeDiffAgreesWithDiff(t *testing.T) {
	if _, err := exec.LookPath("diff"); err != nil {
		t.Skip("diff not installed")
	}
	r := rand.New(rand.NewSource(5))
	for i := 0; i < 20; i++ {
		a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
		for j := 0; j < 40; j++ {
			rel := fmt.Sprintf("d%d/f%d.c", r.Intn(4), j)
			writeAt(t, filepath.Join(a, rel), strings.Repeat("x", r.Intn(5)), time.Now())
			switch r.Intn(7) {
			case 0: // removed
			case 1:
				writeAt(t, filepath.Join(b, rel), strings.Repeat("y", r.Intn(5)), time.Now()) // maybe the same size
			case 2:
				os.MkdirAll(filepath.Dir(filepath.Join(b, rel)), 0o755)
				os.Symlink("f0.c", filepath.Join(b, rel))
			default:
				os.MkdirAll(filepath.Dir(filepath.Join(b, rel)), 0o755)
				if r.Intn(2) == 0 {
					os.Link(filepath.Join(a, rel), filepath.Join(b, rel))
				} else {
					c, _ := os.ReadFile(filepath.Join(a, rel))
					os.WriteFile(filepath.Join(b, rel), c, 0o644)
				}
			}
		}
		for j := 0; j < 5; j++ {
			rel := fmt.Sprintf("d%d/new%d.c", r.Intn(5), j)
			writeAt(t, filepath.Join(b, rel), "new", time.Now())
			if r.Intn(2) == 0 {
				os.Symlink("f1.c", filepath.Join(a, fmt.Sprintf("d%d/l%d", j%4, j)))
				os.MkdirAll(filepath.Join(b, fmt.Sprintf("d%d", j%4)), 0o755)
				os.Symlink(fmt.Sprintf("f%d.c", r.Intn(3)), filepath.Join(b, fmt.Sprintf("d%d/l%d", j%4, j)))
			}
		}
		got, err := treeDiff(a, b)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command("diff", "-rq", "--no-dereference", a, b).Output()
		want := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			switch {
			case line == "":
			case strings.HasPrefix(line, "Only in "):
				d, name, _ := strings.Cut(strings.TrimPrefix(line, "Only in "), ": ")
				root := a
				if strings.HasPrefix(d, b) {
					root = b
				}
				rel, _ := filepath.Rel(root, filepath.Join(d, name))
				// A folder only one side has: each file under it.
				filepath.WalkDir(filepath.Join(root, rel), func(p string, de os.DirEntry, err error) error {
					if err == nil && !de.IsDir() {
						r, _ := filepath.Rel(root, p)
						want[filepath.ToSlash(r)] = true
					}
					return nil
				})
			default: // "Files A and B differ", "Symbolic links A and B differ", "File A is a ... while file B is a ..."
				f := strings.Fields(line)
				for _, w := range f {
					if strings.HasPrefix(w, a+"/") {
						rel, _ := filepath.Rel(a, w)
						want[filepath.ToSlash(rel)] = true
						break
					}
				}
			}
		}
		var g, w []string
		for k := range got {
			g = append(g, k)
		}
		for k := range want {
			w = append(w, k)
		}
		sort.Strings(g)
		sort.Strings(w)
		if strings.Join(g, " ") != strings.Join(w, " ") {
			t.Errorf("pair %d: treeDiff %v\ndiff -rq %v\n%s", i, g, w, out)
		}
	}
}
