package defects

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/yamlx"
)

// Known findings (series/known-findings.yaml): a true positive of the
// checks on the pinned pristine trees, with where it fires and what
// fixes it, as claims a test verifies on the trees (the rule is run on
// each prepared pinned tree, and on the tree with each fix applied),
// never as prose alone.

// KnownFinding is one finding of a rule in a function, and its fixes.
type KnownFinding struct {
	Rule     string `yaml:"rule" json:"rule"`
	File     string `yaml:"file" json:"file"`
	Function string `yaml:"function" json:"function"`
	// FiresOn are the pinned kernels whose pristine tree has it.
	FiresOn []string `yaml:"fires_on" json:"fires_on"`
	// Note is what reports say of it (the checks' note on the finding).
	Note  string `yaml:"note" json:"note"`
	Fixes []Fix  `yaml:"fixes,omitempty" json:"fixes,omitempty"`
}

// Fix is a fix of a known finding, posted or merged.
type Fix struct {
	Name   string `yaml:"name" json:"name"`
	Posted string `yaml:"posted,omitempty" json:"posted,omitempty"`
	// Closes says whether the finding stops where the fix is applied.
	Closes bool `yaml:"closes" json:"closes"`
	// Edit is the fix as a replacement in the file (From must occur
	// once); In the pinned kernels that already carry it, Marker a line
	// of the file that shows it is there.
	Edit   *Edit    `yaml:"edit,omitempty" json:"edit,omitempty"`
	In     []string `yaml:"in,omitempty" json:"in,omitempty"`
	Marker string   `yaml:"marker,omitempty" json:"marker,omitempty"`
}

// Edit replaces From by To.
type Edit struct {
	From string `yaml:"from" json:"from"`
	To   string `yaml:"to" json:"to"`
}

// Apply applies the edit to src: an error unless From occurs once.
func (e *Edit) Apply(src string) (string, error) {
	if n := strings.Count(src, e.From); n != 1 {
		return "", fmt.Errorf("the fix's edit anchor %q occurs %d times, want once", e.From, n)
	}
	return strings.Replace(src, e.From, e.To, 1), nil
}

// Fires says whether the finding fires on kernel.
func (f *KnownFinding) Fires(kernel string) bool {
	for _, k := range f.FiresOn {
		if k == kernel {
			return true
		}
	}
	return false
}

// Findings is the file's content.
type Findings struct {
	Findings []KnownFinding `yaml:"findings"`
}

// FindingsPath is the file's place in the repository.
func FindingsPath(root string) string { return filepath.Join(root, "series", "known-findings.yaml") }

// LoadFindings reads and checks the known findings; a missing file is
// none.
func LoadFindings(path string) (*Findings, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return &Findings{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading known findings: %w: %w", err, errs.ErrInput)
	}
	var fs Findings
	if err := yamlx.Decode(data, &fs); err != nil {
		return nil, fmt.Errorf("%s: %v: %w", path, err, errs.ErrInput)
	}
	lines := yamlx.ItemLines(data, "findings")
	for i, f := range fs.Findings {
		bad := func(msg string) error {
			return fmt.Errorf("%s:%d: finding %d: %s: %w", path, yamlx.Line(lines, i), i+1, msg, errs.ErrInput)
		}
		if f.Rule == "" || f.File == "" || f.Function == "" || f.Note == "" {
			return nil, bad("needs rule, file, function and note")
		}
		for _, x := range f.Fixes {
			switch {
			case x.Name == "":
				return nil, bad("a fix needs a name")
			case x.Edit == nil && len(x.In) == 0:
				return nil, bad(fmt.Sprintf("fix %q: give an edit (to apply and re-run the rule) or the kernels it is in with a marker", x.Name))
			case len(x.In) > 0 && x.Marker == "":
				return nil, bad(fmt.Sprintf("fix %q: in needs a marker line to check", x.Name))
			}
		}
	}
	return &fs, nil
}
