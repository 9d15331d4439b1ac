package tree_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/tree/aptfake"
)

const lockText = `# a comment that must survive
default: "9.9"
kernels:
  - name: "9.8"
    # the other kernel, untouched by a re-pin of 9.9
    debian:
      package: linux-source-9.8
      suite: bookworm-security
      version: 9.8.1-1
      deb_sha256: %s
      tarball: usr/src/linux-source-9.8.tar.xz
      tarball_sha256: %s
  - name: "9.9"
    debian:
      package: linux-source-9.9
      suite: experimental
      version: %s   # kept comment
      deb_sha256: %s
      tarball: usr/src/linux-source-9.9.tar.xz
      tarball_sha256: %s
`

// hashTree is a digest of every file's path, mode and content under dir.
func hashTree(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	var paths []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil {
			paths = append(paths, p)
		}
		return nil
	})
	sort.Strings(paths)
	for _, p := range paths {
		st, _ := os.Lstat(p)
		b, _ := os.ReadFile(p)
		h.Write([]byte(p + "\x00" + st.Mode().String() + "\x00"))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func fakeEtc(t *testing.T) string {
	etc := t.TempDir()
	os.MkdirAll(filepath.Join(etc, "sources.list.d"), 0o755)
	os.WriteFile(filepath.Join(etc, "sources.list.d", "debian.sources"), []byte(`Types: deb
URIs: http://mirror.example.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
`), 0o644)
	return etc
}

// TestPinFollowsSuite: a fake experimental suite moves from 9.9.1-1 to
// 9.9.2-1 and drops the old upload. The check says stale and what is
// current, prepare of the old pin names the re-pin command, the re-pin
// computes both sums from the download and rewrites only that entry, the
// kernel's key changes, and the new pin prepares.
func TestPinFollowsSuite(t *testing.T) {
	a := aptfake.New(t)
	old, other := a.Build("linux-source-9.9", "9.9.1-1"), a.Build("linux-source-9.8", "9.8.1-1")
	a.Serve("experimental", old)
	a.Serve("bookworm-security", other)
	etc := fakeEtc(t)
	etcBefore := hashTree(t, etc)
	repo := t.TempDir()
	lockPath := filepath.Join(repo, "kernels.yaml")
	write := func(version, deb, tar string) {
		os.WriteFile(lockPath, []byte(sprintf(lockText, other.DebSHA256, other.TarballSHA256, version, deb, tar)), 0o644)
	}
	write(old.Version, old.DebSHA256, old.TarballSHA256)
	c := &tree.Cache{Dir: t.TempDir(), AptGet: a.AptGet, AptCache: a.AptCache, AptEtc: etc}
	ctx := context.Background()
	load := func() *tree.Kernel {
		t.Helper()
		l, err := tree.LoadLock(lockPath)
		if err != nil {
			t.Fatal(err)
		}
		k, err := l.Find("9.9")
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k := load()
	if err := c.UpdateSuite(ctx, "experimental"); err != nil {
		t.Fatal(err)
	}
	st, err := c.CheckPin(ctx, k)
	if err != nil || st.Stale != "" {
		t.Fatalf("current pin: %+v %v", st, err)
	}
	if _, err := c.Prepare(ctx, k); err != nil {
		t.Fatalf("prepare of the current pin: %v", err)
	}
	oldKey := k.Key()

	// The suite moves on; the old upload is removed.
	nw := a.Build("linux-source-9.9", "9.9.2-1")
	a.Serve("experimental", nw)
	os.RemoveAll(c.PristineDir(k))
	os.Remove(c.DebPath(k.Debian))
	os.Remove(filepath.Join(c.Dir, "trees", "9.9.prepared"))
	// Prepare of the vanished version: an input error naming the command.
	_, err = c.Prepare(ctx, k)
	if !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "patchctl tree pin --kernel 9.9") {
		t.Fatalf("prepare of a vanished pin: %v", err)
	}
	if err := c.UpdateSuite(ctx, "experimental"); err != nil {
		t.Fatal(err)
	}
	st, err = c.CheckPin(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Stale, "pinned 9.9.1-1, experimental serves 9.9.2-1") || !strings.Contains(st.Stale, "gone") {
		t.Errorf("stale pin: %q", st.Stale)
	}
	st, err = c.Repin(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	n := st.New
	if n.Version != nw.Version || n.DebSHA256 != nw.DebSHA256 || n.TarballSHA256 != nw.TarballSHA256 || n.Suite != "experimental" || n.Tarball != nw.Tarball {
		t.Fatalf("new pin %+v, want the sums of %+v", n, nw)
	}
	// A second re-pin from the same old pin finds the kept download: no
	// new download, the same sums, computed again from the file.
	ncalls := len(a.Calls())
	st2, err := c.Repin(ctx, k)
	if err != nil || *st2.New != *n {
		t.Fatalf("second re-pin: %+v %v", st2, err)
	}
	for _, l := range a.Calls()[ncalls:] {
		if strings.Contains(l, " download ") {
			t.Errorf("second re-pin downloaded again: %s", l)
		}
	}
	before, _ := os.ReadFile(lockPath)
	if err := tree.RewritePin(lockPath, "9.9", n); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(lockPath)
	// Only the three pinned values changed, every other line kept.
	bl, al := strings.Split(string(before), "\n"), strings.Split(string(after), "\n")
	if len(bl) != len(al) {
		t.Fatalf("line count changed:\n%s", after)
	}
	changed := 0
	for i := range bl {
		if bl[i] != al[i] {
			changed++
		}
	}
	if changed != 3 || !strings.Contains(string(after), "version: 9.9.2-1   # kept comment") || !strings.Contains(string(after), "# a comment that must survive") {
		t.Errorf("rewritten lock (%d lines changed):\n%s", changed, after)
	}
	k2 := load()
	if k2.Key() == oldKey {
		t.Error("a re-pin did not change the kernel's key: cached stages would be reused")
	}
	if l, _ := tree.LoadLock(lockPath); l.Kernels[0].Debian.Version != "9.8.1-1" || l.Kernels[0].Debian.DebSHA256 != other.DebSHA256 {
		t.Errorf("the other kernel changed: %+v", l.Kernels[0].Debian)
	}
	if st, err := c.CheckPin(ctx, k2); err != nil || st.Stale != "" {
		t.Errorf("after the re-pin: %+v %v", st, err)
	}
	// The re-pin kept the download: prepare verifies it without apt.
	calls := len(a.Calls())
	dir, err := c.Prepare(ctx, k2)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(a.Calls()); got != calls {
		t.Errorf("prepare after the re-pin downloaded again: %v", a.Calls()[calls:])
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "Makefile")); !strings.Contains(string(b), "9.9.2-1") {
		t.Errorf("prepared tree is not the new upload: %q", b)
	}
	// Every call used patchctl's own apt state (the fake refuses others)
	// under the cache, with the mirror read from the fake /etc/apt.
	for _, l := range a.Calls() {
		if !strings.Contains(l, "Dir::Etc::sourcelist="+filepath.Join(c.Dir, "apt")) {
			t.Errorf("apt call outside the cache's apt state: %s", l)
		}
	}
	list, _ := os.ReadFile(filepath.Join(c.AptDir("experimental"), "sources.list"))
	if string(list) != "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror.example.org/debian experimental main\n" {
		t.Errorf("sources list %q", list)
	}
	list, _ = os.ReadFile(filepath.Join(c.AptDir("bookworm-security"), "sources.list"))
	if list != nil && !strings.Contains(string(list), "http://mirror.example.org/debian-security bookworm-security") {
		t.Errorf("security sources list %q", list)
	}
	if hashTree(t, etc) != etcBefore {
		t.Error("the system apt configuration changed")
	}
}

// TestPinChecksumFromDownload: an index whose sum is not the download's
// is refused, not pinned.
func TestPinChecksumFromDownload(t *testing.T) {
	a := aptfake.New(t)
	p := a.Build("linux-source-9.9", "9.9.1-1")
	q := *p
	q.DebSHA256 = strings.Repeat("ab", 32) // the index lies
	a.Serve("experimental", &q)
	repo := t.TempDir()
	lockPath := filepath.Join(repo, "kernels.yaml")
	z := strings.Repeat("0", 64)
	os.WriteFile(lockPath, []byte(sprintf(lockText, z, z, "9.9.0-1", z, z)), 0o644)
	l, err := tree.LoadLock(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := l.Find("9.9")
	c := &tree.Cache{Dir: t.TempDir(), AptGet: a.AptGet, AptCache: a.AptCache, AptEtc: fakeEtc(t)}
	c.UpdateSuite(context.Background(), "experimental")
	if _, err := c.Repin(context.Background(), k); err == nil || !strings.Contains(err.Error(), "the suite's index says "+q.DebSHA256) {
		t.Fatalf("re-pin against a lying index: %v", err)
	}
	if ents, _ := filepath.Glob(filepath.Join(c.Dir, "debs", "*")); len(ents) != 0 {
		t.Errorf("refused download kept: %v", ents)
	}
}

func TestFindMirrors(t *testing.T) {
	etc := t.TempDir()
	os.MkdirAll(filepath.Join(etc, "sources.list.d"), 0o755)
	os.WriteFile(filepath.Join(etc, "sources.list"), []byte("# deb http://commented.example/debian bookworm main\ndeb-src http://src.example/debian bookworm main\ndeb [arch=amd64 signed-by=/k.gpg] http://one.example/debian/ bookworm main\n"), 0o644)
	os.WriteFile(filepath.Join(etc, "sources.list.d", "sec.sources"), []byte("Types: deb\nURIs: http://two.example/debian-security\nSuites: bookworm-security\n\nTypes: deb\nURIs: http://off.example/debian\nEnabled: no\n"), 0o644)
	m := tree.FindMirrors(etc)
	if m.Debian != "http://one.example/debian" || m.Security != "http://two.example/debian-security" {
		t.Errorf("mirrors %+v", m)
	}
	if m := tree.FindMirrors(t.TempDir()); m.Debian != "http://deb.debian.org/debian" || m.Security != "http://deb.debian.org/debian-security" {
		t.Errorf("fallback mirrors %+v", m)
	}
}

func TestSuiteNames(t *testing.T) {
	for _, s := range []string{"bullseye", "bookworm-security", "sid", "experimental"} {
		if err := tree.ValidSuite(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	for _, s := range []string{"", "../x", "Sid", "a b", "x/y"} {
		if tree.ValidSuite(s) == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }
