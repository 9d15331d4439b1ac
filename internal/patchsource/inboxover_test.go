package patchsource_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/patchsource"
	"github.com/patchctl/patchctl/internal/progress"
)

// publicInbox makes a public-inbox v2 install at dir/ibx of the generated
// messages (two epochs) with public-inbox's own tools, which write
// msgmap.sqlite3 and xap15/over.sqlite3. It skips without them.
func publicInbox(t *testing.T, n, perEpoch int) (string, []genMsg) {
	t.Helper()
	for _, tool := range []string{"public-inbox-init", "public-inbox-index"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (Debian: apt-get install public-inbox)", tool)
		}
	}
	dir := t.TempDir()
	ibx := filepath.Join(dir, "ibx")
	env := append(os.Environ(), "HOME="+dir, "PI_CONFIG="+filepath.Join(dir, "pi_config"))
	pi := func(args ...string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	pi("public-inbox-init", "-V2", "-L", "basic", "test", ibx, "http://example.invalid/test", "test@example.invalid")
	if err := os.RemoveAll(filepath.Join(ibx, "git", "0.git")); err != nil {
		t.Fatal(err)
	}
	msgs := genInbox(t, ibx, n, perEpoch, 200, 11)
	var alt strings.Builder
	epochs, _ := filepath.Glob(filepath.Join(ibx, "git", "*.git"))
	for _, e := range epochs {
		alt.WriteString("../../git/" + filepath.Base(e) + "/objects\n")
	}
	if err := os.WriteFile(filepath.Join(ibx, "all.git", "objects", "info", "alternates"), []byte(alt.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	pi("public-inbox-index", ibx)
	return ibx, msgs
}

// Differential: on an install public-inbox indexed itself, the thread read
// from its over.sqlite3 is the one patchctl's index gives, and the
// generated one; once an epoch moves past what public-inbox indexed, or
// over.sqlite3 is damaged, patchctl's index answers (and says why).
func TestInboxOverSQLite(t *testing.T) {
	ibx, msgs := publicInbox(t, 160, 80)
	cache := t.TempDir()
	checked := 0
	for i := 0; i < len(msgs); i += 9 {
		id := strings.Trim(msgs[i].id, "<>")
		over, err := patchsource.InboxIndexed(ibx, id, patchsource.InboxOptions{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		own, err := patchsource.InboxIndexed(ibx, id, patchsource.InboxOptions{CacheDir: cache, IgnoreOver: true})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(over.Name, "over.sqlite3") || strings.Contains(own.Name, "over.sqlite3") {
			t.Fatalf("sources: %q, %q", over.Name, own.Name)
		}
		want := threadOf(msgs, i)
		if a, b := ids(t, over), ids(t, own); !slices.Equal(a, want) || !slices.Equal(b, want) || !bytes.Equal(over.Data, own.Data) {
			t.Errorf("thread of %s:\nover.sqlite3 %v\npatchctl     %v\ngenerated    %v", id, a, b, want)
		}
		checked++
	}
	if _, err := patchsource.InboxIndexed(ibx, "nobody@fixture.invalid", patchsource.InboxOptions{}); err == nil || !strings.Contains(err.Error(), "over.sqlite3") {
		t.Errorf("a miss in over.sqlite3: %v", err)
	}
	// quotes in a Message-ID are data, not SQL
	for _, id := range []string{"o'brien@fixture.invalid", "a''b');--@fixture.invalid"} {
		if _, err := patchsource.InboxIndexed(ibx, id, patchsource.InboxOptions{}); err == nil || !strings.Contains(err.Error(), "is not in the archive") || !strings.Contains(err.Error(), "over.sqlite3") {
			t.Errorf("Message-ID %q: %v", id, err)
		}
	}
	// a damaged over.sqlite3 is not used
	over := filepath.Join(ibx, "xap15", "over.sqlite3")
	good, err := os.ReadFile(over)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{[]byte("junk"), good[:len(good)/3]} {
		if err := os.WriteFile(over, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		id := strings.Trim(msgs[3].id, "<>")
		in, err := patchsource.InboxIndexed(ibx, id, patchsource.InboxOptions{CacheDir: cache, Progress: progress.New(&log)})
		if err != nil || strings.Contains(in.Name, "over.sqlite3") || !strings.Contains(log.String(), "not using") || !slices.Equal(ids(t, in), threadOf(msgs, 3)) {
			t.Errorf("damaged over.sqlite3 (%d bytes): %q %v %v\n%s", len(bad), in.Name, ids(t, in), err, log.String())
		}
	}
	if err := os.WriteFile(over, good, 0o644); err != nil {
		t.Fatal(err)
	}
	// without the sqlite3 program, patchctl's index answers, and says why
	// (only git on PATH)
	{
		bin := t.TempDir()
		gitPath, err := exec.LookPath("git")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(gitPath, filepath.Join(bin, "git")); err != nil {
			t.Fatal(err)
		}
		orig := os.Getenv("PATH")
		t.Setenv("PATH", bin)
		var log bytes.Buffer
		id := strings.Trim(msgs[5].id, "<>")
		in, err := patchsource.InboxIndexed(ibx, id, patchsource.InboxOptions{CacheDir: cache, Progress: progress.New(&log)})
		if err != nil || strings.Contains(in.Name, "over.sqlite3") || !strings.Contains(log.String(), "sqlite3 is not installed") || !slices.Equal(ids(t, in), threadOf(msgs, 5)) {
			t.Errorf("without sqlite3: %q %v %v\n%s", in.Name, ids(t, in), err, log.String())
		}
		t.Setenv("PATH", orig)
	}
	// git/1.git gets a message public-inbox has not indexed
	appendMessages(t, filepath.Join(ibx, "git", "1.git"), map[string]string{"<late@fixture.invalid>": "In-Reply-To: " + msgs[0].id})
	var log bytes.Buffer
	in, err := patchsource.InboxIndexed(ibx, "late@fixture.invalid", patchsource.InboxOptions{CacheDir: cache, Progress: progress.New(&log)})
	if err != nil || strings.Contains(in.Name, "over.sqlite3") || !strings.Contains(log.String(), "epoch 1 was not indexed up to its tip") {
		t.Errorf("stale over.sqlite3: %q %v\n%s", in.Name, err, log.String())
	}
	if want := append(threadOf(msgs, 0), "<late@fixture.invalid>"); !slices.Equal(ids(t, in), want) {
		t.Errorf("after the fetch: %v, want %v", ids(t, in), want)
	}
	t.Logf("%d threads compared", checked)
}
