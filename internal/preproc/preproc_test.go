package preproc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
)

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

const mainC = `// SPDX-License-Identifier: GPL-2.0
#include <linux/x.h>
/* a comment
   over two lines */
#define LOCAL_FLAGS 3
static int f(int *p)
{
#ifdef CONFIG_A
	*p = SET_IT(p,
		    7);
#else
	*p = 1;
#endif
	return le64_to_cpu(*p) + LOCAL_FLAGS; // trailing
}
`

// fakeTree is a kernel-shaped tree and a build folder with a kbuild
// command file for drivers/x/m.c, recorded for another tree path (as a
// build folder made from a work tree names it).
func fakeTree(t *testing.T, config string) (tree, build string) {
	t.Helper()
	tree, build = t.TempDir(), t.TempDir()
	write(t, filepath.Join(tree, "Makefile"), "\n")
	write(t, filepath.Join(tree, "Kconfig"), "\n")
	write(t, filepath.Join(tree, "include/linux/x.h"), "#define SET_IT(p, v) ((p)[0] = (v))\n#define le64_to_cpu(x) ((unsigned long long)(x))\n")
	write(t, filepath.Join(tree, "drivers/x/m.c"), mainC)
	write(t, filepath.Join(build, ".config"), config)
	auto := ""
	if strings.Contains(config, "CONFIG_A=y") {
		auto = "#define CONFIG_A 1\n"
	}
	write(t, filepath.Join(build, "include/generated/autoconf.h"), auto)
	rec := "/elsewhere/work/tree"
	write(t, filepath.Join(build, "drivers/x/.m.o.cmd"), "savedcmd_drivers/x/m.o := ccache gcc -Wp,-MMD,drivers/x/.m.o.d -nostdinc -I"+rec+"/include -I./include -include ./include/generated/autoconf.h -DKBUILD_MODNAME='\"m\"' -fplugin=./scripts/none.so -c -o drivers/x/m.o "+rec+"/drivers/x/m.c; ./tools/objtool/objtool --x drivers/x/m.o\n\nsource_drivers/x/m.o := "+rec+"/drivers/x/m.c\n\ndeps_drivers/x/m.o := \\\n")
	return tree, build
}

func needGCC(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/gcc"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no gcc")
		}
		t.Skip("no gcc")
	}
}

