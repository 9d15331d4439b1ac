package debian

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
)

// PinStatus compares a kernel's pin with what its suite serves now.
type PinStatus struct {
	Kernel string  `json:"kernel"`
	Pinned Source  `json:"pinned"`
	Served *Served `json:"served"`
	New    *Source `json:"new,omitempty"` // after Repin
	// Stale says why the pin is not what the suite serves ("" when it is).
	Stale string `json:"stale,omitempty"`
}

// CheckPin asks the kernel's suite (its lists fetched before, see
// UpdateSuite) what it serves of the pinned package and compares: a newer
// or older version, the pinned version gone, or the index's sum of the
// pinned version differing from the pin make the pin stale. A binary
// kernel pinned beside the source (binary:) is stale when its version is
// not the source's, or one of its packages is gone from the suite or has
// another sum in its index. Nothing is downloaded.
func (c *Cache) CheckPin(ctx context.Context, kernel string, d *Source) (*PinStatus, error) {
	st, _, err := c.checkPin(ctx, kernel, d)
	return st, err
}

// checkPin is CheckPin, and whether the source itself (not only its
// binary kernel) is stale.
func (c *Cache) checkPin(ctx context.Context, kernel string, d *Source) (*PinStatus, bool, error) {
	if d == nil {
		return nil, false, fmt.Errorf("kernel %s is not pinned to a Debian package: only Debian pins follow a suite: %w", kernel, errs.ErrUsage)
	}
	if d.Suite == "" {
		return nil, false, fmt.Errorf("kernel %s pins no suite: add suite: (bullseye, bookworm-security, sid, experimental, ...) to its debian entry in series/kernels.yaml: %w", kernel, errs.ErrInput)
	}
	st := &PinStatus{Kernel: kernel, Pinned: *d}
	served, err := c.Serves(ctx, d.Suite, d.Package)
	if err != nil {
		return nil, false, err
	}
	st.Served = served
	switch {
	case served.Version != d.Version:
		st.Stale = fmt.Sprintf("pinned %s, %s serves %s", d.Version, d.Suite, served.Version)
		if _, err := c.ServedVersion(ctx, d.Suite, d.Package, d.Version); errors.Is(err, ErrNotServed) {
			st.Stale += " (the pinned version is gone from the suite)"
		}
		return st, true, nil
	case served.SHA256 != d.DebSHA256:
		st.Stale = fmt.Sprintf("%s %s: the suite's index has sha256 %s, the pin %s", d.Package, d.Version, served.SHA256, d.DebSHA256)
		return st, true, nil
	}
	if b := d.Binary; b != nil {
		if b.Version != d.Version {
			st.Stale = fmt.Sprintf("the binary kernel is pinned at %s, the source at %s", b.Version, d.Version)
			return st, false, nil
		}
		for _, p := range b.Packages() {
			s, err := c.ServedVersion(ctx, d.Suite, p.Package, b.Version)
			switch {
			case errors.Is(err, ErrNotServed):
				st.Stale = fmt.Sprintf("binary package %s=%s is gone from %s", p.Package, b.Version, d.Suite)
				return st, false, nil
			case err != nil:
				return nil, false, err
			case s.SHA256 != p.SHA256:
				st.Stale = fmt.Sprintf("binary package %s %s: the suite's index has sha256 %s, the pin %s", p.Package, b.Version, s.SHA256, p.SHA256)
				return st, false, nil
			}
		}
	}
	return st, false, nil
}

