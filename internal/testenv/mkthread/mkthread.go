// Package mkthread writes mailing-list threads for tests: a series in two
// revisions, a cover letter, replies with review trailers (some quoted,
// some down a chain of replies), as an mbox, as a public-inbox v2 epoch
// (a bare git repository with one message per commit, file "m"), and as
// the gzipped t.mbox a public-inbox server serves.
package mkthread

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Msg is one mail.
type Msg struct {
	ID         string // without <>
	InReplyTo  string // without <>
	References []string
	From       string
	Subject    string
	Date       time.Time
	Body       string
}

// Bytes is the message in RFC 2822 form.
func (m Msg) Bytes() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: %s\n", m.From)
	fmt.Fprintf(&b, "Subject: %s\n", m.Subject)
	fmt.Fprintf(&b, "Date: %s\n", m.Date.Format(time.RFC1123Z))
	fmt.Fprintf(&b, "Message-ID: <%s>\n", m.ID)
	if m.InReplyTo != "" {
		fmt.Fprintf(&b, "In-Reply-To: <%s>\n", m.InReplyTo)
	}
	if len(m.References) > 0 {
		// Folded, as mail clients write a long References header.
		fmt.Fprintf(&b, "References: <%s>", strings.Join(m.References, ">\n <"))
		b.WriteString("\n")
	}
	b.WriteString("\n")
	b.WriteString(m.Body)
	if !strings.HasSuffix(m.Body, "\n") {
		b.WriteString("\n")
	}
	return b.Bytes()
}

