package patchsource_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/patchsource"
	"github.com/patchctl/patchctl/internal/progress"
	"github.com/patchctl/patchctl/internal/testenv/mkthread"
)

// threadOf is what the generator made: the ids of msgs[i]'s thread, in
// archive order.
func threadOf(msgs []genMsg, i int) []string {
	var out []string
	for _, m := range msgs {
		if m.thread == msgs[i].thread {
			out = append(out, m.id)
		}
	}
	return out
}

func lookup(t *testing.T, dir, id string, opts patchsource.InboxOptions) ([]string, error) {
	t.Helper()
	in, err := patchsource.InboxIndexed(dir, id, opts)
	if err != nil {
		return nil, err
	}
	return ids(t, in), nil
}

func rungit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Threads from an inbox of several epochs, threads crossing them: every
// message's thread is its generated thread (replies both ways, a
// reference to a message not archived), in archive order, from a cold
// cache, a warm one and no cache alike; a Message-ID not there is an
// input error.
func TestInboxIndexThreads(t *testing.T) {
	dir := t.TempDir()
	msgs := genInbox(t, dir, 400, 90, 200, 3)
	cache := t.TempDir()
	for pass, opts := range []patchsource.InboxOptions{{CacheDir: cache}, {CacheDir: cache}, {}} {
		step := 11
		if opts.CacheDir == "" {
			step = 97 // each lookup indexes every epoch
		}
		for i := 0; i < len(msgs); i += step {
			got, err := lookup(t, dir, strings.Trim(msgs[i].id, "<>"), opts)
			if err != nil {
				t.Fatalf("pass %d: %s: %v", pass, msgs[i].id, err)
			}
			if want := threadOf(msgs, i); !slices.Equal(got, want) {
				t.Errorf("pass %d: thread of %s:\n got %v\nwant %v", pass, msgs[i].id, got, want)
			}
		}
		_, err := lookup(t, dir, "nobody@fixture.invalid", opts)
		if !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "400 messages in 5 repositories") {
			t.Errorf("pass %d: a miss: %v", pass, err)
		}
	}
	// one epoch alone, by its path
	e1 := filepath.Join(dir, "git", "1.git")
	got, err := lookup(t, e1, strings.Trim(msgs[100].id, "<>"), patchsource.InboxOptions{CacheDir: cache})
	if err != nil || len(got) == 0 || !slices.Contains(got, msgs[100].id) {
		t.Errorf("epoch 1 alone: %v %v", got, err)
	}
	ents, _ := os.ReadDir(filepath.Join(cache, "inbox"))
	if len(ents) != 5 {
		t.Errorf("cache holds %d indexes, want one per epoch (5)", len(ents))
	}
}

// appendMessages adds messages to an epoch with fast-import, on top of
// its master.
func appendMessages(t *testing.T, repo string, msgs map[string]string) {
	t.Helper()
	var b bytes.Buffer
	keys := make([]string, 0, len(msgs))
	for k := range msgs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fmt.Fprintf(&b, "reset refs/heads/master\nfrom %s\n\n", rungit(t, repo, "rev-parse", "master"))
	for i, id := range keys {
		body := fmt.Sprintf("From: Late <late@fixture.invalid>\nSubject: Re: late\nMessage-ID: %s\n%s\n\nlate\n", id, msgs[id])
		fmt.Fprintf(&b, "commit refs/heads/master\ncommitter p <p@fixture.invalid> %d +0000\ndata 1\nx\nM 100644 inline m\ndata %d\n%s\n", 1800000000+i, len(body), body)
	}
	cmd := exec.Command("git", "-C", repo, "fast-import", "--quiet")
	cmd.Stdin = &b
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
}

