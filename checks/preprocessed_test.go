package checks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/preproc"
)

// The cases in testdata/cpp are bug/twin pairs where what the compiler
// sees matters: a flag or an SGE behind a config-dependent #ifdef, a
// function-like macro of a kernel header that sets IB_SEND_INLINE or
// fills an SGE, a header's flags macro defined by the configuration. Each
// becomes a small fake kernel tree with a build folder holding a kbuild
// .o.cmd per .c file, and runs through the real gcc -E.

const ppModule = "drivers/infiniband/ulp/tcpp"

// ppCase lays out a case: the tree, its build folder, the wants.
func ppCase(t *testing.T, dir string) (tree, build string, wants []want) {
	t.Helper()
	tree, build = t.TempDir(), t.TempDir()
	copyTree(t, filepath.Join("testdata", "cpp", "kernel"), tree)
	if _, err := os.Stat(filepath.Join(dir, "include")); err == nil {
		copyTree(t, filepath.Join(dir, "include"), filepath.Join(tree, "include"))
	}
	writeFile(t, filepath.Join(tree, "Makefile"), "# a fake kernel tree\n")
	writeFile(t, filepath.Join(tree, "Kconfig"), "# a fake kernel tree\n")
	cfg, err := os.ReadFile(filepath.Join(dir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(build, ".config"), string(cfg))
	var auto strings.Builder
	for _, l := range strings.Split(string(cfg), "\n") {
		if name, ok := strings.CutSuffix(l, "=y"); ok {
			fmt.Fprintf(&auto, "#define %s 1\n", name)
		}
	}
	writeFile(t, filepath.Join(build, "include", "generated", "autoconf.h"), auto.String())
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".c") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		rel := ppModule + "/" + e.Name()
		writeFile(t, filepath.Join(tree, rel), string(b))
		obj := strings.TrimSuffix(rel, ".c") + ".o"
		src := filepath.Join(tree, rel)
		cmd := fmt.Sprintf("savedcmd_%s := ccache gcc -Wp,-MMD,%s/.%s.d -nostdinc -I%s/include -I./include -include %s/include/linux/kconfig.h -D__KERNEL__ -DKBUILD_MODNAME='\"tcpp\"' -c -o %s %s\n\nsource_%s := %s\n",
			obj, ppModule, filepath.Base(obj), tree, tree, obj, src, obj, src)
		writeFile(t, filepath.Join(build, ppModule, "."+filepath.Base(obj)+".cmd"), cmd)
		for i, l := range strings.Split(string(b), "\n") {
			for _, m := range wantRe.FindAllStringSubmatch(l, -1) {
				sev := m[2]
				if sev == "" {
					sev = SevError
				}
				wants = append(wants, want{rel, m[1], sev, i + 1})
			}
		}
	}
	return tree, build, wants
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		writeFile(t, filepath.Join(to, rel), string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func findingKeys(rep *Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, want{f.File, f.Rule, f.Severity, f.Line}.String())
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func describe(rep *Report) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		fmt.Fprintf(&b, "  %s [%s]\n", f, f.Severity)
		for _, e := range f.Evidence {
			fmt.Fprintf(&b, "      %s:%d: %s\n", e.File, e.Line, e.Message)
		}
	}
	return b.String()
}

func needGCC(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/gcc"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("gcc is needed for the preprocessed path")
		}
		t.Skip("no gcc")
	}
}

func TestPreprocessedCases(t *testing.T) {
	needGCC(t)
	ents, err := os.ReadDir(filepath.Join("testdata", "cpp"))
	if err != nil {
		t.Fatal(err)
	}
	pairs := map[string]int{}
	rawWrong := map[string]bool{}
	for _, e := range ents {
		name := e.Name()
		bug := strings.HasSuffix(name, "_bug")
		if !e.IsDir() || !bug && !strings.HasSuffix(name, "_ok") {
			continue
		}
		base := strings.TrimSuffix(strings.TrimSuffix(name, "_bug"), "_ok")
		pairs[base]++
		t.Run(name, func(t *testing.T) {
			tree, build, wants := ppCase(t, filepath.Join("testdata", "cpp", name))
			if bug != (len(wants) > 0) {
				t.Fatalf("a bug wants findings, a twin none (%d wants)", len(wants))
			}
			s, err := preproc.New(preproc.Options{Tree: tree, BuildDir: build, CacheDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Run(Options{Tree: tree, Paths: []string{ppModule}, Preprocessor: NewPreprocessor(context.Background(), s)})
			if err != nil {
				t.Fatal(err)
			}
			var w []string
			for _, x := range wants {
				w = append(w, x.String())
			}
			sort.Strings(w)
			if g := findingKeys(rep); !slices.Equal(g, w) {
				t.Errorf("preprocessed: findings differ\n got:  %v\n want: %v\n%s\n%s", g, w, describe(rep), rep.Analysis)
			}
			if !strings.Contains(rep.Analysis, "preprocessed translation units for 1 .c files") || !strings.Contains(rep.Analysis, build) {
				t.Errorf("the report does not say the file was preprocessed and with which configuration: %s", rep.Analysis)
			}
			// A header macro's finding names the macro's definition.
			if bug && strings.HasPrefix(name, "hdr_") {
				found := false
				for _, f := range rep.Findings {
					for _, e := range f.Evidence {
						found = found || e.File == "include/rdma/tc_helpers.h" && strings.Contains(e.Message, "expands macro TC_")
					}
				}
				if !found {
					t.Errorf("no evidence names the macro's definition in include/rdma/tc_helpers.h\n%s", describe(rep))
				}
			}
			raw, err := Run(Options{Tree: tree, Paths: []string{ppModule}})
			if err != nil {
				t.Fatal(err)
			}
			if g := findingKeys(raw); !slices.Equal(g, w) {
				rawWrong[base] = true
				t.Logf("raw C gets it wrong: %v", g)
			}
		})
	}
	if len(pairs) < 4 {
		t.Errorf("%d cases, want at least two pairs per class (#ifdef, header macro)", len(pairs))
	}
	for base, n := range pairs {
		if n != 2 {
			t.Errorf("%s: a case needs its bug and its twin", base)
		}
		if !rawWrong[base] {
			t.Errorf("%s: raw C gets this pair right: it does not show what the preprocessed path adds", base)
		}
	}
}
