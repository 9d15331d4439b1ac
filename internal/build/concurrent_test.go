package build

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
)

// The child side of TestConcurrentProcessesKeepBaselineBaseline: builds
// (or applies) in a loop and prints the hash of each image it made.
func init() {
	mode := os.Getenv("PATCHCTL_CONCURRENT_CHILD")
	if mode == "" {
		return
	}
	k := &tree.Kernel{Name: "9.9", Git: &tree.GitSource{URL: os.Getenv("PATCHCTL_CONCURRENT_SRC"), Tag: "v9.9"}}
	o := Options{Root: os.Getenv("PATCHCTL_CONCURRENT_ROOT"), Cache: &tree.Cache{Dir: os.Getenv("PATCHCTL_CONCURRENT_CACHE")},
		Kernel: k, Fragments: []string{"base"}, Jobs: 1}
	n, _ := strconv.Atoi(os.Getenv("PATCHCTL_CONCURRENT_N"))
	ctx := context.Background()
	fail := func(err error) { fmt.Println("error", err); os.Exit(1) }
	pristine, err := o.Cache.Prepare(ctx, k)
	if err != nil {
		fail(err)
	}
	out, err := apply.Run(ctx, apply.In{Root: o.Root, Kernel: k, Pristine: pristine})
	if err != nil {
		fail(err)
	}
	o.Apply = out
	if mode == "apply" {
		n *= 20 // for as long as the builds run
	}
	for i := 0; i < n; i++ {
		if mode == "apply" {
			time.Sleep(25 * time.Millisecond)
			// What patchctl apply does: the series into the work tree.
			wt, release, err := o.Cache.HoldWorkTree(ctx, k)
			if err != nil {
				fail(err)
			}
			err = apply.Checkout(wt, out, vocab.Patched)
			release()
			if err != nil {
				fail(err)
			}
			continue
		}
		o.Variant = mode
		md, err := Build(ctx, o)
		if err != nil {
			fail(err)
		}
		b, err := os.ReadFile(md.Artifacts["bzImage"])
		if err != nil {
			fail(err)
		}
		s := sha256.Sum256(b)
		fmt.Println("image", hex.EncodeToString(s[:]), md.SHA256["bzImage"])
	}
	os.Exit(0)
}

// TestConcurrentProcessesKeepBaselineBaseline runs, at once, a process
// building the baseline again and again, one building the patched
// kernel, and one putting the series into the work tree as patchctl
// apply does. Every baseline image must be the baseline built alone, byte
// for byte, and every patched image the patched one.
func TestConcurrentProcessesKeepBaselineBaseline(t *testing.T) {
	o, src := fakeKernel(t)
	// A slow compile widens every window a race could use.
	mk, _ := os.ReadFile(filepath.Join(src, "Makefile"))
	os.WriteFile(filepath.Join(src, "Makefile"), bytes.Replace(mk, []byte("\t@gcc -c"), []byte("\t@sleep 0.2; gcc -c"), 1), 0o644)
	g := exec.Command("git", "commit", "-qam", "slow")
	g.Dir = src
	g.Env = append(os.Environ(), "HOME="+src, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org")
	if out, err := g.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	g = exec.Command("git", "tag", "-f", "v9.9")
	g.Dir = src
	g.Run()

	// Alone: the reference images, each in a cache of its own.
	ref := map[string]string{}
	for _, v := range []string{vocab.Baseline, vocab.Patched} {
		alone := o
		alone.Cache = &tree.Cache{Dir: t.TempDir()}
		alone.Apply = applied(t, alone)
		alone.Variant = v
		md, err := Build(context.Background(), alone)
		if err != nil {
			t.Fatal(err)
		}
		ref[v] = md.SHA256["bzImage"]
	}
	if ref[vocab.Baseline] == ref[vocab.Patched] {
		t.Fatal("the fixture's variants build the same image: the test proves nothing")
	}

	var wg sync.WaitGroup
	results := map[string][]string{}
	var mu sync.Mutex
	for _, mode := range []string{vocab.Baseline, vocab.Patched, "apply"} {
		wg.Add(1)
		go func(mode string) {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run", "^$")
			cmd.Env = append(os.Environ(), "PATCHCTL_CONCURRENT_CHILD="+mode, "PATCHCTL_CONCURRENT_SRC="+src,
				"PATCHCTL_CONCURRENT_ROOT="+o.Root, "PATCHCTL_CONCURRENT_CACHE="+o.Cache.Dir, "PATCHCTL_CONCURRENT_N=6")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("%s child: %v\n%s", mode, err, out)
			}
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				if len(f) == 3 && f[0] == "image" {
					if f[1] != f[2] {
						t.Errorf("%s: the image's recorded hash %s is not its content's %s", mode, f[2], f[1])
					}
					mu.Lock()
					results[mode] = append(results[mode], f[1])
					mu.Unlock()
				}
			}
		}(mode)
	}
	wg.Wait()
	for _, v := range []string{vocab.Baseline, vocab.Patched} {
		if len(results[v]) != 6 {
			t.Errorf("%s: %d images, want 6", v, len(results[v]))
		}
		for i, h := range results[v] {
			if h != ref[v] {
				t.Errorf("%s build %d made an image that is not the %s built alone", v, i+1, v)
			}
		}
	}
}

// TestSyncSourcesSeesOtherSeries: a file that an earlier build of the
// folder compiled from a patched state, and that is pristine now (another
// series was applied since), is recompiled.
func TestSyncSourcesSeesOtherSeries(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(filepath.Join(src, p)), 0o755)
		os.WriteFile(filepath.Join(src, p), []byte(s), 0o644)
	}
	write("a.c", "patched a\n")
	write("b.c", "pristine b\n")
	rec, err := syncSources(src, "", dir, []string{"a.c"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec.Complete = true
	if err := writeRecord(dir, rec); err != nil {
		t.Fatal(err)
	}
	// Now a.c is back to pristine and another series touches b.c.
	write("a.c", "pristine a\n")
	write("b.c", "patched b\n")
	stA, _ := os.Stat(filepath.Join(src, "a.c"))
	stB, _ := os.Stat(filepath.Join(src, "b.c"))
	if _, err := syncSources(src, "", dir, []string{"b.c"}, nil); err != nil {
		t.Fatal(err)
	}
	a2, _ := os.Stat(filepath.Join(src, "a.c"))
	if os.SameFile(stA, a2) {
		t.Error("a.c changed back since the last build but was not freshened")
	}
	b2, _ := os.Stat(filepath.Join(src, "b.c"))
	if !os.SameFile(stB, b2) {
		t.Error("b.c was never built in this folder: nothing to freshen, yet it was")
	}
}
