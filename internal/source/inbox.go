package source

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/mailpatch"
)

// Inbox finds the thread of msgid in a local public-inbox v2 archive (a
// grokmirror or lei mirror of lore): dir is the inbox (its git/N.git
// epochs), one epoch, or any git repository whose commits each hold one
// message as the file "m". The thread is every message linked to msgid by
// In-Reply-To or References, in archive order, as one mboxrd.
func Inbox(dir, msgid string) (mailpatch.Input, error) {
	id, err := CleanMsgID(msgid)
	if err != nil {
		return mailpatch.Input{}, err
	}
	repos, err := inboxRepos(dir)
	if err != nil {
		return mailpatch.Input{}, err
	}
	var msgs []*inboxMsg
	for _, r := range repos {
		ms, err := readEpoch(r)
		if err != nil {
			return mailpatch.Input{}, fmt.Errorf("reading %s: %w", r, err)
		}
		msgs = append(msgs, ms...)
	}
	// Union the messages by their links; the thread is msgid's set.
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		for parent[x] != "" && parent[x] != x {
			if g := parent[parent[x]]; g != "" {
				parent[x] = g
			}
			x = parent[x]
		}
		return x
	}
	union := func(a, b string) {
		ra, rb := find(a), find(b)
		if ra != rb {
			parent[ra] = rb
		}
	}
	want := "<" + id + ">"
	found := false
	for _, m := range msgs {
		if m.id == "" {
			continue
		}
		if parent[m.id] == "" {
			parent[m.id] = m.id
		}
		found = found || m.id == want
		for _, l := range m.links {
			if parent[l] == "" {
				parent[l] = l
			}
			union(m.id, l)
		}
	}
	if !found {
		return mailpatch.Input{}, fmt.Errorf("Message-ID <%s> is not in the archive at %s (%d messages in %d repositories): %w", id, dir, len(msgs), len(repos), errs.ErrInput)
	}
	root := find(want)
	var b bytes.Buffer
	n := 0
	for _, m := range msgs {
		if m.id == "" || find(m.id) != root {
			continue
		}
		n++
		writeMboxrd(&b, m.data)
	}
	return mailpatch.Input{Name: fmt.Sprintf("%s/<%s> (%d messages)", filepath.Base(filepath.Clean(dir)), id, n), Data: b.Bytes()}, nil
}

// writeMboxrd appends one message in mboxrd form, as public-inbox writes
// its t.mbox.gz: every ">*From " line gets one more '>'.
func writeMboxrd(b *bytes.Buffer, data []byte) {
	b.WriteString("From mboxrd@z Thu Jan  1 00:00:00 1970\n")
	lines := bytes.SplitAfter(data, []byte("\n"))
	for _, l := range lines {
		if len(l) == 0 {
			continue
		}
		if mboxrdFrom.Match(l) {
			b.WriteByte('>')
		}
		b.Write(l)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString("\n")
}

var mboxrdFrom = regexp.MustCompile(`^>*From `)

// inboxRepos lists the git repositories of an inbox: dir itself when it is
// one, else its git/N.git epochs in order, else all.git.
func inboxRepos(dir string) ([]string, error) {
	if isRepo(dir) {
		return []string{dir}, nil
	}
	epochs, _ := filepath.Glob(filepath.Join(dir, "git", "*.git"))
	sort.Slice(epochs, func(i, j int) bool { return epochNum(epochs[i]) < epochNum(epochs[j]) })
	var out []string
	for _, e := range epochs {
		if isRepo(e) {
			out = append(out, e)
		}
	}
	if len(out) == 0 && isRepo(filepath.Join(dir, "all.git")) {
		out = append(out, filepath.Join(dir, "all.git"))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--inbox %s is not a public-inbox archive: no git repository there, in git/N.git or all.git: %w", dir, errs.ErrInput)
	}
	return out, nil
}

func epochNum(p string) int {
	n, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(p), ".git"))
	if err != nil {
		return 1 << 30
	}
	return n
}

func isRepo(dir string) bool {
	for _, p := range []string{filepath.Join(dir, "HEAD"), filepath.Join(dir, ".git")} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

type inboxMsg struct {
	id    string
	links []string
	data  []byte
}

// readEpoch reads every message of one repository, oldest first: the
// file "m" of each commit of every branch (public-inbox v2), or, for a
// v1 inbox, each file of the tip's tree.
func readEpoch(dir string) ([]*inboxMsg, error) {
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return nil, err
	}
	var commits []*object.Commit
	seen := map[plumbing.Hash]bool{}
	refs, err := repo.References()
	if err != nil {
		return nil, err
	}
	err = refs.ForEach(func(r *plumbing.Reference) error {
		if r.Type() != plumbing.HashReference || !r.Name().IsBranch() {
			return nil
		}
		it, err := repo.Log(&git.LogOptions{From: r.Hash(), Order: git.LogOrderCommitterTime})
		if err != nil {
			return err
		}
		return it.ForEach(func(c *object.Commit) error {
			if seen[c.Hash] {
				return storer.ErrStop
			}
			seen[c.Hash] = true
			commits = append(commits, c)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(commits, func(i, j int) bool { return commits[i].Committer.When.Before(commits[j].Committer.When) })
	var out []*inboxMsg
	v1 := true
	for _, c := range commits {
		f, err := c.File("m")
		if errors.Is(err, object.ErrFileNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		v1 = false
		m, err := readBlob(f)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	if v1 && len(commits) > 0 {
		// v1: the tip's tree holds every message.
		tip := commits[len(commits)-1]
		files, err := tip.Files()
		if err != nil {
			return nil, err
		}
		err = files.ForEach(func(f *object.File) error {
			m, err := readBlob(f)
			if err == nil {
				out = append(out, m)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func readBlob(f *object.File) (*inboxMsg, error) {
	r, err := f.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, MaxInput))
	if err != nil {
		return nil, err
	}
	m := &inboxMsg{data: data}
	m.id, m.links = threadHeaders(data)
	return m, nil
}

var angleIDs = regexp.MustCompile(`<[^<>\s]+>`)

// threadHeaders reads Message-ID, In-Reply-To and References from a
// message's header (folded lines unfolded).
func threadHeaders(data []byte) (id string, links []string) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var fields []string
	for sc.Scan() {
		l := strings.TrimRight(sc.Text(), "\r")
		if l == "" {
			break
		}
		if (l[0] == ' ' || l[0] == '\t') && len(fields) > 0 {
			fields[len(fields)-1] += " " + strings.TrimSpace(l)
			continue
		}
		fields = append(fields, l)
	}
	for _, f := range fields {
		name, val, ok := strings.Cut(f, ":")
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "message-id":
			if id == "" {
				id = angleIDs.FindString(val)
			}
		case "in-reply-to", "references":
			links = append(links, angleIDs.FindAllString(val, -1)...)
		}
	}
	return id, links
}
