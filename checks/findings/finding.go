package findings

import (
	"fmt"
	"sort"
)

// Severity of a finding; SARIF levels.
const (
	SevError   = "error"
	SevWarning = "warning"
	SevNote    = "note"
)

// Finding is one problem, with where its evidence came from.
type Finding struct {
	Rule     string     `json:"rule"`
	Severity string     `json:"severity"`
	File     string     `json:"file"`
	Line     int        `json:"line"`
	Function string     `json:"function,omitempty"`
	Message  string     `json:"message"`
	Evidence []Evidence `json:"evidence,omitempty"`
	// Baseline is BaselineNew or BaselineUnchanged (pre-existing) once
	// the report was judged against a baseline (Report.Judge), "" before.
	Baseline string `json:"baseline,omitempty"`
	// Subject is what the finding is about, as data set where the rule
	// makes it (nil for the rules that need none): "one defect, one
	// report" compares it, never the message. No output carries it.
	Subject *Subject `json:"-"`
}

// Subject is what a finding of the inline rules is about: the request,
// the SGE, the defect, whether it was judged where the function leaves
// (a request stored in an object) rather than at a post, and where the
// SGE's address came from.
type Subject struct {
	// WR is the work request's place ("" when about none).
	WR string
	// SGE is the SGE's index in the request's list; -1 when the
	// finding is about no one SGE (num_sge, the opcode, a flag site).
	SGE int
	// Defect names what is wrong: one of the Defect constants.
	Defect string
	// Detail is what distinguishes two defects of one kind (the
	// address's provenance, the opcode, the count's expression).
	Detail string
	// Exit: judged where the function leaves, not at a post.
	Exit bool
	// Addr is where the SGE's address came from, when the path gives
	// it (nil otherwise).
	Addr *Origin
}

// Origin is a value's source: a place and what was assigned there.
type Origin struct {
	File string
	Line int
	What string
}

// Defects a Subject names.
const (
	DefectDMA       = "dma"          // an inline SGE holds a DMA address
	DefectPhys      = "phys"         // an inline SGE holds a physical address
	DefectUnplaced  = "unplaced"     // an inline SGE the path never points (warning)
	DefectUnknown   = "unknown"      // an inline SGE whose address is not shown virtual (warning)
	DefectNsge      = "nsge"         // an inline request's num_sge is not bounded
	DefectReg       = "registration" // IB_SEND_INLINE on a registration request
	DefectVirt      = "virt"         // a non-inline SGE holds a kernel virtual address
	DefectUnguarded = "unguarded"    // IB_SEND_INLINE set with no comparison with the grant
)

// Evidence is a place that explains a finding.
type Evidence struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

func (f Finding) String() string {
	s := fmt.Sprintf("%s:%d: %s: %s", f.File, f.Line, f.Rule, f.Message)
	if f.PreExisting() {
		s += " [pre-existing]"
	}
	return s
}

// Rules describes each rule (for SARIF and --help).
var Rules = map[string]string{
	RuleInlineSGE:  "Every SGE of a work request posted with IB_SEND_INLINE must hold a kernel virtual address (the CPU copies from it): a DMA address there passes on soft-RoCE (virtual DMA) and corrupts memory on real HCAs.",
	RuleInlineReg:  "IB_SEND_INLINE on a registration (REG_MR) or invalidation (LOCAL_INV) work request: providers reject it (mlx5: -EINVAL).",
	RuleInlineSize: "The inline size a QP requests must cover what is posted inline, the guard before IB_SEND_INLINE must compare with the size granted after QP creation, and a failed creation must record 0.",
	RuleCheckpatch: "The tree's scripts/checkpatch.pl on a generated patch.",
	RuleIncapsule:  "An NVMe-oF in-capsule bound check that adds a 64-bit value from the wire (le64_to_cpu) can wrap around: a huge offset with a small length passes it.",
	RuleVirtSGE:    "An SGE of a work request posted without IB_SEND_INLINE holds a kernel virtual address: the HCA reads it by DMA, so it must hold a DMA address (ib_dma_map_*).",
	RuleSizeofPtr:  "sizeof of a pointer (8 bytes) used as an SGE length, an inline or capsule size or a DMA mapping's length: the size of what it points at was meant (sizeof(*p)).",
	RuleIncomplete: "A function had more paths than the analysis follows; what it says about that function is incomplete.",
}

// Rule IDs.
const (
	RuleInlineSGE  = "inline-sge-addr"
	RuleInlineReg  = "inline-on-registration"
	RuleInlineSize = "inline-size"
	RuleCheckpatch = "checkpatch"
	RuleIncomplete = "analysis-incomplete"
	RuleIncapsule  = "incapsule-bounds"
	RuleVirtSGE    = "noninline-sge-virt"
	RuleSizeofPtr  = "sizeof-pointer"
)

