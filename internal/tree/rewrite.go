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
	binFrom, binTo := binaryBlock(lines, from, to)
	if !rewriteSource(lines, from, to, binFrom, binTo, n) {
		return fmt.Errorf("%s: kernel %s's entry lacks version, deb_sha256 or tarball_sha256 lines: %w", path, name, errs.ErrInput)
	}
	if oldBin != nil {
		// The block's body: none when there is no block line (a flow
		// mapping, left to the read-back check).
		if err := rewriteBinary(lines[min(binFrom+1, binTo):binTo], oldBin, n.Binary); err != nil {
			return fmt.Errorf("%s: kernel %s: %w", path, name, err)
		}
	}
	return replaceLock(path, name, []byte(strings.Join(lines, "")), n)
}

// binaryBlock is the binary: block among lines[from:to] (a kernel's
// entry): its key's line and the lines below it indented deeper; to, to
// when there is none.
func binaryBlock(lines []string, from, to int) (binFrom, binTo int) {
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
		return binFrom, binTo
	}
	return to, to
}

// rewriteSource sets the first version, deb_sha256 and tarball_sha256
// lines of lines[from:to] outside the binary: block [binFrom, binTo) to
// n's; false when one of them is missing.
func rewriteSource(lines []string, from, to, binFrom, binTo int, n *debian.Source) bool {
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
	return len(done) == 3
}

// rewriteBinary replaces, in the lines of a binary: block's body, each
// value of the old binary kernel with its new one: the values are
// distinct (a version, a release, package names, sums).
func rewriteBinary(lines []string, old, n *debian.Binary) error {
	swap := map[string]string{old.Version: n.Version, old.Release: n.Release}
	op, np := old.Packages(), n.Packages()
	if old.Debug != nil && n.Debug != nil {
		op, np = append(op, *old.Debug), append(np, *n.Debug)
	}
	if len(op) != len(np) {
		return fmt.Errorf("the new binary kernel has %d packages, the old %d: %w", len(np), len(op), errs.ErrInput)
	}
	for i := range op {
		swap[op[i].Package], swap[op[i].SHA256] = np[i].Package, np[i].SHA256
	}
	for i, l := range lines {
		m := scalarLine.FindStringSubmatch(strings.TrimRight(l, "\n"))
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
	return nil
}

// replaceLock writes out beside the lock file at path, reads it back and
// checks that kernel name pins n, and only then renames it over path.
func replaceLock(path, name string, out []byte, n *debian.Source) error {
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
