package patchsource_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/patchsource"
	"github.com/patchctl/patchctl/internal/testenv/mkthread"
)

func diff(path string, n int) string {
	return mkthread.InsertAfter(path, []byte("a\nb\nc\nd\ne\nf\ng\nh\n"), n, "x in "+path)
}

func series() []mkthread.Msg {
	return mkthread.Series([2]string{"foo: one", "foo: two"}, [2]string{diff("a.c", 2), diff("b.c", 2)}, [2]string{diff("a.c", 3), diff("b.c", 3)})
}

func ids(t *testing.T, in mailpatch.Input) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(string(in.Data), "\n") {
		if strings.HasPrefix(l, "Message-ID: ") {
			out = append(out, strings.TrimPrefix(l, "Message-ID: "))
		}
	}
	return out
}

// The thread of any of its messages, and only it, from a v2 inbox that
// holds another thread too; the same thread from a server's t.mbox.gz.
func TestInboxAndLore(t *testing.T) {
	msgs := series()
	other := mkthread.Unrelated(diff("c.c", 2))
	dir := t.TempDir()
	if err := mkthread.Inbox(dir, append([]mkthread.Msg{other}, msgs...)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{mkthread.Cover, "<v2-ack@example.org>", "v1-2@example.org"} {
		in, err := patchsource.Inbox(dir, id)
		if err != nil {
			t.Fatal(err)
		}
		got := ids(t, in)
		if len(got) != len(msgs) || strings.Contains(string(in.Data), "other@example.org") {
			t.Errorf("%s: thread has %d messages %v, want %d without the other thread", id, len(got), got, len(msgs))
		}
		th, err := mailpatch.ReadThreadContext(context.Background(), []mailpatch.Input{in}, "", mailpatch.Options{})
		if err != nil || th.Version != 2 || len(th.Patches) != 2 {
			t.Errorf("%s: thread read as %+v, %v", id, th, err)
		}
	}
	// the epoch itself, too
	if _, err := patchsource.Inbox(filepath.Join(dir, "git", "0.git"), mkthread.Cover); err != nil {
		t.Error(err)
	}
	if _, err := patchsource.Inbox(dir, "nobody@example.org"); !errors.Is(err, errs.ErrInput) {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := patchsource.Inbox(t.TempDir(), mkthread.Cover); !errors.Is(err, errs.ErrInput) {
		t.Errorf("not an inbox: %v", err)
	}

	mbox := mkthread.Mbox(msgs)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.EscapedPath() != "/linux-rdma/"+mkthread.Cover+"/t.mbox.gz" {
			http.NotFound(w, r)
			return
		}
		w.Write(mkthread.Gzip(mbox))
	}))
	defer srv.Close()
	in, err := patchsource.Lore(context.Background(), srv.Client(), srv.URL+"/linux-rdma/", "<"+mkthread.Cover+">")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(in.Data, mbox) {
		t.Errorf("lore: got %d bytes, want the served %d", len(in.Data), len(mbox))
	}
	if _, err := patchsource.Lore(context.Background(), srv.Client(), srv.URL+"/linux-rdma", "v1-1@example.org"); !errors.Is(err, errs.ErrInput) {
		t.Errorf("404: %v", err)
	}
	if _, err := patchsource.Lore(context.Background(), srv.Client(), "ftp://x", mkthread.Cover); !errors.Is(err, errs.ErrUsage) {
		t.Errorf("bad URL: %v", err)
	}
	for _, bad := range []string{"", "no-at-sign", "a@b/../c"} {
		if _, err := patchsource.CleanMsgID(bad); !errors.Is(err, errs.ErrUsage) {
			t.Errorf("msgid %q: %v", bad, err)
		}
	}
	if id, err := patchsource.CleanMsgID("https://lore.kernel.org/all/" + mkthread.Cover + "/"); err != nil || id != mkthread.Cover {
		t.Errorf("lore URL as msgid: %q %v", id, err)
	}
}

