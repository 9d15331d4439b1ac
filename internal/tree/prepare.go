package tree

import (
	"archive/tar"
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/progress"
	runner "github.com/patchctl/patchctl/internal/run"
)

// Cache holds downloaded packages, pristine trees and work trees.
type Cache struct {
	Dir      string
	Progress *progress.Reporter
	// AptGet and AptCache are the apt programs (tests put fakes here).
	AptGet   string
	AptCache string
	// AptEtc is the system's apt configuration, read for its Debian
	// mirror and never written (default /etc/apt).
	AptEtc string
	// MinFree, when set, replaces the free-space estimate (tests).
	MinFree uint64
	// Offline refuses every download (a package not cached, a clone):
	// the environment's error, naming what is missing.
	Offline bool
}

// ErrOffline is a download that Offline refused (an environment error).
var ErrOffline = fmt.Errorf("offline: nothing is downloaded: %w", errs.ErrEnv)

// DefaultCacheDir is $PATCHCTL_CACHE, else patchctl under the user's cache
// dir (~/.cache/patchctl), absolute; "" when neither is known (no HOME):
// there is no fallback to a shared folder such as /tmp.
func DefaultCacheDir() string {
	d, err := CacheDir("")
	if err != nil {
		return ""
	}
	return d
}

// CacheDir is the cache folder, made absolute once (the stages run tools
// in other folders, where a relative path means something else): given
// (--cache) when set, else $PATCHCTL_CACHE, else patchctl under
// $XDG_CACHE_HOME or ~/.cache. With none of them set it is an error that
// says what to set, never a shared folder.
func CacheDir(given string) (string, error) {
	d, what := given, "--cache"
	if d == "" {
		d, what = os.Getenv("PATCHCTL_CACHE"), "PATCHCTL_CACHE"
	}
	if d == "" {
		ucd, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no cache folder: %v: set PATCHCTL_CACHE to a folder of your own (or HOME): %w", err, errs.ErrEnv)
		}
		d, what = filepath.Join(ucd, "patchctl"), "the user's cache folder"
	}
	abs, err := filepath.Abs(d)
	if err != nil {
		return "", fmt.Errorf("cache %s (%s): %w: %w", d, what, err, errs.ErrEnv)
	}
	return abs, nil
}

// OpenCache makes the cache folder dir (see CacheDir) when it does not
// exist, private to the user (0700), and checks one that exists: it must
// be a folder (a symbolic link to one is followed) owned by the user and
// writable by nobody else, for patchctl trusts what it finds there (the
// trees it applies to, the packages it extracts). Errors are the
// environment's and say how to fix it.
func OpenCache(dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("cache %s is not an absolute path: %w", dir, errs.ErrEnv)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("making the cache %s: %w: set PATCHCTL_CACHE to a folder you can write: %w", dir, err, errs.ErrEnv)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("cache %s: %w: %w", dir, err, errs.ErrEnv)
	}
	if !st.IsDir() {
		return fmt.Errorf("cache %s is not a folder: set PATCHCTL_CACHE to a folder of your own: %w", dir, errs.ErrEnv)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("cache %s belongs to user %d, not to you (%d): another user could have planted trees in it; set PATCHCTL_CACHE to a folder of your own: %w", dir, sys.Uid, os.Geteuid(), errs.ErrEnv)
	}
	if m := st.Mode().Perm(); m&0o022 != 0 {
		return fmt.Errorf("cache %s is writable by others (mode %#o): another user could plant trees in it; run 'chmod go-w %s' or set PATCHCTL_CACHE to a folder of your own: %w", dir, m, dir, errs.ErrEnv)
	}
	return nil
}

// PristineDir is where kernel k's pristine tree lives once prepared.
// A local tree is its own pristine tree.
func (c *Cache) PristineDir(k *Kernel) string {
	if k.Local != nil {
		return k.Local.Dir
	}
	return filepath.Join(c.Dir, "trees", k.Name)
}

func (c *Cache) markerPath(k *Kernel) string {
	return filepath.Join(c.Dir, "trees", k.Name+".prepared")
}

// Prepared reports whether k's pristine tree is complete and from k's source.
func (c *Cache) Prepared(k *Kernel) bool {
	if k.Local != nil {
		_, err := os.Stat(filepath.Join(k.Local.Dir, "Makefile"))
		return err == nil
	}
	b, err := os.ReadFile(c.markerPath(k))
	if err != nil || strings.TrimSpace(string(b)) != k.Key() {
		return false
	}
	_, err = os.Stat(c.PristineDir(k))
	return err == nil
}

