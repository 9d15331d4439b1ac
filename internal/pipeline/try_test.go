package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
)

// whereProject is a project whose two pinned kernels are tags of one
// fake git tree: 9.8 (main.c returns 0) and 9.9-rc1 (it returns 1, and
// a commit in between); head is a commit after the last tag.
func whereProject(t *testing.T) (root, repo string, commits map[string]string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo = t.TempDir()
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
	commits = map[string]string{}
	commit := func(name, main string) {
		os.WriteFile(filepath.Join(repo, "Makefile"), []byte("VERSION = 9\n"), 0o644)
		os.WriteFile(filepath.Join(repo, "main.c"), []byte(main), 0o644)
		g("add", "-A")
		g("commit", "-qm", name)
		commits[name] = g("rev-parse", "HEAD")
	}
	g("init", "-q")
	commit("old", "int main_fn(void)\n{\n\treturn 0;\n}\n")
	g("tag", "v9.8")
	commit("between", "int main_fn(void)\n{\n\treturn 0;\n}\n/* between */\n")
	commit("rc1", "int main_fn(void)\n{\n\treturn 1;\n}\n/* between */\n")
	g("tag", "v9.9-rc1")
	commit("head", "int main_fn(void)\n{\n\treturn 1;\n}\n/* head */\n")
	root = t.TempDir()
	os.MkdirAll(filepath.Join(root, "series"), 0o755)
	os.WriteFile(filepath.Join(root, "series", "kernels.yaml"), []byte(fmt.Sprintf(
		"default: \"9.8\"\nkernels:\n  - name: \"9.8\"\n    git: {url: %q, tag: v9.8}\n  - name: \"9.9\"\n    git: {url: %q, tag: v9.9-rc1}\n", repo, repo)), 0o644)
	return root, repo, commits
}

func patchWithBase(base string) string {
	return "From: Pat Developer <pat@example.org>\nSubject: [PATCH] main: return 1\n\nReturn 1.\n\nSigned-off-by: Pat Developer <pat@example.org>\n---\n" +
		"diff --git a/main.c b/main.c\n--- a/main.c\n+++ b/main.c\n@@ -1,4 +1,4 @@\n int main_fn(void)\n {\n-\treturn 0;\n+\treturn 1;\n }\n" +
		"\nbase-commit: " + base + "\n-- \n2.39.5\n"
}

