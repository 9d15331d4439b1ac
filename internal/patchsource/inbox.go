package patchsource

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/progress"
)

// InboxOptions says where Inbox keeps its indexes and how it reports.
type InboxOptions struct {
	// CacheDir holds the index of each epoch (CacheDir/inbox/); empty
	// indexes in memory for this lookup only.
	CacheDir string
	// Progress reports indexing; nil reports nothing.
	Progress *progress.Reporter
	// Context bounds the git commands; nil is context.Background().
	Context context.Context
	// IgnoreOver uses patchctl's index even where public-inbox's
	// over.sqlite3 is current.
	IgnoreOver bool
}

// InboxIndexed finds the thread of msgid in a local public-inbox archive:
// dir is the inbox (its git/N.git epochs), one epoch, or any git
// repository whose commits each hold one message as the file "m" (a v1
// inbox's tip tree holds them all). The thread is every message linked to
// msgid by In-Reply-To or References, in any direction and across epochs,
// in archive order, as one mboxrd.
//
// Each epoch is indexed once (Message-ID to commit and blob, the links
// both ways) and the index kept under opts.CacheDir, named by the epoch's
// path and holding the branch tips it covers: when the tips move on, only
// the new commits are indexed; when the history was rewritten, all of it.
// A lookup then reads the indexes and the thread's blobs only. A full
// public-inbox install whose over.sqlite3 is current with every epoch is
// read instead (see overThread), unless opts.IgnoreOver.
func InboxIndexed(dir, msgid string, opts InboxOptions) (mailpatch.Input, error) {
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	id, err := CleanMsgID(msgid)
	if err != nil {
		return mailpatch.Input{}, err
	}
	repos, err := inboxRepos(dir)
	if err != nil {
		return mailpatch.Input{}, err
	}
	sts, err := loadTips(ctx, repos)
	if err != nil {
		return mailpatch.Input{}, err
	}
	if !opts.IgnoreOver {
		in, used, err := overThread(ctx, dir, sts, id, opts)
		if used || err != nil {
			return in, err
		}
	}
	if err := parallel(len(sts), func(i int) error { return sts[i].loadCached(ctx, opts) }); err != nil {
		return mailpatch.Input{}, err
	}
	idx := make([]*epochIndex, len(repos))
	total, unreadable := 0, 0
	for i, st := range sts {
		if idx[i], err = st.index(ctx, opts); err != nil {
			return mailpatch.Input{}, err
		}
		total += idx[i].m
		unreadable += st.unreadable
	}
	want := "<" + id + ">"
	thread := inboxThread(idx, want)
	if len(thread) == 0 {
		damaged := ""
		if unreadable > 0 {
			damaged = fmt.Sprintf("; %d messages could not be read (objects missing from the archive: check it with git fsck or fetch it again), it may be one of them", unreadable)
		}
		return mailpatch.Input{}, fmt.Errorf("Message-ID <%s> is not in the archive at %s (%d messages in %d repositories%s): %w", id, dir, total, len(repos), damaged, errs.ErrInput)
	}
	var b bytes.Buffer
	for e, r := range repos {
		var oids []string
		for _, m := range thread {
			if m.epoch == e {
				oids = append(oids, hex.EncodeToString(idx[e].blob(m.msg)))
			}
		}
		err := gitRepo{r}.catBlobs(ctx, oids, func(_ int, data []byte) error {
			writeMboxrd(&b, data)
			return nil
		}, nil)
		if err != nil {
			return mailpatch.Input{}, err
		}
		if b.Len() > MaxInput {
			return mailpatch.Input{}, fmt.Errorf("the thread of <%s> in %s is over %d bytes (%d messages): give the patches as files instead: %w", id, dir, MaxInput, len(thread), errs.ErrInput)
		}
	}
	return mailpatch.Input{Name: fmt.Sprintf("%s/<%s> (%d messages)", filepath.Base(filepath.Clean(dir)), id, len(thread)), Data: b.Bytes()}, nil
}

// msgRef is one message of an epoch.
type msgRef struct{ epoch, msg int }

