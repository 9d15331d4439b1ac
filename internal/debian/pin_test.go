package debian_test

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

	"github.com/patchctl/patchctl/internal/debian"
	"github.com/patchctl/patchctl/internal/debian/aptfake"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/tree"
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
	load := func() *tree.Kernel { t.Helper(); return loadKernel(t, lockPath, "9.9") }
	k := load()
	if err := c.Debian().UpdateSuite(ctx, "experimental"); err != nil {
		t.Fatal(err)
	}
	st, err := c.Debian().CheckPin(ctx, k.Name, k.Debian)
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
	os.Remove(c.Debian().DebPath(k.Debian))
	os.Remove(filepath.Join(c.Dir, "trees", "9.9.prepared"))
	// Prepare of the vanished version: an input error naming the command.
	_, err = c.Prepare(ctx, k)
	if !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "patchctl tree pin --kernel 9.9") {
		t.Fatalf("prepare of a vanished pin: %v", err)
	}
	if err := c.Debian().UpdateSuite(ctx, "experimental"); err != nil {
		t.Fatal(err)
	}
	st, err = c.Debian().CheckPin(ctx, k.Name, k.Debian)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Stale, "pinned 9.9.1-1, experimental serves 9.9.2-1") || !strings.Contains(st.Stale, "gone") {
		t.Errorf("stale pin: %q", st.Stale)
	}
	st, err = c.Debian().Repin(ctx, k.Name, k.Debian)
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
	st2, err := c.Debian().Repin(ctx, k.Name, k.Debian)
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
	if st, err := c.Debian().CheckPin(ctx, k2.Name, k2.Debian); err != nil || st.Stale != "" {
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
	list, _ := os.ReadFile(filepath.Join(c.Debian().AptDir("experimental"), "sources.list"))
	if string(list) != "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror.example.org/debian experimental main\n" {
		t.Errorf("sources list %q", list)
	}
	list, _ = os.ReadFile(filepath.Join(c.Debian().AptDir("bookworm-security"), "sources.list"))
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
	c.Debian().UpdateSuite(context.Background(), "experimental")
	if _, err := c.Debian().Repin(context.Background(), k.Name, k.Debian); err == nil || !strings.Contains(err.Error(), "the suite's index says "+q.DebSHA256) {
		t.Fatalf("re-pin against a lying index: %v", err)
	}
	if ents, _ := filepath.Glob(filepath.Join(c.Dir, "debs", "*")); len(ents) != 0 {
		t.Errorf("refused download kept: %v", ents)
	}
}

// checkPin and repin are the kernel's pin checked and re-pinned.
func checkPin(ctx context.Context, c *tree.Cache, k *tree.Kernel) (*debian.PinStatus, error) {
	return c.Debian().CheckPin(ctx, k.Name, k.Debian)
}

func repin(ctx context.Context, c *tree.Cache, k *tree.Kernel) (*debian.PinStatus, error) {
	return c.Debian().Repin(ctx, k.Name, k.Debian)
}

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }

const binaryLockText = `kernels:
  - name: "9.9"
    debian:
      package: linux-source-9.9
      suite: experimental
      version: %[1]s
      deb_sha256: %[2]s
      tarball: usr/src/linux-source-9.9.tar.xz
      tarball_sha256: %[3]s
      # the binary kernel of this source
      binary:
        version: %[1]s
        release: %[4]s-amd64
        image:
          package: linux-image-%[4]s-amd64-unsigned
          arch: amd64
          sha256: %[5]s
        headers:
          - package: linux-headers-%[4]s-amd64
            arch: amd64
            sha256: %[6]s
          - package: linux-headers-%[4]s-common   # arch-independent
            arch: all
            sha256: %[7]s
`