// Sort orders findings by file, line, rule and drops duplicates.
func Sort(in []Finding) []Finding {
	sort.SliceStable(in, func(i, j int) bool {
		a, b := in[i], in[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Message < b.Message
	})
	var out []Finding
	for i, f := range in {
		if i > 0 && f.File == in[i-1].File && f.Line == in[i-1].Line && f.Rule == in[i-1].Rule && f.Message == in[i-1].Message {
			continue
		}
		out = append(out, f)
	}
	return out
}

// Report is a check's result.
type Report struct {
	Findings  []Finding     `json:"findings"`
	Providers []ProviderRow `json:"providers"`
	Layouts   []LayoutRow   `json:"layouts,omitempty"`
	Inline    []string      `json:"inline_users"` // files that set IB_SEND_INLINE
	// Analysis says what the rules read: raw C with the modules' own
	// macros expanded, or the preprocessed units (checks.Options.Preprocessor).
	Analysis string `json:"analysis"`
	// Read counts the .c files read through the preprocessor and as raw
	// C, with the configurations used (nil: no Preprocessor, all raw).
	Read  *Read `json:"read,omitempty"`
	Files int   `json:"files_analysed"`
	// LinkedIncomplete are the functions of modules read because they
	// are linked to the inline users (not users themselves) whose
	// analysis exceeded the budget: not judged, no finding drawn from
	// them ("file:line function").
	LinkedIncomplete []string `json:"linked_incomplete,omitempty"`
	Functions        int      `json:"functions_analysed"`
	Duration         float64  `json:"duration_s"`
	// Reused says the analysis was not run again: an earlier one's
	// report, every file and folder it read unchanged (checks/reuse.go).
	Reused bool `json:"reused,omitempty"`
	// Baseline says what the findings were judged against (nil: not
	// judged, every finding counts).
	Baseline *Comparison `json:"baseline,omitempty"`
}

// Errors counts the findings of severity error that count for the
// verdict: the new ones once the report was judged against a baseline,
// every one before.
func (r *Report) Errors() int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == SevError && f.Judged() {
			n++
		}
	}
	return n
}

// Failing counts the findings that fail a verdict: new errors, and with
// strict new warnings too.
func (r *Report) Failing(strict bool) int {
	n := 0
	for _, f := range r.Findings {
		if f.Judged() && (f.Severity == SevError || strict && f.Severity == SevWarning) {
			n++
		}
	}
	return n
}

// PreExisting counts the findings the baseline has too.
func (r *Report) PreExisting() int {
	n := 0
	for _, f := range r.Findings {
		if f.PreExisting() {
			n++
		}
	}
	return n
}

// Read is what a check with a Preprocessor read: how many .c files as
// the compiler sees them (and with which configurations), how many as
// raw C (Analysis says why for each).
type Read struct {
	Preprocessed int      `json:"preprocessed"`
	RawC         int      `json:"raw_c"`
	Configs      []string `json:"configs"`
}

// AnalysisRawC is Report.Analysis for raw C: the kernel's macros and
// #ifdef arms unexpanded, the module's own macros that touch what the
// rules read expanded (macro.go).
const AnalysisRawC = "raw C, the module's own macros expanded (no preprocessor: every #if arm is read)"

// ProviderRow is what one provider in the tree grants for a requested
// inline size, read from its source.
type ProviderRow struct {
	Provider string   `json:"provider"`
	Rejects  []string `json:"rejects_above,omitempty"` // limits a request may not exceed
	Grants   []string `json:"grants,omitempty"`        // what it writes back into the caps
}

// LayoutRow is a struct size from the headers and, when a build exists,
// from DWARF.
type LayoutRow struct {
	Struct  string `json:"struct"`
	Headers int64  `json:"headers"`
	DWARF   int64  `json:"dwarf,omitempty"`
	Object  string `json:"object,omitempty"`
}

// knownFinding is a true positive the pinned pristine trees have: the
// baseline of record of a check with no pristine tree to compare with
// (Report.JudgeKnown), and a note on the finding wherever it is found.
type knownFinding struct {
	rule, file, function, note string
}

// knownFindings are the true positives of the pinned pristine trees.
var knownFindings = []knownFinding{
	{RuleIncapsule, "drivers/nvme/target/rdma.c", "nvmet_rdma_map_sgl_inline",
		// series/known-findings.yaml's note, whose claims
		// internal/defects checks against the trees: the two must agree.
		"unfixed in every pinned kernel (5.10.223 to 7.3-rc7): the bound check off + len can wrap (reported on linux-rdma on 2026-05-29); of the posted fixes, \"nvmet-rdma: reject inline data with a nonzero offset\" closes it, while \"handle inline data with a nonzero offset\" (v2) is already in 6.12.117 and does not touch the wrapping off + len check (series/known-findings.yaml, checked against the trees)"},
}

// KnownNote is the note reports give a known finding ("" when the
// finding is not known).
func KnownNote(rule, file, function string) string {
	if k := knownOf(Finding{Rule: rule, File: file, Function: function}); k != nil {
		return k.note
	}
	return ""
}

func knownOf(f Finding) *knownFinding {
	for i, k := range knownFindings {
		if f.Rule == k.rule && f.File == k.file && f.Function == k.function {
			return &knownFindings[i]
		}
	}
	return nil
}

func isKnown(f Finding) bool { return knownOf(f) != nil }
