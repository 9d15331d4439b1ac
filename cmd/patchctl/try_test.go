package main

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/report/reportcheck"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/mkthread"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/tree"
)

// cleanClone copies the repository's tracked files (what a clean clone
// holds, with this checkout's changes) into a fresh folder.
func cleanClone(t *testing.T) string {
	t.Helper()
	root := testenv.RepoRoot(t)
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("git ls-files: %v", err)
	}
	dst := t.TempDir()
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if f == "" || f == "READ-ME-FIRST-HELPER-RULES.md" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // deleted in the checkout
		}
		st, _ := os.Stat(filepath.Join(root, f))
		os.MkdirAll(filepath.Dir(filepath.Join(dst, f)), 0o755)
		if err := os.WriteFile(filepath.Join(dst, f), b, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// tryPatches are patches written here (not seeds) against 6.12's
// nvmet-rdma: comments only, so both kernels boot and pass.
type tryPatches struct {
	one        string    // a single patch file's text
	v1, v2     [2]string // the thread's diffs
	rdmaTarget []byte
}

func newTryPatches(t *testing.T, pristine string) *tryPatches {
	t.Helper()
	const path = "drivers/nvme/target/rdma.c"
	src, err := os.ReadFile(filepath.Join(pristine, path))
	if err != nil {
		t.Fatal(err)
	}
	d := func(after int, text string) string { return mkthread.InsertAfter(path, src, after, "/* "+text+" */") }
	return &tryPatches{
		one:        mailWith("nvmet-rdma: note where the verbs headers start", "Signed-off-by: Pat Developer <pat@example.org>\n", d(20, "verbs and RDMA CM")),
		v1:         [2]string{d(20, "v1: first"), d(120, "v1: second")},
		v2:         [2]string{d(20, "RDMA verbs follow"), d(120, "the target's queue pairs")},
		rdmaTarget: src,
	}
}

func tryThread(p *tryPatches) []mkthread.Msg {
	return mkthread.Series([2]string{"nvmet-rdma: note the verbs headers", "nvmet-rdma: note the queue pairs"}, p.v1, p.v2)
}

// e2e skips with -short: it builds and boots.
func e2e(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: try builds and boots kernels")
	}
	_, pristine := testenv.Kernel(t, testkernel.Default)
	return pristine
}

type tryJSON struct {
	Threads []struct {
		Series   string
		Version  int
		Subjects []string
		Cover    *struct{ Subject string }
		Skipped  []struct{ Version int }
		Trailers []struct{ Trailer, To string }
	}
	Run struct {
		Verdict string
		Kernels []struct {
			Kernel  string
			Source  string
			Verdict string
			Stages  []struct{ Name, Status string }
			Apply   []struct{ Source, Disposition string }
			Builds  map[string]struct {
				CcacheStats *struct{ Hits, Misses int } `json:"ccache_stats"`
				BuildDir    string                      `json:"build_dir"`
			}
		}
	}
}

