package mailpatch_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/testenv/mkthread"
)

// damages are ways a message of a thread fails to read: its diff (GNU
// patch and git apply refuse these too: checked below) or its headers
// (git am refuses those).
var damages = map[string]func(m *mkthread.Msg){
	"garbage line in a hunk": func(m *mkthread.Msg) { m.Body = strings.Replace(m.Body, " @@\n ", " @@\nX", 1) },
	"hunk cut short":         func(m *mkthread.Msg) { m.Body = m.Body[:strings.LastIndex(m.Body[:len(m.Body)-1], "\n")+1] },
	"hunk counts wrong": func(m *mkthread.Msg) {
		i := strings.Index(m.Body, "@@ -")
		j := strings.Index(m.Body[i+3:], "@@") + i + 3
		m.Body = m.Body[:i] + "@@ -1,20 +1,21 @@" + m.Body[j+2:]
	},
	"undecodable subject": func(m *mkthread.Msg) { m.Subject = strings.Replace(m.Subject, "] ", "] =?x-nope?Q?a=ZZ?= ", 1) },
	"invalid date":        func(m *mkthread.Msg) { m.Date = time.Time{} },
}

// revisions is a thread of a two-patch series in revisions 1..n, each
// revision's cover letter answering the one before (git send-email
// --in-reply-to), with a review of each revision's first patch.
func revisions(n int) []mkthread.Msg {
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	next := func() time.Time { at = at.Add(time.Minute); return at }
	author := "Pat Developer <pat@example.org>"
	var msgs []mkthread.Msg
	prev := ""
	for v := 1; v <= n; v++ {
		cover := fmt.Sprintf("v%d-0@example.org", v)
		msgs = append(msgs, mkthread.Msg{ID: cover, InReplyTo: prev, From: author, Date: next(),
			Subject: fmt.Sprintf("[PATCH v%d 0/2] foo: changes", v), Body: fmt.Sprintf("Revision %d.\n", v)})
		for i := 1; i <= 2; i++ {
			msgs = append(msgs, mkthread.Msg{ID: fmt.Sprintf("v%d-%d@example.org", v, i), InReplyTo: cover, From: author, Date: next(),
				Subject: fmt.Sprintf("[PATCH v%d %d/2] foo: change %d", v, i, i),
				Body:    mkthread.Patch(fmt.Sprintf("Take %d.", v), author, diffOf(fmt.Sprintf("f%d.c", i), v+1))})
		}
		msgs = append(msgs, mkthread.Msg{ID: fmt.Sprintf("v%d-r@example.org", v), InReplyTo: fmt.Sprintf("v%d-1@example.org", v),
			From: "R <r@example.org>", Date: next(), Subject: fmt.Sprintf("Re: [PATCH v%d 1/2] foo: change 1", v),
			Body: fmt.Sprintf("Reviewed-by: R%d <r%d@example.org>\n", v, v)})
		prev = cover
	}
	return msgs
}

func damaged(msgs []mkthread.Msg, id string, how func(*mkthread.Msg)) []mkthread.Msg {
	out := slices.Clone(msgs)
	for i := range out {
		if out[i].ID == id {
			how(&out[i])
		}
	}
	return out
}

