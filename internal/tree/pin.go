package tree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/yamlx"
	"gopkg.in/yaml.v3"
)

// PinStatus compares a kernel's pin with what its suite serves now.
type PinStatus struct {
	Kernel string        `json:"kernel"`
	Pinned DebianSource  `json:"pinned"`
	Served *Served       `json:"served"`
	New    *DebianSource `json:"new,omitempty"` // after Repin
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
func (c *Cache) CheckPin(ctx context.Context, k *Kernel) (*PinStatus, error) {
	st, _, err := c.checkPin(ctx, k)
	return st, err
}

// checkPin is CheckPin, and whether the source itself (not only its
// binary kernel) is stale.
func (c *Cache) checkPin(ctx context.Context, k *Kernel) (*PinStatus, bool, error) {
	if k.Debian == nil {
		return nil, false, fmt.Errorf("kernel %s is not pinned to a Debian package: only Debian pins follow a suite: %w", k.Name, errs.ErrUsage)
	}
	d := k.Debian
	if d.Suite == "" {
		return nil, false, fmt.Errorf("kernel %s pins no suite: add suite: (bullseye, bookworm-security, sid, experimental, ...) to its debian entry in series/kernels.yaml: %w", k.Name, errs.ErrInput)
	}
	st := &PinStatus{Kernel: k.Name, Pinned: *d}
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
func (c *Cache) Repin(ctx context.Context, k *Kernel) (*PinStatus, error) {
	st, srcStale, err := c.checkPin(ctx, k)
	if err != nil {
		return nil, err
	}
	n := st.Pinned
	st.New = &n
	if st.Stale == "" {
		return st, nil
	}
	if srcStale {
		if err := c.repinSource(ctx, k, st.Served, &n); err != nil {
			return nil, err
		}
	}
	if b := k.Debian.Binary; b != nil {
		if n.Binary, err = c.repinBinary(ctx, k, b, n.Version); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// repinSource makes n (a copy of k's pin) the served version s: it
// downloads that version and computes both sums from the download.
func (c *Cache) repinSource(ctx context.Context, k *Kernel, s *Served, n *DebianSource) error {
	spec := s.Package + "=" + s.Version
	n.Version = s.Version
	// A download of this version kept in the cache (an earlier re-pin)
	// is as good as a new one: its sum is computed here either way.
	got := c.DebPath(n)
	if sum, err := fileSHA256(got); err != nil || sum != s.SHA256 {
		c.Progress.Start("download " + spec)
		if got, err = c.download(ctx, k.Debian.Suite, spec); err != nil {
			return fmt.Errorf("re-pinning %s: %w", k.Name, err)
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
		return fmt.Errorf("re-pinning %s: %s downloaded with sha256 %s, the suite's index says %s; refused: %w", k.Name, spec, debSum, s.SHA256, errs.ErrEnv)
	}
	n.DebSHA256 = debSum
	c.Progress.Update("sha256 of %s", n.Tarball)
	if n.TarballSHA256, err = tarballSHA256(ctx, got, n.Tarball); err != nil {
		return fmt.Errorf("re-pinning %s: %w", k.Name, err)
	}
	if got != c.DebPath(n) {
		if err := os.Rename(got, c.DebPath(n)); err != nil {
			return err
		}
	}
	c.Progress.Done("%s: %s, both sums computed from the .deb", k.Name, spec)
	return nil
}

// repinBinary is b, the binary kernel pinned beside k's source, moved to
// the source's version. Debian names the binary packages and the release
// after the upstream version (linux-image-6.12.117+deb12-amd64-unsigned,
// release 6.12.117+deb12-amd64), so the new names are the old ones with
// the upstream version replaced; each must be served at the new version
// by the source's suite, and its sum is the suite's index's (apt checked
// the index's signature; the download is checked against the pin when
// the distro path fetches it). A package the suite does not serve under
// its derived name is an input error naming it: edit binary: by hand.
func (c *Cache) repinBinary(ctx context.Context, k *Kernel, b *DebianBinary, version string) (*DebianBinary, error) {
	oldUp, newUp := upstreamVersion(b.Version), upstreamVersion(version)
	if !strings.Contains(b.Release, oldUp) || (b.Image != nil && !strings.Contains(b.Image.Package, b.Release)) {
		return nil, fmt.Errorf("re-pinning %s's binary kernel: its release %s does not follow its version %s (or the image package does not name the release), so the new names cannot be derived: edit binary: in series/kernels.yaml by hand: %w", k.Name, b.Release, b.Version, errs.ErrInput)
	}
	rename := func(s string) string { return strings.ReplaceAll(s, oldUp, newUp) }
	nb := &DebianBinary{Version: version, Release: rename(b.Release)}
	c.Progress.Start("re-pin " + k.Name + "'s binary kernel")
	pkg := func(p DebianPackage) (DebianPackage, error) {
		np := DebianPackage{Package: rename(p.Package), Arch: p.Arch}
		s, err := c.ServedVersion(ctx, k.Debian.Suite, np.Package, version)
		if errors.Is(err, ErrNotServed) {
			return np, fmt.Errorf("re-pinning %s's binary kernel: %s does not serve %s=%s (named after %s): edit binary: in series/kernels.yaml by hand, or remove it: %w", k.Name, k.Debian.Suite, np.Package, version, p.Package, err)
		}
		if err != nil {
			return np, fmt.Errorf("re-pinning %s's binary kernel: %w", k.Name, err)
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
	c.Progress.Done("%s: binary kernel %s, %d packages pinned from the suite's index", k.Name, nb.Release, len(nb.Packages()))
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

// pinFields are the lines a re-pin rewrites in a kernel's debian entry;
// binaryLine opens its binary: block, and scalarLine is any key: value
// line in it (a list item's first key too).
var (
	pinFields  = regexp.MustCompile(`^(\s+)(version|deb_sha256|tarball_sha256):(\s*)(\S.*?)?(\s*#.*)?$`)
	binaryLine = regexp.MustCompile(`^(\s*)binary:\s*(#.*)?$`)
	scalarLine = regexp.MustCompile(`^(\s+(?:-\s+)?)([a-z_0-9]+):(\s*)(\S.*?)?(\s*#.*)?$`)
)

// RewritePin writes kernel name's new Debian pin (version and both sums,
// and its binary kernel's version, release, package names and sums when
// it pins one) into the lock file at path, keeping every other line,
// comment and kernel as they are; the result is read back and checked
// before it replaces the file.
func RewritePin(path, name string, n *DebianSource) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("rewriting the pin of %s: %w", name, err)
	}
	l, err := LoadLock(path)
	if err != nil {
		return err
	}
	idx := -1
	for i, k := range l.Kernels {
		if k.Name == name {
			idx = i
		}
	}
	if idx < 0 || l.Kernels[idx].Debian == nil {
		return fmt.Errorf("%s: no Debian kernel %q to re-pin: %w", path, name, errs.ErrInput)
	}
	oldBin := l.Kernels[idx].Debian.Binary
	if (oldBin == nil) != (n.Binary == nil) {
		return fmt.Errorf("%s: kernel %s: a re-pin keeps a binary: block as it is or without one: %w", path, name, errs.ErrInput)
	}
	items := yamlx.ItemLines(data, "kernels")
	if len(items) != len(l.Kernels) {
		return fmt.Errorf("%s: cannot find the kernels' lines: %w", path, errs.ErrInput)
	}
	lines := strings.SplitAfter(string(data), "\n")
	from, to := items[idx]-1, len(lines)
	if idx+1 < len(items) {
		to = items[idx+1] - 1
	}
	// The binary: block: the lines below its key indented deeper.
	binFrom, binTo := to, to
	for i := from; i < to; i++ {
		m := binaryLine.FindStringSubmatch(strings.TrimRight(lines[i], "\n"))
		if m == nil {
			continue
		}
		binFrom, binTo = i, i+1
		for binTo < to {
			body := strings.TrimRight(lines[binTo], "\n")
			trimmed := strings.TrimSpace(body)
			if trimmed != "" && !strings.HasPrefix(trimmed, "#") && len(body)-len(strings.TrimLeft(body, " ")) <= len(m[1]) {
				break
			}
			binTo++
		}
		break
	}
	vals := map[string]string{"version": n.Version, "deb_sha256": n.DebSHA256, "tarball_sha256": n.TarballSHA256}
	done := map[string]bool{}
	for i := from; i < to; i++ {
		if i >= binFrom && i < binTo {
			continue
		}
		body := strings.TrimRight(lines[i], "\n")
		m := pinFields.FindStringSubmatch(body)
		if m == nil || done[m[2]] {
			continue
		}
		done[m[2]] = true
		lines[i] = rewriteValue(m, n.yamlValue(vals[m[2]]))
	}
	if len(done) != 3 {
		return fmt.Errorf("%s: kernel %s's entry lacks version, deb_sha256 or tarball_sha256 lines: %w", path, name, errs.ErrInput)
	}
	if oldBin != nil {
		// Each old value becomes its new one: the values are distinct
		// (a version, a release, package names, sums).
		swap := map[string]string{oldBin.Version: n.Binary.Version, oldBin.Release: n.Binary.Release}
		op, np := oldBin.Packages(), n.Binary.Packages()
		if oldBin.Debug != nil && n.Binary.Debug != nil {
			op, np = append(op, *oldBin.Debug), append(np, *n.Binary.Debug)
		}
		if len(op) != len(np) {
			return fmt.Errorf("%s: kernel %s: the new binary kernel has %d packages, the old %d: %w", path, name, len(np), len(op), errs.ErrInput)
		}
		for i := range op {
			swap[op[i].Package], swap[op[i].SHA256] = np[i].Package, np[i].SHA256
		}
		for i := binFrom + 1; i < binTo; i++ {
			m := scalarLine.FindStringSubmatch(strings.TrimRight(lines[i], "\n"))
			if m == nil || m[4] == "" {
				continue
			}
			var v string
			if yaml.Unmarshal([]byte(m[4]), &v) != nil {
				continue
			}
			if nv, ok := swap[v]; ok {
				lines[i] = rewriteValue(m, n.yamlValue(nv))
			}
		}
	}
	out := []byte(strings.Join(lines, ""))
	tmp := path + ".pin-tmp"
	if err := fsutil.WriteFile(tmp, out, 0o644); err != nil {
		return err
	}
	defer os.Remove(tmp)
	l2, err := LoadLock(tmp)
	if err != nil {
		return fmt.Errorf("rewriting the pin of %s made an unreadable lock: %w", name, err)
	}
	k2, err := l2.Find(name)
	if err != nil || k2.Debian == nil || k2.Debian.Version != n.Version || k2.Debian.DebSHA256 != n.DebSHA256 || k2.Debian.TarballSHA256 != n.TarballSHA256 {
		return fmt.Errorf("rewriting the pin of %s: the lock does not read back as written: %w", name, errs.ErrInput)
	}
	if n.Binary != nil && !reflect.DeepEqual(k2.Debian.Binary, n.Binary) {
		return fmt.Errorf("rewriting the pin of %s: its binary: block does not read back as the new pin (edit it by hand): %w", name, errs.ErrInput)
	}
	return os.Rename(tmp, path)
}

// rewriteValue is a line matched by pinFields or scalarLine (indent, key,
// separator, value, comment) with the value v.
func rewriteValue(m []string, v string) string {
	sep := m[3]
	if sep == "" {
		sep = " "
	}
	return m[1] + m[2] + ":" + sep + v + m[5] + "\n"
}

// yamlValue is v as a YAML scalar that reads back as the string v.
func (d *DebianSource) yamlValue(v string) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return `"` + v + `"`
	}
	return strings.TrimSpace(string(b))
}
