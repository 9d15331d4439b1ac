package tree

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/debian"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/progress"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// fakeDebian builds a linux-source-like .deb (dpkg-deb --build) holding a
// small source tarball, and an apt-get stand-in that "downloads" it.
type fakeDebian struct {
	aptGet  string
	debSum  string
	tarSum  string
	kernel  Kernel
	logFile string
}

func sum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func run(t *testing.T, dir, prog string, args ...string) {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", prog, args, err, out)
	}
}

func newFakeDebian(t *testing.T) *fakeDebian { return newFakeDebianSized(t, 0) }

// newFakeDebianSized adds pad bytes of incompressible data to the tree
// (a package bigger than a pipe's buffer).
func newFakeDebianSized(t *testing.T, pad int) *fakeDebian {
	t.Helper()
	for _, tool := range []string{"dpkg-deb", "tar", "xz"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	work := t.TempDir()
	src := filepath.Join(work, "linux-source-9.9")
	os.MkdirAll(filepath.Join(src, "drivers", "nvme", "host"), 0o755)
	os.WriteFile(filepath.Join(src, "drivers", "nvme", "host", "rdma.c"), []byte("int x;\n"), 0o644)
	os.WriteFile(filepath.Join(src, "Makefile"), []byte("VERSION = 9\n"), 0o644)
	if pad > 0 {
		b := make([]byte, pad)
		rand.New(rand.NewSource(1)).Read(b)
		os.WriteFile(filepath.Join(src, "pad.bin"), b, 0o644)
	}
	// The Debian tarball's .gitignore hides everything from git.
	os.WriteFile(filepath.Join(src, ".gitignore"), []byte("/*\n!/debian/\n"), 0o644)
	pkg := filepath.Join(work, "pkg")
	os.MkdirAll(filepath.Join(pkg, "DEBIAN"), 0o755)
	os.MkdirAll(filepath.Join(pkg, "usr", "src"), 0o755)
	os.WriteFile(filepath.Join(pkg, "DEBIAN", "control"), []byte("Package: linux-source-9.9\nVersion: 9.9.1-1\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: test\n"), 0o644)
	tarball := filepath.Join(pkg, "usr", "src", "linux-source-9.9.tar.xz")
	run(t, work, "tar", "-cJf", tarball, "linux-source-9.9")
	deb := filepath.Join(work, "linux-source-9.9_9.9.1-1_all.deb")
	run(t, work, "dpkg-deb", "--build", "-Zxz", pkg, deb)
	f := &fakeDebian{debSum: sum(t, deb), tarSum: sum(t, tarball), logFile: filepath.Join(work, "apt.log")}
	f.aptGet = filepath.Join(work, "apt-get")
	script := fmt.Sprintf(`#!/bin/sh
echo "$@" >> %q
case "$1" in
download)
  if [ "$2" = "linux-source-9.9=9.9.1-1" ]; then cp %q .; exit 0; fi
  echo "E: Version '${2#*=}' for '${2%%%%=*}' was not found" >&2; exit 100;;
update) exit 0;;
esac
exit 1
`, f.logFile, deb)
	os.WriteFile(f.aptGet, []byte(script), 0o755)
	f.kernel = Kernel{Name: "9.9", Debian: &debian.Source{Package: "linux-source-9.9", Version: "9.9.1-1",
		DebSHA256: f.debSum, Tarball: "usr/src/linux-source-9.9.tar.xz", TarballSHA256: f.tarSum}}
	return f
}

func TestPrepareDebian(t *testing.T) {
	f := newFakeDebian(t)
	c := &Cache{Dir: t.TempDir(), AptGet: f.aptGet}
	dir, err := c.Prepare(context.Background(), &f.kernel)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"drivers/nvme/host/rdma.c", "Makefile", ".gitignore"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s missing from the prepared tree: %v", p, err)
		}
	}
	if !c.Prepared(&f.kernel) {
		t.Fatal("not marked prepared")
	}
	// Second call: a no-op that does not download again.
	before, _ := os.ReadFile(f.logFile)
	if _, err := c.Prepare(context.Background(), &f.kernel); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(f.logFile)
	if string(before) != string(after) {
		t.Errorf("second prepare ran apt-get again: %q", after)
	}
	// Work trees see every file: the .gitignore "/*" hides nothing.
	wt, release, err := c.HoldWorkTree(context.Background(), &f.kernel)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := os.Stat(filepath.Join(wt.Dir, "drivers/nvme/host/rdma.c")); err != nil {
		t.Errorf("work tree lacks a file: %v", err)
	}
}

