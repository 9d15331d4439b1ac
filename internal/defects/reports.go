package defects

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/yamlx"
)

// Report is a kernel report (lockdep, KASAN, a WARN) known to come from
// a pre-existing defect of the kernels in its range, From up to, not
// including, Fixed: a boot that meets it reports it and does not fail.
type Report struct {
	ID    string `yaml:"id" json:"id"`
	From  string `yaml:"from" json:"from"`
	Fixed string `yaml:"fixed,omitempty" json:"fixed,omitempty"`
	// Match are strings the report's lines must all hold: its kind and
	// what names the defect (both locks of a lockdep pair, the function
	// of a KASAN access), never a bare kind alone.
	Match  []string `yaml:"match" json:"match"`
	Defect string   `yaml:"defect" json:"defect"`
	// Upstream says what is known of it upstream (fix, report, or that
	// none was found).
	Upstream string `yaml:"upstream" json:"upstream"`
}

// Reports is the known-reports file's content.
type Reports struct {
	Reports []Report `yaml:"reports"`
}

// ReportsPath is the known-reports table's place in the repository.
func ReportsPath(root string) string { return filepath.Join(root, "series", "known-reports.yaml") }

// LoadReports reads and checks a known-reports table; a missing file is
// an empty table.
func LoadReports(path string) (*Reports, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return &Reports{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading known kernel reports: %w: %w", err, errs.ErrInput)
	}
	var t Reports
	if err := yamlx.Decode(data, &t); err != nil {
		return nil, fmt.Errorf("%s: %v: %w", path, err, errs.ErrInput)
	}
	lines := yamlx.ItemLines(data, "reports")
	ids := map[string]bool{}
	for i, r := range t.Reports {
		bad := func(msg string) error {
			return fmt.Errorf("%s:%d: report %d: %s: %w", path, yamlx.Line(lines, i), i+1, msg, errs.ErrInput)
		}
		if r.ID == "" || r.Defect == "" || r.Upstream == "" {
			return nil, bad("needs id, defect and upstream")
		}
		if ids[r.ID] {
			return nil, bad("id " + r.ID + " given twice")
		}
		ids[r.ID] = true
		if _, err := ParseVersion(r.From); err != nil {
			return nil, bad("from: " + err.Error())
		}
		if r.Fixed != "" {
			if _, err := ParseVersion(r.Fixed); err != nil {
				return nil, bad("fixed: " + err.Error())
			}
		}
		// A report known by its kind alone would hide every report
		// of that kind: at least two strings, none blank.
		if len(r.Match) < 2 {
			return nil, bad("match needs at least two strings (the report's kind and what names the defect)")
		}
		for _, m := range r.Match {
			if strings.TrimSpace(m) == "" {
				return nil, bad("a blank match string")
			}
		}
	}
	return &t, nil
}

// Match lists the known reports of version v.
func (t *Reports) Match(v Version) []Report {
	var out []Report
	for _, r := range t.Reports {
		d := Defect{From: r.From, Fixed: r.Fixed}
		if d.Affected(v) {
			out = append(out, r)
		}
	}
	return out
}

// String is one line for a report.
func (r *Report) String() string {
	return fmt.Sprintf("known kernel report %s (%s..%s): %s; upstream: %s", r.ID, r.From, r.Fixed, r.Defect, r.Upstream)
}
