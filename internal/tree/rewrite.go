package tree

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"

	"github.com/patchctl/patchctl/internal/debian"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/yamlx"
	"gopkg.in/yaml.v3"
)

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
func RewritePin(path, name string, n *debian.Source) error {
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
		lines[i] = rewriteValue(m, yamlValue(vals[m[2]]))
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
				lines[i] = rewriteValue(m, yamlValue(nv))
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
func yamlValue(v string) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return `"` + v + `"`
	}
	return strings.TrimSpace(string(b))
}