func TestPrepareRefusals(t *testing.T) {
	f := newFakeDebian(t)
	cases := []struct {
		name  string
		edit  func(k *Kernel, c *Cache)
		says  []string
		input bool
	}{
		{"deb checksum", func(k *Kernel, c *Cache) { k.Debian.DebSHA256 = strings.Repeat("0", 64) }, []string{"checksum mismatch", "refused"}, true},
		{"tarball checksum", func(k *Kernel, c *Cache) { k.Debian.TarballSHA256 = strings.Repeat("1", 64) }, []string{"checksum mismatch", "linux-source-9.9.tar.xz"}, true},
		{"not served", func(k *Kernel, c *Cache) { k.Debian.Version = "9.9.0-1" }, []string{"does not serve", "re-pin", "apt-cache policy linux-source-9.9"}, true},
		{"no disk space", func(k *Kernel, c *Cache) { c.MinFree = 1 << 62 }, []string{"no disk space", "PATCHCTL_CACHE"}, false},
		{"wrong tarball name", func(k *Kernel, c *Cache) { k.Debian.Tarball = "usr/src/linux-source-8.8.tar.xz" }, []string{"has no usr/src/linux-source-8.8.tar.xz"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := f.kernel
			d := *k.Debian
			k.Debian = &d
			c := &Cache{Dir: t.TempDir(), AptGet: f.aptGet}
			tc.edit(&k, c)
			_, err := c.Prepare(context.Background(), &k)
			if err == nil {
				t.Fatal("prepare succeeded")
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if tc.input && !errors.Is(err, errs.ErrInput) {
				t.Errorf("error is not an input error: %v", err)
			}
			if !tc.input && !errors.Is(err, errs.ErrEnv) {
				t.Errorf("error is not an environment error: %v", err)
			}
			if c.Prepared(&k) {
				t.Error("marked prepared after a failure")
			}
			// Nothing kept: no tree, no temp folders, no unverified .deb.
			left, _ := filepath.Glob(filepath.Join(c.Dir, "trees", "*"))
			if len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
			debs, _ := filepath.Glob(filepath.Join(c.Dir, "debs", "*.deb"))
			for _, d := range debs {
				if sum(t, d) != f.debSum {
					t.Errorf("kept an unverified package %s", d)
				}
			}
		})
	}
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "k.yaml")
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	good := write(`default: "6.12"
kernels:
  - name: "6.12"
    git: {url: /x, tag: v6.12}
  - name: "6.1"
    git: {url: /x, commit: 0123456789abcdef0123456789abcdef01234567}
`)
	l, err := LoadLock(good)
	if err != nil {
		t.Fatal(err)
	}
	// 6.12 itself: the lock this test writes
	if k, err := l.Find(""); err != nil || k.Name != "6.12" {
		t.Errorf("default: %v %v", k, err)
	}
	_, err = l.Find("5.4")
	if err == nil || !strings.Contains(err.Error(), "pinned kernels: 6.1, 6.12") || !errors.Is(err, errs.ErrInput) {
		t.Errorf("unknown kernel error %v", err)
	}
	for _, bad := range []string{
		"kernels:\n  - name: a\n",
		"kernels:\n  - name: a\n    debian: {package: p, version: 1}\n",
		"default: b\nkernels:\n  - name: a\n    git: {url: /x, tag: t}\n",
		"kernels:\n  - name: a\n    git: {url: /x, tag: t}\n  - name: a\n    git: {url: /x, tag: t}\n",
	} {
		if _, err := LoadLock(write(bad)); !errors.Is(err, errs.ErrInput) {
			t.Errorf("lock %q: error %v, want an input error", bad, err)
		}
	}
}

