package tree

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes a repository with two commits and a tag on the first.
func gitRepo(t *testing.T) (dir, first, second string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir = t.TempDir()
	g := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org", "HOME="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	g("init", "-q", "-b", "master")
	os.MkdirAll(filepath.Join(dir, "drivers"), 0o755)
	os.WriteFile(filepath.Join(dir, "drivers", "a.c"), []byte("one\n"), 0o644)
	g("add", "-A")
	g("commit", "-qm", "one")
	first = g("rev-parse", "HEAD")
	g("tag", "-a", "v1.0", "-m", "v1.0")
	os.WriteFile(filepath.Join(dir, "drivers", "a.c"), []byte("two\n"), 0o644)
	g("commit", "-qam", "two")
	second = g("rev-parse", "HEAD")
	return dir, first, second
}

func TestPrepareGit(t *testing.T) {
	repo, first, second := gitRepo(t)
	cases := []struct {
		name    string
		src     GitSource
		content string
		fail    string
	}{
		{"tag", GitSource{URL: repo, Tag: "v1.0"}, "one\n", ""},
		{"tag and commit", GitSource{URL: repo, Tag: "v1.0", Commit: first}, "one\n", ""},
		{"commit", GitSource{URL: repo, Commit: second}, "two\n", ""},
		{"tag with the wrong commit", GitSource{URL: repo, Tag: "v1.0", Commit: second}, "", "the lock pins " + second},
		{"missing tag", GitSource{URL: repo, Tag: "v9"}, "", "cloning"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cache{Dir: t.TempDir()}
			k := &Kernel{Name: "g", Git: &tc.src}
			dir, err := c.Prepare(context.Background(), k)
			if tc.fail != "" {
				if err == nil || !strings.Contains(err.Error(), tc.fail) {
					t.Fatalf("error %v, want one saying %q", err, tc.fail)
				}
				if c.Prepared(k) {
					t.Error("marked prepared")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "drivers", "a.c"))
			if err != nil || string(b) != tc.content {
				t.Errorf("content %q (%v), want %q", b, err, tc.content)
			}
		})
	}
}