// TestPinBinaryFollowsSource: a kernel pinning Debian's binary kernel
// beside its source. A binary package whose index sum changed makes the
// pin stale and its re-pin downloads nothing; when the suite moves on,
// the re-pin moves the binary block with the source (names, release and
// sums of the new upload) and the lock reads back as the new pin; a
// binary package the suite does not serve under its derived name is an
// input error naming it, and the lock is left as it was.
func TestPinBinaryFollowsSource(t *testing.T) {
	a := aptfake.New(t)
	type upload struct {
		src           *aptfake.Pkg
		img, hdr, com *aptfake.Pkg
		abi           string
	}
	build := func(up, version string) upload {
		abi := up + "+deb99"
		return upload{src: a.Build("linux-source-9.9", version), abi: abi,
			img: a.Build("linux-image-"+abi+"-amd64-unsigned", version),
			hdr: a.Build("linux-headers-"+abi+"-amd64", version),
			com: a.Build("linux-headers-"+abi+"-common", version)}
	}
	serve := func(u upload) {
		a.Serve("experimental", u.src)
		a.Serve("experimental", u.img)
		a.Serve("experimental", u.hdr)
		a.Serve("experimental", u.com)
	}
	old := build("9.9.1", "9.9.1-1")
	serve(old)
	lockPath := filepath.Join(t.TempDir(), "kernels.yaml")
	os.WriteFile(lockPath, []byte(sprintf(binaryLockText, old.src.Version, old.src.DebSHA256, old.src.TarballSHA256, old.abi, old.img.DebSHA256, old.hdr.DebSHA256, old.com.DebSHA256)), 0o644)
	c := &tree.Cache{Dir: t.TempDir(), AptGet: a.AptGet, AptCache: a.AptCache, AptEtc: fakeEtc(t)}
	ctx := context.Background()
	load := func() *tree.Kernel { t.Helper(); return loadKernel(t, lockPath, "9.9") }
	update := func() {
		t.Helper()
		if err := c.Debian().UpdateSuite(ctx, "experimental"); err != nil {
			t.Fatal(err)
		}
	}
	update()
	if st, err := checkPin(ctx, c, load()); err != nil || st.Stale != "" {
		t.Fatalf("current pin with its binary kernel: %+v %v", st, err)
	}

	// The index of one binary package has another sum: stale, and the
	// re-pin takes the index's sum without downloading anything.
	hdr2 := *old.hdr
	hdr2.DebSHA256 = strings.Repeat("cd", 32)
	a.Serve("experimental", &hdr2)
	update()
	st, err := checkPin(ctx, c, load())
	if err != nil || !strings.Contains(st.Stale, "binary package linux-headers-9.9.1+deb99-amd64 9.9.1-1") {
		t.Fatalf("a binary package's sum changed: %+v %v", st, err)
	}
	calls := len(a.Calls())
	st, err = repin(ctx, c, load())
	if err != nil {
		t.Fatal(err)
	}
	if st.New.Version != old.src.Version || st.New.DebSHA256 != old.src.DebSHA256 || st.New.Binary.Headers[0].SHA256 != hdr2.DebSHA256 || st.New.Binary.Image.SHA256 != old.img.DebSHA256 {
		t.Errorf("binary-only re-pin: %+v %+v", st.New, st.New.Binary)
	}
	for _, l := range a.Calls()[calls:] {
		if strings.Contains(l, " download ") {
			t.Errorf("a binary-only re-pin downloaded: %s", l)
		}
	}
	a.Serve("experimental", old.hdr)

	// The suite moves on to 9.9.2-1, binaries and all.
	nw := build("9.9.2", "9.9.2-1")
	serve(nw)
	update()
	k := load()
	st, err = c.Debian().CheckPin(ctx, k.Name, k.Debian)
	if err != nil || !strings.Contains(st.Stale, "pinned 9.9.1-1, experimental serves 9.9.2-1") {
		t.Fatalf("stale source: %+v %v", st, err)
	}
	st, err = c.Debian().Repin(ctx, k.Name, k.Debian)
	if err != nil {
		t.Fatal(err)
	}
	b := st.New.Binary
	if b == nil || b.Version != "9.9.2-1" || b.Release != "9.9.2+deb99-amd64" ||
		b.Image.Package != "linux-image-9.9.2+deb99-amd64-unsigned" || b.Image.SHA256 != nw.img.DebSHA256 ||
		len(b.Headers) != 2 || b.Headers[0].Package != nw.hdr.Package || b.Headers[0].SHA256 != nw.hdr.DebSHA256 ||
		b.Headers[1].Package != nw.com.Package || b.Headers[1].SHA256 != nw.com.DebSHA256 || b.Headers[1].Arch != "all" {
		t.Fatalf("re-pinned binary kernel: %+v", b)
	}
	if k.Debian.Binary.Version != "9.9.1-1" {
		t.Error("the re-pin changed the old pin in place")
	}
	before, _ := os.ReadFile(lockPath)
	if err := tree.RewritePin(lockPath, "9.9", st.New); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(lockPath)
	k2 := load()
	if k2.Debian.Version != "9.9.2-1" || k2.Debian.Binary.Version != "9.9.2-1" || k2.Debian.Binary.Image.SHA256 != nw.img.DebSHA256 {
		t.Errorf("lock after the re-pin:\n%s", after)
	}
	bl, al := strings.Split(string(before), "\n"), strings.Split(string(after), "\n")
	changed := 0
	for i := range bl {
		if i < len(al) && bl[i] != al[i] {
			changed++
		}
	}
	// version, both sums; the binary's version, release, three names,
	// three sums.
	if len(bl) != len(al) || changed != 11 || !strings.Contains(string(after), "linux-headers-9.9.2+deb99-common   # arch-independent") || !strings.Contains(string(after), "# the binary kernel of this source") {
		t.Errorf("rewritten lock (%d lines changed):\n%s", changed, after)
	}
	if st, err := c.Debian().CheckPin(ctx, k2.Name, k2.Debian); err != nil || st.Stale != "" {
		t.Errorf("after the re-pin: %+v %v", st, err)
	}

	// 9.9.3-1 without its -common headers: refused, naming the package.
	third := build("9.9.3", "9.9.3-1")
	a.Serve("experimental", third.src)
	a.Serve("experimental", third.img)
	a.Serve("experimental", third.hdr)
	update()
	_, err = c.Debian().Repin(ctx, k2.Name, k2.Debian)
	if !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "linux-headers-9.9.3+deb99-common=9.9.3-1") || !strings.Contains(err.Error(), "by hand") {
		t.Errorf("re-pin with a binary package missing: %v", err)
	}
	if now, _ := os.ReadFile(lockPath); string(now) != string(after) {
		t.Error("a refused re-pin changed the lock")
	}
}