// TestRealLock checks the project's own lock.
func TestRealLock(t *testing.T) {
	l, err := LoadLock(filepath.Join("..", "..", "series", "kernels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Default != testkernel.Default {
		t.Errorf("default kernel %q, want %s", l.Default, testkernel.Default)
	}
	// Every kernel from a Debian suite, its name the package's line.
	// 6.12 itself: each pin's suite
	suites := map[string]string{"5.10": "bullseye", "6.1": "bookworm-security", "6.12": "bookworm-security", "7.2": "sid", "7.3": "experimental"}
	if len(l.Kernels) != len(suites) {
		t.Errorf("%d kernels, want %d", len(l.Kernels), len(suites))
	}
	for n, suite := range suites {
		k, err := l.Find(n)
		if err != nil {
			t.Fatal(err)
		}
		if k.Debian == nil || k.Debian.Suite != suite || k.Debian.Package != "linux-source-"+n || !strings.HasPrefix(k.Debian.Version, n) {
			t.Errorf("%s is not pinned to linux-source-%s from %s: %+v", n, n, suite, k.Debian)
		}
	}
}

// TestPrepareRefusedForSpaceReturns: a package bigger than a pipe's
// buffer, refused for space after dpkg-deb started writing: prepare
// returns (it once blocked for ever on the pipe nobody read).
func TestPrepareRefusedForSpaceReturns(t *testing.T) {
	f := newFakeDebianSized(t, 4<<20)
	c := &Cache{Dir: t.TempDir(), AptGet: f.aptGet, MinFree: 1 << 62}
	done := make(chan error, 1)
	go func() { _, err := c.Prepare(context.Background(), &f.kernel); done <- err }()
	err := <-done
	if !errors.Is(err, errs.ErrEnv) || !strings.Contains(err.Error(), "no disk space") {
		t.Fatalf("error %v", err)
	}
}

// TestPrepareRemovesStaleTemps: what an interrupted prepare left (a
// partial tree, a partial download) goes with the next prepare.
func TestPrepareRemovesStaleTemps(t *testing.T) {
	f := newFakeDebian(t)
	c := &Cache{Dir: t.TempDir(), AptGet: f.aptGet}
	stale := []string{filepath.Join(c.Dir, "trees", ".9.9.tmp-123", "drivers", "x.c"), filepath.Join(c.Dir, "debs", ".download-linux-source-9.9-456", "partial.deb")}
	for _, p := range stale {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, make([]byte, 1<<20), 0o644)
	}
	if _, err := c.Prepare(context.Background(), &f.kernel); err != nil {
		t.Fatal(err)
	}
	for _, p := range stale {
		if _, err := os.Stat(filepath.Dir(p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s survived a successful prepare", filepath.Dir(p))
		}
	}
}

// syncBuffer is a bytes.Buffer safe for two goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestLockWaitSaysWho: waiting for a lock another holder has is said,
// with the holder; the wait ends when the lock is free, or with the
// context.
func TestLockWaitSaysWho(t *testing.T) {
	dir := t.TempDir()
	holder := &Cache{Dir: dir}
	release, err := holder.Lock(context.Background(), "work-9.9")
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	waiter := &Cache{Dir: dir, Progress: progress.New(&out)}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := waiter.Lock(ctx, "work-9.9"); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled wait: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := waiter.Lock(context.Background(), "work-9.9")
		if err == nil {
			r()
		}
		got <- err
	}()
	for i := 0; i < 100 && !strings.Contains(out.String(), "waiting"); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	// The holder is this process (another task of it): the wait says so,
	// never "held by pid <itself>" (TestLockWaitNeverNamesItself; another
	// process is named by its pid and command).
	if s := out.String(); strings.Contains(s, "held by pid "+fmt.Sprint(os.Getpid())) || !strings.Contains(s, "another task of this run holds it") || !strings.Contains(s, "since") {
		t.Errorf("the wait does not say who holds the lock: %q", s)
	}
}