func readTryJSON(t *testing.T, out string) *tryJSON {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "try.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r tryJSON
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// passedAll checks that every stage ran and passed.
func passedAll(t *testing.T, r *tryJSON, what string) {
	t.Helper()
	if r.Run.Verdict != "PASS" || len(r.Run.Kernels) != 1 {
		t.Errorf("%s: verdict %s with %d kernels", what, r.Run.Verdict, len(r.Run.Kernels))
		return
	}
	got := map[string]string{}
	for _, s := range r.Run.Kernels[0].Stages {
		got[s.Name] = s.Status
	}
	for _, n := range []string{"prepare", "apply", "check", "build-baseline", "build-patched", "boot-baseline", "boot-patched", "compare"} {
		if got[n] != "PASS" {
			t.Errorf("%s: stage %s is %q, want PASS", what, n, got[n])
		}
	}
}

func tryRun(t *testing.T, root string, args ...string) (string, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := run(t, append([]string{"--root", root, "try", "--out", out}, args...)...)
	if code != 0 {
		t.Fatalf("try %v: exit %d\n%s\n%s", args, code, stdout, stderr)
	}
	if !strings.Contains(stdout, "verdict: PASS") {
		t.Errorf("try %v prints no verdict:\n%s", args, stdout)
	}
	return out, stdout
}

// A patch file written here, on pinned 6.12, with no manifest: every
// stage, and the verdict.
func TestTryPatchFile(t *testing.T) {
	pristine := e2e(t)
	root := cleanClone(t)
	p := newTryPatches(t, pristine)
	f := filepath.Join(t.TempDir(), "my.patch")
	os.WriteFile(f, []byte(p.one), 0o644)
	out, _ := tryRun(t, root, f, "--kernel", testkernel.Default)
	r := readTryJSON(t, out)
	passedAll(t, r, "my.patch")
	if len(r.Run.Kernels) == 1 && (len(r.Run.Kernels[0].Apply) != 1 || r.Run.Kernels[0].Apply[0].Disposition != "applies") {
		t.Errorf("dispositions: %+v", r.Run.Kernels[0].Apply)
	}
	for _, f := range []string{"result.json", "summary.txt", "junit.xml", "kcidb.json", "try.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
	// The reports are what their consumers accept, as run's are.
	for _, p := range reportcheck.Folder(t, out, pristine) {
		t.Error(p)
	}
	// No file of the repository changed.
	if out, err := exec.Command("git", "-C", testenv.RepoRoot(t), "status", "--porcelain", "--", "series", "patches").Output(); err != nil || len(out) > 0 {
		t.Errorf("the repository changed: %s %v", out, err)
	}
}

// A conflict fails the verdict unless --allow names it.
func TestTryConflictNeedsAllow(t *testing.T) {
	pristine := e2e(t)
	root := cleanClone(t)
	p := newTryPatches(t, pristine)
	bad := strings.Replace(p.one, " #include <rdma/ib_verbs.h>", " #include <rdma/no_such_header.h>", 1)
	f := filepath.Join(t.TempDir(), "conflict.patch")
	os.WriteFile(f, []byte(bad), 0o644)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := run(t, "--root", root, "try", "--out", out, "--transport", "rxe", f)
	if code != 1 || !strings.Contains(stdout+stderr, "--allow conflict") {
		t.Errorf("conflict: exit %d, want 1 naming --allow conflict\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "result.json")); err != nil {
		t.Errorf("a failed try writes result.json: %v", err)
	}
}

// localTree makes a git repository of the 6.12 tree with one local
// commit, cheaply: the files are hardlinks of the pristine tree (nothing
// ever writes through them: patchctl replaces files by rename, and the
// local commit writes a new file), and git tracks only what the commits
// name (the Debian tree's own .gitignore has /*, so git ignores the rest,
// as it would ignore build output in a developer's checkout). The path is
// fixed under the cache so that its work tree and builds stay
// incremental from one test run to the next.
func localTree(t *testing.T, pristine string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := filepath.Join(testenv.Cache().Dir, "test-trees", "issue15-local-6.12")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(pristine, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(pristine, p)
		target := filepath.Join(dir, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, target)
		}
		return os.Link(p, target)
	})
	if err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=Pat Developer", "-c", "user.email=pat@example.org", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-11-20T10:00:00Z", "GIT_COMMITTER_DATE=2026-11-20T10:00:00Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-f", "Makefile", "drivers/nvme/target/rdma.c", "drivers/nvme/host/rdma.c")
	git("commit", "-q", "-m", "linux 6.12 (the files this test touches)")
	notes := filepath.Join(dir, "Documentation", "nvme", "local-notes.rst")
	os.MkdirAll(filepath.Dir(notes), 0o755)
	os.WriteFile(notes, []byte("Local notes\n===========\n\nA developer's own commit.\n"), 0o644)
	git("add", "-f", "Documentation/nvme/local-notes.rst")
	git("commit", "-q", "-m", "Documentation: local notes")
	return dir
}