func TestPreprocessProjectAndCache(t *testing.T) {
	needGCC(t)
	for _, cfg := range []string{"CONFIG_A=y\n", "CONFIG_B=y\n"} {
		tree, build := fakeTree(t, cfg)
		cache := t.TempDir()
		s, err := New(Options{Tree: tree, BuildDir: build, CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		u, err := s.Preprocess(context.Background(), "drivers/x/m.c")
		if err != nil {
			t.Fatal(err)
		}
		if u.Cached || u.Config.ConfigSHA256 != fsutil.Hash([]byte(cfg)) || u.Config.BuildDir != build || u.Config.Origin != "kbuild .o.cmd" {
			t.Errorf("unit: cached %v, config %+v", u.Cached, u.Config)
		}
		if slices.ContainsFunc(u.Flags, func(f string) bool {
			return strings.HasPrefix(f, "-fplugin") || strings.HasPrefix(f, "-Wp,") || f == "-c"
		}) || !slices.Contains(u.Flags, "-I"+tree+"/include") {
			t.Errorf("flags %v: want the plugin, -Wp and -c gone and the recorded tree replaced by %s", u.Flags, tree)
		}
		// Every output line maps to a file and line; the main file's
		// return is at line 14.
		found := false
		lines := strings.Split(string(u.Output), "\n")
		locs := u.Lines()
		var k int
		for _, l := range lines {
			if strings.HasPrefix(l, "# ") && markerRe.MatchString(l) {
				continue
			}
			if k < len(locs) && strings.Contains(l, "return") && locs[k] == (Loc{"drivers/x/m.c", 14}) {
				found = true
			}
			k++
		}
		if !found {
			t.Errorf("no output line with the return maps to drivers/x/m.c:14")
		}
		raw, _ := os.ReadFile(filepath.Join(tree, "drivers/x/m.c"))
		full := u.Project(raw, nil)
		hybrid := u.Project(raw, func(m MacroSite) bool { return m.Name == "SET_IT" })
		for _, p := range []*Projection{full, hybrid} {
			if n := strings.Count(string(p.Src), "\n"); n != strings.Count(mainC, "\n") {
				t.Fatalf("projection has %d lines, source %d", n, strings.Count(mainC, "\n"))
			}
		}
		pl := strings.Split(string(hybrid.Src), "\n")
		if cfg == "CONFIG_A=y\n" {
			if !strings.Contains(pl[8], "((p)[0] = (7))") && !strings.Contains(pl[8], "= (7)") || strings.TrimSpace(pl[9]) != ";" || strings.TrimSpace(pl[11]) != "" {
				t.Errorf("CONFIG_A: line 9 should hold SET_IT expanded, 10 what follows the use, 12 nothing:\n%s", hybrid.Src)
			}
			ms := hybrid.Macros[9]
			if len(ms) != 1 || ms[0].Name != "SET_IT" || ms[0].Loc != (Loc{"include/linux/x.h", 1}) {
				t.Errorf("line 9's macros: %+v", ms)
			}
		} else if strings.TrimSpace(pl[8]) != "" || !strings.Contains(pl[11], "*p = 1;") {
			t.Errorf("no CONFIG_A: line 9 not built, line 12 kept:\n%s", hybrid.Src)
		}
		// The kernel's API macro stays as written in the hybrid, expanded
		// in the full projection; comments are gone; the file's own
		// #define stays at its line.
		if !strings.Contains(pl[13], "le64_to_cpu(*p)") || strings.Contains(pl[13], "trailing") || !strings.Contains(strings.Split(string(full.Src), "\n")[13], "unsigned long long") {
			t.Errorf("line 14: hybrid %q, full %q", pl[13], strings.Split(string(full.Src), "\n")[13])
		}
		if !strings.HasPrefix(pl[4], "#define LOCAL_FLAGS") || strings.TrimSpace(pl[2]) != "" {
			t.Errorf("lines 3-5: %q", pl[2:5])
		}
		// Reuse: verified and cached; a header's change is seen.
		s2, _ := New(Options{Tree: tree, BuildDir: build, CacheDir: cache})
		u2, err := s2.Preprocess(context.Background(), "drivers/x/m.c")
		if err != nil || !u2.Cached || string(u2.Output) != string(u.Output) {
			t.Fatalf("second run: err %v, cached %v", err, u2 != nil && u2.Cached)
		}
		write(t, filepath.Join(tree, "include/linux/x.h"), "#define SET_IT(p, v) ((p)[1] = (v))\n#define le64_to_cpu(x) (x)\n")
		s3, _ := New(Options{Tree: tree, BuildDir: build, CacheDir: cache})
		u3, err := s3.Preprocess(context.Background(), "drivers/x/m.c")
		if err != nil || u3.Cached {
			t.Fatalf("after a header changed: err %v, cached %v", err, u3 != nil && u3.Cached)
		}
		// A damaged cached output is not reused.
		key := filepath.Join(cache, "cpp")
		_ = filepath.WalkDir(key, func(p string, e os.DirEntry, err error) error {
			if err == nil && e.Name() == "out.i" {
				_ = os.WriteFile(p, []byte("damaged"), 0o644)
			}
			return nil
		})
		s4, _ := New(Options{Tree: tree, BuildDir: build, CacheDir: cache})
		if u4, err := s4.Preprocess(context.Background(), "drivers/x/m.c"); err != nil || u4.Cached || string(u4.Output) == "damaged" {
			t.Fatalf("a damaged entry was reused (err %v)", err)
		}
	}
}

func TestFallbacks(t *testing.T) {
	ctx := context.Background()
	lone := t.TempDir()
	write(t, filepath.Join(lone, "m.c"), "int x;\n")
	tree, build := fakeTree(t, "CONFIG_A=y\n")
	write(t, filepath.Join(tree, "drivers/x/other.c"), "int y;\n")
	unconfigured := t.TempDir()
	tests := []struct {
		name        string
		opts        Options
		rel, reason string
	}{
		{"lone file", Options{Tree: lone}, "m.c", "not a kernel tree"},
		{"never configured", Options{Tree: tree, BuildDir: unconfigured}, "drivers/x/m.c", "never configured"},
		{"not built", Options{Tree: tree, BuildDir: build}, "drivers/x/other.c", "does not build this file"},
		{"configured in place", Options{Tree: tree, BuildDir: build, Kbuild: true, CacheDir: t.TempDir(), Config: filepath.Join(build, ".config")}, "drivers/x/other.c", ""},
	}
	write(t, filepath.Join(tree, ".config"), "CONFIG_A=y\n")
	tests[3].reason = "configured in place"
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Preprocess(ctx, tc.rel)
			var fb *FallbackError
			if !errors.As(err, &fb) || !errors.Is(err, ErrNoFlags) || !strings.Contains(fb.Reason, tc.reason) {
				t.Fatalf("got %v, want a fallback saying %q", err, tc.reason)
			}
		})
	}
	s, _ := New(Options{Tree: tree, BuildDir: build})
	if _, err := s.Preprocess(ctx, "drivers/x/missing.c"); !errors.Is(err, errs.ErrInput) {
		t.Errorf("a missing file: %v, want an input error", err)
	}
	if _, err := s.Preprocess(ctx, "../m.c"); err == nil {
		t.Errorf("a path out of the tree was taken")
	}
}