// TestDamagedTreeIsNamed: a prepared tree that lost files or had one
// changed is reported as damaged (an environment error naming the files),
// never trusted; a repair extracts it again.
func TestDamagedTreeIsNamed(t *testing.T) {
	f := newFakeDebian(t)
	c := &Cache{Dir: t.TempDir(), AptGet: f.aptGet}
	dir, err := c.Prepare(context.Background(), &f.kernel)
	if err != nil {
		t.Fatal(err)
	}
	k := &f.kernel
	if err := c.VerifyAll(k); err != nil {
		t.Fatalf("a fresh tree: %v", err)
	}
	if err := c.Verify(k, Dirs([]string{"drivers/nvme/host/rdma.c"}), []string{"drivers/nvme/host/rdma.c"}); err != nil {
		t.Fatalf("a fresh tree, scoped: %v", err)
	}
	os.Remove(filepath.Join(dir, "drivers/nvme/host/rdma.c"))
	err = c.Verify(k, Dirs([]string{"drivers/nvme/host/rdma.c"}), []string{"drivers/nvme/host/rdma.c"})
	if !errors.Is(err, errs.ErrEnv) || !strings.Contains(err.Error(), "drivers/nvme/host/rdma.c missing") || !strings.Contains(err.Error(), "tree prepare --kernel 9.9 --force") {
		t.Errorf("a removed file: %v", err)
	}
	// Same size, other content: only a content check sees it.
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte("VERSION = 8\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "drivers/extra.c"), []byte("x"), 0o644)
	err = c.VerifyAll(k)
	for _, want := range []string{"Makefile changed", "drivers/extra.c added", "rdma.c missing"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("full verify does not say %q: %v", want, err)
		}
	}
	if _, err := c.Reprepare(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	if err := c.VerifyAll(k); err != nil {
		t.Errorf("after the repair: %v", err)
	}
}

// TestFailedPrepareKeepsTheTree: with the marker gone and the download
// failing (no network, or no longer served), the tree that was there is
// still there.
func TestFailedPrepareKeepsTheTree(t *testing.T) {
	f := newFakeDebian(t)
	c := &Cache{Dir: t.TempDir(), AptGet: f.aptGet}
	dir, err := c.Prepare(context.Background(), &f.kernel)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(c.markerPath(&f.kernel))
	os.Remove(c.Debian().DebPath(f.kernel.Debian))
	broken := filepath.Join(t.TempDir(), "apt-get")
	os.WriteFile(broken, []byte("#!/bin/sh\necho 'E: Failed to fetch: Temporary failure resolving' >&2\nexit 100\n"), 0o755)
	c.AptGet = broken
	if _, err := c.Prepare(context.Background(), &f.kernel); err == nil {
		t.Fatal("prepare without network succeeded")
	} else if !errors.Is(err, errs.ErrEnv) {
		t.Errorf("no network is %v, want an environment error", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "drivers/nvme/host/rdma.c")); err != nil {
		t.Errorf("the good tree was deleted before the download succeeded: %v", err)
	}
}

// TestLockCheckpatchKernel: checkpatch: names a pinned kernel, whose
// checkpatch judges every other pinned kernel; a local tree keeps its own.
func TestLockCheckpatchKernel(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "k.yaml")
	body := "kernels:\n  - name: \"5.10\"\n    git: {url: /x, tag: v5.10}\n  - name: \"7.3\"\n    git: {url: /x, tag: v7.3-rc7}\n"
	os.WriteFile(p, []byte("checkpatch: \"7.3\"\n"+body), 0o644)
	l, err := LoadLock(p)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := l.Find("5.10")
	ml, _ := l.Find("7.3")
	if ck, err := l.CheckpatchKernel(old); err != nil || ck == nil || ck.Name != "7.3" {
		t.Errorf("5.10: %v %v, want 7.3", ck, err)
	}
	if ck, err := l.CheckpatchKernel(ml); err != nil || ck != nil {
		t.Errorf("7.3 itself: %v %v, want its own", ck, err)
	}
	local := &Kernel{Name: "local-x", Local: &LocalSource{Dir: dir}}
	if ck, err := l.CheckpatchKernel(local); err != nil || ck != nil {
		t.Errorf("a local tree: %v %v, want its own", ck, err)
	}
	os.WriteFile(p, []byte("checkpatch: \"9.9\"\n"+body), 0o644)
	if _, err := LoadLock(p); err == nil || !strings.Contains(err.Error(), `checkpatch kernel "9.9"`) || !errors.Is(err, errs.ErrInput) {
		t.Errorf("an unknown checkpatch kernel: %v", err)
	}
}

