package tree

import (
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// damageByPath is the check walkScopes replaced, kept as the oracle of
// TestWalkScopesAgreesWithPathChecks: an lstat by full path of every
// manifest file in scope (missing, other size) and a second walk of the
// scopes for files the manifest lacks (added).
func (m *manifest) damageByPath(dir string, scopes []string) []string {
	// Scopes cleaned as the walk cleans them: the old check matched
	// "./a" against no manifest path, so a file missing under it went
	// unnamed while a resized one was named.
	for i, s := range scopes {
		scopes[i] = path.Clean(strings.TrimLeft(s, "/"))
	}
	var bad []string
	for p, e := range m.Files {
		if !inScopes(p, scopes) {
			continue
		}
		st, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
		switch {
		case err != nil:
			bad = append(bad, p+" missing")
		case e.Link == "" && st.Size() != e.Size:
			bad = append(bad, fmt.Sprintf("%s has %d bytes, not %d", p, st.Size(), e.Size))
		}
	}
	if len(scopes) == 0 { // none is the whole tree (the old check walked nothing then)
		scopes = []string{"."}
	}
	for _, s := range scopes {
		root := filepath.Join(dir, filepath.FromSlash(s))
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(dir, p)
			if _, ok := m.Files[filepath.ToSlash(rel)]; !ok {
				bad = append(bad, filepath.ToSlash(rel)+" added")
			}
			return nil
		})
	}
	sort.Strings(bad)
	return slices.Compact(bad)
}

