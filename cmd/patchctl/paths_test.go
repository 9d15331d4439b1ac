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
	os.WriteFile(filepath.Join(r, "patches", "6.12", "0001-x.patch"), []byte("not touched\n"), 0o644)
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
			if code != 2 || !strings.Contains(errOut, "--out") {
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