// The same patch on a local git tree (--tree), never written to, with its
// identity from git; and as a commit of a git repository (--git).
func TestTryTreeAndGit(t *testing.T) {
	pristine := e2e(t)
	root := cleanClone(t)
	p := newTryPatches(t, pristine)
	dir := localTree(t, pristine)
	k, err := tree.Local(context.Background(), dir, "", func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	// 6.12 itself: the prepared tree's release
	if k.Local.Head == "" || k.Local.Release != "6.12.117" || k.Local.Series != "6.12" {
		t.Errorf("local tree: %+v", k.Local)
	}
	f := filepath.Join(t.TempDir(), "my.patch")
	os.WriteFile(f, []byte(p.one), 0o644)
	// The pinned kernel's baseline, built (or reused) first: the local
	// tree is the same source at another path, so its build folder
	// starts as a copy of the pinned one's, not a second cold build.
	if code, stdout, stderr := run(t, "--root", root, "build", "--kernel", testkernel.Default, "--variant", "baseline"); code != 0 {
		t.Fatalf("build --kernel %s: exit %d\n%s\n%s", testkernel.Default, code, stdout, stderr)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "drivers/nvme/target/rdma.c"))
	out, stdout := tryRun(t, root, f, "--tree", dir)
	r := readTryJSON(t, out)
	passedAll(t, r, "--tree")
	if len(r.Run.Kernels) == 1 {
		if b, ok := r.Run.Kernels[0].Builds["baseline"]; !ok || b.CcacheStats == nil {
			t.Errorf("--tree: the baseline build records no ccache counts (ccache not installed?)")
		} else if c := b.CcacheStats; c.Hits+c.Misses == 0 {
			// The local tree's folder, from an earlier run of this
			// test, was up to date (a fresh cache compiles over 1,000).
			t.Logf("--tree: the local tree's baseline compiled nothing: its folder was up to date")
		} else if c.Hits+c.Misses > 200 {
			// The local tree is the pinned tree at another path: its
			// folder is a copy of the pinned baseline's (seedLocal),
			// and make redoes what names the folder (the modules'
			// links), not the tree.
			t.Errorf("--tree: the local tree's baseline compiled %d files (%d from ccache): not seeded from the pinned kernel's build (want a copy of its folder, under 200 compiles)", c.Hits+c.Misses, c.Hits)
		} else {
			t.Logf("--tree: the local tree's baseline, seeded from the pinned build: %d compiles, %d from ccache", c.Hits+c.Misses, c.Hits)
		}
		// kbuild's dependency records of objects ccache gave back name
		// the local tree's build, not the pinned tree that filled the
		// cache: an edit of the local tree rebuilds them.
		if b := r.Run.Kernels[0].Builds["baseline"]; b.BuildDir != "" {
			pinned := filepath.Join(testenv.Cache().Dir, "build", testkernel.Default)
			for _, rec := range []string{"fs/proc/.base.o.cmd", "net/core/.dev.o.cmd", "drivers/nvme/host/.rdma.o.cmd"} {
				b, err := os.ReadFile(filepath.Join(b.BuildDir, rec))
				if err != nil {
					t.Errorf("--tree: %v", err)
				} else if strings.Contains(string(b), pinned+"/") {
					t.Errorf("--tree: %s names the pinned tree %s", rec, pinned)
				}
			}
		}
	}
	if len(r.Run.Kernels) == 1 && !strings.Contains(r.Run.Kernels[0].Source, "git:"+k.Local.Head) {
		t.Errorf("--tree source %q does not name HEAD %s", r.Run.Kernels[0].Source, k.Local.Head)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "drivers/nvme/target/rdma.c"))
	if string(before) != string(after) {
		t.Error("--tree wrote into the local tree")
	}
	if st, _ := exec.Command("git", "-C", dir, "status", "--porcelain").Output(); len(st) > 0 {
		t.Errorf("--tree left changes in the local tree: %s", st)
	}
	_ = stdout

	// --git: the same change committed in the local repository.
	target := filepath.Join(dir, "drivers/nvme/target/rdma.c")
	changed := strings.Replace(string(p.rdmaTarget), "#include <rdma/ib_verbs.h>\n", "/* verbs and RDMA CM */\n#include <rdma/ib_verbs.h>\n", 1)
	os.Remove(target) // a hardlink of the pristine tree: replace, never write through
	os.WriteFile(target, []byte(changed), 0o644)
	cmd := exec.Command("git", "-C", dir, "-c", "user.name=Pat Developer", "-c", "user.email=pat@example.org", "commit", "-q", "-a",
		"-m", "nvmet-rdma: note where the verbs headers start\n\nSigned-off-by: Pat Developer <pat@example.org>")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v\n%s", err, b)
	}
	out, _ = tryRun(t, root, "--git", dir, "HEAD~1..HEAD", "--kernel", testkernel.Default)
	r = readTryJSON(t, out)
	passedAll(t, r, "--git")
	if len(r.Threads) != 1 || len(r.Threads[0].Subjects) != 1 || !strings.Contains(r.Threads[0].Subjects[0], "note where the verbs headers start") {
		t.Errorf("--git took %+v", r.Threads)
	}
}

