package checks

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The cases in testdata/ are small kernel-style C modules, one per file
// (or per folder, for a module of several files), each a bug with its
// correct twin: NAME_bug.c and NAME_ok.c. A line that must draw a
// finding says so in a comment: /* want: RULE */ or /* want: RULE
// warning */ (severity error unless said). The twin has no want and
// must draw nothing; the bug must draw exactly its wants. They run
// without a kernel tree.

var wantRe = regexp.MustCompile(`want: ([a-z-]+)(?: (warning|note))?`)

type want struct {
	file, rule, sev string
	line            int
}

func (w want) String() string { return fmt.Sprintf("%s:%d: %s [%s]", w.file, w.line, w.rule, w.sev) }

// caseModule is the folder the case's files go to in a scratch tree.
const caseModule = "drivers/infiniband/ulp/tcase"

func loadCase(t *testing.T, path string) (tree string, wants []want) {
	t.Helper()
	tree = t.TempDir()
	dst := filepath.Join(tree, caseModule)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	var srcs []string // relative to path's folder (or path's name)
	base := filepath.Dir(path)
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		// A folder is a module, or several modules in its subfolders
		// (a request built in one and posted in another).
		base = path
		filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(path, p)
				srcs = append(srcs, rel)
			}
			return nil
		})
	} else {
		srcs = []string{filepath.Base(path)}
	}
	for _, s := range srcs {
		b, err := os.ReadFile(filepath.Join(base, s))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, s)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, s), b, 0o644); err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			for _, m := range wantRe.FindAllStringSubmatch(l, -1) {
				sev := m[2]
				if sev == "" {
					sev = SevError
				}
				wants = append(wants, want{caseModule + "/" + filepath.ToSlash(s), m[1], sev, i + 1})
			}
		}
	}
	return tree, wants
}

func runCase(t *testing.T, path string) (got, wants []want, rep *Report) {
	t.Helper()
	tree, wants := loadCase(t, path)
	rep, err := Run(Options{Tree: tree, Paths: []string{caseModule}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		got = append(got, want{f.File, f.Rule, f.Severity, f.Line})
	}
	return got, wants, rep
}

func TestCases(t *testing.T) {
	ents, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	pairs := map[string][]string{}
	found := map[string][]want{}
	for _, e := range ents {
		name := strings.TrimSuffix(e.Name(), ".c")
		var base string
		switch {
		case strings.HasSuffix(name, "_bug"):
			base = strings.TrimSuffix(name, "_bug")
		case strings.HasSuffix(name, "_ok"):
			base = strings.TrimSuffix(name, "_ok")
		default:
			continue
		}
		pairs[base] = append(pairs[base], name)
		t.Run(name, func(t *testing.T) {
			got, wants, rep := runCase(t, filepath.Join("testdata", e.Name()))
			found[name] = got
			bug := strings.HasSuffix(name, "_bug")
			if bug && len(wants) == 0 {
				t.Fatal("a bug case names no finding it wants")
			}
			if !bug && len(wants) > 0 {
				t.Fatal("a correct twin wants findings")
			}
			key := func(ws []want) []string {
				var out []string
				for _, w := range ws {
					out = append(out, w.String())
				}
				sort.Strings(out)
				return slices.Compact(out)
			}
			if g, w := key(got), key(wants); !slices.Equal(g, w) {
				var b strings.Builder
				for _, f := range rep.Findings {
					fmt.Fprintf(&b, "  %s [%s]\n", f, f.Severity)
					for _, e := range f.Evidence {
						fmt.Fprintf(&b, "      %s:%d: %s\n", e.File, e.Line, e.Message)
					}
				}
				t.Errorf("findings differ\n got:  %v\n want: %v\n%s", g, w, b.String())
			}
		})
	}
	for base, names := range pairs {
		if len(names) != 2 {
			t.Errorf("%s: a case needs its bug and its correct twin (%v)", base, names)
			continue
		}
		if a, b := found[base+"_bug"], found[base+"_ok"]; len(a) > 0 && slices.Equal(a, b) {
			t.Errorf("%s: the bug and its twin draw the same findings", base)
		}
	}
	// Every class of the issue has cases.
	for _, class := range []string{"flags", "flow", "helper", "addr", "grant", "opcode", "incapsule", "reverse", "bounds", "length", "memory", "across", "macro"} {
		n := 0
		for base := range pairs {
			if strings.HasPrefix(base, class+"_") {
				n++
			}
		}
		if n == 0 {
			t.Errorf("no case of class %s", class)
		}
	}
}