// Prepare makes k's pristine tree. A prepared tree is a no-op; a tree from
// another source or left incomplete is replaced, but only once its
// successor is complete: a failed download leaves what was there. The
// tree appears under its final name only when complete and verified, with
// its manifest (every file's size and hash).
func (c *Cache) Prepare(ctx context.Context, k *Kernel) (string, error) {
	return c.prepare(ctx, k, false)
}

// Reprepare extracts k's tree again even when it is prepared (to repair a
// damaged one); the old tree stays until the new one is complete.
func (c *Cache) Reprepare(ctx context.Context, k *Kernel) (string, error) {
	return c.prepare(ctx, k, true)
}

func (c *Cache) prepare(ctx context.Context, k *Kernel, force bool) (_ string, err error) {
	// An interrupt reads as one, whatever step it stopped (a download,
	// dpkg-deb, tar, the lock wait), not as that step's failure.
	defer func() {
		if err != nil && ctx.Err() != nil {
			err = fmt.Errorf("preparing %s: interrupted; the partial tree is removed (the next prepare starts it again): %w: %w", k.Name, ctx.Err(), errs.ErrEnv)
		}
	}()
	dir := c.PristineDir(k)
	if !force && c.Prepared(k) {
		return dir, nil
	}
	if k.Local != nil {
		return "", fmt.Errorf("local tree %s has no Makefile any more: %w", k.Local.Dir, errs.ErrInput)
	}
	unlock, err := c.Lock(ctx, "tree-"+k.Name)
	if err != nil {
		return "", fmt.Errorf("preparing %s: %w", k.Name, err)
	}
	defer unlock()
	// What an interrupted prepare of this kernel left: under the lock,
	// nobody is using it.
	c.removeStale(k)
	if !force && c.Prepared(k) { // another process finished it while we waited
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("preparing %s: %w", k.Name, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+k.Name+".tmp-")
	if err != nil {
		return "", fmt.Errorf("preparing %s: %w", k.Name, err)
	}
	defer os.RemoveAll(tmp)
	var top string
	switch {
	case k.Debian != nil:
		top, err = c.prepareDebian(ctx, k, tmp)
	case k.Git != nil:
		top, err = c.prepareGit(ctx, k, tmp)
	}
	if err != nil {
		return "", fmt.Errorf("preparing %s: %w", k.Name, err)
	}
	c.Progress.Start("manifest " + k.Name)
	m, err := makeManifest(top, k.Key())
	if err != nil {
		return "", fmt.Errorf("preparing %s: %w", k.Name, err)
	}
	c.Progress.Done("%d files recorded", len(m.Files))
	// The new tree is complete: only now does the old one go (aside into
	// the temporary folder, removed with it).
	os.Remove(c.markerPath(k))
	if err := os.Rename(dir, filepath.Join(tmp, "old")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("preparing %s: moving the old tree aside: %w", k.Name, err)
	}
	if err := os.Rename(top, dir); err != nil {
		return "", fmt.Errorf("preparing %s: %w", k.Name, err)
	}
	if err := writeManifest(c.manifestPath(k), m); err != nil {
		return "", fmt.Errorf("preparing %s: %w", k.Name, err)
	}
	if err := fsutil.WriteFile(c.markerPath(k), []byte(k.Key()+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("preparing %s: %w", k.Name, err)
	}
	if force {
		// The work tree links into the old tree's files: make it anew.
		release, err := c.Lock(ctx, "work-"+k.Name)
		if err != nil {
			return "", err
		}
		defer release()
		if err := os.RemoveAll(c.WorkTreeDir(k)); err != nil {
			return "", fmt.Errorf("preparing %s: removing the work tree: %w", k.Name, err)
		}
	}
	return dir, nil
}

// removeStale removes the temporary trees and downloads that an
// interrupted prepare of k left behind; the caller holds k's tree lock.
func (c *Cache) removeStale(k *Kernel) {
	stale, _ := filepath.Glob(filepath.Join(c.Dir, "trees", "."+k.Name+".tmp-*"))
	if k.Debian != nil {
		dl, _ := filepath.Glob(filepath.Join(c.Dir, "debs", ".download-"+k.Debian.Package+"-*"))
		stale = append(stale, dl...)
	}
	for _, p := range stale {
		c.Progress.Note("removing %s, left by an interrupted prepare", p)
		os.RemoveAll(p)
	}
}

// DebPath is where the pinned package is kept.
func (c *Cache) DebPath(d *DebianSource) string {
	v := strings.ReplaceAll(d.Version, ":", "%3a")
	return filepath.Join(c.Dir, "debs", d.Package+"_"+v+"_all.deb")
}

func fileSHA256(path string) (string, error) { return fsutil.HashFile(path) }

// fetchDeb downloads kernel k's pinned source package.
func (c *Cache) fetchDeb(ctx context.Context, k *Kernel) (string, error) {
	d := k.Debian
	return c.fetch(ctx, c.DebPath(d), d.Package, d.Version, d.DebSHA256, d.Suite, k.Name, "version, deb_sha256 and tarball_sha256")
}

// BinaryDebPath is where a pinned binary package is kept.
func (c *Cache) BinaryDebPath(p DebianPackage, version string) string {
	v := strings.ReplaceAll(version, ":", "%3a")
	return filepath.Join(c.Dir, "debs", p.Package+"_"+v+"_"+p.Arch+".deb")
}

// FetchBinaryDeb downloads a pinned binary package of kernel k (of its
// DebianBinary at version, from its source's suite) the way the source
// package is, unless a copy with the pinned sha256 is cached, and returns
// its path.
func (c *Cache) FetchBinaryDeb(ctx context.Context, k *Kernel, p DebianPackage, version string) (string, error) {
	suite := ""
	if k.Debian != nil {
		suite = k.Debian.Suite
	}
	return c.fetch(ctx, c.BinaryDebPath(p, version), p.Package, version, p.SHA256, suite, k.Name, "the binary packages' version and sha256")
}

// fetch downloads package=version with apt-get download (Debian's
// ordinary client; from suite through patchctl's own apt state when one
// is named) to path unless a copy with the pinned sha256 is there. kernel
// and repin name what to re-pin when Debian no longer serves it.
func (c *Cache) fetch(ctx context.Context, path, pkg, version, want, suite, kernel, repin string) (string, error) {
	d := &DebianSource{Package: pkg, Version: version, DebSHA256: want, Suite: suite}
	if sum, err := fileSHA256(path); err == nil && sum == d.DebSHA256 {
		return path, nil
	}
	spec := d.Package + "=" + d.Version
	if c.Offline {
		return "", fmt.Errorf("%s is not in the cache (%s): run without --offline to download it%s: %w", spec, path, c.debSize(ctx, suite, spec), ErrOffline)
	}
	if suite != "" && !c.hasLists(suite) {
		// The suite's lists first, so the size can be announced.
		if err := c.UpdateSuite(ctx, suite); err != nil {
			return "", err
		}
	}
	// Say what comes and how big before it starts (a fresh cache fetches
	// well over 100 MB).
	c.Progress.Start("download " + spec + c.debSize(ctx, suite, spec) + " from Debian into " + filepath.Dir(path))
	got, err := c.download(ctx, d.Suite, spec)
	if err != nil {
		if errors.Is(err, ErrNotServed) {
			if d.Suite == "" {
				return "", fmt.Errorf("Debian does not serve %s (anymore): re-pin %s in series/kernels.yaml to a served version (apt-cache policy %s lists them), or add the suite that serves it (suite:) and run `patchctl tree pin --kernel %s`: %w",
					spec, repin, d.Package, kernel, errs.ErrInput)
			}
			return "", fmt.Errorf("Debian's %s does not serve %s (anymore): re-pin with `patchctl tree pin --kernel %s` (it writes the version the suite serves now, with both sums computed from the download, into series/kernels.yaml; %s): %w",
				d.Suite, spec, kernel, repin, errs.ErrInput)
		}
		return "", err
	}
	defer os.RemoveAll(filepath.Dir(got))
	sum, err := fileSHA256(got)
	if err != nil {
		return "", err
	}
	if sum != d.DebSHA256 {
		return "", fmt.Errorf("checksum mismatch for %s: got sha256 %s, the lock pins %s; refused and not kept: %w", spec, sum, d.DebSHA256, errs.ErrInput)
	}
	if err := os.Rename(got, path); err != nil {
		return "", err
	}
	c.Progress.Done("%s verified", filepath.Base(path))
	return path, nil
}

// download runs apt-get download of spec (package=version) in a fresh
// folder under debs/ and returns the .deb's path there (the caller
// removes its folder). With a suite, patchctl's own apt state for it is
// used, its lists fetched first when missing; a version not found makes
// one fresh update of the lists before it is reported as ErrNotServed.
func (c *Cache) download(ctx context.Context, suite, spec string) (string, error) {
	dir := filepath.Join(c.Dir, "debs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	pkg, _, _ := strings.Cut(spec, "=")
	tmp, err := os.MkdirTemp(dir, ".download-"+pkg+"-")
	if err != nil {
		return "", err
	}
	var opts []string
	if suite != "" {
		if opts, err = c.aptOptions(suite); err != nil {
			os.RemoveAll(tmp)
			return "", err
		}
		if !c.hasLists(suite) {
			if err := c.UpdateSuite(ctx, suite); err != nil {
				os.RemoveAll(tmp)
				return "", err
			}
		}
	}
	args := append(append([]string{}, opts...), "download", spec)
	out, err := runIn(ctx, tmp, c.aptGet(), args...)
	if err != nil && notServed(out) {
		// The package lists may be old or missing: refresh once.
		if suite != "" {
			if uerr := c.UpdateSuite(ctx, suite); uerr == nil {
				out, err = runIn(ctx, tmp, c.aptGet(), args...)
			}
		} else if os.Geteuid() == 0 {
			runIn(ctx, tmp, c.aptGet(), "update", "-qq")
			out, err = runIn(ctx, tmp, c.aptGet(), args...)
		}
	}
	if err != nil {
		os.RemoveAll(tmp)
		if notServed(out) {
			return "", fmt.Errorf("%s: %w", spec, ErrNotServed)
		}
		return "", fmt.Errorf("apt-get download %s: %v: %s: %w", spec, err, lastLines(out, 3), errs.ErrEnv)
	}
	debs, _ := filepath.Glob(filepath.Join(tmp, "*.deb"))
	if len(debs) != 1 {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("apt-get download %s left %d .deb files, want 1: %w", spec, len(debs), errs.ErrEnv)
	}
	return debs[0], nil
}

func notServed(out string) bool {
	return strings.Contains(out, "was not found") || strings.Contains(out, "Unable to locate package") || strings.Contains(out, "has no installation candidate")
}

// debSize is " (N MB)" for a package version as apt-cache knows it, or
// "" when it does not say.
func (c *Cache) debSize(ctx context.Context, suite, spec string) string {
	cacheProg := c.aptCache()
	if c.AptCache == "" && c.AptGet != "" {
		cacheProg = filepath.Join(filepath.Dir(c.AptGet), "apt-cache") // a test's fake apt-get sits with its fake apt-cache
	}
	if _, err := runner.LookPath(cacheProg); err != nil {
		return ""
	}
	var opts []string
	if suite != "" {
		if !c.hasLists(suite) {
			return ""
		}
		o, err := c.aptOptions(suite)
		if err != nil {
			return ""
		}
		opts = o
	}
	out, err := runIn(ctx, "", cacheProg, append(opts, "show", "--no-all-versions", spec)...)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "Size: "); ok {
			var n int64
			if _, err := fmt.Sscan(v, &n); err == nil && n > 0 {
				return fmt.Sprintf(" (%d MB)", (n+500_000)/1_000_000)
			}
		}
	}
	return ""
}

func runIn(ctx context.Context, dir, prog string, args ...string) (string, error) {
	var out strings.Builder
	err := (&runner.Cmd{Name: prog, Args: args, Dir: dir, Stdout: &out}).Run(ctx)
	return out.String(), err
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, " / ")
}