// loadKernel is kernel name of the lock at path.
func loadKernel(t *testing.T, path, name string) *tree.Kernel {
	t.Helper()
	l, err := tree.LoadLock(path)
	if err != nil {
		t.Fatal(err)
	}
	k, err := l.Find(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestPinBinaryABINames: a binary kernel named by an ABI number rather
// than the upstream version (bookworm's 6.1: linux-image-6.1.0-NN-amd64)
// cannot have its new names derived: the re-pin says so and what to do,
// and pins nothing.
func TestPinBinaryABINames(t *testing.T) {
	a := aptfake.New(t)
	old, nw := a.Build("linux-source-9.9", "9.9.1-1"), a.Build("linux-source-9.9", "9.9.2-1")
	a.Serve("experimental", nw)
	z := strings.Repeat("0", 64)
	lockPath := filepath.Join(t.TempDir(), "kernels.yaml")
	text := sprintf(binaryLockText, old.Version, old.DebSHA256, old.TarballSHA256, "9.9.0-7", z, z, z)
	os.WriteFile(lockPath, []byte(text), 0o644)
	c := &tree.Cache{Dir: t.TempDir(), AptGet: a.AptGet, AptCache: a.AptCache, AptEtc: fakeEtc(t)}
	if err := c.Debian().UpdateSuite(context.Background(), "experimental"); err != nil {
		t.Fatal(err)
	}
	_, err := repin(context.Background(), c, loadKernel(t, lockPath, "9.9"))
	if !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "cannot be derived") || !strings.Contains(err.Error(), "by hand") {
		t.Errorf("re-pin of ABI-named binary packages: %v", err)
	}
	if b, _ := os.ReadFile(lockPath); string(b) != text {
		t.Error("the lock changed")
	}
}
