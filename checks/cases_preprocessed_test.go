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

// TestCasesPreprocessed runs every bug/twin pair of testdata/ (the raw-C
// cases of TestCases) through the preprocessed path too: each .c file
// gets a kbuild .o.cmd in a build folder, the real gcc -E reads it, and
// the rules read the projection. The wants are the same: a class the
// engine handles in raw C must not be lost, or flag a twin, when the
// file is read as the compiler sees it (the cases' own macros are then
// expanded by the preprocessor instead of the module-macro expander).
func TestCasesPreprocessed(t *testing.T) {
	needGCC(t)
	if testing.Short() {
		t.Skip("-short: gcc -E over every case (about a minute on two cores)")
	}
	ents, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		name := strings.TrimSuffix(e.Name(), ".c")
		if !strings.HasSuffix(name, "_bug") && !strings.HasSuffix(name, "_ok") {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			got, w, rep := runCasePreprocessed(t, filepath.Join("testdata", e.Name()))
			if !slices.Equal(got, w) {
				t.Errorf("preprocessed: findings differ\n got:  %v\n want: %v\n%s", got, w, describe(rep))
			}
		})
	}
	if n < 40 {
		t.Errorf("%d cases, want the whole raw suite", n)
	}
}

// runCasePreprocessed runs one case (a file or a module folder) through
// the preprocessed path: a fake kernel tree with the case's files, a
// build folder with a kbuild .o.cmd for every .c, the real gcc -E. It
// returns the findings and the wants as sorted, de-duplicated strings.
func runCasePreprocessed(t *testing.T, path string) (got, w []string, rep *Report) {
	t.Helper()
	tree, wants := loadCase(t, path)
	build := t.TempDir()
	copyTree(t, filepath.Join("testdata", "cpp", "kernel", "include", "linux"), filepath.Join(tree, "include", "linux"))
	writeFile(t, filepath.Join(tree, "Makefile"), "# a fake kernel tree\n")
	writeFile(t, filepath.Join(tree, "Kconfig"), "# a fake kernel tree\n")
	writeFile(t, filepath.Join(build, ".config"), "# empty\n")
	writeFile(t, filepath.Join(build, "include", "generated", "autoconf.h"), "")
	var cfiles int
	err := filepath.WalkDir(filepath.Join(tree, caseModule), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".c") {
			return err
		}
		rel, _ := filepath.Rel(tree, p)
		obj := strings.TrimSuffix(rel, ".c") + ".o"
		cmd := fmt.Sprintf("savedcmd_%s := gcc -Wp,-MMD,%s/.%s.d -nostdinc -I%s/include -I./include -include %s/include/linux/kconfig.h -D__KERNEL__ -DKBUILD_MODNAME='\"tcase\"' -c -o %s %s\n\nsource_%s := %s\n",
			obj, filepath.Dir(obj), filepath.Base(obj), tree, tree, obj, p, obj, p)
		writeFile(t, filepath.Join(build, filepath.Dir(obj), "."+filepath.Base(obj)+".cmd"), cmd)
		cfiles++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := preproc.New(preproc.Options{Tree: tree, BuildDir: build, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = Run(Options{Tree: tree, Paths: []string{caseModule}, Preprocessor: NewPreprocessor(context.Background(), s)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Analysis, fmt.Sprintf("preprocessed translation units for %d .c files", cfiles)) {
		t.Fatalf("not every file went through the preprocessor (%d .c files): %s", cfiles, rep.Analysis)
	}
	for _, f := range rep.Findings {
		got = append(got, want{f.File, f.Rule, f.Severity, f.Line}.String())
	}
	for _, x := range wants {
		w = append(w, x.String())
	}
	sort.Strings(got)
	sort.Strings(w)
	return slices.Compact(got), slices.Compact(w), rep
}