// Repin makes the pin of what the suite serves now: it downloads that
// version, computes the .deb's sha256 (which must equal the index's) and
// the source tarball's sha256 from the download, keeps the .deb in the
// cache for the next prepare, and returns the status with New set. A pin
// that is current is returned with New equal to the pin, nothing
// downloaded.
func (c *Cache) Repin(ctx context.Context, kernel string, d *Source) (*PinStatus, error) {
	st, srcStale, err := c.checkPin(ctx, kernel, d)
	if err != nil {
		return nil, err
	}
	n := st.Pinned
	st.New = &n
	if st.Stale == "" {
		return st, nil
	}
	if srcStale {
		if err := c.repinSource(ctx, kernel, d.Suite, st.Served, &n); err != nil {
			return nil, err
		}
	}
	if b := d.Binary; b != nil {
		if n.Binary, err = c.repinBinary(ctx, kernel, d.Suite, b, n.Version); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// repinSource makes n (a copy of kernel's pin, served by suite) the
// served version s: it downloads that version and computes both sums from
// the download.
func (c *Cache) repinSource(ctx context.Context, kernel, suite string, s *Served, n *Source) error {
	spec := s.Package + "=" + s.Version
	n.Version = s.Version
	// A download of this version kept in the cache (an earlier re-pin)
	// is as good as a new one: its sum is computed here either way.
	got := c.DebPath(n)
	if sum, err := fileSHA256(got); err != nil || sum != s.SHA256 {
		c.Progress.Start("download " + spec)
		if got, err = c.download(ctx, suite, spec); err != nil {
			return fmt.Errorf("re-pinning %s: %w", kernel, err)
		}
		defer os.RemoveAll(filepath.Dir(got))
	} else {
		c.Progress.Start("verify " + filepath.Base(got))
	}
	debSum, err := fileSHA256(got)
	if err != nil {
		return err
	}
	if debSum != s.SHA256 {
		return fmt.Errorf("re-pinning %s: %s downloaded with sha256 %s, the suite's index says %s; refused: %w", kernel, spec, debSum, s.SHA256, errs.ErrEnv)
	}
	n.DebSHA256 = debSum
	c.Progress.Update("sha256 of %s", n.Tarball)
	if n.TarballSHA256, err = tarballSHA256(ctx, got, n.Tarball); err != nil {
		return fmt.Errorf("re-pinning %s: %w", kernel, err)
	}
	if got != c.DebPath(n) {
		if err := os.Rename(got, c.DebPath(n)); err != nil {
			return err
		}
	}
	c.Progress.Done("%s: %s, both sums computed from the .deb", kernel, spec)
	return nil
}

// repinBinary is b, the binary kernel pinned beside kernel's source (served
// by suite), moved to
// the source's version. Debian names the binary packages and the release
// after the upstream version (linux-image-6.12.117+deb12-amd64-unsigned,
// release 6.12.117+deb12-amd64), so the new names are the old ones with
// the upstream version replaced; each must be served at the new version
// by the source's suite, and its sum is the suite's index's (apt checked
// the index's signature; the download is checked against the pin when
// the distro path fetches it). A package the suite does not serve under
// its derived name is an input error naming it: edit binary: by hand.
func (c *Cache) repinBinary(ctx context.Context, kernel, suite string, b *Binary, version string) (*Binary, error) {
	oldUp, newUp := upstreamVersion(b.Version), upstreamVersion(version)
	if !strings.Contains(b.Release, oldUp) || (b.Image != nil && !strings.Contains(b.Image.Package, b.Release)) {
		return nil, fmt.Errorf("re-pinning %s's binary kernel: its release %s does not follow its version %s (or the image package does not name the release), so the new names cannot be derived: edit binary: in series/kernels.yaml by hand: %w", kernel, b.Release, b.Version, errs.ErrInput)
	}
	rename := func(s string) string { return strings.ReplaceAll(s, oldUp, newUp) }
	nb := &Binary{Version: version, Release: rename(b.Release)}
	c.Progress.Start("re-pin " + kernel + "'s binary kernel")
	pkg := func(p Package) (Package, error) {
		np := Package{Package: rename(p.Package), Arch: p.Arch}
		s, err := c.ServedVersion(ctx, suite, np.Package, version)
		if errors.Is(err, ErrNotServed) {
			return np, fmt.Errorf("re-pinning %s's binary kernel: %s does not serve %s=%s (named after %s): edit binary: in series/kernels.yaml by hand, or remove it: %w", kernel, suite, np.Package, version, p.Package, err)
		}
		if err != nil {
			return np, fmt.Errorf("re-pinning %s's binary kernel: %w", kernel, err)
		}
		np.SHA256 = s.SHA256
		return np, nil
	}
	if b.Image != nil {
		img, err := pkg(*b.Image)
		if err != nil {
			return nil, err
		}
		nb.Image = &img
	}
	for _, h := range b.Headers {
		np, err := pkg(h)
		if err != nil {
			return nil, err
		}
		nb.Headers = append(nb.Headers, np)
	}
	if b.Debug != nil {
		dbg, err := pkg(*b.Debug)
		if err != nil {
			return nil, err
		}
		nb.Debug = &dbg
	}
	c.Progress.Done("%s: binary kernel %s, %d packages pinned from the suite's index", kernel, nb.Release, len(nb.Packages()))
	return nb, nil
}

// upstreamVersion is a Debian version's upstream part: no epoch, no
// Debian revision (1:6.12.117-1~deb12u1 is 6.12.117).
func upstreamVersion(v string) string {
	if _, after, ok := strings.Cut(v, ":"); ok {
		v = after
	}
	if i := strings.LastIndex(v, "-"); i > 0 {
		v = v[:i]
	}
	return v
}