// inboxThread walks the links from want, both ways and across epochs,
// and returns the messages reached in archive order (epoch, then commit
// order); none when no message has the id want.
func inboxThread(idx []*epochIndex, want string) []msgRef {
	seen := map[string]bool{want: true}
	queue := []string{want}
	got := map[msgRef]bool{}
	var out []msgRef
	found := false
	visit := func(s string) {
		if !seen[s] {
			seen[s] = true
			queue = append(queue, s)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for e, x := range idx {
			id := x.find(s)
			if id < 0 {
				continue
			}
			for _, m := range x.messagesOf(id) {
				found = found || s == want
				if r := (msgRef{e, m}); !got[r] {
					got[r] = true
					out = append(out, r)
					for _, l := range x.linksOf(m) {
						visit(string(x.idBytes(l)))
					}
				}
			}
			for _, m := range x.referrers(id) {
				visit(x.idOf(m))
			}
		}
	}
	if !found {
		return nil
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].epoch != out[j].epoch {
			return out[i].epoch < out[j].epoch
		}
		return out[i].msg < out[j].msg
	})
	return out
}

// epochState is what a lookup found for one repository: its tips, where
// its index is kept, and the index when that covers the tips (ready), or
// the one to add the new commits to (old).
type epochState struct {
	dir, path  string
	tips       []string
	ready, old *epochIndex
	// unreadable counts the messages whose blobs the repository lacks
	// (an index made without them is never kept).
	unreadable int
}

// loadCached reads st's cached index.
func (st *epochState) loadCached(ctx context.Context, opts InboxOptions) error {
	if opts.CacheDir == "" {
		return nil
	}
	g, dir, tips := gitRepo{st.dir}, st.dir, st.tips
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("inbox %s: %w", dir, err)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	sum := sha256.Sum256([]byte(abs))
	st.path = filepath.Join(opts.CacheDir, "inbox", hex.EncodeToString(sum[:12])+".idx")
	if data, err := os.ReadFile(st.path); err == nil {
		x, err := decodeIndex(data)
		switch {
		case err != nil:
			opts.Progress.Note("inbox index %s of %s is damaged (%v): indexing again", st.path, dir, err)
		case slices.Equal(x.tips, tips):
			st.ready = x
		case !x.v1 && g.contains(ctx, tips, x.tips):
			st.old = x
		}
	}
	return nil
}

// parallel runs f(0) ... f(n-1), a few at a time (a lookup spends most of
// its time waiting for git to start), and returns the first error.
func parallel(n int, f func(i int) error) error {
	fails := make([]error, n)
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			fails[i] = f(i)
		}()
	}
	wg.Wait()
	for _, err := range fails {
		if err != nil {
			return err
		}
	}
	return nil
}

// loadTips reads the tips of every repository.
func loadTips(ctx context.Context, repos []string) ([]*epochState, error) {
	sts := make([]*epochState, len(repos))
	err := parallel(len(repos), func(i int) error {
		tips, err := gitRepo{repos[i]}.tips(ctx)
		sts[i] = &epochState{dir: repos[i], tips: tips}
		return err
	})
	return sts, err
}

// index returns st's index, up to date with its tips: the cached one
// when it covers them, else the cached one plus the new commits, else
// (no cache, a damaged or unusable one, a rewritten history) all of it.
func (st *epochState) index(ctx context.Context, opts InboxOptions) (*epochIndex, error) {
	if st.ready != nil {
		return st.ready, nil
	}
	x, missing, err := indexEpoch(ctx, gitRepo{st.dir}, st.tips, st.old, opts.Progress)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		// A lookup still answers from the rest of the archive, but an index
		// that lacks messages is not kept: it would claim to cover tips
		// whose messages it never read, and outlive a repair.
		st.unreadable = len(missing)
		opts.Progress.Note("inbox %s: %d messages could not be read, their objects are missing (the first in commit %s); threads may lack them: check it with `git -C %s fsck` or fetch it again", st.dir, len(missing), missing[0], st.dir)
		return x, nil
	}
	if st.path != "" {
		err := os.MkdirAll(filepath.Dir(st.path), 0o700)
		if err == nil {
			err = fsutil.WriteFile(st.path, x.file, 0o600)
		}
		if err != nil {
			opts.Progress.Note("inbox index of %s not kept (%v): the next lookup indexes it again", st.dir, err)
		}
	}
	return x, nil
}

