package mailpatch_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/testenv/mkthread"
)

// foldedHeader is one patch mail whose References header is folded over
// n continuation lines (issue 31, finding 10: 300k lines took 17-19 s).
func foldedHeader(n int) []byte {
	var b strings.Builder
	b.WriteString("From: Pat Developer <pat@example.org>\nSubject: [PATCH] foo: change\nDate: Fri, 20 Nov 2026 10:00:00 +0000\nMessage-ID: <p@example.org>\nReferences:")
	for i := range n {
		fmt.Fprintf(&b, " <r%d@example.org>\n", i)
	}
	b.WriteString("\nA change.\n\nSigned-off-by: Pat Developer <pat@example.org>\n---\n")
	b.WriteString(diffOf("a.c", 2))
	return []byte(b.String())
}

// replyChain is a patch and n replies, each answering the one before and
// giving a trailer (finding 10: a 32k-reply chain took 98 s).
func replyChain(n int) []byte {
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	msgs := []mkthread.Msg{{ID: "p@example.org", From: "Pat Developer <pat@example.org>", Date: at,
		Subject: "[PATCH] foo: change", Body: mkthread.Patch("A change.", "Pat Developer <pat@example.org>", diffOf("a.c", 2))}}
	parent := "p@example.org"
	for i := range n {
		id := fmt.Sprintf("r%d@example.org", i)
		msgs = append(msgs, mkthread.Msg{ID: id, InReplyTo: parent, From: "R <r@example.org>", Date: at.Add(time.Duration(i+1) * time.Second),
			Subject: "Re: [PATCH] foo: change", Body: fmt.Sprintf("ok\n\nReviewed-by: R%d <r%d@example.org>\n", i, i)})
		parent = id
	}
	return mkthread.Mbox(msgs)
}

func lines(data []byte) int { return strings.Count(string(data), "\n") }

func readBytes(tb testing.TB, data []byte) *mailpatch.Thread {
	tb.Helper()
	th, err := mailpatch.ReadThread([]mailpatch.Input{{Name: "t.mbox", Data: data}}, "", mailpatch.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return th
}

// allocated is the bytes ReadThread allocates reading data.
func allocated(tb testing.TB, data []byte) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	readBytes(tb, data)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Reading is linear in folded header lines and in reply chains: four
// times the input allocates about four times the memory, not sixteen
// (the quadratic reading copied the growing header, walked the chain
// from each reply and copied the growing message for each trailer).
// Memory, not time, so the test does not depend on the machine's load.
func TestReadThreadLinear(t *testing.T) {
	for _, c := range []struct {
		name string
		gen  func(int) []byte
		n    int
	}{{"folded header", foldedHeader, 5000}, {"reply chain", replyChain, 1000}} {
		small, big := c.gen(c.n), c.gen(4*c.n)
		a, b := allocated(t, small), allocated(t, big)
		ratio := float64(b) / float64(a)
		t.Logf("%s: %d lines %d bytes allocated, %d lines %d bytes: ratio %.1f", c.name, lines(small), a, lines(big), b, ratio)
		if ratio > 8 {
			t.Errorf("%s: 4x the input allocates %.1fx the memory: not linear", c.name, ratio)
		}
	}
	th := readBytes(t, replyChain(300))
	if len(th.Patches) != 1 || strings.Count(th.Patches[0].Message, "Reviewed-by: ") != 300 || len(th.Added) != 300 {
		t.Errorf("reply chain: %d patches, %d trailers added, message:\n%s", len(th.Patches), len(th.Added), th.Patches[0].Message)
	}
	th = readBytes(t, foldedHeader(3000))
	if len(th.Patches) != 1 {
		t.Errorf("folded header: %d patches", len(th.Patches))
	}
}

// BenchmarkFoldedHeader states ns per input line at 10k and 1M folded
// lines: about the same when reading is linear.
func BenchmarkFoldedHeader(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		data := foldedHeader(n)
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			for b.Loop() {
				readBytes(b, data)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(lines(data)), "ns/line")
		})
	}
}

// BenchmarkReplyChain states ns per input line for reply chains of 10k,
// 32k and (at 1M lines) about 110k replies.
func BenchmarkReplyChain(b *testing.B) {
	for _, n := range []int{1_100, 32_000, 110_000} {
		data := replyChain(n)
		b.Run(fmt.Sprintf("replies=%d,lines=%d", n, lines(data)), func(b *testing.B) {
			for b.Loop() {
				readBytes(b, data)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(lines(data)), "ns/line")
		})
	}
}

// pollCtx is a context that ends at its k-th look (Err or Done) and
// counts the looks: a test of how soon reading notices, without clocks.
type pollCtx struct {
	context.Context
	mu    sync.Mutex
	k, n  int
	done  chan struct{}
	ended bool
}

func newPollCtx(k int) *pollCtx {
	return &pollCtx{Context: context.Background(), k: k, done: make(chan struct{})}
}

func (c *pollCtx) look() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if c.n >= c.k && !c.ended {
		c.ended = true
		close(c.done)
	}
}

func (c *pollCtx) Done() <-chan struct{} { c.look(); return c.done }

func (c *pollCtx) Err() error {
	c.look()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return context.Canceled
	}
	return nil
}

// An interrupt during reading is honoured at once: the reading looks at
// its context as it goes (every message, every 64k lines of a header
// block, and through long loops) and returns the first time it sees it
// ended, with the context's error.
func TestReadThreadCanceled(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
	}{{"reply chain", replyChain(5000)}, {"one header folded 300k times", foldedHeader(300_000)}, {"many mails", mkthread.Mbox(append(thread(), thread()...))}} {
		// How often does a whole read look?
		all := newPollCtx(1 << 30)
		if _, err := mailpatch.ReadThreadContext(all, []mailpatch.Input{{Name: "t.mbox", Data: c.data}}, "", mailpatch.Options{}); err != nil {
			t.Fatal(err)
		}
		if c.name != "many mails" && all.n < 5 {
			t.Errorf("%s: the reading looked at its context %d times: it cannot stop promptly", c.name, all.n)
		}
		for _, k := range []int{1, 2, all.n / 2, all.n} {
			if k < 1 {
				continue
			}
			ctx := newPollCtx(k)
			_, err := mailpatch.ReadThreadContext(ctx, []mailpatch.Input{{Name: "t.mbox", Data: c.data}}, "", mailpatch.Options{})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: ended at look %d of %d: err %v, want context.Canceled", c.name, k, all.n, err)
			}
			if ctx.n != k {
				t.Errorf("%s: ended at look %d, it looked %d times: it went on after the end", c.name, k, ctx.n)
			}
		}
	}
}