// damagedPaths are the paths a damage list names, without what it says
// of them.
func damagedPaths(bad []string) []string {
	var out []string
	for _, b := range bad {
		p, _, _ := strings.Cut(b, " ")
		out = append(out, p)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// TestWalkScopesAgreesWithPathChecks: on random trees, damaged at random
// (files removed, resized, added, links added or retargeted, folders
// added or removed, a file made a folder) and checked under random
// scopes (the whole tree, folders, files, nested and missing ones), the
// one-walk check names the same damaged paths as the path-by-path check
// it replaced, and a tree as its manifest says is never damaged.
func TestWalkScopesAgreesWithPathChecks(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	dirs := []string{"a", "a/b", "a/b/c", "a-b", "d", "d/e", "f"}
	damaged := 0
	for round := 0; round < 300; round++ {
		dir := t.TempDir()
		for _, d := range dirs {
			os.MkdirAll(filepath.Join(dir, d), 0o755)
		}
		for i := 0; i < 12; i++ {
			d := dirs[rng.Intn(len(dirs))]
			p := filepath.Join(dir, d, fmt.Sprintf("f%d.c", i))
			os.WriteFile(p, make([]byte, rng.Intn(40)), 0o644)
		}
		os.WriteFile(filepath.Join(dir, "Makefile"), []byte("VERSION = 9\n"), 0o644)
		os.Symlink("../d", filepath.Join(dir, "a", "to-d"))        // a link to a folder
		os.Symlink("Makefile", filepath.Join(dir, "mk-link"))      // a link to a file
		os.Symlink("nowhere", filepath.Join(dir, "f", "dangling")) // a dangling link
		m, err := makeManifest(dir, "k")
		if err != nil {
			t.Fatal(err)
		}
		var files []string
		for p := range m.Files {
			files = append(files, p)
		}
		sort.Strings(files)
		scopeSets := [][]string{{"."}, nil, {"a"}, {"a/b", "a"}, {"d", "f"}, {"Makefile"}, {"a/to-d"}, {"zz"}, {"a/b/c/"}, {"a", "a-b", "a/b"}, {"./a", "a/b/c"}, {files[rng.Intn(len(files))]}}
		scopes := scopeSets[rng.Intn(len(scopeSets))]
		if got := m.walkScopes(dir, scopes); len(got) != 0 {
			t.Fatalf("round %d: an intact tree under %q is damaged: %q", round, scopes, got)
		}
		madeFolder := false
		for n := 1 + rng.Intn(4); n > 0; n-- {
			victim := filepath.Join(dir, filepath.FromSlash(files[rng.Intn(len(files))]))
			switch rng.Intn(8) {
			case 0:
				os.Remove(victim)
			case 1:
				os.WriteFile(victim, make([]byte, 41+rng.Intn(5)), 0o644)
			case 2:
				os.WriteFile(filepath.Join(dir, dirs[rng.Intn(len(dirs))], fmt.Sprintf("new%d.h", n)), nil, 0o644)
			case 3:
				os.Symlink("Makefile", filepath.Join(dir, dirs[rng.Intn(len(dirs))], fmt.Sprintf("link%d", n)))
			case 4:
				os.RemoveAll(filepath.Join(dir, dirs[rng.Intn(len(dirs))]))
			case 5:
				os.MkdirAll(filepath.Join(dir, dirs[rng.Intn(len(dirs))], fmt.Sprintf("sub%d", n), "deep"), 0o755)
				os.WriteFile(filepath.Join(dir, dirs[rng.Intn(len(dirs))], fmt.Sprintf("sub%d", n), "deep", "x.c"), []byte("x"), 0o644)
			case 6:
				os.Remove(victim)
				os.MkdirAll(victim, 0o755)
				os.WriteFile(filepath.Join(victim, "inner.c"), []byte("x"), 0o644)
				madeFolder = true
			case 7:
				if l, err := os.Readlink(victim); err == nil {
					os.Remove(victim)
					os.Symlink(l+"-other", victim)
				}
			}
		}
		walked := m.walkScopes(dir, scopes)
		if c := slices.Compact(slices.Clone(walked)); len(c) != len(walked) {
			t.Fatalf("round %d, scopes %q: the walk names a path twice: %q", round, scopes, walked)
		}
		got, want := damagedPaths(walked), damagedPaths(m.damageByPath(dir, slices.Clone(scopes)))
		if (len(got) == 0) != (len(want) == 0) {
			t.Fatalf("round %d, scopes %q: the walk says %q, the path checks %q", round, scopes, got, want)
		}
		if len(got) > 0 {
			damaged++
		}
		if madeFolder {
			// The path checks also name the files inside a file made a
			// folder (added); the walk names the folder.
			for _, p := range got {
				inside := slices.ContainsFunc(want, func(w string) bool { return strings.HasPrefix(w, p+"/") })
				if !slices.Contains(want, p) && !inside {
					t.Fatalf("round %d, scopes %q: the walk names %s, the path checks do not: %q against %q", round, scopes, p, got, want)
				}
			}
			continue
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d, scopes %q: the walk says %q, the path checks %q", round, scopes, got, want)
		}
	}
	// Most rounds must reach a damaged tree for the comparison to mean
	// anything.
	if damaged < 100 {
		t.Errorf("only %d of 300 rounds were damaged in scope", damaged)
	}
	t.Logf("%d of 300 rounds damaged in scope", damaged)
}

// TestWalkRoots: each scope is walked once, never one inside another.
func TestWalkRoots(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want []string
	}{
		{nil, []string{"."}},
		{[]string{"."}, []string{"."}},
		{[]string{"a", "."}, []string{"."}},
		{[]string{"a/b", "a", "a/"}, []string{"a"}},
		{[]string{"ab", "a"}, []string{"a", "ab"}},
		{[]string{"d/", "c/x", "c/x/y"}, []string{"c/x", "d"}},
		{[]string{"../x"}, []string{"."}},
		{[]string{"a", "a-b", "a/b"}, []string{"a", "a-b"}},
		{[]string{"a/b", "a.c", "a+", "a"}, []string{"a", "a+", "a.c"}},
		{[]string{"./a", "/d", "a/./b"}, []string{"a", "d"}},
	} {
		if got := walkRoots(c.in); !slices.Equal(got, c.want) {
			t.Errorf("walkRoots(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestWalkScopesUnreadable: an entry that cannot be stat'ed or a folder
// that cannot be listed is damage named as such, never skipped and never
// a list of missing files; an added file behind an unsearchable folder
// is not missed. As a user other than root with the folders' modes; as
// root (which reads every folder whatever its mode) with the system
// calls failing as they fail for such a user.
func TestWalkScopesUnreadable(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(dir, "a", "b", "x.c"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "a", "y.c"), []byte("y"), 0o644)
	m, err := makeManifest(dir, "k")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "a", "evil"), 0o755)
	os.WriteFile(filepath.Join(dir, "a", "evil", "e.c"), nil, 0o644)
	if os.Geteuid() != 0 {
		// Listed but not searchable: its entries cannot be stat'ed.
		os.Chmod(filepath.Join(dir, "a", "evil"), 0o644)
		// Searchable but not listable.
		os.Chmod(filepath.Join(dir, "a", "b"), 0o311)
		defer os.Chmod(filepath.Join(dir, "a", "evil"), 0o755)
		defer os.Chmod(filepath.Join(dir, "a", "b"), 0o755)
	} else {
		open, stat := openFolder, statAt
		defer func() { openFolder, statAt = open, stat }()
		openFolder = func(p string) (*os.File, error) {
			if filepath.Base(p) == "b" {
				return nil, &fs.PathError{Op: "open", Path: p, Err: unix.EACCES}
			}
			return open(p)
		}
		statAt = func(fd int, name string, st *unix.Stat_t) error {
			if name == "e.c" {
				return unix.EACCES
			}
			return stat(fd, name, st)
		}
	}
	for _, scopes := range [][]string{{"a"}, nil} {
		got := strings.Join(m.walkScopes(dir, scopes), "\n")
		for _, want := range []string{"a/evil/e.c cannot be read (permission denied)", "a/b cannot be read (permission denied)"} {
			if !strings.Contains(got, want) {
				t.Errorf("scopes %q: no %q in %q", scopes, want, got)
			}
		}
		if strings.Contains(got, "missing") {
			t.Errorf("scopes %q: an unreadable folder's files are called missing: %q", scopes, got)
		}
	}
}