// indexEpoch indexes the messages of g reachable from tips, adding to
// old (which covers old.tips, all ancestors of tips) when it is given.
// Messages whose blobs are missing are left out; their commits are
// returned (missing), so the caller can say so and not keep the index.
func indexEpoch(ctx context.Context, g gitRepo, tips []string, old *epochIndex, pr *progress.Reporter) (x *epochIndex, missing []string, err error) {
	var recs []indexRec
	var oldTips []string
	if old != nil {
		recs, oldTips = old.records(), old.tips
	}
	oidLen := 20
	if len(tips) > 0 {
		oidLen = len(tips[0]) / 2
	}
	news, commits, err := g.newMessages(ctx, tips, oldTips)
	if err != nil {
		return nil, nil, err
	}
	v1 := false
	var blobs []string
	var commitOf func(i int) []byte
	if len(news) == 0 && commits > 0 && old == nil {
		// v1: the tip's tree holds every message (the newest tip when
		// there are several branches).
		v1 = true
		out, err := g.output(ctx, append([]string{"rev-list", "-n1", "--date-order"}, tips...)...)
		if err != nil {
			return nil, nil, err
		}
		tip := strings.TrimSpace(string(out))
		if blobs, err = g.treeBlobs(ctx, tip); err != nil {
			return nil, nil, err
		}
		raw, _ := hex.DecodeString(tip)
		commitOf = func(int) []byte { return raw }
	} else {
		for _, n := range news {
			blobs = append(blobs, n.blob)
		}
		commitOf = func(i int) []byte { raw, _ := hex.DecodeString(news[i].commit); return raw }
	}
	if len(blobs) > 0 {
		pr.Start("index inbox " + g.dir)
	}
	err = g.catBlobs(ctx, blobs, func(i int, data []byte) error {
		id, links := threadHeaders(data)
		if id != "" {
			raw, _ := hex.DecodeString(blobs[i])
			recs = append(recs, indexRec{commit: commitOf(i), blob: raw, id: id, links: links})
		}
		if i%2000 == 0 {
			pr.Update("%d of %d new messages", i, len(blobs))
		}
		return nil
	}, func(i int) error {
		missing = append(missing, hex.EncodeToString(commitOf(i)))
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	data, err := encodeIndex(oidLen, v1, tips, recs)
	if err != nil {
		return nil, nil, fmt.Errorf("indexing %s: %w", g.dir, err)
	}
	x, err = decodeIndex(data)
	if err != nil {
		return nil, nil, fmt.Errorf("indexing %s: %w", g.dir, err)
	}
	if len(blobs) > 0 {
		pr.Done("%d messages, %d new", x.m, len(blobs))
	}
	return x, missing, nil
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

var angleIDs = regexp.MustCompile(`<[^<>\s]+>`)

// threadHeaders reads Message-ID, In-Reply-To and References from a
// message's header (folded lines unfolded).
func threadHeaders(data []byte) (id string, links []string) {
	var field []byte
	flush := func() {
		name, val, ok := bytes.Cut(field, []byte(":"))
		if !ok {
			return
		}
		switch strings.ToLower(string(bytes.TrimSpace(name))) {
		case "message-id":
			if id == "" {
				id = string(angleIDs.Find(val))
			}
		case "in-reply-to", "references":
			for _, l := range angleIDs.FindAll(val, -1) {
				links = append(links, string(l))
			}
		}
	}
	for len(data) > 0 {
		var l []byte
		l, data, _ = bytes.Cut(data, []byte("\n"))
		l = bytes.TrimRight(l, "\r")
		if len(l) == 0 {
			break
		}
		if (l[0] == ' ' || l[0] == '\t') && field != nil {
			field = append(append(field, ' '), bytes.TrimSpace(l)...)
			continue
		}
		flush()
		field = append(field[:0], l...)
	}
	flush()
	return id, links
}