// TestTryKernelFromBaseCommit: try tests on the pinned kernel that the
// base-commit trailer (b4's; in the patch or the cover letter) is in,
// placed by --git's repository or as a tag, and says why; it says
// plainly when the base cannot be placed; --kernel newest is the newest
// pinned kernel.
func TestTryKernelFromBaseCommit(t *testing.T) {
	root, repo, commits := whereProject(t)
	lock, err := tree.LoadLock(filepath.Join(root, "series", "kernels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cover := "From a@b Mon Sep 17 00:00:00 2001\nFrom: Pat Developer <pat@example.org>\nSubject: [PATCH 0/1] main\nMessage-ID: <cover@example.org>\n\nA cover.\n\nbase-commit: %s\n\nFrom a@b Mon Sep 17 00:00:00 2001\nFrom: Pat Developer <pat@example.org>\nSubject: [PATCH 1/1] main: return 1\nMessage-ID: <one@example.org>\nIn-Reply-To: <cover@example.org>\n\nReturn 1.\n\nSigned-off-by: Pat Developer <pat@example.org>\n---\ndiff --git a/main.c b/main.c\n--- a/main.c\n+++ b/main.c\n@@ -1,4 +1,4 @@\n int main_fn(void)\n {\n-\treturn 0;\n+\treturn 1;\n }\n"
	for i, c := range []struct {
		text, git string
		kernels   []string
		want, why string
	}{
		{patchWithBase(commits["old"]), repo, nil, "9.8", "(v9.8) is in 9.8"},
		{patchWithBase(commits["between"]), repo, nil, "9.9", "(v9.9-rc1) is in 9.9"},
		{fmt.Sprintf(cover, commits["between"][:12]), repo, nil, "9.9", "(v9.9-rc1) is in 9.9"},
		{patchWithBase("v9.9-rc1"), "", nil, "9.9", "(v9.9-rc1) is in 9.9"},
		{patchWithBase(commits["head"]), repo, nil, "9.8", "no tag contains it yet"},
		{patchWithBase(commits["between"]), "", nil, "9.8", "cannot be placed"},
		{patchWithBase("v10.1"), "", nil, "9.8", "is in no pinned kernel"},
		{patchWithBase("v9.8"), "", []string{"newest"}, "9.9", "the newest pinned kernel"},
	} {
		f := filepath.Join(dir, fmt.Sprintf("%d.mbox", i))
		os.WriteFile(f, []byte(c.text), 0o644)
		// --git's repository places commits; its range is not read here.
		where := pipeline.TryWhere{Git: c.git, Kernels: c.kernels}
		in, err := pipeline.ReadTryInput(context.Background(), pipeline.TryInputOptions{Sources: []string{f}})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		w := &pipeline.Workspace{Root: root, Lock: lock, CacheDir: t.TempDir()}
		place, err := w.TryKernels(context.Background(), where, in)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		ks := place.Kernels
		if len(ks) != 1 || ks[0].Name != c.want || !strings.Contains(strings.Join(place.Where, "; "), c.why) {
			t.Errorf("case %d: kernel %v (%s), want %s (%s)", i, ks, place.Where, c.want, c.why)
		}
	}
}

// TestAlreadyAppliedElsewhere: a patch already in the kernel tested is
// said to be, with the newest pinned kernel where it is not (checked by
// applying it to its prepared tree), or the newer kernels not checked
// when their trees are not prepared; and when every newer one has it.
func TestAlreadyAppliedElsewhere(t *testing.T) {
	root, repo, _ := whereProject(t)
	// v9.10: main.c returns 0 again (the patch is not in it).
	for _, args := range [][]string{{"revert", "--no-edit", "HEAD~1"}, {"tag", "v9.10"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "HOME="+repo, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "p.patch")
	os.WriteFile(f, []byte(patchWithBase("v9.8")), 0o644)
	in, err := pipeline.ReadTryInput(context.Background(), pipeline.TryInputOptions{Sources: []string{f}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	applied := func(c *tree.Cache, k *tree.Kernel) *pipeline.Result {
		pristine, err := c.Prepare(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		o, err := apply.RunGiven(ctx, apply.Given{Kernel: k, Pristine: pristine, Patches: in.Patches, Sources: in.Sources, Allow: []string{"already-applied", "conflict", "already-upstream"}})
		if err != nil {
			t.Fatal(err)
		}
		return &pipeline.Result{Kernels: []*pipeline.Kernel{{Name: k.Name, Apply: o.Result.Results}}}
	}
	lockWith := func(pins ...string) *tree.Lock {
		var b strings.Builder
		b.WriteString("default: \"9.8\"\nkernels:\n")
		for _, p := range pins {
			fmt.Fprintf(&b, "  - name: %q\n    git: {url: %q, tag: v%s}\n", strings.TrimSuffix(p, "-rc1"), repo, p)
		}
		os.WriteFile(filepath.Join(root, "series", "kernels.yaml"), []byte(b.String()), 0o644)
		l, err := tree.LoadLock(filepath.Join(root, "series", "kernels.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	l := lockWith("9.8", "9.9-rc1", "9.10")
	k99, _ := l.Find("9.9")
	k910, _ := l.Find("9.10")
	c := &tree.Cache{Dir: t.TempDir()}
	r := applied(c, k99)
	if d := r.Kernels[0].Apply[0].Disposition; d != "already-applied" {
		t.Fatalf("9.9: %s", d)
	}
	// 9.10's tree not prepared yet.
	got := pipeline.Elsewhere(ctx, l, c, []*tree.Kernel{k99}, r, in)
	if len(got) != 1 || !strings.Contains(got[0], "9.9 already has") || !strings.Contains(got[0], "not checked (trees not prepared: 9.10)") {
		t.Errorf("9.10 not prepared: %q", got)
	}
	applied(c, k910)
	got = pipeline.Elsewhere(ctx, l, c, []*tree.Kernel{k99}, r, in)
	if len(got) != 1 || !strings.Contains(got[0], "the newest pinned kernel where none is: 9.10 (checked") {
		t.Errorf("9.10 prepared: %q", got)
	}
	// Without 9.10, no newer kernel lacks it.
	l = lockWith("9.8", "9.9-rc1")
	got = pipeline.Elsewhere(ctx, l, c, []*tree.Kernel{k99}, r, in)
	if len(got) != 1 || !strings.Contains(got[0], "every newer pinned kernel has them too") {
		t.Errorf("9.9 the newest: %q", got)
	}
}

// TestRecordWritesPatchesManifestSeries: try --record keeps the messages
// as received under patches/NAME/, adds an entry per patch to the
// kernel's manifest with the disposition it has there, refreshes
// series/<kernel>/ and says what it wrote, in that order; a second
// record of the same name replaces its own folder, and a folder
// patchctl did not write is refused.
func TestRecordWritesPatchesManifestSeries(t *testing.T) {
	root, _, _ := whereProject(t)
	lock, err := tree.LoadLock(filepath.Join(root, "series", "kernels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k, _ := lock.Find("9.8")
	os.MkdirAll(filepath.Join(root, "series", "9.8"), 0o755)
	os.WriteFile(filepath.Join(root, "series", "9.8", "manifest.yaml"), []byte("kernel: \"9.8\"\npatches: []\n"), 0o644)
	f := filepath.Join(t.TempDir(), "p.patch")
	os.WriteFile(f, []byte(patchWithBase("v9.8")), 0o644)
	in, err := pipeline.ReadTryInput(context.Background(), pipeline.TryInputOptions{Sources: []string{f}})
	if err != nil {
		t.Fatal(err)
	}
	c := &tree.Cache{Dir: t.TempDir()}
	res := &pipeline.Result{Kernels: []*pipeline.Kernel{{Name: "9.8", Stages: []*pipeline.Stage{{Name: pipeline.StageApply, Status: vocab.Pass}}}}}
	o := pipeline.RecordOptions{Root: root, Lock: lock, Cache: c, Name: "mine", Kernels: []*tree.Kernel{k}, Result: res, Patches: in.Patches, Raw: in.Raw}
	for round := 0; round < 2; round++ {
		got, err := pipeline.Record(context.Background(), o)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		want := []string{"patches/mine/0001-main-return-1.eml", "series/9.8/manifest.yaml", "series/9.8/"}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("round %d: recorded %q, want %q", round, got, want)
		}
	}
	m, _ := os.ReadFile(filepath.Join(root, "series", "9.8", "manifest.yaml"))
	if !strings.Contains(string(m), "source: patches/mine/0001-main-return-1.eml") || !strings.Contains(string(m), "expect: applies") {
		t.Errorf("manifest:\n%s", m)
	}
	if ps, _ := filepath.Glob(filepath.Join(root, "series", "9.8", "*.patch")); len(ps) != 1 {
		t.Errorf("series/9.8: %d patches, want 1", len(ps))
	}
	// A folder of that name that try did not write is left alone.
	os.Remove(filepath.Join(root, "patches", "mine", ".patchctl-try"))
	if _, err := pipeline.Record(context.Background(), o); !errors.Is(err, errs.ErrUsage) {
		t.Errorf("patches/mine not try's: %v", err)
	}
	// A kernel whose apply stage failed records nothing.
	res.Kernels[0].Stages[0].Status = vocab.Fail
	if _, err := pipeline.Record(context.Background(), o); !errors.Is(err, errs.ErrFindings) {
		t.Errorf("apply failed: %v", err)
	}
}
