// Package patchsource gets the patches patchctl try validates from where a
// kernel developer has them: files and folders (every form import reads),
// a commit range of a local git repository (as git format-patch writes it,
// through go-git), a thread by Message-ID from a local public-inbox
// archive, or from a lore-style server over HTTP(S) as b4 fetches it
// (<URL>/<msgid>/t.mbox.gz).
//
// Each returns mailpatch.Inputs: the bytes as received, which
// mailpatch.ReadThread reads and patchctl try --record keeps.
package patchsource

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/mailpatch"
)

// MaxInput caps what one source may hand over (a whole thread).
const MaxInput = mailpatch.DefaultMaxInputSize

// Files reads a patch file, an mbox or a folder of messages (in name
// order, hidden files and patchctl's metadata skipped) as one input list.
// Entries of a folder that are not regular files (FIFOs, sockets,
// devices) are skipped, each with a note; a path that is one is refused.
// Nothing blocks in open.
func Files(path string) (ins []mailpatch.Input, notes []string, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: cannot read: %v: %w", path, err, errs.ErrInput)
	}
	files := []string{path}
	if st.IsDir() {
		var warns []mailpatch.Warning
		files, warns, err = mailpatch.SeriesFiles(path)
		for _, w := range warns {
			notes = append(notes, w.File+": "+w.Message)
		}
		if err != nil {
			return nil, notes, err
		}
	}
	for _, f := range files {
		b, err := mailpatch.ReadInputFile(f, MaxInput)
		if err != nil {
			return nil, notes, err
		}
		ins = append(ins, mailpatch.Input{Name: f, Data: b})
	}
	return ins, notes, nil
}

// Git writes the commits of rng in the repository at dir as git
// format-patch would, one message each, oldest first: "A..B" (reachable
// from B, not from A), "A.." (A..HEAD), "A" (A..HEAD, as format-patch
// reads a single revision) or "-N" (the last N commits of HEAD). Merges
// are left out, as format-patch leaves them.
func Git(ctx context.Context, dir, rng string) ([]mailpatch.Input, error) {
	repo, err := openRepo(dir)
	if err != nil {
		return nil, err
	}
	resolve := func(rev string) (*object.Commit, error) {
		h, err := repo.ResolveRevision(plumbing.Revision(rev))
		if err != nil {
			return nil, fmt.Errorf("--git %s: revision %q: %v: %w", dir, rev, err, errs.ErrInput)
		}
		return repo.CommitObject(*h)
	}
	var tip *object.Commit
	var stop map[plumbing.Hash]bool
	limit := -1
	switch {
	case strings.HasPrefix(rng, "-"):
		n, err := strconv.Atoi(rng[1:])
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("--git range %q: -N wants a positive count: %w", rng, errs.ErrUsage)
		}
		limit = n
		if tip, err = resolve("HEAD"); err != nil {
			return nil, err
		}
	default:
		from, to, ok := strings.Cut(rng, "..")
		if !ok {
			to = ""
		}
		if to == "" {
			to = "HEAD"
		}
		if tip, err = resolve(to); err != nil {
			return nil, err
		}
		base, err := resolve(from)
		if err != nil {
			return nil, err
		}
		if stop, err = ancestors(base); err != nil {
			return nil, err
		}
	}
	var commits []*object.Commit
	seen := map[plumbing.Hash]bool{}
	queue := []*object.Commit{tip}
	for len(queue) > 0 && (limit < 0 || len(commits) < limit) {
		c := queue[0]
		queue = queue[1:]
		if seen[c.Hash] || stop[c.Hash] {
			continue
		}
		seen[c.Hash] = true
		if c.NumParents() <= 1 {
			commits = append(commits, c)
		}
		err := c.Parents().ForEach(func(p *object.Commit) error { queue = append(queue, p); return nil })
		if err != nil {
			return nil, fmt.Errorf("--git %s: %w", dir, err)
		}
	}
	if len(commits) == 0 {
		return nil, fmt.Errorf("--git %s %s: no commits in the range: %w", dir, rng, errs.ErrInput)
	}
	// Oldest first: by committer time, then by ancestry (a breadth-first
	// walk from the tip lists children before parents).
	for i, j := 0, len(commits)-1; i < j; i, j = i+1, j-1 {
		commits[i], commits[j] = commits[j], commits[i]
	}
	sort.SliceStable(commits, func(i, j int) bool { return commits[i].Committer.When.Before(commits[j].Committer.When) })
	var out []mailpatch.Input
	for i, c := range commits {
		b, err := formatPatch(ctx, c, i+1, len(commits))
		if err != nil {
			return nil, fmt.Errorf("--git %s: commit %s: %w", dir, c.Hash, err)
		}
		out = append(out, mailpatch.Input{Name: fmt.Sprintf("%s@%s", filepath.Base(filepath.Clean(dir)), c.Hash.String()[:12]), Data: b})
	}
	return out, nil
}

