package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/debian/aptfake"
	"github.com/patchctl/patchctl/internal/tree"
)

// etcAptHash digests /etc/apt (paths, modes, contents): patchctl must
// never change the system's apt configuration.
func etcAptHash(t *testing.T) string {
	t.Helper()
	h := sha256.New()
	var paths []string
	filepath.Walk("/etc/apt", func(p string, info os.FileInfo, err error) error {
		if err == nil {
			paths = append(paths, p)
		}
		return nil
	})
	sort.Strings(paths)
	for _, p := range paths {
		st, _ := os.Lstat(p)
		b, _ := os.ReadFile(p)
		fmt.Fprintf(h, "%s\x00%s\x00%d\x00", p, st.Mode(), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestTreePinCheckAndRepin: `tree pin --check` on current pins exits 0;
// with one pin edited to an old version it exits 1 and says what is
// current; `tree pin --kernel K` rewrites that entry with sums computed
// from the download; --check is then clean again. The suites are fakes
// (apt-get and apt-cache stand-ins first in PATH), no network.
func TestTreePinCheckAndRepin(t *testing.T) {
	a := aptfake.New(t)
	cur, old := a.Build("linux-source-9.9", "9.9~rc2-1~exp1"), a.Build("linux-source-9.9", "9.9~rc1-1~exp1")
	lts := a.Build("linux-source-9.1", "9.1.5-1")
	a.Serve("experimental", cur)
	a.Serve("bullseye", lts)
	t.Setenv("PATH", a.BinDir()+string(os.PathListSeparator)+os.Getenv("PATH"))
	etcBefore := etcAptHash(t)
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "series"), 0o755)
	entry := func(name, suite string, p *aptfake.Pkg) string {
		return fmt.Sprintf("  - name: %q\n    debian:\n      package: %s\n      suite: %s\n      version: %s\n      deb_sha256: %s\n      tarball: %s\n      tarball_sha256: %s\n",
			name, p.Package, suite, p.Version, p.DebSHA256, p.Tarball, p.TarballSHA256)
	}
	lockPath := filepath.Join(root, "series", "kernels.yaml")
	writeLock := func(p99 *aptfake.Pkg) {
		os.WriteFile(lockPath, []byte("default: \"9.9\"\nkernels:\n"+entry("9.1", "bullseye", lts)+entry("9.9", "experimental", p99)), 0o644)
	}
	writeLock(cur)
	cache := t.TempDir()
	code, out, errOut := run(t, "--root", root, "--cache", cache, "tree", "pin", "--check")
	if code != 0 || !strings.Contains(out, "9.9: linux-source-9.9=9.9~rc2-1~exp1 is what experimental serves (current)") || !strings.Contains(out, "9.1: ") {
		t.Fatalf("check of current pins: exit %d\n%s%s", code, out, errOut)
	}
	writeLock(old)
	code, out, errOut = run(t, "--root", root, "--cache", cache, "tree", "pin", "--check")
	if code != 1 || !strings.Contains(out, "9.9: stale: pinned 9.9~rc1-1~exp1, experimental serves 9.9~rc2-1~exp1") ||
		!strings.Contains(out, "re-pin with: patchctl tree pin --kernel 9.9") || !strings.Contains(out, "9.1: linux-source-9.1=9.1.5-1 is what bullseye serves") {
		t.Fatalf("check of a stale pin: exit %d\n%s%s", code, out, errOut)
	}
	// prepare of the vanished version names the command that re-pins.
	code, _, errOut = run(t, "--root", root, "--cache", cache, "tree", "prepare", "--kernel", "9.9")
	if code != 2 || !strings.Contains(errOut, "re-pin with `patchctl tree pin --kernel 9.9`") {
		t.Errorf("prepare of a vanished pin: exit %d %s", code, errOut)
	}
	code, out, errOut = run(t, "--root", root, "--cache", cache, "tree", "pin", "--kernel", "9.9")
	if code != 0 || !strings.Contains(out, "old: linux-source-9.9=9.9~rc1-1~exp1 deb_sha256 "+old.DebSHA256+" tarball_sha256 "+old.TarballSHA256) ||
		!strings.Contains(out, "new: linux-source-9.9=9.9~rc2-1~exp1 deb_sha256 "+cur.DebSHA256+" tarball_sha256 "+cur.TarballSHA256) {
		t.Fatalf("re-pin: exit %d\n%s%s", code, out, errOut)
	}
	l, err := tree.LoadLock(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if d := l.Kernels[1].Debian; d.Version != cur.Version || d.DebSHA256 != cur.DebSHA256 || d.TarballSHA256 != cur.TarballSHA256 {
		t.Errorf("lock after the re-pin: %+v", d)
	}
	if code, out, errOut := run(t, "--root", root, "--cache", cache, "tree", "pin", "--check"); code != 0 {
		t.Errorf("check after the re-pin: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run(t, "--root", root, "--cache", cache, "tree", "prepare", "--kernel", "9.9"); code != 0 {
		t.Errorf("prepare after the re-pin: %s", errOut)
	}
	if code, _, _ := run(t, "--root", root, "--cache", cache, "tree", "pin", "--all", "--kernel", "9.9"); code != 2 {
		t.Errorf("--all with --kernel: exit %d", code)
	}
	if etcAptHash(t) != etcBefore {
		t.Error("/etc/apt changed")
	}
}

// TestTreeRelativeCache: a relative --cache or PATCHCTL_CACHE (relative to
// the current folder, as every path on the command line) works as its
// absolute path does for `tree pin --check` and `tree prepare`, though
// apt and tar run in other folders: no "not served ... re-pin", no suite
// error. The suites are fakes, no network.
func TestTreeRelativeCache(t *testing.T) {
	a := aptfake.New(t)
	cur := a.Build("linux-source-9.9", "9.9~rc2-1~exp1")
	a.Serve("experimental", cur)
	t.Setenv("PATH", a.BinDir()+string(os.PathListSeparator)+os.Getenv("PATH"))
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "series"), 0o755)
	os.WriteFile(filepath.Join(root, "series", "kernels.yaml"), []byte(fmt.Sprintf("default: \"9.9\"\nkernels:\n  - name: \"9.9\"\n    debian:\n      package: %s\n      suite: experimental\n      version: %s\n      deb_sha256: %s\n      tarball: %s\n      tarball_sha256: %s\n",
		cur.Package, cur.Version, cur.DebSHA256, cur.Tarball, cur.TarballSHA256)), 0o644)
	work := t.TempDir()
	t.Chdir(work)
	for _, how := range []string{"--cache", "PATCHCTL_CACHE"} {
		rel := "rel-" + strings.ToLower(strings.Trim(how, "-"))
		args := []string{"--root", root}
		t.Setenv("PATCHCTL_CACHE", "")
		if how == "--cache" {
			args = append(args, "--cache", rel)
		} else {
			t.Setenv("PATCHCTL_CACHE", rel)
		}
		code, out, errOut := run(t, append(args, "tree", "pin", "--check")...)
		if code != 0 || !strings.Contains(out, "is what experimental serves (current)") {
			t.Errorf("%s %s: tree pin --check: exit %d\n%s%s", how, rel, code, out, errOut)
		}
		code, out, errOut = run(t, append(args, "tree", "prepare")...)
		if code != 0 || !strings.Contains(out, filepath.Join(work, rel, "trees", "9.9")) {
			t.Errorf("%s %s: tree prepare: exit %d\n%s%s", how, rel, code, out, errOut)
		}
		if _, err := os.Stat(filepath.Join(work, rel, "trees", "9.9.prepared")); err != nil {
			t.Errorf("%s %s: no tree under the current folder: %v", how, rel, err)
		}
		if code, out, errOut := run(t, append(args, "tree", "verify")...); code != 0 || !strings.Contains(out, "9.9: intact") {
			t.Errorf("%s %s: tree verify: exit %d\n%s%s", how, rel, code, out, errOut)
		}
		// A deleted manifest is a damaged tree, every time, never "intact".
		os.Remove(filepath.Join(work, rel, "trees", "9.9.manifest.json.gz"))
		for i := 0; i < 2; i++ {
			code, out, errOut := run(t, append(args, "tree", "verify")...)
			if code != 1 || !strings.Contains(out, "9.9: DAMAGED") || !strings.Contains(out, "manifest") || !strings.Contains(out, "tree prepare --kernel 9.9 --force") {
				t.Errorf("%s %s: tree verify without a manifest: exit %d\n%s%s", how, rel, code, out, errOut)
			}
		}
		if code, _, errOut := run(t, append(args, "tree", "prepare", "--force")...); code != 0 {
			t.Errorf("repair: %s", errOut)
		}
		if code, out, errOut := run(t, append(args, "tree", "verify")...); code != 0 || !strings.Contains(out, "9.9: intact") {
			t.Errorf("%s %s: tree verify after the repair: exit %d\n%s%s", how, rel, code, out, errOut)
		}
	}
}