// Git's commits as go-git formats them import as git format-patch's do:
// the same authors, subjects, messages and diffs (git is the reference).
func TestGitRangeDifferential(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := repo.Worktree()
	when := time.Date(2026, 11, 1, 12, 0, 0, 0, time.FixedZone("", 3600))
	commit := func(msg string, files map[string]string) {
		for p, c := range files {
			os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
			if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := wt.Add(p); err != nil {
				t.Fatal(err)
			}
		}
		when = when.Add(time.Hour)
		sig := &object.Signature{Name: "Zoë Developer", Email: "zoe@example.org", When: when}
		if _, err := wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig}); err != nil {
			t.Fatal(err)
		}
	}
	commit("base\n", map[string]string{"drivers/a.c": "int a;\nint b;\nint c;\n", "b.h": "x\n"})
	commit("a: change b\n\nBecause.\n\nSigned-off-by: Zoë Developer <zoe@example.org>\n", map[string]string{"drivers/a.c": "int a;\nint bb;\nint c;\n"})
	commit("add new file\n\nSigned-off-by: Zoë Developer <zoe@example.org>\n", map[string]string{"new/n.c": "new\n", "b.h": "x\ny\n"})
	for _, rng := range []string{"HEAD~2..HEAD", "HEAD~2", "-2", "HEAD~2.."} {
		ins, err := patchsource.Git(context.Background(), dir, rng)
		if err != nil {
			t.Fatal(err)
		}
		th, err := mailpatch.ReadThreadContext(context.Background(), ins, "", mailpatch.Options{})
		if err != nil {
			t.Fatalf("%s: %v", rng, err)
		}
		out, err := exec.Command("git", "-C", dir, "format-patch", "--stdout", "HEAD~2..HEAD").Output()
		if err != nil {
			t.Fatal(err)
		}
		ref, err := mailpatch.ReadThreadContext(context.Background(), []mailpatch.Input{{Name: "git", Data: out}}, "", mailpatch.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(th.Patches) != 2 || len(ref.Patches) != 2 {
			t.Fatalf("%s: %d patches, git format-patch %d", rng, len(th.Patches), len(ref.Patches))
		}
		for i := range ref.Patches {
			a, b := th.Patches[i], ref.Patches[i]
			if a.SubjectLine() != b.SubjectLine() || a.Author != b.Author || !a.Date.Equal(b.Date) || a.Message != b.Message {
				t.Errorf("%s: patch %d: %q %v %v %q, git: %q %v %v %q", rng, i, a.SubjectLine(), a.Author, a.Date, a.Message, b.SubjectLine(), b.Author, b.Date, b.Message)
			}
			if len(a.Files) != len(b.Files) {
				t.Fatalf("%s: patch %d: %d files, git %d", rng, i, len(a.Files), len(b.Files))
			}
			for j := range a.Files {
				fa, fb := a.Files[j], b.Files[j]
				if fa.NewName != fb.NewName || fa.OldName != fb.OldName || fa.IsNew != fb.IsNew || fa.NewMode != fb.NewMode || len(fa.TextFragments) != len(fb.TextFragments) {
					t.Errorf("%s: patch %d file %d: %+v, git %+v", rng, i, j, fa, fb)
					continue
				}
				for k := range fa.TextFragments {
					if fa.TextFragments[k].String() != fb.TextFragments[k].String() {
						t.Errorf("%s: patch %d file %d hunk %d:\n%s\ngit:\n%s", rng, i, j, k, fa.TextFragments[k], fb.TextFragments[k])
					}
				}
			}
		}
	}
	if _, err := patchsource.Git(context.Background(), dir, "HEAD..HEAD"); !errors.Is(err, errs.ErrInput) {
		t.Errorf("empty range: %v", err)
	}
	if _, err := patchsource.Git(context.Background(), dir, "nosuchrev..HEAD"); !errors.Is(err, errs.ErrInput) {
		t.Errorf("bad revision: %v", err)
	}
	if _, err := patchsource.Git(context.Background(), t.TempDir(), "-1"); !errors.Is(err, errs.ErrInput) {
		t.Errorf("not a repository: %v", err)
	}
}

// Commits that change binary files, taken with --git, carry the data
// (a git binary patch) and apply with git apply to exactly the commit's
// tree, as git format-patch --binary's do (issue 31, finding 15: they were
// refused with advice to use --binary). A bare repository is a
// repository too.
func TestGitBinaryAndBare(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=Pat Developer", "-c", "user.email=pat@example.org", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	big := make([]byte, 3000) // compresses to more than one 52-byte line
	for i := range big {
		big[i] = byte(i*7 + i/13)
	}
	run(dir, "init", "-q")
	write("text.c", []byte("int a;\n"))
	write("fw.bin", []byte("OLD\x00FIRMWARE\n"))
	run(dir, "add", ".")
	run(dir, "commit", "-q", "-m", "base")
	steps := []func(){
		func() { write("fw.bin", []byte("NEW\x00FIRMWARE\x00\x01\x02")) },              // modified
		func() { write("blob.bin", big); write("text.c", []byte("int a;\nint b;\n")) }, // added, with a text change
		func() { big[1500] ^= 0xff; write("blob.bin", big) },                           // a one-byte change in a big one
		func() { os.Remove(filepath.Join(dir, "fw.bin")) },                             // deleted
		func() { write("empty.bin", []byte{0}) },                                       // one NUL byte
	}
	for i, step := range steps {
		step()
		run(dir, "add", "-A")
		run(dir, "commit", "-q", "-m", fmt.Sprintf("step %d", i+1))
	}
	bare := filepath.Join(t.TempDir(), "bare.git")
	run(dir, "clone", "-q", "--bare", dir, bare)
	check := filepath.Join(t.TempDir(), "check")
	run(dir, "clone", "-q", dir, check)
	for i := len(steps); i >= 1; i-- {
		commit := run(dir, "rev-parse", fmt.Sprintf("HEAD~%d", i-1))
		for _, repo := range []string{dir, bare} {
			ins, err := patchsource.Git(context.Background(), repo, commit+"~1.."+commit)
			if err != nil {
				t.Fatalf("step %d from %s: %v", len(steps)-i+1, repo, err)
			}
			if _, err := mailpatch.ReadThreadContext(context.Background(), ins, "", mailpatch.Options{}); err != nil {
				t.Errorf("step %d from %s: the patch patchctl made does not read: %v", len(steps)-i+1, repo, err)
			}
			_, diff, _ := strings.Cut(string(ins[0].Data), "\ndiff --git ")
			diff = "diff --git " + strings.TrimSuffix(diff, "-- \npatchctl (go-git)\n\n")
			run(check, "checkout", "-q", "-f", commit+"~1")
			cmd := exec.Command("git", "apply", "--index")
			cmd.Dir, cmd.Stdin = check, strings.NewReader(diff)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("step %d from %s: git apply: %v\n%s\n%s", len(steps)-i+1, repo, err, out, diff)
				continue
			}
			if out, err := exec.Command("git", "-C", check, "diff", "--cached", "--stat", commit).CombinedOutput(); err != nil || len(out) > 0 {
				t.Errorf("step %d from %s: applied, the tree differs from the commit's: %v %s", len(steps)-i+1, repo, err, out)
			}
		}
	}
	if _, err := patchsource.Git(context.Background(), bare, "-2"); err != nil {
		t.Errorf("bare -2: %v", err)
	}
}