// One damaged revision that is not taken does not sink the thread (issue
// 24, 2b): a malformed v1, a malformed middle v4, each damage in turn;
// the newest (v5) is taken, exactly as from the undamaged thread, and the
// damaged message is reported with why. A damaged message of the
// revision taken is the failure it is.
func TestReadThreadDamagedOldRevision(t *testing.T) {
	whole := read(t, revisions(5))
	if whole.Version != 5 || len(whole.Patches) != 2 {
		t.Fatalf("undamaged: v%d, %d patches", whole.Version, len(whole.Patches))
	}
	n := 0
	for name, how := range damages {
		for _, id := range []string{"v1-2@example.org", "v4-1@example.org", "v4-2@example.org"} {
			msgs := damaged(revisions(5), id, how)
			th, err := mailpatch.ReadThread([]mailpatch.Input{{Name: "t.mbox", Data: mkthread.Mbox(msgs)}}, "", mailpatch.Options{})
			if err != nil {
				t.Errorf("%s in %s: %v (the revision taken is v5, undamaged)", name, id, err)
				continue
			}
			n++
			if th.Version != 5 || len(th.Patches) != 2 {
				t.Errorf("%s in %s: took v%d with %d patches", name, id, th.Version, len(th.Patches))
				continue
			}
			for i := range th.Patches {
				if !bytes.Equal(th.Patches[i].Format(), whole.Patches[i].Format()) {
					t.Errorf("%s in %s: patch %d differs from the undamaged thread's", name, id, i+1)
				}
			}
			v := int(id[1] - '0')
			var rev *mailpatch.Revision
			for i := range th.Skipped {
				if th.Skipped[i].Version == v {
					rev = &th.Skipped[i]
				}
			}
			if rev == nil || len(rev.Patches) != 2 || len(rev.Malformed) != 1 || !strings.Contains(rev.Malformed[0], fmt.Sprintf("[PATCH v%d %c/2]", v, id[3])) {
				t.Errorf("%s in %s: skipped %+v, want v%d reported with the damaged message", name, id, th.Skipped, v)
			}
		}
		// The revision taken damaged: an input error naming the message.
		_, err := mailpatch.ReadThread([]mailpatch.Input{{Name: "t.mbox", Data: mkthread.Mbox(damaged(revisions(5), "v5-2@example.org", how))}}, "", mailpatch.Options{})
		if err == nil || !strings.Contains(err.Error(), "t.mbox:") {
			t.Errorf("%s in v5 (taken): %v, want the input error", name, err)
		}
	}
	// A cover letter that does not read (of any revision, the one taken
	// too) is left out and said; the patches are read.
	for _, id := range []string{"v5-0@example.org", "v4-0@example.org"} {
		th, err := mailpatch.ReadThread([]mailpatch.Input{{Name: "t.mbox", Data: mkthread.Mbox(damaged(revisions(5), id, damages["undecodable subject"]))}}, "", mailpatch.Options{})
		if err != nil || th.Version != 5 || len(th.Patches) != 2 || len(th.Warn) != 1 || !strings.Contains(th.Warn[0].Message, "cover letter") {
			t.Errorf("cover letter %s damaged: %v %+v", id, err, th)
		}
	}
	t.Logf("%d damaged threads read as the undamaged one", n)
}

// The diff damages are damage to the reference tools too: git apply (as
// git am, which ReadThread follows) refuses each damaged diff and takes
// the undamaged one; GNU patch refuses them too but the hunk cut short,
// which it applies with fuzz (its missing context taken as a fuzzed
// end).
func TestDamagesAreDamageToGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("patch not installed")
	}
	dir := t.TempDir()
	var old strings.Builder
	for i := range 10 {
		old.WriteString("line " + string(rune('a'+i)) + "\n")
	}
	os.WriteFile(filepath.Join(dir, "f1.c"), []byte(old.String()), 0o644)
	for _, name := range []string{"", "garbage line in a hunk", "hunk cut short", "hunk counts wrong"} {
		m := revisions(1)[1]
		if name != "" {
			damages[name](&m)
		}
		_, diff, _ := strings.Cut(m.Body, "\n---\n")
		for _, tool := range [][]string{{"git", "apply", "--check"}, {"patch", "--dry-run", "-p1"}} {
			cmd := exec.Command(tool[0], tool[1:]...)
			cmd.Dir, cmd.Stdin = dir, strings.NewReader(diff)
			out, err := cmd.CombinedOutput()
			wantOK := name == "" || (tool[0] == "patch" && name == "hunk cut short")
			if (err == nil) != wantOK {
				t.Errorf("%s: %s says %v: %s", name, tool[0], err, out)
			}
		}
	}
}

// The same message twice (same Message-ID, the second copy with the
// headers an archive adds) is read once, as b4 does: for every message
// of the thread, the thread reads as without the copy, and says so.
func TestReadThreadDuplicateMessages(t *testing.T) {
	single := mkthread.Msg{ID: "one@example.org", From: "A <a@example.org>", Subject: "[PATCH] foo: one", Date: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC),
		Body: mkthread.Patch("One.", "A <a@example.org>", diffOf("a.c", 2))}
	for _, msgs := range [][]mkthread.Msg{thread(), {single}, revisions(3)} {
		want := read(t, msgs)
		for i, m := range msgs {
			for _, archived := range []bool{false, true} {
				copyOf := m.Bytes()
				if archived {
					copyOf = append([]byte("Received: from mail.example.org by lists.example.org\nList-Id: <foo.lists.example.org>\nX-Mailing-List: foo@lists.example.org\n"), copyOf...)
				}
				// The copy last, after the whole thread, as a second fetch appends it.
				data := append(mkthread.Mbox(msgs), mboxEntry(copyOf)...)
				got := readBytes(t, data)
				if len(got.Patches) != len(want.Patches) || got.Replies != want.Replies || len(got.Added) != len(want.Added) || len(got.Ignored) != len(want.Ignored) {
					t.Errorf("%s twice: %d patches %d replies %d/%d trailers, without the copy %d %d %d/%d", m.ID,
						len(got.Patches), got.Replies, len(got.Added), len(got.Ignored), len(want.Patches), want.Replies, len(want.Added), len(want.Ignored))
					continue
				}
				for j := range want.Patches {
					if !bytes.Equal(got.Patches[j].Format(), want.Patches[j].Format()) {
						t.Errorf("%s twice: patch %d differs", m.ID, j+1)
					}
				}
				said := false
				for _, w := range got.Warn {
					said = said || strings.Contains(w.Message, "<"+m.ID+"> appears 2 times")
				}
				if !said {
					t.Errorf("%s twice (message %d): not said: %+v", m.ID, i, got.Warn)
				}
			}
		}
	}
}