// prepareDebian extracts the source tarball out of the package into tmp
// in one pass (dpkg-deb | tar reader | tee sha256 | tar -xJ) and checks the
// tarball's sha256. It returns the tree's top folder.
func (c *Cache) prepareDebian(ctx context.Context, k *Kernel, tmp string) (string, error) {
	deb, err := c.fetchDeb(ctx, k)
	if err != nil {
		return "", err
	}
	var top string
	err = withTarball(ctx, deb, k.Debian.Tarball, func(r io.Reader, size int64) error {
		if err := c.checkSpace(tmp, uint64(size)*12); err != nil {
			return err
		}
		var err error
		top, err = c.extract(ctx, k, r, size, tmp)
		return err
	})
	return top, err
}

// withTarball streams the package's data archive (dpkg-deb --fsys-tarfile)
// to the member tarball and calls fn with its content. Whatever way this
// returns, dpkg-deb is stopped and waited for (a reader that stops early
// must not leave it blocked on the pipe).
func withTarball(ctx context.Context, deb, tarball string, fn func(r io.Reader, size int64) error) error {
	ctx, cancel := context.WithCancel(ctx)
	outer, pw := io.Pipe()
	var dpkgErr strings.Builder
	dpkg, err := (&runner.Cmd{Name: "dpkg-deb", Args: []string{"--fsys-tarfile", deb}, Stdout: pw, Stderr: &dpkgErr}).Start(ctx)
	if err != nil {
		cancel()
		return fmt.Errorf("dpkg-deb: %w", err) // run says what to install when it is missing
	}
	waited := make(chan error, 1)
	go func() {
		err := dpkg.Wait()
		pw.CloseWithError(err)
		waited <- err
	}()
	defer func() {
		cancel()
		outer.Close()
		<-waited
	}()
	tr := tar.NewReader(outer)
	want := "./" + strings.TrimPrefix(tarball, "/")
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return fmt.Errorf("%s has no %s: fix tarball in series/kernels.yaml: %w", filepath.Base(deb), tarball, errs.ErrInput)
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", filepath.Base(deb), err)
		}
		if hdr.Name == want {
			return fn(tr, hdr.Size)
		}
	}
}

