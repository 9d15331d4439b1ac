package debian

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	runner "github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/errs"
)

// ExtractMembers fetches kernel's pinned source package d and writes into
// dir only the tree's regular files (and symbolic links) for which want
// returns true, paths relative to the tree's top folder (the tarball's
// first component dropped). The whole tarball is read once and its sha256
// checked against the pin, as ExtractSource checks it: on a mismatch
// nothing written is to be kept (the caller's folder is temporary). It
// returns every regular file's and link's path in the tree, in tarball
// order (what exists there: placeholders can stand for the rest).
func (c *Cache) ExtractMembers(ctx context.Context, kernel string, d *Source, dir string, want func(rel string) bool) ([]string, error) {
	deb, err := c.fetchSource(ctx, kernel, d)
	if err != nil {
		return nil, err
	}
	var all []string
	err = withTarball(ctx, deb, d.Tarball, func(r io.Reader, _ int64) error {
		var err error
		all, err = c.extractMembers(ctx, kernel, d, r, dir, want)
		return err
	})
	return all, err
}

func (c *Cache) extractMembers(ctx context.Context, kernel string, d *Source, r io.Reader, dir string, want func(string) bool) ([]string, error) {
	h := sha256.New()
	in := io.TeeReader(r, h)
	xout, pw := io.Pipe()
	var xzErr strings.Builder
	c.Progress.Start("extract checkpatch's files of " + kernel)
	xz, err := (&runner.Cmd{Name: "xz", Args: []string{"-dc"}, Stdin: in, Stdout: pw, Stderr: &xzErr}).Start(ctx)
	if err != nil {
		return nil, fmt.Errorf("xz: %w (install xz-utils)", err)
	}
	waited := make(chan error, 1)
	go func() {
		err := xz.Wait()
		pw.CloseWithError(err)
		waited <- err
	}()
	all, kept, terr := writeMembers(tar.NewReader(xout), dir, want)
	io.Copy(io.Discard, xout) //nolint:errcheck // xz's own error is the one that counts
	xerr := <-waited
	if terr != nil {
		return nil, fmt.Errorf("extracting checkpatch's files of %s: %w", kernel, terr)
	}
	if xerr != nil {
		return nil, fmt.Errorf("extracting checkpatch's files of %s: xz: %v: %s: %w", kernel, xerr, lastLines(xzErr.String(), 3), errs.ErrEnv)
	}
	// Whatever xz left unread (padding) is part of the tarball's sum.
	if _, err := io.Copy(h, r); err != nil {
		return nil, fmt.Errorf("reading %s's tarball: %w", kernel, err)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != d.TarballSHA256 {
		return nil, fmt.Errorf("checksum mismatch for %s in %s: got sha256 %s, the lock pins %s; refused and not kept: %w",
			d.Tarball, d.Package, sum, d.TarballSHA256, errs.ErrInput)
	}
	c.Progress.Done("%d of %d files, sha256 verified", kept, len(all))
	return all, nil
}

// writeMembers writes tr's wanted members under dir and lists every file
// and link of the tree.
func writeMembers(tr *tar.Reader, dir string, want func(string) bool) (all []string, kept int, _ error) {
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return all, kept, nil
		}
		if err != nil {
			return nil, 0, err
		}
		_, rel, ok := strings.Cut(strings.TrimPrefix(hdr.Name, "./"), "/")
		rel = strings.TrimSuffix(rel, "/")
		if !ok || rel == "" {
			continue
		}
		if c := filepath.Clean(rel); c != rel || c == ".." || strings.HasPrefix(c, "../") || filepath.IsAbs(c) {
			return nil, 0, fmt.Errorf("tarball member %q leaves the tree or is not a clean path: %w", hdr.Name, errs.ErrInput)
		}
		switch hdr.Typeflag {
		case tar.TypeReg, tar.TypeSymlink:
		default:
			continue
		}
		all = append(all, rel)
		if !want(rel) {
			continue
		}
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, 0, err
		}
		if hdr.Typeflag == tar.TypeSymlink {
			// Links stay within the tree (as tar would make them): a
			// target leaving it is refused.
			if to := filepath.Join(filepath.Dir(rel), hdr.Linkname); filepath.IsAbs(hdr.Linkname) || to == ".." || strings.HasPrefix(to, "../") {
				return nil, 0, fmt.Errorf("tarball member %q links outside the tree (%s)", hdr.Name, hdr.Linkname)
			}
			if err := os.Symlink(hdr.Linkname, dst); err != nil && !errors.Is(err, os.ErrExist) {
				return nil, 0, err
			}
			kept++
			continue
		}
		mode := os.FileMode(0o644)
		if hdr.Mode&0o111 != 0 {
			mode = 0o755
		}
		f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
		if err != nil {
			return nil, 0, err
		}
		_, err = io.Copy(f, tr)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, 0, err
		}
		kept++
	}
}
