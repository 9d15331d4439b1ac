package mailpatch_test

import (
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/testenv/mkthread"
)

func diffOf(path string, n int) string {
	var old strings.Builder
	for i := range 10 {
		old.WriteString("line " + string(rune('a'+i)) + "\n")
	}
	return mkthread.InsertAfter(path, []byte(old.String()), n, "added in "+path)
}

func thread() []mkthread.Msg {
	return mkthread.Series([2]string{"foo: first change", "foo: second change"},
		[2]string{diffOf("a.c", 2), diffOf("b.c", 3)}, [2]string{diffOf("a.c", 4), diffOf("b.c", 5)})
}

func read(t *testing.T, msgs []mkthread.Msg) *mailpatch.Thread {
	t.Helper()
	th, err := mailpatch.ReadThread([]mailpatch.Input{{Name: "t.mbox", Data: mkthread.Mbox(msgs)}}, "", mailpatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return th
}

func trailers(p *mailpatch.Patch) []string {
	var out []string
	for _, l := range strings.Split(p.Message, "\n") {
		if strings.Contains(l, "-by: ") {
			out = append(out, l)
		}
	}
	return out
}

// The thread in every order an archive may hold it: the newest revision,
// numbered in order, trailers where their replies point.
func TestReadThreadLikeB4(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := range 20 {
		msgs := thread()
		if round > 0 {
			rng.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
		}
		th := read(t, msgs)
		if th.Version != 2 || len(th.Patches) != 2 {
			t.Fatalf("round %d: took v%d with %d patches, want v2 with 2", round, th.Version, len(th.Patches))
		}
		for i, p := range th.Patches {
			if p.Number != i+1 || p.Version != 2 || !strings.Contains(p.Message, "Second take.") {
				t.Errorf("round %d: patch %d is %s", round, i, p.SubjectLine())
			}
			if !strings.Contains(string(th.Raw[i]), p.Subject) || !strings.HasPrefix(string(th.Raw[i]), "From mboxrd@z") {
				t.Errorf("round %d: raw copy of patch %d is not its mbox entry: %.80q", round, i, th.Raw[i])
			}
		}
		if th.Cover == nil || th.Cover.Subject != "[PATCH v2 0/2] "+mkthread.CoverSubject {
			t.Errorf("round %d: cover %+v", round, th.Cover)
		}
		if len(th.Skipped) != 1 || th.Skipped[0].Version != 1 || len(th.Skipped[0].Patches) != 2 {
			t.Errorf("round %d: skipped %+v, want v1 with 2 patches", round, th.Skipped)
		}
		if len(th.Missing) != 0 || th.Replies != 4 {
			t.Errorf("round %d: missing %v, replies %d", round, th.Missing, th.Replies)
		}
		want1 := []string{"Signed-off-by: Pat Developer <pat@example.org>", "Reviewed-by: Rita Reviewer <rita@example.org>"}
		// In the order the replies were sent, whatever the archive's order.
		want2 := append(slices.Clone(want1), "Tested-by: Tom Tester <tom@example.org>", "Acked-by: Ann Maintainer <ann@example.org>")
		if got := trailers(th.Patches[0]); !slices.Equal(got, want1) {
			t.Errorf("round %d: 1/2 trailers %q, want %q", round, got, want1)
		}
		if got := trailers(th.Patches[1]); !slices.Equal(got, want2) {
			t.Errorf("round %d: 2/2 trailers %q, want %q", round, got, want2)
		}
		if len(th.Ignored) != 1 || !strings.Contains(th.Ignored[0].Line, "Old Reviewer") || !strings.Contains(th.Ignored[0].To, "not taken") {
			t.Errorf("round %d: ignored %+v, want the v1 ack", round, th.Ignored)
		}
		if th.Series != "two-small-changes" {
			t.Errorf("round %d: series %q, want it named after the cover letter", round, th.Series)
		}
	}
}

// Classes of threads: a gap, a single unnumbered patch with a reply, a
// reply without "Re:", a repeated trailer, a thread of replies only.
func TestReadThreadClasses(t *testing.T) {
	msgs := thread()
	var noSecond []mkthread.Msg
	for _, m := range msgs {
		if m.ID != "v2-2@example.org" {
			noSecond = append(noSecond, m)
		}
	}
	th := read(t, noSecond)
	if len(th.Patches) != 1 || !slices.Equal(th.Missing, []string{"2/2"}) {
		t.Errorf("gap: %d patches, missing %v", len(th.Patches), th.Missing)
	}

	one := mkthread.Msg{ID: "one@example.org", From: "A <a@example.org>", Subject: "[PATCH] foo: one", Date: msgs[0].Date,
		Body: mkthread.Patch("One.", "A <a@example.org>", diffOf("a.c", 2))}
	reply := mkthread.Msg{ID: "r@example.org", InReplyTo: "one@example.org", From: "R <r@example.org>", Subject: "foo: one", Date: msgs[0].Date,
		Body: "Reviewed-by: R <r@example.org>\nReviewed-by: R <r@example.org>\n"}
	again := mkthread.Msg{ID: "r2@example.org", InReplyTo: "one@example.org", From: "R <r@example.org>", Subject: "Re: [PATCH] foo: one", Date: msgs[0].Date,
		Body: "REVIEWED-BY: R <r@example.org>\nSigned-off-by: Not A Review <x@example.org>\n"}
	th = read(t, []mkthread.Msg{reply, one, again})
	if len(th.Patches) != 1 || th.Version != 1 || th.Cover != nil {
		t.Fatalf("single: %+v", th)
	}
	if got := trailers(th.Patches[0]); !slices.Equal(got, []string{"Signed-off-by: A <a@example.org>", "Reviewed-by: R <r@example.org>"}) {
		t.Errorf("single: trailers %q (a trailer once, only review trailers)", got)
	}

	_, err := mailpatch.ReadThread([]mailpatch.Input{{Name: "replies.mbox", Data: mkthread.Mbox([]mkthread.Msg{reply, again})}}, "", mailpatch.Options{})
	if err == nil || !strings.Contains(err.Error(), "no message of the thread carries a diff") {
		t.Errorf("replies only: %v", err)
	}
}

// AddTrailer keeps the trailer block one block and adds a trailer once.
func TestAddTrailer(t *testing.T) {
	for _, c := range []struct{ msg, add, want string }{
		{"Body.\n\nSigned-off-by: A <a@x>", "Acked-by: B <b@x>", "Body.\n\nSigned-off-by: A <a@x>\nAcked-by: B <b@x>"},
		{"Body without trailers.", "Acked-by: B <b@x>", "Body without trailers.\n\nAcked-by: B <b@x>"},
		{"", "Acked-by: B <b@x>", "Acked-by: B <b@x>"},
		{"Body.\n\nacked-by: b <b@x>", "Acked-by: B <b@x>", "Body.\n\nacked-by: b <b@x>"},
	} {
		p := &mailpatch.Patch{Message: c.msg}
		p.AddTrailer(c.add)
		if p.Message != c.want {
			t.Errorf("%q + %q = %q, want %q", c.msg, c.add, p.Message, c.want)
		}
	}
}

// Every form import reads reads the same through ReadThread: the same
// patches, byte for byte in git format-patch form.
func TestReadThreadAsImport(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "patches", "*", "*"))
	more, _ := filepath.Glob(filepath.Join("testdata", "*", "*.txt"))
	files = append(files, more...)
	if len(files) < 3 {
		t.Fatalf("only %d inputs", len(files))
	}
	n := 0
	for _, f := range files {
		want, err := mailpatch.ImportFile(f, "", mailpatch.Options{})
		if err != nil {
			continue // refused by import: not a case here
		}
		data, _ := os.ReadFile(f)
		th, err := mailpatch.ReadThread([]mailpatch.Input{{Name: f, Data: data}}, "", mailpatch.Options{})
		if err != nil {
			t.Errorf("%s: import reads it, ReadThread says %v", f, err)
			continue
		}
		if len(th.Patches) != len(want) {
			t.Errorf("%s: %d patches, import %d", f, len(th.Patches), len(want))
			continue
		}
		for i := range want {
			if string(th.Patches[i].Format()) != string(want[i].Format()) {
				t.Errorf("%s: patch %d differs from import's:\n%s\nimport:\n%s", f, i, th.Patches[i].Format(), want[i].Format())
			}
		}
		n++
	}
	t.Logf("%d inputs compared", n)
}
