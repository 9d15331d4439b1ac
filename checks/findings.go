package checks

import "github.com/patchctl/patchctl/checks/findings"

// The findings, the report that holds them, their judgement against a
// baseline and their output formats live in checks/findings; these
// names keep the callers of checks reading one package.

type (
	// Finding is findings.Finding.
	Finding = findings.Finding
	// Evidence is findings.Evidence.
	Evidence = findings.Evidence
	// Report is findings.Report.
	Report = findings.Report
	// Comparison is findings.Comparison.
	Comparison = findings.Comparison
	// ProviderRow is findings.ProviderRow.
	ProviderRow = findings.ProviderRow
	// LayoutRow is findings.LayoutRow.
	LayoutRow = findings.LayoutRow
	// SARIFOptions is findings.SARIFOptions.
	SARIFOptions = findings.SARIFOptions
)

// Severities, rule IDs, baseline states and the analysis note (see
// checks/findings).
const (
	SevError          = findings.SevError
	SevWarning        = findings.SevWarning
	SevNote           = findings.SevNote
	RuleInlineSGE     = findings.RuleInlineSGE
	RuleInlineReg     = findings.RuleInlineReg
	RuleInlineSize    = findings.RuleInlineSize
	RuleCheckpatch    = findings.RuleCheckpatch
	RuleIncomplete    = findings.RuleIncomplete
	RuleIncapsule     = findings.RuleIncapsule
	RuleVirtSGE       = findings.RuleVirtSGE
	RuleSizeofPtr     = findings.RuleSizeofPtr
	BaselineNew       = findings.BaselineNew
	BaselineUnchanged = findings.BaselineUnchanged
	AgainstPristine   = findings.AgainstPristine
	AgainstKnown      = findings.AgainstKnown
	AnalysisRawC      = findings.AnalysisRawC
	BaseRepo          = findings.BaseRepo
	BaseKernel        = findings.BaseKernel
	BaseOther         = findings.BaseOther
	InformationURI    = findings.InformationURI
	RulesPage         = findings.RulesPage
)

// Rules describes each rule (findings.Rules).
var Rules = findings.Rules

// KnownNote is findings.KnownNote; MatchKey is findings.MatchKey;
// LineHashes is findings.LineHashes; WriteRulesMarkdown is
// findings.WriteRulesMarkdown.
var (
	KnownNote          = findings.KnownNote
	MatchKey           = findings.MatchKey
	LineHashes         = findings.LineHashes
	WriteRulesMarkdown = findings.WriteRulesMarkdown
)