func TestShellSplitAndArgv(t *testing.T) {
	got, err := shellSplit(`ccache gcc -DX='"a b"' -DY="c\"d" e\ f -o x.o x.c; ./tools/objtool x.o`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ccache", "gcc", `-DX="a b"`, `-DY=c"d`, "e f", "-o", "x.o", "x.c"}
	if !slices.Equal(got, want) {
		t.Errorf("shellSplit: %q, want %q", got, want)
	}
	if _, err := shellSplit(`gcc 'open`); err == nil {
		t.Error("an unterminated quote was taken")
	}
	c, flags, src, err := cppArgv([]string{"ccache", "gcc", "-Wp,-MMD,d/.x.o.d", "-I/old/t/include", "-MD", "-MF", "x.d", "-c", "-o", "x.o", "/old/t/d/x.c"}, "/old/t/d/x.c", "/old/t", "/new")
	if err != nil || c != "gcc" || src != "/new/d/x.c" || !slices.Equal(flags, []string{"-I/new/include"}) {
		t.Errorf("cppArgv: %q %q %q %v", c, flags, src, err)
	}
	if _, _, _, err := cppArgv([]string{"gcc", "-c", "-o", "y.o"}, "x.c", "", ""); err == nil {
		t.Error("a command that compiles no source was taken")
	}
	if d := parseDeps("out.i: a.c \\\n  b.h c.h\n\nb.h:\n"); !slices.Equal(d, []string{"a.c", "b.h", "c.h"}) {
		t.Errorf("parseDeps: %q", d)
	}
}

