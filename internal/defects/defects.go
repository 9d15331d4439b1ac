// Package defects is the table of known RDMA provider defects by kernel
// range (series/provider-defects.yaml): a run on a kernel where the soft
// provider itself is broken reports the known defect, with the upstream
// fix, instead of blaming the patch under test.
package defects

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/yamlx"
)

// Defect is one known provider defect: mainline versions From (first
// affected) up to, not including, Fixed ("" while unfixed).
type Defect struct {
	Provider string `yaml:"provider" json:"provider"` // rxe, siw
	From     string `yaml:"from" json:"from"`
	Fixed    string `yaml:"fixed,omitempty" json:"fixed,omitempty"`
	// FixedStable lists stable releases that carry the fix backported
	// (e.g. "6.6.33": 6.6.33 and later 6.6.y are fixed).
	FixedStable []string `yaml:"fixed_stable,omitempty" json:"fixed_stable,omitempty"`
	Defect      string   `yaml:"defect" json:"defect"`
	// Affects says what the defect breaks: "inline" (IB_SEND_INLINE
	// sends) or "all".
	Affects    string `yaml:"affects" json:"affects"`
	Introduced string `yaml:"introduced,omitempty" json:"introduced,omitempty"`
	Fix        string `yaml:"fix" json:"fix"`
}

// Table is the file's content.
type Table struct {
	Defects []Defect `yaml:"defects"`
}

// Path is the table's place in the repository.
func Path(root string) string { return filepath.Join(root, "series", "provider-defects.yaml") }

// Load reads and checks a table; a missing file is an empty table.
func Load(path string) (*Table, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return &Table{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading provider defects: %w: %w", err, errs.ErrInput)
	}
	var t Table
	if err := yamlx.Decode(data, &t); err != nil {
		return nil, fmt.Errorf("%s: %v: %w", path, err, errs.ErrInput)
	}
	lines := yamlx.ItemLines(data, "defects")
	for i, d := range t.Defects {
		bad := func(msg string) error {
			return fmt.Errorf("%s:%d: defect %d: %s: %w", path, yamlx.Line(lines, i), i+1, msg, errs.ErrInput)
		}
		if d.Provider == "" || d.Defect == "" || d.Fix == "" {
			return nil, bad("needs provider, defect and fix")
		}
		if _, err := ParseVersion(d.From); err != nil {
			return nil, bad("from: " + err.Error())
		}
		if d.Fixed != "" {
			if _, err := ParseVersion(d.Fixed); err != nil {
				return nil, bad("fixed: " + err.Error())
			}
		}
		for _, s := range d.FixedStable {
			if _, err := ParseVersion(s); err != nil {
				return nil, bad("fixed_stable: " + err.Error())
			}
		}
		if d.Affects != "inline" && d.Affects != "all" {
			return nil, bad(fmt.Sprintf("affects %q: want inline or all", d.Affects))
		}
	}
	return &t, nil
}

// Version is a kernel version: major, minor, sublevel.
type Version [3]int

var versionRe = regexp.MustCompile(`^(\d+)\.(\d+)(?:\.(\d+))?`)

// ParseVersion reads "6.4", "6.12.117", "7.3-rc7" or "7.3.0-rc7" (the
// release candidate counts as its release: it has the release's code).
func ParseVersion(s string) (Version, error) {
	m := versionRe.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("%q is not a kernel version (want e.g. 6.4 or 6.12.117)", s)
	}
	var v Version
	for i := 0; i < 3; i++ {
		if m[i+1] != "" {
			v[i], _ = strconv.Atoi(m[i+1])
		}
	}
	return v, nil
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

// Less orders versions.
func (v Version) Less(w Version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

// TreeVersion reads a kernel tree's version from its top Makefile.
func TreeVersion(tree string) (Version, error) {
	b, err := os.ReadFile(filepath.Join(tree, "Makefile"))
	if err != nil {
		return Version{}, fmt.Errorf("kernel version: %w", err)
	}
	var v Version
	found := 0
	for _, l := range strings.SplitN(string(b), "\n", 20) {
		k, val, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(val))
		if err != nil {
			continue
		}
		switch strings.TrimSpace(k) {
		case "VERSION":
			v[0], found = n, found|1
		case "PATCHLEVEL":
			v[1], found = n, found|2
		case "SUBLEVEL":
			v[2], found = n, found|4
		}
	}
	if found != 7 {
		return Version{}, fmt.Errorf("%s/Makefile has no VERSION, PATCHLEVEL and SUBLEVEL: %w", tree, errs.ErrInput)
	}
	return v, nil
}

// Affected reports whether version v has the defect.
func (d *Defect) Affected(v Version) bool {
	from, _ := ParseVersion(d.From)
	if v.Less(from) {
		return false
	}
	if d.Fixed != "" {
		fixed, _ := ParseVersion(d.Fixed)
		if !v.Less(fixed) {
			return false
		}
	}
	for _, s := range d.FixedStable {
		st, _ := ParseVersion(s)
		if v[0] == st[0] && v[1] == st[1] && !v.Less(st) {
			return false
		}
	}
	return true
}

// Match lists the defects of provider on version v.
func (t *Table) Match(v Version, provider string) []Defect {
	var out []Defect
	for _, d := range t.Defects {
		if d.Provider == provider && d.Affected(v) {
			out = append(out, d)
		}
	}
	return out
}

// String is one line for a report.
func (d *Defect) String() string {
	r := d.From + ".." + d.Fixed
	if d.Fixed == "" {
		r = d.From + " and later (unfixed)"
	}
	return fmt.Sprintf("known %s defect on %s: %s (fixed upstream by %s)", d.Provider, r, d.Defect, d.Fix)
}
