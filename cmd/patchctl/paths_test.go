package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/spf13/cobra"
)

// outVerbs walks the command tree for every verb that has an --out flag:
// a verb added later is covered without naming it here.
func outVerbs(t *testing.T) [][]string {
	t.Helper()
	var verbs [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.Flags().Lookup("out") != nil {
			verbs = append(verbs, path)
		}
		for _, s := range c.Commands() {
			walk(s, append(append([]string(nil), path...), s.Name()))
		}
	}
	walk(newRootCmd(&IOStreams{}), nil)
	if len(verbs) < 5 {
		t.Fatalf("only %d verbs with --out found: %v", len(verbs), verbs)
	}
	return verbs
}

// digest hashes every path, mode, link target and file content under dir.
func digest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	var paths []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			paths = append(paths, p)
		}
		return nil
	})
	sort.Strings(paths)
	for _, p := range paths {
		st, err := os.Lstat(p)
		if err != nil {
			continue
		}
		l, _ := os.Readlink(p)
		fmt.Fprintf(h, "%s %v %s\n", p, st.Mode(), l)
		if st.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// fixtureRepo is a repository with the real lock, a series and patches/.
func fixtureRepo(t *testing.T) string {
	t.Helper()
	real := testenv.RepoRoot(t)
	r := t.TempDir()
	for _, d := range []string{"series/6.12", "patches/6.12", "out"} {
		os.MkdirAll(filepath.Join(r, d), 0o755)
	}
	b, err := os.ReadFile(filepath.Join(real, "series", "kernels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(r, "series", "kernels.yaml"), b, 0o644)
	os.WriteFile(filepath.Join(r, "patches", testkernel.Default, "0001-x.patch"), []byte("not touched\n"), 0o644)
	return r
}

// TestOutPolicyEveryVerb: one table, every verb with --out against /, .,
// the repository root, a folder above it, patches/ and series/ and a folder
// in them, and symbolic links to the repository and to patches/: each is
// a usage error (exit 2) naming --out, and nothing is written anywhere.
func TestOutPolicyEveryVerb(t *testing.T) {
	r := fixtureRepo(t)
	links := t.TempDir()
	toRepo, toPatches, toAbove := filepath.Join(links, "repo"), filepath.Join(links, "patches"), filepath.Join(links, "above")
	os.Symlink(r, toRepo)
	os.Symlink(filepath.Join(r, "patches"), toPatches)
	os.Symlink(filepath.Dir(r), toAbove)
	patch := filepath.Join(t.TempDir(), "0001-fix.patch")
	os.WriteFile(patch, []byte("From: A <a@example.org>\nSubject: [PATCH] x\n\n---\n a | 1 +\n\ndiff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -0,0 +1 @@\n+x\n"), 0o644)
	cache := t.TempDir()
	t.Chdir(r)
	outs := []string{"/", ".", r, filepath.Dir(r), "patches", "series", "patches/6.12", "series/6.12/new",
		toRepo, toRepo + "/", toPatches, toPatches + "/6.12", toAbove, filepath.Join(toRepo, "series")}
	rootList := func() string {
		ents, _ := os.ReadDir("/")
		var s []string
		for _, e := range ents {
			s = append(s, e.Name())
		}
		return strings.Join(s, " ")
	}
	repoBefore, linksBefore, rootBefore := digest(t, r), digest(t, links), rootList()
	cases := 0
	for _, verb := range outVerbs(t) {
		c, _, _ := newRootCmd(&IOStreams{}).Find(verb)
		var pos []string
		if c.Args == nil || c.Args(c, []string{patch}) == nil {
			pos = []string{patch}
		}
		for _, out := range outs {
			cases++
			args := append(append([]string{"--root", r, "--cache", cache, "--offline"}, verb...), "--out", out)
			code, stdout, errOut := run(t, append(args, pos...)...)
			if code != 2 || !strings.Contains(errOut, "--out "+out+" is ") || !strings.Contains(errOut, "name a folder of its own") {
				t.Errorf("%s --out %s: exit %d, want 2 naming --out\n%s%s", strings.Join(verb, " "), out, code, stdout, errOut)
			}
		}
	}
	if digest(t, r) != repoBefore {
		t.Error("something was written into the repository")
	}
	if digest(t, links) != linksBefore || rootList() != rootBefore {
		t.Error("something was written next to the links or into /")
	}
	t.Logf("%d verbs × %d folders: %d cases", cases/len(outs), len(outs), cases)
	// A folder of its own, inside the repository or out, is taken.
	for _, out := range []string{filepath.Join(r, "out", "mine"), filepath.Join(toRepo, "out", "linked"), filepath.Join(t.TempDir(), "x")} {
		if _, err := checkOut(out, r); err != nil {
			t.Errorf("--out %s refused: %v", out, err)
		}
	}
}

// TestCacheMustBePrivate: with no PATCHCTL_CACHE, HOME or XDG_CACHE_HOME
// there is no cache (exit 3 saying what to set), not a shared /tmp one;
// a cache that others may write or that another user owns is refused
// (exit 3 saying how to fix it) before anything in it is used, as a link
// to one is; a new cache is made private (0700).
func TestCacheMustBePrivate(t *testing.T) {
	r := fixtureRepo(t)
	t.Setenv("PATCHCTL_CACHE", "")
	t.Setenv("HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	shared := filepath.Join(os.TempDir(), "patchctl")
	_, sharedErr := os.Lstat(shared)
	for _, verb := range [][]string{{"tree", "list"}, {"tree", "verify"}, {"tree", "prepare"}, {"apply"}} {
		code, _, errOut := run(t, append([]string{"--root", r, "--offline"}, verb...)...)
		if code != 3 || !strings.Contains(errOut, "set PATCHCTL_CACHE") {
			t.Errorf("%v without HOME: exit %d, want 3 saying to set PATCHCTL_CACHE: %s", verb, code, errOut)
		}
	}
	if _, err := os.Lstat(shared); sharedErr != nil && err == nil {
		t.Errorf("%s was made", shared)
	}
	t.Setenv("HOME", t.TempDir())
	planted := func(mode os.FileMode) string {
		d := filepath.Join(t.TempDir(), "cache")
		os.MkdirAll(filepath.Join(d, "trees", testkernel.Default, "drivers"), 0o755)
		os.WriteFile(filepath.Join(d, "trees", testkernel.Default, "Makefile"), []byte("planted\n"), 0o644)
		os.Chmod(d, mode)
		return d
	}
	type tc struct{ name, dir, want string }
	cases := []tc{
		{"world-writable", planted(0o777), "writable by others"},
		{"group-writable", planted(0o770), "writable by others"},
		{"sticky world-writable", planted(0o1777), "writable by others"},
	}
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(planted(0o757), link)
	cases = append(cases, tc{"a link to a world-writable folder", link, "writable by others"})
	if os.Geteuid() == 0 {
		d := planted(0o755)
		if err := os.Chown(d, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, tc{"another user's", d, "belongs to user 65534"})
	}
	for _, c := range cases {
		for _, how := range []string{"--cache", "PATCHCTL_CACHE"} {
			args := []string{"--root", r, "--offline", "tree", "list"}
			t.Setenv("PATCHCTL_CACHE", "")
			if how == "--cache" {
				args = append([]string{"--cache", c.dir}, args...)
			} else {
				t.Setenv("PATCHCTL_CACHE", c.dir)
			}
			code, out, errOut := run(t, args...)
			if code != 3 || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "PATCHCTL_CACHE") || strings.Contains(out, testkernel.Default) {
				t.Errorf("%s cache by %s: exit %d, want 3 saying %q\n%s%s", c.name, how, code, c.want, out, errOut)
			}
		}
	}
	t.Setenv("PATCHCTL_CACHE", "")
	fresh := filepath.Join(t.TempDir(), "new", "cache")
	if code, _, errOut := run(t, "--root", r, "--offline", "--cache", fresh, "tree", "list"); code != 0 {
		t.Fatalf("a new cache: exit %d %s", code, errOut)
	}
	if st, err := os.Stat(fresh); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("a new cache is not private: %v", err)
	}
	// HOME alone is enough: the cache goes under it.
	if code, _, errOut := run(t, "--root", r, "--offline", "tree", "list"); code != 0 {
		t.Errorf("with HOME: exit %d %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(os.Getenv("HOME"), ".cache", "patchctl")); err != nil {
		t.Errorf("no cache under HOME: %v", err)
	}
}
