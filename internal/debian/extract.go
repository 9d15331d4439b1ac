package debian

import (
	"archive/tar"
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	runner "github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/errs"
)

// ExtractSource fetches kernel's pinned source package d (see fetch) and
// extracts the source tarball out of it into tmp in one pass (dpkg-deb |
// tar reader | tee sha256 | tar -xJ), checking the tarball's sha256. It
// returns the tree's top folder.
func (c *Cache) ExtractSource(ctx context.Context, kernel string, d *Source, tmp string) (string, error) {
	deb, err := c.fetchSource(ctx, kernel, d)
	if err != nil {
		return "", err
	}
	var top string
	err = withTarball(ctx, deb, d.Tarball, func(r io.Reader, size int64) error {
		if err := c.checkSpace(tmp, uint64(size)*12); err != nil {
			return err
		}
		var err error
		top, err = c.extract(ctx, kernel, d, r, size, tmp)
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
		<-waited //nolint:errcheck // the reader's error is the one returned
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

// extract runs tar on r (the source tarball, size bytes) into tmp,
// counting files on the progress line, and checks the tarball's sha256.
func (c *Cache) extract(ctx context.Context, kernel string, d *Source, r io.Reader, size int64, tmp string) (string, error) {
	h := sha256.New()
	list, pw := io.Pipe()
	var tarErr strings.Builder
	c.Progress.Start("extract " + kernel)
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
			return "", fmt.Errorf("no disk space while extracting %s (nothing kept): %s: %w", kernel, msg, errs.ErrEnv)
		}
		return "", fmt.Errorf("extracting %s: %v: %s: %w", kernel, err, msg, errs.ErrEnv)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != d.TarballSHA256 {
		return "", fmt.Errorf("checksum mismatch for %s in %s: got sha256 %s, the lock pins %s; refused and not kept: %w",
			d.Tarball, d.Package, sum, d.TarballSHA256, errs.ErrInput)
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
