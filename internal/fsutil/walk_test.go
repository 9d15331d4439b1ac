package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// TestListFolders: every folder the callback names is listed once, from
// each start, with its entries in byte order and a descriptor they can be
// stat'ed against; a folder that cannot be opened reaches the callback as
// its error (without a descriptor), and nothing under it is listed.
func TestListFolders(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a/b/c", "a/x", "d", "e/f"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	for _, f := range []string{"a/z.c", "a/b/y.c", "a/b/c/x.c", "d/w.c", "e/f/v.c"} {
		os.WriteFile(filepath.Join(dir, f), nil, 0o644)
	}
	denied := errors.New("denied")
	open := func(p string) (*os.File, error) {
		if filepath.Base(p) == "e" {
			return nil, denied
		}
		return os.Open(p)
	}
	var (
		mu     sync.Mutex
		listed = map[string][]string{}
		failed []string
	)
	ListFolders(dir, []string{"a", "d", "e"}, open, func(rel string, fd int, names []string, err error) (subs []string) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if !errors.Is(err, denied) || fd != -1 {
				t.Errorf("%s: error %v, fd %d", rel, err, fd)
			}
			failed = append(failed, rel)
			return nil
		}
		if _, twice := listed[rel]; twice {
			t.Errorf("%s listed twice", rel)
		}
		if !slices.IsSorted(names) {
			t.Errorf("%s: names not sorted: %q", rel, names)
		}
		listed[rel] = names
		for _, n := range names {
			fi, err := os.Stat(filepath.Join(dir, rel, n))
			if err != nil {
				t.Fatal(err)
			}
			if fi.IsDir() {
				subs = append(subs, rel+"/"+n)
			}
		}
		return subs
	})
	var got []string
	for rel := range listed {
		got = append(got, rel)
	}
	slices.Sort(got)
	want := []string{"a", "a/b", "a/b/c", "a/x", "d"}
	if !slices.Equal(got, want) || !slices.Equal(failed, []string{"e"}) {
		t.Errorf("listed %q (failed %q), want %q (failed [e])", got, failed, want)
	}
	if !slices.Equal(listed["a"], []string{"b", "x", "z.c"}) {
		t.Errorf("a: %q", listed["a"])
	}
}