// A thread by Message-ID, from a public-inbox archive made here and from
// a local HTTP server: v2 with the trailers, v1 skipped; then --record,
// and the next patchctl run checks it as a regression.
func TestTryMsgIDInboxLoreRecord(t *testing.T) {
	pristine := e2e(t)
	root := cleanClone(t)
	p := newTryPatches(t, pristine)
	msgs := tryThread(p)
	inbox := t.TempDir()
	if err := mkthread.Inbox(inbox, append([]mkthread.Msg{mkthread.Unrelated(p.v1[0])}, msgs...)); err != nil {
		t.Fatal(err)
	}
	check := func(out, stdout, what string) {
		t.Helper()
		r := readTryJSON(t, out)
		passedAll(t, r, what)
		if len(r.Threads) != 1 {
			t.Fatalf("%s: %d threads", what, len(r.Threads))
		}
		th := r.Threads[0]
		if th.Version != 2 || len(th.Subjects) != 2 || th.Cover == nil || !strings.Contains(th.Cover.Subject, mkthread.CoverSubject) {
			t.Errorf("%s: took %+v", what, th)
		}
		if len(th.Skipped) != 1 || th.Skipped[0].Version != 1 || !strings.Contains(stdout, "skipped v1") {
			t.Errorf("%s: does not say v1 was skipped: %+v\n%s", what, th.Skipped, stdout)
		}
		want := map[string]bool{"Reviewed-by: Rita Reviewer <rita@example.org>": false, "Tested-by: Tom Tester <tom@example.org>": false, "Acked-by: Ann Maintainer <ann@example.org>": false}
		for _, tr := range th.Trailers {
			if _, ok := want[tr.Trailer]; ok {
				want[tr.Trailer] = true
			}
		}
		for tr, ok := range want {
			if !ok {
				t.Errorf("%s: trailer %q not collected: %+v", what, tr, th.Trailers)
			}
		}
		// The trailers are in the patches that were applied and checked.
		pats, _ := filepath.Glob(filepath.Join(out, "patches", testkernel.Default, "*.patch"))
		if len(pats) != 2 {
			t.Fatalf("%s: %d regenerated patches", what, len(pats))
		}
		b, _ := os.ReadFile(pats[1])
		if !strings.Contains(string(b), "Reviewed-by: Rita Reviewer") || !strings.Contains(string(b), "Tested-by: Tom Tester") {
			t.Errorf("%s: 2/2 as applied lacks the trailers:\n%s", what, b)
		}
	}
	out, stdout := tryRun(t, root, "--msgid", "<"+mkthread.Cover+">", "--inbox", inbox, "--kernel", testkernel.Default)
	check(out, stdout, "--inbox")

	mbox := mkthread.Mbox(msgs)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.EscapedPath() != "/all/v2-2@example.org/t.mbox.gz" {
			http.NotFound(w, r)
			return
		}
		w.Write(mkthread.Gzip(mbox))
	}))
	defer srv.Close()
	out, stdout = tryRun(t, root, "--msgid", "v2-2@example.org", "--lore", srv.URL+"/all", "--kernel", testkernel.Default, "--record", "nvmet-rdma-notes")
	check(out, stdout, "--lore")

	// --record: patches/, the manifest, series/; then run and refresh.
	ents, _ := os.ReadDir(filepath.Join(root, "patches", "nvmet-rdma-notes"))
	if len(ents) != 3 { // two messages and the mark
		t.Errorf("patches/nvmet-rdma-notes holds %d files", len(ents))
	}
	m, _ := os.ReadFile(filepath.Join(root, "series", testkernel.Default, "manifest.yaml"))
	if !strings.Contains(string(m), "source: patches/nvmet-rdma-notes/") || !strings.Contains(string(m), "Reviewed-by: Rita Reviewer") ||
		!strings.Contains(string(m), "expect_inline_capsules") {
		t.Errorf("manifest after --record:\n%s", m)
	}
	if code, stdout, stderr := run(t, "--root", root, "refresh", "--kernel", testkernel.Default, "--check"); code != 0 {
		t.Errorf("refresh --check after --record: exit %d\n%s%s", code, stdout, stderr)
	}
	start := time.Now()
	runOut := filepath.Join(t.TempDir(), "run")
	if code, stdout, stderr := run(t, "--root", root, "run", "--kernel", testkernel.Default, "--out", runOut); code != 0 {
		t.Errorf("run after --record: exit %d\n%s%s", code, stdout, stderr)
	}
	t.Logf("run after --record: %s", time.Since(start).Round(time.Second))
}

// Input errors of try: exit 2 and reports that say why.
func TestTryInputErrors(t *testing.T) {
	root := testenv.RepoRoot(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{}, "nothing to try"},
		{[]string{"--msgid", "a@b"}, "exactly one of --inbox"},
		{[]string{"--inbox", t.TempDir()}, "go with --msgid"},
		{[]string{"--expect-inline", "sometimes", "x.patch"}, "--expect-inline"},
		{[]string{"--allow", "maybe", "x.patch"}, "not a disposition"},
		{[]string{"--record", "../x", "x.patch"}, "--record"},
		{[]string{"/nonexistent.patch"}, "cannot read"},
		{[]string{"--kernel", "9.9", "x.patch"}, "unknown kernel"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		code, stdout, stderr := run(t, append([]string{"--root", root, "try", "--out", out}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("try %v: exit %d, want 2 with %q\n%s%s", c.args, code, c.want, stdout, stderr)
		}
	}
	// A run that could not start still writes result.json with the reason.
	out := filepath.Join(t.TempDir(), "out")
	run(t, "--root", root, "try", "--out", out, "/nonexistent.patch")
	b, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil || !strings.Contains(string(b), "nonexistent.patch") {
		t.Errorf("result.json of a failed try: %s %v", b, err)
	}
}