// New commits are indexed alone and their links join the old threads; a
// rewritten history is indexed again from scratch.
func TestInboxIndexIncremental(t *testing.T) {
	dir := t.TempDir()
	msgs := genInbox(t, dir, 120, 0, 100, 4)
	cache := t.TempDir()
	var log bytes.Buffer
	opts := patchsource.InboxOptions{CacheDir: cache, Progress: progress.New(&log)}
	id5 := strings.Trim(msgs[5].id, "<>")
	if _, err := lookup(t, dir, id5, opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "120 messages, 120 new") {
		t.Errorf("first index: %s", log.String())
	}
	repo := filepath.Join(dir, "git", "0.git")
	before := rungit(t, repo, "rev-parse", "master")
	appendMessages(t, repo, map[string]string{
		"<late1@fixture.invalid>": "In-Reply-To: " + msgs[5].id,
		"<late2@fixture.invalid>": "References: <late1@fixture.invalid>",
	})
	log.Reset()
	got, err := lookup(t, dir, id5, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := append(threadOf(msgs, 5), "<late1@fixture.invalid>", "<late2@fixture.invalid>"); !slices.Equal(got, want) {
		t.Errorf("after new commits: %v, want %v", got, want)
	}
	if !strings.Contains(log.String(), "122 messages, 2 new") {
		t.Errorf("not incremental: %s", log.String())
	}
	// the same tips again: nothing indexed
	log.Reset()
	if _, err := lookup(t, dir, "late2@fixture.invalid", opts); err != nil || log.Len() != 0 {
		t.Errorf("warm lookup: %v, progress %q", err, log.String())
	}
	// a purge rewrote the history: the late messages are gone
	rungit(t, repo, "update-ref", "refs/heads/master", before)
	rungit(t, repo, "reflog", "expire", "--expire=now", "--all")
	rungit(t, repo, "gc", "-q", "--prune=now")
	log.Reset()
	if _, err := lookup(t, dir, "late1@fixture.invalid", opts); !errors.Is(err, errs.ErrInput) {
		t.Errorf("a message purged from the history is still found: %v", err)
	}
	if !strings.Contains(log.String(), "120 messages, 120 new") {
		t.Errorf("rewritten history not indexed again: %s", log.String())
	}
}

// A damaged index file is never trusted: any byte changed, a cut, junk,
// an empty file: the lookup is still right and the file is rewritten.
func TestInboxIndexDamaged(t *testing.T) {
	dir := t.TempDir()
	msgs := genInbox(t, dir, 60, 0, 100, 5)
	cache := t.TempDir()
	opts := patchsource.InboxOptions{CacheDir: cache}
	id := strings.Trim(msgs[30].id, "<>")
	want := threadOf(msgs, 30)
	if _, err := lookup(t, dir, id, opts); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(cache, "inbox", "*.idx"))
	if len(files) != 1 {
		t.Fatalf("index files %v", files)
	}
	good, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	damage := map[string][]byte{"empty": {}, "junk": []byte("not an index\n"), "cut": good[:len(good)/2]}
	for off := 0; off < len(good); off += len(good)/40 + 1 {
		b := slices.Clone(good)
		b[off] ^= 0x5a
		damage[fmt.Sprintf("byte %d", off)] = b
	}
	for what, b := range damage {
		if err := os.WriteFile(files[0], b, 0o644); err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		opts.Progress = progress.New(&log)
		got, err := lookup(t, dir, id, opts)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %v %v, want %v", what, got, err, want)
		}
		if !strings.Contains(log.String(), "damaged") {
			t.Errorf("%s: not reported as damaged: %q", what, log.String())
		}
		if now, _ := os.ReadFile(files[0]); !bytes.Equal(now, good) {
			t.Errorf("%s: index not rewritten", what)
		}
	}
}

// A damaged inbox repository is an input error (exit 2) that says where
// and what to do: a missing commit, a cut pack, a broken ref. (A missing
// message blob leaves the rest readable: TestInboxMissingMessage.)
func TestInboxDamagedRepository(t *testing.T) {
	for _, c := range []struct {
		what   string
		damage func(t *testing.T, repo string)
	}{
		{"missing commit", func(t *testing.T, repo string) {
			removeObject(t, repo, rungit(t, repo, "rev-parse", "master~2"))
		}},
		{"cut pack", func(t *testing.T, repo string) {
			rungit(t, repo, "repack", "-adq")
			packs, _ := filepath.Glob(filepath.Join(repo, "objects", "pack", "*.pack"))
			if len(packs) != 1 {
				t.Fatalf("packs %v", packs)
			}
			st, _ := os.Stat(packs[0])
			if err := os.Truncate(packs[0], st.Size()/2); err != nil {
				t.Fatal(err)
			}
		}},
		{"broken HEAD ref", func(t *testing.T, repo string) {
			os.WriteFile(filepath.Join(repo, "refs", "heads", "master"), []byte("zzzz\n"), 0o644)
		}},
	} {
		t.Run(c.what, func(t *testing.T) {
			dir := t.TempDir()
			if err := mkthread.Inbox(dir, series()); err != nil {
				t.Fatal(err)
			}
			repo := filepath.Join(dir, "git", "0.git")
			c.damage(t, repo)
			_, err := patchsource.InboxIndexed(dir, mkthread.Cover, patchsource.InboxOptions{CacheDir: t.TempDir()})
			if !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), repo) {
				t.Errorf("%v: want an input error naming %s", err, repo)
			}
		})
	}
}