// TestKbuild asks a fake make (on PATH) for a file no .o.cmd describes:
// it is asked once for olddefconfig and once for the file's .i, its
// .i.cmd's flags are used, and a second session reuses them without make.
func TestKbuild(t *testing.T) {
	needGCC(t)
	tree, build := fakeTree(t, "CONFIG_A=y\n")
	write(t, filepath.Join(tree, "drivers/x/k.c"), "#include <linux/x.h>\nint k(int *p) { return SET_IT(p, 2); }\n")
	bin, cache := t.TempDir(), t.TempDir()
	log := filepath.Join(bin, "log")
	write(t, filepath.Join(bin, "make"), `#!/bin/sh
obj= target=
for a; do case $a in O=*) obj=${a#O=};; -*|"") ;; *) target=$a;; esac; done
echo "$target" >> `+log+`
[ "$target" = olddefconfig ] && exit 0
mkdir -p "$obj/include/generated" "$obj/drivers/x"
echo '#define CONFIG_A 1' > "$obj/include/generated/autoconf.h"
printf '%s\n' "savedcmd_drivers/x/k.i := gcc -E -Wp,-MMD,drivers/x/.k.i.d -nostdinc -I`+tree+`/include -include ./include/generated/autoconf.h -o drivers/x/k.i `+tree+`/drivers/x/k.c" "" "source_drivers/x/k.i := `+tree+`/drivers/x/k.c" > "$obj/drivers/x/.k.i.cmd"
`)
	if err := os.Chmod(filepath.Join(bin, "make"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	for i, want := range []string{"olddefconfig\ndrivers/x/k.i\n", "olddefconfig\ndrivers/x/k.i\n"} {
		s, err := New(Options{Tree: tree, BuildDir: build, CacheDir: cache, Kbuild: true})
		if err != nil {
			t.Fatal(err)
		}
		u, err := s.Preprocess(context.Background(), "drivers/x/k.c")
		if err != nil {
			t.Fatal(err)
		}
		if u.Config.Origin != "make drivers/x/k.i" || !strings.HasPrefix(u.Config.BuildDir, filepath.Join(cache, "cpp", "kbuild")) || u.Config.ConfigSHA256 != fsutil.Hash([]byte("CONFIG_A=y\n")) {
			t.Errorf("run %d: config %+v", i, u.Config)
		}
		if !strings.Contains(string(u.Output), "((p)[0] = (2))") {
			t.Errorf("run %d: output does not expand SET_IT:\n%s", i, u.Output)
		}
		if got, _ := os.ReadFile(log); string(got) != want {
			t.Errorf("run %d: make was asked %q, want %q", i, got, want)
		}
	}
}

func TestMacroText(t *testing.T) {
	defs := map[string]MacroSite{
		"TO_PAGE": {Name: "TO_PAGE", Body: "pfn_to_page(__pa(addr) >> 12)", params: []string{"addr"}},
		"__pa":    {Name: "__pa", Body: "((unsigned long)(x) - 0x1000)", params: []string{"x"}},
		"FILL":    {Name: "FILL", Body: "((s)->addr = (a))", params: []string{"s", "a"}},
		"NEST":    {Name: "NEST", Body: "FILL(q, b)", params: []string{"q", "b"}},
	}
	if tx := expandText(defs["TO_PAGE"], defs); strings.Contains(tx, "addr") || !strings.Contains(tx, "0x1000") {
		t.Errorf("TO_PAGE: %q: a parameter named addr was kept, or the nested body lost", tx)
	}
	if tx := expandText(defs["NEST"], defs); !strings.Contains(tx, "->addr") {
		t.Errorf("NEST: %q: the field the nested macro sets was lost", tx)
	}
}

// FuzzProject: any output and source project without a panic, to the
// source's number of lines.
func FuzzProject(f *testing.F) {
	f.Add([]byte("# 1 \"/t/m.c\"\nint x;\n#define A(x) x\n# 3 \"/t/m.c\" 2\nA(1\n"), []byte("int x;\n#define A(x) x\nA(1\n,2);\n"))
	f.Add([]byte("# 99999 \"/t/m.c\"\n(((\n# 0 \"\\q\"\n#undef A\n"), []byte("("))
	f.Fuzz(func(t *testing.T, out, raw []byte) {
		u := &Unit{Tree: "/t", Output: out, srcPath: "/t/m.c", dir: "/t"}
		for _, expand := range []func(MacroSite) bool{nil, func(MacroSite) bool { return false }} {
			p := u.Project(raw, expand)
			if got, want := strings.Count(string(p.Src), "\n"), strings.Count(string(raw), "\n"); got != want {
				t.Fatalf("%d lines, source %d", got, want)
			}
		}
		_ = u.Lines()
	})
}

// TestRelativeSourceRecorded: kbuild with a relative srctree (patchctl's
// work tree beside its build folders) records the source as ../src/...;
// the unit must still be the checked tree's file and headers, never the
// build's own work tree (which another stage may hold in another state).
func TestRelativeSourceRecorded(t *testing.T) {
	needGCC(t)
	// The include folder recorded absolute (6.12's kbuild) or relative
	// to the build folder, as the source is.
	for _, inc := range []string{"abs", "../src/include"} {
		t.Run(inc, func(t *testing.T) { relativeSourceRecorded(t, inc) })
	}
}

func relativeSourceRecorded(t *testing.T, inc string) {
	tree, _ := fakeTree(t, "CONFIG_A=y\n")
	top := t.TempDir()
	build, work := filepath.Join(top, "0123456789ab"), filepath.Join(top, "src")
	write(t, filepath.Join(build, ".config"), "CONFIG_A=y\n")
	write(t, filepath.Join(build, "include/generated/autoconf.h"), "#define CONFIG_A 1\n")
	// The build's work tree holds other content: a header and a source
	// that must not be read.
	write(t, filepath.Join(work, "include/linux/x.h"), "#define SET_IT(p, v) ((p)[5] = (v))\n#define le64_to_cpu(x) (x)\n")
	write(t, filepath.Join(work, "drivers/x/m.c"), "int work_tree_only(void) { return 99; }\n")
	if inc == "abs" {
		inc = work + "/include"
	}
	write(t, filepath.Join(build, "drivers/x/.m.o.cmd"), "savedcmd_drivers/x/m.o := gcc -Wp,-MMD,drivers/x/.m.o.d -nostdinc -I"+inc+" -I./include -include ./include/generated/autoconf.h -c -o drivers/x/m.o ../src/drivers/x/m.c\n\nsource_drivers/x/m.o := ../src/drivers/x/m.c\n\ndeps_drivers/x/m.o := \\\n")
	s, err := New(Options{Tree: tree, BuildDir: build, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.Preprocess(context.Background(), "drivers/x/m.c")
	if err != nil {
		t.Fatal(err)
	}
	out := string(u.Output)
	if strings.Contains(out, "work_tree_only") || strings.Contains(out, "[5]") || !strings.Contains(out, "[0]") {
		t.Errorf("the unit read the build's work tree, not the checked tree %s:\n%s", tree, out)
	}
	if !slices.Contains(u.Flags, "-I"+tree+"/include") {
		t.Errorf("flags %v: want the work tree's include folder replaced by %s/include", u.Flags, tree)
	}
}