// Mbox writes the messages as public-inbox's mboxrd.
func Mbox(msgs []Msg) []byte {
	var b bytes.Buffer
	for _, m := range msgs {
		b.WriteString("From mboxrd@z Thu Jan  1 00:00:00 1970\n")
		for _, l := range strings.SplitAfter(string(m.Bytes()), "\n") {
			if strings.HasPrefix(strings.TrimLeft(l, ">"), "From ") {
				b.WriteString(">")
			}
			b.WriteString(l)
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

// Gzip compresses data (t.mbox.gz).
func Gzip(data []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// Inbox writes the messages as a public-inbox v2 inbox at dir: epoch
// git/0.git, a bare repository whose commits each add one message as the
// file "m", in order, on refs/heads/master.
func Inbox(dir string, msgs []Msg) error {
	repo, err := git.PlainInit(filepath.Join(dir, "git", "0.git"), true)
	if err != nil {
		return err
	}
	st := repo.Storer
	var parent plumbing.Hash
	for i, m := range msgs {
		blob := st.NewEncodedObject()
		blob.SetType(plumbing.BlobObject)
		w, err := blob.Writer()
		if err != nil {
			return err
		}
		w.Write(m.Bytes())
		w.Close()
		bh, err := st.SetEncodedObject(blob)
		if err != nil {
			return err
		}
		tree := &object.Tree{Entries: []object.TreeEntry{{Name: "m", Mode: filemode.Regular, Hash: bh}}}
		to := st.NewEncodedObject()
		if err := tree.Encode(to); err != nil {
			return err
		}
		th, err := st.SetEncodedObject(to)
		if err != nil {
			return err
		}
		sig := object.Signature{Name: "public-inbox", Email: "inbox@example.org", When: time.Unix(1764000000+int64(i)*60, 0).UTC()}
		c := &object.Commit{Author: sig, Committer: sig, Message: m.Subject + "\n", TreeHash: th}
		if !parent.IsZero() {
			c.ParentHashes = []plumbing.Hash{parent}
		}
		co := st.NewEncodedObject()
		if err := c.Encode(co); err != nil {
			return err
		}
		if parent, err = st.SetEncodedObject(co); err != nil {
			return err
		}
	}
	return st.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName("master"), parent))
}

// Patch is a patch mail's body: message, sign-off, "---", the diff.
func Patch(message, signoff, diff string) string {
	return message + "\n\nSigned-off-by: " + signoff + "\n---\n" + diff
}

// InsertAfter is a unified diff (git form, three lines of context) of
// file path whose content is old, adding the lines add after line after
// (1-based).
func InsertAfter(path string, old []byte, after int, add ...string) string {
	lines := strings.SplitAfter(string(old), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	from := max(after-3, 0)
	to := min(after+3, len(lines))
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n", path, path, path, path)
	fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", from+1, to-from, from+1, to-from+len(add))
	for _, l := range lines[from:after] {
		b.WriteString(" " + l)
	}
	for _, l := range add {
		b.WriteString("+" + l + "\n")
	}
	for _, l := range lines[after:to] {
		b.WriteString(" " + l)
	}
	return b.String()
}

// Series is a thread: version 1 of a two-patch series (and a reply to
// its first patch acking it), version 2 with a cover letter sent in reply
// to v1, a review of
// the cover letter, a test report on v2's second patch that quotes a
// trailer, and a reply to that report acking it. v1 and v2 are the two
// diffs of each revision. IDs end in @example.org; the cover letter's ID
// is Cover.
func Series(subject [2]string, v1, v2 [2]string) []Msg {
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	next := func() time.Time { at = at.Add(time.Minute); return at }
	author := "Pat Developer <pat@example.org>"
	var msgs []Msg
	for i := range 2 {
		msgs = append(msgs, Msg{ID: fmt.Sprintf("v1-%d@example.org", i+1), From: author, Date: next(),
			InReplyTo:  map[bool]string{true: "", false: "v1-1@example.org"}[i == 0],
			References: map[bool][]string{true: nil, false: {"v1-1@example.org"}}[i == 0],
			Subject:    fmt.Sprintf("[PATCH %d/2] %s", i+1, subject[i]),
			Body:       Patch("First take.", author, v1[i])})
	}
	msgs = append(msgs, Msg{ID: "v1-ack@example.org", InReplyTo: "v1-1@example.org", References: []string{"v1-1@example.org"},
		From: "Old Reviewer <old@example.org>", Date: next(), Subject: "Re: [PATCH 1/2] " + subject[0],
		Body: "On v1:\n\nAcked-by: Old Reviewer <old@example.org>\n"})
	// v2 is sent in reply to v1 (git send-email --in-reply-to): one thread.
	msgs = append(msgs, Msg{ID: Cover, InReplyTo: "v1-1@example.org", References: []string{"v1-1@example.org"},
		From: author, Date: next(), Subject: "[PATCH v2 0/2] " + CoverSubject,
		Body: "Two small changes.\n\nChanges since v1: reworded.\n\nPat Developer (2):\n  " + subject[0] + "\n  " + subject[1] + "\n"})
	for i := range 2 {
		msgs = append(msgs, Msg{ID: fmt.Sprintf("v2-%d@example.org", i+1), InReplyTo: Cover, References: []string{Cover},
			From: author, Date: next(), Subject: fmt.Sprintf("[PATCH v2 %d/2] %s", i+1, subject[i]),
			Body: Patch("Second take.", author, v2[i])})
	}
	msgs = append(msgs, Msg{ID: "v2-review@example.org", InReplyTo: Cover, References: []string{Cover},
		From: "Rita Reviewer <rita@example.org>", Date: next(), Subject: "Re: [PATCH v2 0/2] " + CoverSubject,
		Body: "Looks good.\n\nReviewed-by: Rita Reviewer <rita@example.org>\n-- \nReviewed-by: Signature Line <sig@example.org>\n"})
	msgs = append(msgs, Msg{ID: "v2-test@example.org", InReplyTo: "v2-2@example.org", References: []string{Cover, "v2-2@example.org"},
		From: "Tom Tester <tom@example.org>", Date: next(), Subject: "Re: [PATCH v2 2/2] " + subject[1],
		Body: "> Reviewed-by: Quoted Person <quoted@example.org>\n\nRan it on rxe.\n\nTested-by: Tom Tester <tom@example.org>\n"})
	msgs = append(msgs, Msg{ID: "v2-ack@example.org", InReplyTo: "v2-test@example.org", References: []string{Cover, "v2-2@example.org", "v2-test@example.org"},
		From: "Ann Maintainer <ann@example.org>", Date: next(), Subject: "Re: [PATCH v2 2/2] " + subject[1],
		Body: "> Tested-by: Tom Tester <tom@example.org>\n\nacked-by: Ann Maintainer <ann@example.org>\n"})
	return msgs
}

// Cover is the Message-ID of Series' cover letter; CoverSubject its
// subject after the prefix.
const (
	Cover        = "v2-cover@example.org"
	CoverSubject = "two small changes"
)

// Unrelated is a message of another thread, for archives that hold more
// than one.
func Unrelated(diff string) Msg {
	return Msg{ID: "other@example.org", From: "Someone Else <else@example.org>", Date: time.Date(2026, 11, 19, 9, 0, 0, 0, time.UTC),
		Subject: "[PATCH] something else", Body: Patch("Unrelated.", "Someone Else <else@example.org>", diff)}
}
