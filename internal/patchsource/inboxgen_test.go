package patchsource_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/patchsource"
)

// genMsg is one message of a generated inbox.
type genMsg struct {
	id     string   // with angle brackets
	links  []string // In-Reply-To/References, oldest first
	thread int      // the thread it belongs to (its root's number)
}

// genInbox writes n messages as epoch repositories of a public-inbox v2
// inbox at dir (git/0.git ... git/E.git, perEpoch messages each; one epoch
// when perEpoch <= 0) with git fast-import, and returns them in archive
// order. About a third start a thread; the rest reply to an earlier
// message of a recent thread (In-Reply-To and the References chain); a
// few reference a message that is not in the archive. Bodies are about
// size bytes of patch-like text.
func genInbox(tb testing.TB, dir string, n, perEpoch, size int, seed uint64) []genMsg {
	tb.Helper()
	if perEpoch <= 0 {
		perEpoch = n
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	var msgs []genMsg
	var open []int // recent messages that may get replies
	for i := 0; i < n; i++ {
		m := genMsg{id: fmt.Sprintf("<%d.%d.gen@fixture.invalid>", i, seed), thread: i}
		if len(open) > 0 && rng.IntN(3) != 0 {
			p := msgs[open[rng.IntN(len(open))]]
			m.links = append(append([]string{}, p.links...), p.id)
			m.thread = p.thread
		} else if rng.IntN(50) == 0 {
			m.links = []string{fmt.Sprintf("<ghost.%d.%d@elsewhere.invalid>", i, seed)}
		}
		msgs = append(msgs, m)
		open = append(open, i)
		if len(open) > 40 {
			open = open[1:]
		}
	}
	words := make([]string, 2000)
	for i := range words {
		var w []byte
		for j := 0; j < 2+rng.IntN(9); j++ {
			w = append(w, byte('a'+rng.IntN(26)))
		}
		words[i] = string(w)
	}
	body := func() string {
		var b strings.Builder
		for b.Len() < size {
			b.WriteString("+\t")
			for j := 0; j < 8; j++ {
				b.WriteString(words[rng.IntN(len(words))])
				b.WriteByte(' ')
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	for e := 0; e*perEpoch < n; e++ {
		repo := filepath.Join(dir, "git", fmt.Sprintf("%d.git", e))
		if out, err := exec.Command("git", "init", "-q", "--bare", repo).CombinedOutput(); err != nil {
			tb.Fatalf("git init: %v: %s", err, out)
		}
		cmd := exec.Command("git", "-C", repo, "fast-import", "--quiet", "--done")
		in, err := cmd.StdinPipe()
		if err != nil {
			tb.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			tb.Fatal(err)
		}
		w := bufio.NewWriterSize(in, 1<<20)
		for i := e * perEpoch; i < min(n, (e+1)*perEpoch); i++ {
			m := msgs[i]
			var b strings.Builder
			fmt.Fprintf(&b, "From: Dev %d <dev%d@fixture.invalid>\nSubject: [PATCH] gen: message %d\nDate: Mon, 1 Jun 2026 00:00:00 +0000\nMessage-ID: %s\n", i%97, i%97, i, m.id)
			if len(m.links) > 0 {
				fmt.Fprintf(&b, "In-Reply-To: %s\nReferences: %s\n", m.links[len(m.links)-1], strings.Join(m.links, "\n "))
			}
			fmt.Fprintf(&b, "\nbody of %d\n---\n%s", i, body())
			body := b.String()
			fmt.Fprintf(w, "commit refs/heads/master\ncommitter public-inbox <inbox@fixture.invalid> %d +0000\ndata 4\ngen\nM 100644 inline m\ndata %d\n%s\n", 1764000000+i*60, len(body), body)
		}
		w.WriteString("done\n")
		if err := w.Flush(); err != nil {
			tb.Fatal(err)
		}
		in.Close()
		if err := cmd.Wait(); err != nil {
			tb.Fatalf("git fast-import: %v", err)
		}
	}
	return msgs
}

// BenchmarkInbox60k measures a generated 60,000-message epoch (about
// 3.6 kB a message): the first index, a warm hit (a 14-message thread)
// and a warm miss in this process, and the peak RSS of one warm lookup in
// a process of its own. The fixture takes about a minute to generate.
func BenchmarkInbox60k(b *testing.B) {
	dir := b.TempDir()
	msgs := genInbox(b, dir, 60000, 0, 3600, 1)
	cache := b.TempDir()
	hit := strings.Trim(msgs[500].id, "<>")
	b.Run("first-index", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := patchsource.InboxIndexed(dir, hit, patchsource.InboxOptions{CacheDir: b.TempDir()}); err != nil {
				b.Fatal(err)
			}
		}
	})
	if _, err := patchsource.InboxIndexed(dir, hit, patchsource.InboxOptions{CacheDir: cache}); err != nil {
		b.Fatal(err)
	}
	// peak RSS of one lookup in a process of its own
	rss := func(b *testing.B, cache, id string) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestInboxLookupProcess$", "-test.v")
		cmd.Env = append(os.Environ(), "INBOX_LOOKUP="+dir+"\n"+cache+"\n"+id)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		var kb int64
		_, rest, ok := bytes.Cut(out, []byte("maxrss-kB "))
		if _, err := fmt.Sscanf(string(rest), "%d", &kb); !ok || err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		b.ReportMetric(float64(kb)/1024, "maxrss-MB")
	}
	b.Run("first-index-process", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			rss(b, b.TempDir(), hit)
		}
	})
	for _, c := range []struct{ name, id string }{{"warm-hit", hit}, {"warm-miss", "not-archived@fixture.invalid"}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_, err := patchsource.InboxIndexed(dir, c.id, patchsource.InboxOptions{CacheDir: cache})
				if (err != nil) != (c.id != hit) {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"-process", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				rss(b, cache, c.id)
			}
		})
	}
}

// TestInboxLookupProcess is BenchmarkInbox60k's lookup in a process of its
// own: it prints the process's peak RSS.
func TestInboxLookupProcess(t *testing.T) {
	arg := os.Getenv("INBOX_LOOKUP")
	if arg == "" {
		t.Skip("run by BenchmarkInbox60k")
	}
	f := strings.Split(arg, "\n")
	_, err := patchsource.InboxIndexed(f[0], f[2], patchsource.InboxOptions{CacheDir: f[1]})
	if err != nil && !errors.Is(err, errs.ErrInput) {
		t.Fatal(err)
	}
	// VmHWM, not getrusage: Linux carries the parent's peak over the
	// vfork and exec that started this process.
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			fmt.Printf("maxrss-kB %s\n", strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		}
	}
}