// TestManifestNotRemadeFromTheTree: a tree whose manifest is deleted,
// truncated, edited (a file's sum or the key) or swapped for another
// source's is damaged, and verify says so and how to repair, every time:
// the manifest is never made again from the tree it checks. A repair
// extracts the tree from the verified package and records a sealed one.
func TestManifestNotRemadeFromTheTree(t *testing.T) {
	f := newFakeDebian(t)
	c := &Cache{Dir: t.TempDir(), AptGet: f.aptGet}
	k := &f.kernel
	dir, err := c.Prepare(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(c.manifestPath(k))
	if err != nil {
		t.Fatal(err)
	}
	rewrite := func(reseal bool, edit func(m *manifest)) {
		m, err := readManifest(c.manifestPath(k))
		if err != nil {
			t.Fatal(err)
		}
		edit(m)
		seal := m.Seal
		if err := writeManifest(c.manifestPath(k), m); err != nil {
			t.Fatal(err)
		}
		if !reseal { // keep the old seal: an edit without resealing
			m.Seal = seal
			b, _ := json.Marshal(m)
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(b)
			zw.Close()
			os.WriteFile(c.manifestPath(k), buf.Bytes(), 0o644)
		}
	}
	cases := []struct {
		name   string
		damage func()
		want   string
	}{
		{"deleted", func() { os.Remove(c.manifestPath(k)) }, "is missing"},
		{"deleted, tree changed", func() {
			os.Remove(c.manifestPath(k))
			os.WriteFile(filepath.Join(dir, "Makefile"), []byte("VERSION = 8\n"), 0o644)
		}, "is missing"},
		{"truncated", func() { os.WriteFile(c.manifestPath(k), good[:len(good)/2], 0o644) }, "cannot be used"},
		{"a sum edited", func() {
			rewrite(false, func(m *manifest) {
				e := m.Files["Makefile"]
				e.SHA256 = strings.Repeat("0", 64)
				m.Files["Makefile"] = e
			})
		}, "seal"},
		{"a file dropped", func() { rewrite(false, func(m *manifest) { delete(m.Files, "Makefile") }) }, "seal"},
		{"another source", func() { rewrite(true, func(m *manifest) { m.Key = "debian other" }) }, "another source"},
		{"a sum edited and resealed", func() {
			rewrite(true, func(m *manifest) {
				e := m.Files["Makefile"]
				e.SHA256 = strings.Repeat("0", 64)
				m.Files["Makefile"] = e
			})
		}, "Makefile changed"},
	}
	for _, tc := range cases {
		if _, err := c.Reprepare(context.Background(), k); err != nil {
			t.Fatal(err)
		}
		if err := c.VerifyAll(k); err != nil {
			t.Fatalf("%s: a fresh tree: %v", tc.name, err)
		}
		tc.damage()
		for i := 0; i < 2; i++ { // and again: nothing was recorded meanwhile
			err := c.VerifyAll(k)
			if !errors.Is(err, errs.ErrEnv) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "tree prepare --kernel 9.9 --force") {
				t.Errorf("%s, verify %d: %v", tc.name, i+1, err)
			}
			if err := c.Verify(k, Dirs([]string{"Makefile"}), []string{"Makefile"}); !errors.Is(err, errs.ErrEnv) {
				t.Errorf("%s, a stage's scoped verify %d: %v", tc.name, i+1, err)
			}
		}
	}
	if _, err := c.Reprepare(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	if err := c.VerifyAll(k); err != nil {
		t.Errorf("after the repair: %v", err)
	}
	if m, err := readManifest(c.manifestPath(k)); err != nil || m.Seal == "" || m.Seal != m.seal() {
		t.Errorf("the repaired manifest is not sealed: %v", err)
	}
}
