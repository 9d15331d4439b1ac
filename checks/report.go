package checks

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
}

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

// sortFindings orders findings by file, line, rule and drops duplicates.
func sortFindings(in []Finding) []Finding {
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
