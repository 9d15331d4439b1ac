package tree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
)

// stopAt is a context that ends at its k-th look (Err or Done, from any
// goroutine): a way to interrupt a prepare at each point where it looks,
// in turn, without timing anything.
type stopAt struct {
	context.Context
	mu   sync.Mutex
	k, n int
	done chan struct{}
}

func newStopAt(k int) *stopAt {
	return &stopAt{Context: context.Background(), k: k, done: make(chan struct{})}
}

func (c *stopAt) look() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if c.n == c.k {
		close(c.done)
	}
	return c.n >= c.k
}

func (c *stopAt) Done() <-chan struct{} { c.look(); return c.done }

func (c *stopAt) Err() error {
	if c.look() {
		return context.Canceled
	}
	return nil
}

// An interrupt at any point of a prepare (the lock wait, the download,
// dpkg-deb, tar, the manifest) reads as an interrupt: the error says
// "interrupted", is an environment error carrying the context's, and
// names no step's remedy (issue 31, finding 15: "context canceled ...
// (install dpkg)"). The tree is then either prepared or absent, and the
// next prepare makes it.
func TestPrepareInterruptedAnywhere(t *testing.T) {
	f := newFakeDebian(t)
	whole := newStopAt(1 << 30)
	if _, err := (&Cache{Dir: t.TempDir(), AptGet: f.aptGet}).Prepare(whole, &f.kernel); err != nil {
		t.Fatal(err)
	}
	looks := whole.n
	if looks < 3 {
		t.Fatalf("a prepare looked at its context %d times", looks)
	}
	interrupted := 0
	for k := 1; k <= looks; k++ {
		c := &Cache{Dir: t.TempDir(), AptGet: f.aptGet}
		_, err := c.Prepare(newStopAt(k), &f.kernel)
		if err == nil {
			continue // ended after the last step that looks
		}
		interrupted++
		msg := err.Error()
		if !strings.Contains(msg, "interrupted") || strings.Contains(msg, "install") || !errors.Is(err, context.Canceled) || !errors.Is(err, errs.ErrEnv) {
			t.Errorf("stopped at look %d of %d: %q, want an interrupt said as one", k, looks, msg)
		}
		if _, err := os.Stat(c.PristineDir(&f.kernel)); err == nil && !c.Prepared(&f.kernel) {
			t.Errorf("stopped at look %d: a tree is there, not marked prepared", k)
		}
		if _, err := c.Prepare(context.Background(), &f.kernel); err != nil {
			t.Errorf("stopped at look %d: the next prepare: %v", k, err)
		}
		if left, _ := filepath.Glob(filepath.Join(c.Dir, "trees", ".*tmp-*")); len(left) > 0 {
			t.Errorf("stopped at look %d: left %v", k, left)
		}
	}
	t.Logf("a prepare looks %d times; interrupted at %d of them", looks, interrupted)
	if interrupted == 0 {
		t.Error("no look interrupted the prepare")
	}
}
