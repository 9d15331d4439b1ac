package pipeline

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/debian"

	"github.com/patchctl/patchctl/internal/tree"
)

// debianPins are the pins of series/kernels.yaml as their Debian
// versions say (5.10.223, 6.1.192, 6.12.117, 7.2.13, 7.3-rc7).
func debianPins() []*tree.Kernel {
	var ks []*tree.Kernel
	// 6.12 itself: version arithmetic
	for _, p := range [][2]string{{"5.10", "5.10.223-1"}, {"6.1", "6.1.192-3"}, {"6.12", "6.12.117-1~deb12u1"}, {"7.2", "7.2.13-1"}, {"7.3", "7.3~rc7-1~exp1"}} {
		ks = append(ks, &tree.Kernel{Name: p[0], Debian: &debian.Source{Version: p[1]}})
	}
	return ks
}

// TestPlaceTagLikeBase: a tag-like base-commit goes to the pinned kernel
// closest to it that contains it (a stable kernel has its mainline
// release and every one before, and its own line's stable releases up to
// itself; a release candidate has mainline up to itself), and is said to
// be in none when none has it.
func TestPlaceTagLikeBase(t *testing.T) {
	pins := debianPins()
	for _, c := range []struct{ base, want string }{
		// 6.12 itself: version arithmetic
		{"v6.12", "6.12"}, {"v6.12-rc3", "6.12"}, {"6.12.50", "6.12"}, {"v6.12.117", "6.12"}, {"v6.12.118", ""},
		// 6.12 itself: version arithmetic
		{"v6.5", "6.12"}, {"v6.1", "6.1"}, {"v5.4", "5.10"}, {"v5.10.300", ""}, {"v6.13", "7.2"},
		{"v7.3-rc2", "7.3"}, {"v7.3-rc7", "7.3"}, {"v7.3-rc8", ""}, {"v7.3", ""}, {"v7.2.14", ""}, {"v7.2", "7.2"},
	} {
		p := PlaceBase(context.Background(), c.base, nil, pins)
		got := ""
		if p.Pin != nil {
			got = p.Pin.Name
		}
		if got != c.want {
			t.Errorf("base %s: placed in %q, want %q (%s)", c.base, got, c.want, p.Why)
		}
		if got == "" && !strings.Contains(p.Why, "in no pinned kernel") {
			t.Errorf("base %s: %q does not say it is in no pinned kernel", c.base, p.Why)
		}
	}
	if n := Newest(pins); n == nil || n.Name != "7.3" {
		t.Errorf("newest %v", n)
	}
}

// TestPlaceCommitBase: a base-commit that is a commit is placed by a git
// repository (git describe --contains): the first tag that has it, then
// the pinned kernel closest to that; a commit after the last tag, or one
// no repository has, cannot be placed, and the reason says which.
func TestPlaceCommitBase(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := t.TempDir()
	g := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "HOME="+repo, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	commit := func(msg string) string {
		os.WriteFile(filepath.Join(repo, "f"), []byte(msg), 0o644)
		g("add", "f")
		g("commit", "-qm", msg)
		return g("rev-parse", "HEAD")
	}
	g("init", "-q")
	c1 := commit("one")
	g("tag", "v9.8")
	c2 := commit("two")
	commit("three")
	g("tag", "v9.9-rc1")
	c4 := commit("four")
	pins := []*tree.Kernel{
		{Name: "9.8", Git: &tree.GitSource{URL: repo, Tag: "v9.8"}},
		{Name: "9.9", Git: &tree.GitSource{URL: repo, Tag: "v9.9-rc1"}},
	}
	ctx := context.Background()
	for _, c := range []struct{ base, want, why string }{
		{c1, "9.8", "(v9.8) is in 9.8"},
		{c2[:12], "9.9", "(v9.9-rc1) is in 9.9"},
		{c4, "", "but no tag contains it yet"},
		{strings.Repeat("1", 40), "", "does not have it"},
	} {
		p := PlaceBase(ctx, c.base, []string{repo}, pins)
		got := ""
		if p.Pin != nil {
			got = p.Pin.Name
		}
		if got != c.want || !strings.Contains(p.Why, c.why) {
			t.Errorf("base %s: placed in %q (%s), want %q (%s)", c.base, got, p.Why, c.want, c.why)
		}
	}
	if p := PlaceBase(ctx, c2, nil, pins); p.Pin != nil || !strings.Contains(p.Why, "pass --tree or --git") {
		t.Errorf("a commit without a repository: %+v", p)
	}
}

func TestBaseCommitTrailer(t *testing.T) {
	cover := []byte("Subject: [PATCH 0/2] x\n\nbody\n\n-- \nbase-commit: 0123456789abcdef0123456789abcdef01234567\nchange-id: 20260601-x\n")
	if got := BaseCommit([]byte("no trailer\n"), cover); got != "0123456789abcdef0123456789abcdef01234567" {
		t.Errorf("base-commit %q", got)
	}
	if got := BaseCommit([]byte("base-commit:\n")); got != "" {
		t.Errorf("empty base-commit %q", got)
	}
}
