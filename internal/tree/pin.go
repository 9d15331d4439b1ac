package tree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
// pinned version differing from the pin make the pin stale. Nothing is
// downloaded.
func (c *Cache) CheckPin(ctx context.Context, k *Kernel) (*PinStatus, error) {
	if k.Debian == nil {
		return nil, fmt.Errorf("kernel %s is not pinned to a Debian package: only Debian pins follow a suite: %w", k.Name, errs.ErrUsage)
	}
	d := k.Debian
	if d.Suite == "" {
		return nil, fmt.Errorf("kernel %s pins no suite: add suite: (bullseye, bookworm-security, sid, experimental, ...) to its debian entry in series/kernels.yaml: %w", k.Name, errs.ErrInput)
	}
	st := &PinStatus{Kernel: k.Name, Pinned: *d}
	served, err := c.Serves(ctx, d.Suite, d.Package)
	if err != nil {
		return nil, err
	}
	st.Served = served
	switch {
	case served.Version != d.Version:
		st.Stale = fmt.Sprintf("pinned %s, %s serves %s", d.Version, d.Suite, served.Version)
		if _, err := c.ServedVersion(ctx, d.Suite, d.Package, d.Version); errors.Is(err, ErrNotServed) {
			st.Stale += " (the pinned version is gone from the suite)"
		}
	case served.SHA256 != d.DebSHA256:
		st.Stale = fmt.Sprintf("%s %s: the suite's index has sha256 %s, the pin %s", d.Package, d.Version, served.SHA256, d.DebSHA256)
	}
	return st, nil
}

// Repin makes the pin of what the suite serves now: it downloads that
// version, computes the .deb's sha256 (which must equal the index's) and
// the source tarball's sha256 from the download, keeps the .deb in the
// cache for the next prepare, and returns the status with New set. A pin
// that is current is returned with New equal to the pin, nothing
// downloaded.
func (c *Cache) Repin(ctx context.Context, k *Kernel) (*PinStatus, error) {
	st, err := c.CheckPin(ctx, k)
	if err != nil {
		return nil, err
	}
	if st.Stale == "" {
		n := st.Pinned
		st.New = &n
		return st, nil
	}
	s := st.Served
	spec := s.Package + "=" + s.Version
	n := *k.Debian
	n.Version = s.Version
	// A download of this version kept in the cache (an earlier re-pin)
	// is as good as a new one: its sum is computed here either way.
	got := c.DebPath(&n)
	if sum, err := fileSHA256(got); err != nil || sum != s.SHA256 {
		c.Progress.Start("download " + spec)
		if got, err = c.download(ctx, k.Debian.Suite, spec); err != nil {
			return nil, fmt.Errorf("re-pinning %s: %w", k.Name, err)
		}
		defer os.RemoveAll(filepath.Dir(got))
	} else {
		c.Progress.Start("verify " + filepath.Base(got))
	}
	debSum, err := fileSHA256(got)
	if err != nil {
		return nil, err
	}
	if debSum != s.SHA256 {
		return nil, fmt.Errorf("re-pinning %s: %s downloaded with sha256 %s, the suite's index says %s; refused: %w", k.Name, spec, debSum, s.SHA256, errs.ErrEnv)
	}
	n.DebSHA256 = debSum
	c.Progress.Update("sha256 of %s", n.Tarball)
	if n.TarballSHA256, err = tarballSHA256(ctx, got, n.Tarball); err != nil {
		return nil, fmt.Errorf("re-pinning %s: %w", k.Name, err)
	}
	if got != c.DebPath(&n) {
		if err := os.Rename(got, c.DebPath(&n)); err != nil {
			return nil, err
		}
	}
	c.Progress.Done("%s: %s, both sums computed from the .deb", k.Name, spec)
	st.New = &n
	return st, nil
}

// pinFields are the lines a re-pin rewrites in a kernel's debian entry.
var pinFields = regexp.MustCompile(`^(\s+)(version|deb_sha256|tarball_sha256):(\s*)(\S.*?)?(\s*#.*)?$`)

// RewritePin writes kernel name's new Debian pin (version and both sums)
// into the lock file at path, keeping every other line, comment and
// kernel as they are; the result is read back and checked before it
// replaces the file.
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
	items := yamlx.ItemLines(data, "kernels")
	if len(items) != len(l.Kernels) {
		return fmt.Errorf("%s: cannot find the kernels' lines: %w", path, errs.ErrInput)
	}
	lines := strings.SplitAfter(string(data), "\n")
	from, to := items[idx]-1, len(lines)
	if idx+1 < len(items) {
		to = items[idx+1] - 1
	}
	vals := map[string]string{"version": n.Version, "deb_sha256": n.DebSHA256, "tarball_sha256": n.TarballSHA256}
	done := map[string]bool{}
	for i := from; i < to; i++ {
		body := strings.TrimRight(lines[i], "\n")
		m := pinFields.FindStringSubmatch(body)
		if m == nil || done[m[2]] {
			continue
		}
		done[m[2]] = true
		sep := m[3]
		if sep == "" {
			sep = " "
		}
		lines[i] = m[1] + m[2] + ":" + sep + n.yamlValue(vals[m[2]]) + m[5] + "\n"
	}
	if len(done) != 3 {
		return fmt.Errorf("%s: kernel %s's entry lacks version, deb_sha256 or tarball_sha256 lines: %w", path, name, errs.ErrInput)
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
	return os.Rename(tmp, path)
}

// yamlValue is v as a YAML scalar that reads back as the string v.
func (d *DebianSource) yamlValue(v string) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return `"` + v + `"`
	}
	return strings.TrimSpace(string(b))
}
