package findings

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strings"
)

// A patch is judged by what it introduces, as the kernel test robot
// reports "new warnings": the check of the patched tree is compared with
// the same check of its pristine tree. A finding the pristine tree has
// too is pre-existing (SARIF baselineState "unchanged"): reported, never
// failing the patch; the others are new ("new") and judged by severity.
//
// Findings are matched across the two trees on what survives the line
// shifts a patch causes: the rule, the file, the enclosing function and
// the message with its line references masked (messages quote the code
// they are about: the request, the expression, the comparison). Equal
// keys are matched as a multiset, in order, so a patch that adds a second
// copy of a pre-existing finding in the same function draws one new
// finding.

// Baseline states of a finding, SARIF 2.1.0's result.baselineState
// (§3.27.24) values.
const (
	BaselineNew       = "new"
	BaselineUnchanged = "unchanged"
)

// Comparison says what a report was compared with.
type Comparison struct {
	// Against names the baseline: "pristine tree" (the same check on the
	// tree before the patch) or "known findings" (the list of the pinned
	// kernels' true positives, when no pristine tree was checked).
	Against   string `json:"against"`
	New       int    `json:"new"`
	Unchanged int    `json:"unchanged"`
	// Absent are the baseline's findings the checked tree no longer has
	// (what the patch fixed).
	Absent []Finding `json:"absent,omitempty"`
}

// Baselines a report can be compared against.
const (
	AgainstPristine = "pristine tree"
	AgainstKnown    = "known findings"
)

var lineRef = regexp.MustCompile(`(\bline |:)[0-9]+`)

// MatchKey is what identifies a finding across a patch: rule, file,
// function and the message with line references masked.
func MatchKey(f Finding) string {
	msg := lineRef.ReplaceAllString(strings.Join(strings.Fields(f.Message), " "), "${1}#")
	return strings.Join([]string{f.Rule, f.File, f.Function, msg}, "\x00")
}

// Judge compares the report of a patched tree with the report of its
// pristine tree: each finding is marked new or unchanged, and the
// pristine findings the patched tree lost are listed as absent.
// Checkpatch's findings are about the patches, never about a tree: they
// are always new.
func (r *Report) Judge(pristine *Report) {
	left := map[string][]Finding{}
	var order []string
	for _, f := range pristine.Findings {
		if f.Rule == RuleCheckpatch {
			continue
		}
		k := MatchKey(f)
		if left[k] == nil {
			order = append(order, k)
		}
		left[k] = append(left[k], f)
	}
	c := &Comparison{Against: AgainstPristine}
	for i := range r.Findings {
		f := &r.Findings[i]
		k := MatchKey(*f)
		if f.Rule != RuleCheckpatch && len(left[k]) > 0 {
			left[k] = left[k][1:]
			f.Baseline = BaselineUnchanged
			c.Unchanged++
			continue
		}
		f.Baseline = BaselineNew
		c.New++
	}
	for _, k := range order {
		c.Absent = append(c.Absent, left[k]...)
	}
	r.Baseline = c
}

// JudgeKnown marks the findings on the list of the pinned kernels' known
// true positives as pre-existing and the others as new: the baseline of
// a check that has no pristine tree to compare with (check --tree DIR).
func (r *Report) JudgeKnown() {
	c := &Comparison{Against: AgainstKnown}
	for i := range r.Findings {
		f := &r.Findings[i]
		if isKnown(*f) {
			f.Baseline = BaselineUnchanged
			c.Unchanged++
		} else {
			f.Baseline = BaselineNew
			c.New++
		}
	}
	r.Baseline = c
}

// PreExisting reports whether a finding is also in the baseline.
func (f Finding) PreExisting() bool { return f.Baseline == BaselineUnchanged }

// Judged reports whether a finding counts for the verdict: it is not
// pre-existing.
func (f Finding) Judged() bool { return !f.PreExisting() }

// FindingsHash names a report's findings (what a judgement against it
// depends on), for stage keys.
func (r *Report) FindingsHash() string {
	b, _ := json.Marshal(r.Findings) // a Finding always marshals
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