// openRepo opens the repository at dir: a work tree (dir or a folder
// above it holds .git) or a bare repository (dir is the git folder, as a
// mirror or public-inbox epoch is).
func openRepo(dir string) (*git.Repository, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("--git %s: %v: %w", dir, err, errs.ErrInput)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("--git %s: not a folder (want a git repository, with a work tree or bare): %w", dir, errs.ErrInput)
	}
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		repo, err = git.PlainOpen(dir) // bare: dir is the repository itself
	}
	if err != nil {
		return nil, fmt.Errorf("--git %s: not a git repository (no .git in it or above it, and not a bare repository): %v: %w", dir, err, errs.ErrInput)
	}
	return repo, nil
}

func ancestors(c *object.Commit) (map[plumbing.Hash]bool, error) {
	seen := map[plumbing.Hash]bool{}
	queue := []*object.Commit{c}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if seen[c.Hash] {
			continue
		}
		seen[c.Hash] = true
		if err := c.Parents().ForEach(func(p *object.Commit) error { queue = append(queue, p); return nil }); err != nil {
			return nil, err
		}
	}
	return seen, nil
}

// formatPatch writes one commit as git format-patch does: the From line
// with the commit id, From, Date, Subject with [PATCH n/m], the message,
// "---", the diffstat, the diff, and the signature line.
func formatPatch(ctx context.Context, c *object.Commit, n, total int) ([]byte, error) {
	to, err := c.Tree()
	if err != nil {
		return nil, err
	}
	var from *object.Tree
	if c.NumParents() > 0 {
		parent, err := c.Parent(0)
		if err != nil {
			return nil, err
		}
		if from, err = parent.Tree(); err != nil {
			return nil, err
		}
	}
	changes, err := object.DiffTreeWithOptions(ctx, from, to, object.DefaultDiffTreeOptions)
	if err != nil {
		return nil, err
	}
	patch, err := changes.PatchContext(ctx)
	if err != nil {
		return nil, err
	}
	diffBytes, err := encodeDiff(patch, from, to)
	if err != nil {
		return nil, err
	}
	diff := bytes.NewBuffer(diffBytes)
	subject, body, _ := strings.Cut(strings.TrimRight(c.Message, "\n"), "\n")
	body = strings.Trim(body, "\n")
	prefix := "[PATCH]"
	if total > 1 {
		prefix = fmt.Sprintf("[PATCH %d/%d]", n, total)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "From %s Mon Sep 17 00:00:00 2001\n", c.Hash)
	fmt.Fprintf(&b, "From: %s <%s>\n", mimeWord(c.Author.Name), c.Author.Email)
	fmt.Fprintf(&b, "Date: %s\n", c.Author.When.Format(time.RFC1123Z))
	fmt.Fprintf(&b, "Subject: %s %s\n", prefix, mimeWord(subject))
	if !isASCII(c.Message) || !isASCII(diff.String()) {
		b.WriteString("MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: 8bit\n")
	}
	b.WriteString("\n")
	if body != "" {
		b.WriteString(body + "\n")
	}
	b.WriteString("---\n")
	b.WriteString(patch.Stats().String())
	b.WriteString("\n")
	b.Write(diff.Bytes())
	b.WriteString("-- \npatchctl (go-git)\n\n")
	return b.Bytes(), nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// mimeWord encodes a header value that is not ASCII (RFC 2047).
func mimeWord(s string) string {
	if isASCII(s) {
		return s
	}
	return "=?UTF-8?q?" + qEncode(s) + "?="
}

func qEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ':
			b.WriteByte('_')
		case c >= 0x80 || c == '=' || c == '?' || c == '_' || c < 0x20:
			fmt.Fprintf(&b, "=%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// CleanMsgID takes a Message-ID as users paste it: with or without <>,
// or as a lore URL's path element.
func CleanMsgID(id string) (string, error) {
	id = strings.TrimSpace(id)
	if u, err := url.Parse(id); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		parts := strings.Split(strings.Trim(u.Path, "/"), "/")
		for i := len(parts) - 1; i >= 0; i-- {
			if strings.Contains(parts[i], "@") {
				id, _ = url.PathUnescape(parts[i])
				break
			}
		}
	}
	id = strings.TrimSuffix(strings.TrimPrefix(id, "<"), ">")
	id = strings.TrimPrefix(id, "id:")
	if id == "" || !strings.Contains(id, "@") || strings.ContainsAny(id, "<> \t\n/") {
		return "", fmt.Errorf("--msgid %q is not a Message-ID (want local@domain, with or without <>): %w", id, errs.ErrUsage)
	}
	return id, nil
}

// Lore fetches the thread of msgid from a public-inbox server at base
// (https://lore.kernel.org/linux-rdma, or all): base/<msgid>/t.mbox.gz,
// gunzipped. The client is NewHTTPClient(DefaultTimeouts) unless given:
// a server that accepts and never answers fails the call (exit 3) in a
// minute, not never.
func Lore(ctx context.Context, client *http.Client, base, msgid string) (mailpatch.Input, error) {
	id, err := CleanMsgID(msgid)
	if err != nil {
		return mailpatch.Input{}, err
	}
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return mailpatch.Input{}, fmt.Errorf("--lore %q: want an http(s) URL such as https://lore.kernel.org/all: %w", base, errs.ErrUsage)
	}
	target := u.String() + "/" + url.PathEscape(id) + "/t.mbox.gz"
	if client == nil {
		client = NewHTTPClient(DefaultTimeouts)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return mailpatch.Input{}, err
	}
	req.Header.Set("User-Agent", "patchctl")
	resp, err := client.Do(req)
	if err != nil {
		return mailpatch.Input{}, netError(ctx, target, "fetching", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return mailpatch.Input{}, fmt.Errorf("%s: no thread for Message-ID <%s> (HTTP 404): %w", target, id, errs.ErrInput)
	case resp.StatusCode != http.StatusOK:
		return mailpatch.Input{}, fmt.Errorf("fetching %s: HTTP %s: %w", target, resp.Status, errs.ErrEnv)
	}
	zr, err := gzip.NewReader(io.LimitReader(resp.Body, MaxInput))
	if err != nil && (isTimeout(err) || ctx.Err() != nil) {
		return mailpatch.Input{}, netError(ctx, target, "reading", err)
	}
	if err != nil {
		return mailpatch.Input{}, fmt.Errorf("%s: not a gzip mbox: %v: %w", target, err, errs.ErrInput)
	}
	data, err := io.ReadAll(io.LimitReader(zr, MaxInput+1))
	if err != nil && (isTimeout(err) || ctx.Err() != nil) {
		return mailpatch.Input{}, netError(ctx, target, "reading", err)
	}
	if err != nil {
		return mailpatch.Input{}, fmt.Errorf("%s: reading the thread: %v: %w", target, err, errs.ErrInput)
	}
	if len(data) > MaxInput {
		return mailpatch.Input{}, fmt.Errorf("%s: the thread is larger than the %d MiB cap: %w", target, MaxInput>>20, errs.ErrInput)
	}
	return mailpatch.Input{Name: target, Data: data}, nil
}

// netError says what a failed network call means: an interrupt, a server
// that did not answer in time, or another network failure; all are the
// environment's (exit 3).
func netError(ctx context.Context, target, doing string, err error) error {
	switch {
	case ctx.Err() != nil && !isTimeout(ctx.Err()):
		return fmt.Errorf("%s %s: interrupted: %w: %w", doing, target, ctx.Err(), errs.ErrEnv)
	case isTimeout(err):
		return fmt.Errorf("%s %s: the server did not answer in time (%v); try again later or another --lore server: %w", doing, target, err, errs.ErrEnv)
	}
	return fmt.Errorf("%s %s: %v: %w", doing, target, err, errs.ErrEnv)
}