func removeObject(t *testing.T, repo, oid string) {
	t.Helper()
	if err := os.Remove(filepath.Join(repo, "objects", oid[:2], oid[2:])); err != nil {
		t.Fatal(err)
	}
}

// A v1 inbox (every message a file of the tip's tree) and a Message-ID
// archived twice (both copies are the thread's).
func TestInboxV1AndDuplicates(t *testing.T) {
	dir := t.TempDir()
	rungit(t, dir, "init", "-q", "--bare")
	var b bytes.Buffer
	b.WriteString("commit refs/heads/master\ncommitter p <p@fixture.invalid> 1800000000 +0000\ndata 1\nx\n")
	for i, m := range []string{
		"Message-ID: <a@v1>\nSubject: [PATCH] a\n\nbody\n",
		"Message-ID: <b@v1>\nIn-Reply-To: <a@v1>\nSubject: Re: a\n\nbody\n",
		"Message-ID: <b@v1>\nIn-Reply-To: <a@v1>\nSubject: Re: a (again)\n\nbody\n",
		"Message-ID: <c@v1>\nSubject: other\n\nbody\n",
	} {
		fmt.Fprintf(&b, "M 100644 inline %02x/%038x\ndata %d\n%s\n", i, i, len(m), m)
	}
	cmd := exec.Command("git", "-C", dir, "fast-import", "--quiet")
	cmd.Stdin = &b
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	for _, opts := range []patchsource.InboxOptions{{CacheDir: t.TempDir()}, {}} {
		got, err := lookup(t, dir, "b@v1", opts)
		if want := []string{"<a@v1>", "<b@v1>", "<b@v1>"}; err != nil || !slices.Equal(got, want) {
			t.Errorf("v1: %v %v, want %v", got, err, want)
		}
	}
}

// An archive that lacks one message's blob (a partial mirror, a snapshot
// without its largest objects) still answers for the rest, and says so:
// the lookup names how many messages could not be read and how to check
// the archive; looking up the unreadable message itself says it may be
// one of them; an index made without the message is never kept, so a
// repaired archive is indexed whole.
func TestInboxMissingMessage(t *testing.T) {
	dir := t.TempDir()
	if err := mkthread.Inbox(dir, series()); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(dir, "git", "0.git")
	whole, err := lookup(t, dir, mkthread.Cover, patchsource.InboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var lost string
	for _, l := range strings.Split(rungit(t, repo, "show", "master~1:m"), "\n") {
		if strings.HasPrefix(l, "Message-ID: ") {
			lost = strings.TrimPrefix(l, "Message-ID: ")
		}
	}
	if lost == "" || !slices.Contains(whole, lost) {
		t.Fatalf("master~1's message %q is not in the cover's thread %v", lost, whole)
	}
	removeObject(t, repo, rungit(t, repo, "rev-parse", "master~1:m"))
	cache := t.TempDir()
	var log bytes.Buffer
	opts := patchsource.InboxOptions{CacheDir: cache, Progress: progress.New(&log)}
	got, err := lookup(t, dir, mkthread.Cover, opts)
	if want := slices.DeleteFunc(slices.Clone(whole), func(s string) bool { return s == lost }); err != nil || !slices.Equal(got, want) {
		t.Errorf("thread of the cover: %v %v, want %v", got, err, want)
	}
	if l := log.String(); !strings.Contains(l, "1 messages could not be read") || !strings.Contains(l, "fsck") || !strings.Contains(l, repo) {
		t.Errorf("the missing message is not reported: %q", l)
	}
	_, err = patchsource.InboxIndexed(dir, strings.Trim(lost, "<>"), opts)
	if !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "could not be read") {
		t.Errorf("lookup of the unreadable message: %v, want an input error saying messages could not be read", err)
	}
	if kept, _ := filepath.Glob(filepath.Join(cache, "inbox", "*")); len(kept) != 0 {
		t.Errorf("an index without the unreadable message was kept: %v", kept)
	}
}