// tarballSHA256 is the sha256 of the package's member tarball.
func tarballSHA256(ctx context.Context, deb, tarball string) (string, error) {
	h := sha256.New()
	err := withTarball(ctx, deb, tarball, func(r io.Reader, _ int64) error {
		_, err := io.Copy(h, r)
		return err
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// checkSpace refuses to start an extraction that cannot fit.
func (c *Cache) checkSpace(dir string, need uint64) error {
	if c.MinFree > 0 {
		need = c.MinFree
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return nil // cannot tell: try, and clean up if it fails
	}
	if free := st.Bavail * uint64(st.Bsize); free < need {
		return fmt.Errorf("no disk space: the tree needs about %d MB at %s, %d MB are free; free some or set PATCHCTL_CACHE to another disk: %w", need>>20, dir, free>>20, errs.ErrEnv)
	}
	return nil
}

func (c *Cache) extract(ctx context.Context, k *Kernel, r io.Reader, size int64, tmp string) (string, error) {
	h := sha256.New()
	list, pw := io.Pipe()
	var tarErr strings.Builder
	c.Progress.Start("extract " + k.Name)
	tarCmd, err := (&runner.Cmd{Name: "tar", Args: []string{"-xvJf", "-", "-C", tmp, "--no-same-owner", "--no-same-permissions"},
		Stdin: io.TeeReader(r, h), Stdout: pw, Stderr: &tarErr}).Start(ctx)
	if err != nil {
		return "", fmt.Errorf("tar: %w (install tar and xz-utils)", err)
	}
	waited := make(chan error, 1)
	go func() {
		err := tarCmd.Wait()
		pw.Close()
		waited <- err
	}()
	n := 0
	sc := bufio.NewScanner(list)
	for sc.Scan() {
		n++
		if n%2000 == 0 {
			c.Progress.Update("%d files", n)
		}
	}
	io.Copy(io.Discard, list)
	if err := <-waited; err != nil {
		msg := lastLines(tarErr.String(), 3)
		if strings.Contains(msg, "No space left") {
			return "", fmt.Errorf("no disk space while extracting %s (nothing kept): %s: %w", k.Name, msg, errs.ErrEnv)
		}
		return "", fmt.Errorf("extracting %s: %v: %s: %w", k.Name, err, msg, errs.ErrEnv)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != k.Debian.TarballSHA256 {
		return "", fmt.Errorf("checksum mismatch for %s in %s: got sha256 %s, the lock pins %s; refused and not kept: %w",
			k.Debian.Tarball, k.Debian.Package, sum, k.Debian.TarballSHA256, errs.ErrInput)
	}
	c.Progress.Done("%d files, sha256 verified", n)
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return "", err
	}
	if len(ents) != 1 || !ents[0].IsDir() {
		return "", errors.New("source tarball does not hold exactly one top folder")
	}
	return filepath.Join(tmp, ents[0].Name()), nil
}