// mboxEntry is one message as an mboxrd entry.
func mboxEntry(msg []byte) []byte {
	var b bytes.Buffer
	b.WriteString("From mboxrd@z Thu Jan  1 00:00:00 1970\n")
	for _, l := range strings.SplitAfter(string(msg), "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, ">"), "From ") {
			b.WriteString(">")
		}
		b.WriteString(l)
	}
	b.WriteString("\n")
	return b.Bytes()
}

// A reply's line that runs two trailers together ("Reviewed-by: A <a@b>
// Signed-off-by: X <x@y>"), or names two people, is not one trailer: it
// is reported, not added; a well-formed trailer beside it is added.
func TestReadThreadRunTogetherTrailers(t *testing.T) {
	one := mkthread.Msg{ID: "one@example.org", From: "A <a@example.org>", Subject: "[PATCH] foo: one", Date: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC),
		Body: mkthread.Patch("One.", "A <a@example.org>", diffOf("a.c", 2))}
	bad := []string{
		"Reviewed-by: A <a@b.org> Signed-off-by: X <x@y.org>",
		"Acked-by: A <a@b.org>, B <b@b.org>",
		"Tested-by: A <a@b.org> Tested-by: B <b@b.org>",
		"Reviewed-by: A <a@b.org> Reported-by: B <b@b.org>",
	}
	reply := mkthread.Msg{ID: "r@example.org", InReplyTo: "one@example.org", From: "R <r@example.org>", Subject: "Re: [PATCH] foo: one", Date: one.Date.Add(time.Hour),
		Body: "Thanks.\n\n" + strings.Join(bad, "\n") + "\nReviewed-by: Rita Reviewer <rita@example.org>\n"}
	th := read(t, []mkthread.Msg{one, reply})
	if got := trailers(th.Patches[0]); !slices.Equal(got, []string{"Signed-off-by: A <a@example.org>", "Reviewed-by: Rita Reviewer <rita@example.org>"}) {
		t.Errorf("trailers %q, want only the well-formed review added", got)
	}
	if len(th.Ignored) != len(bad) {
		t.Errorf("ignored %+v, want the %d run-together lines reported", th.Ignored, len(bad))
	}
}

// import, too, reads a message once however often the input holds it
// (the same Message-ID; the later copy with an archive's headers).
func TestImportDuplicateMessages(t *testing.T) {
	one := mkthread.Msg{ID: "one@example.org", From: "A <a@example.org>", Subject: "[PATCH] foo: one", Date: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC),
		Body: mkthread.Patch("One.", "A <a@example.org>", diffOf("a.c", 2))}
	two := mkthread.Msg{ID: "two@example.org", From: "A <a@example.org>", Subject: "[PATCH] foo: two", Date: one.Date.Add(time.Hour),
		Body: mkthread.Patch("Two.", "A <a@example.org>", diffOf("b.c", 2))}
	archived := append([]byte("List-Id: <foo.lists.example.org>\nX-Mailing-List: foo@lists.example.org\n"), one.Bytes()...)
	dir := t.TempDir()
	f := filepath.Join(dir, "t.mbox")
	os.WriteFile(f, append(mkthread.Mbox([]mkthread.Msg{one, two}), mboxEntry(archived)...), 0o644)
	res, err := mailpatch.Import([]string{f}, mailpatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Patches) != 2 || res.Patches[0].Subject != "foo: one" || res.Patches[1].Subject != "foo: two" {
		t.Errorf("%d patches, want one and two once each", len(res.Patches))
	}
	said := false
	for _, w := range res.Warnings {
		said = said || strings.Contains(w.Message, "<one@example.org> appears again")
	}
	if !said {
		t.Errorf("the copy left out is not said: %+v", res.Warnings)
	}
}
