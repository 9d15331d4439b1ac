package findings

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf16"
)

// WriteText prints findings like a compiler (file:line: rule: message,
// then the evidence), the provider table and the layouts.
func (r *Report) WriteText(w io.Writer) {
	for _, f := range r.Findings {
		sev := ""
		if f.Severity != SevError {
			sev = " [" + f.Severity + "]"
		}
		if f.PreExisting() {
			sev += " [pre-existing]"
		}
		fmt.Fprintf(w, "%s:%d: %s: %s%s\n", f.File, f.Line, f.Rule, f.Message, sev)
		for _, e := range f.Evidence {
			fmt.Fprintf(w, "    %s:%d: %s\n", e.File, e.Line, e.Message)
		}
	}
	if len(r.Providers) > 0 {
		fmt.Fprintf(w, "\ninline data the providers grant (from their source):\n")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  PROVIDER\tREJECTS A REQUEST ABOVE\tWRITES BACK AS GRANTED")
		for _, p := range r.Providers {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", p.Provider, orDash(p.Rejects), orDash(p.Grants))
		}
		tw.Flush()
	}
	for _, l := range r.Layouts {
		d := "no build with debug info"
		if l.DWARF > 0 {
			d = fmt.Sprintf("DWARF %d bytes (%s)", l.DWARF, filepath.Base(l.Object))
		}
		fmt.Fprintf(w, "%s: %d bytes by the headers, %s\n", l.Struct, l.Headers, d)
	}
	errs, warns := 0, 0
	for _, f := range r.Findings {
		if f.PreExisting() {
			continue
		}
		switch f.Severity {
		case SevError:
			errs++
		case SevWarning:
			warns++
		}
	}
	fmt.Fprintf(w, "inline senders analysed: %s\n", strings.Join(r.Inline, ", "))
	if rd := r.Read; rd != nil {
		// The configurations read; why a file was read as raw C is in
		// the JSON report's "analysis".
		fmt.Fprintf(w, "read as: %d .c files preprocessed with kbuild's flags (configuration: %s), %d as raw C", rd.Preprocessed, strings.Join(rd.Configs, "; "), rd.RawC)
		if rd.RawC > 0 {
			fmt.Fprint(w, " (why: --format json, \"analysis\")")
		}
		fmt.Fprintln(w)
	}
	if len(r.LinkedIncomplete) > 0 {
		fmt.Fprintf(w, "not judged (linked modules, over the analysis budget): %s\n", strings.Join(r.LinkedIncomplete, ", "))
	}
	if c := r.Baseline; c != nil {
		fmt.Fprintf(w, "against the %s: %d new, %d pre-existing (not judged), %d gone\n", c.Against, c.New, c.Unchanged, len(c.Absent))
		for _, f := range c.Absent {
			fmt.Fprintf(w, "    gone: %s:%d: %s: %s\n", f.File, f.Line, f.Rule, firstLine(f.Message))
		}
		fmt.Fprintf(w, "%d new errors, %d new warnings; %d files, %d functions %s\n", errs, warns, r.Files, r.Functions, r.took())
		return
	}
	fmt.Fprintf(w, "%d errors, %d warnings; %d files, %d functions %s\n", errs, warns, r.Files, r.Functions, r.took())
}

// took says how long the check took, and whether the analysis was reused.
func (r *Report) took() string {
	if r.Reused {
		return fmt.Sprintf("analysed before, reused in %.1fs (nothing it read has changed)", r.Duration)
	}
	return fmt.Sprintf("analysed in %.1fs", r.Duration)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

func orDash(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, "; ")
}

// WriteJSON writes {"findings": [...], ...}.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// SARIF 2.1.0 (OASIS), written for GitHub code scanning: every location is
// relative to a named base (uriBaseId) and never a host path. The bases are
// the repository (%SRCROOT%, where the regenerated patches live) and the
// kernel tree the findings were made in (KERNEL). A finding on a line that
// a regenerated patch adds is placed on that line of the patch, so code
// scanning can show it in the repository; the tree location is kept as the
// first related location.

// URI base ids of SARIF locations.
const (
	BaseRepo   = "%SRCROOT%"
	BaseKernel = "KERNEL"
	BaseOther  = "OUTSIDE"
)

// InformationURI is patchctl's home, as its module path names it.
const InformationURI = "https://github.com/patchctl/patchctl"

// SARIFOptions say what a SARIF log describes and what its paths are
// relative to.
type SARIFOptions struct {
	Version string   // patchctl's version: tool.driver.version
	Repo    string   // the repository root: absolute paths under it become %SRCROOT%-relative
	Tree    string   // the kernel tree the findings' relative paths are in
	Patches []string // the regenerated patches applied to Tree, in order
	Kernel  string   // the kernel's name, for automationDetails
	RunID   string   // the run, for automationDetails
	// URLBase is where the output folder is published (http(s)); rule
	// help links point into it (rules.md) when set.
	URLBase string
}

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool               sarifTool                `json:"tool"`
	AutomationDetails  *sarifAutomation         `json:"automationDetails,omitempty"`
	OriginalURIBaseIDs map[string]sarifArtifact `json:"originalUriBaseIds"`
	Results            []sarifResult            `json:"results"`
	ColumnKind         string                   `json:"columnKind"`
	Properties         map[string]any           `json:"properties,omitempty"`
}

type sarifAutomation struct {
	ID string `json:"id"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name            string      `json:"name"`
	FullName        string      `json:"fullName"`
	Version         string      `json:"version,omitempty"`
	SemanticVersion string      `json:"semanticVersion,omitempty"`
	InformationURI  string      `json:"informationUri"`
	Rules           []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string             `json:"id"`
	Name                 string             `json:"name"`
	ShortDescription     sarifMessage       `json:"shortDescription"`
	FullDescription      sarifMessage       `json:"fullDescription"`
	Help                 sarifHelp          `json:"help"`
	HelpURI              string             `json:"helpUri,omitempty"`
	DefaultConfiguration sarifConfiguration `json:"defaultConfiguration"`
	Properties           map[string]any     `json:"properties,omitempty"`
}

type sarifHelp struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown"`
}

type sarifConfiguration struct {
	Level string `json:"level"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifMessage      `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	RelatedLocations    []sarifLocation   `json:"relatedLocations,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	// Kind is "pass" for a pre-existing finding a patch fixes (§3.27.9);
	// empty is "fail".
	Kind string `json:"kind,omitempty"`
	// Suppressions mark a pre-existing finding: GitHub code scanning
	// does not open an alert for a suppressed result (it ignores
	// baselineState).
	Suppressions []sarifSuppression `json:"suppressions,omitempty"`
	// BaselineState is "new" or "unchanged" (pre-existing) when the
	// findings were judged against a baseline (§3.27.24).
	BaselineState string `json:"baselineState,omitempty"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`   // "external": the baseline, not a comment in the source
	Status        string `json:"status"` // "accepted"
	Justification string `json:"justification"`
}

type sarifLocation struct {
	ID               int                   `json:"id,omitempty"`
	PhysicalLocation sarifPhysicalLocation `json:"physicalLocation"`
	Message          *sarifMessage         `json:"message,omitempty"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           sarifRegion   `json:"region"`
}

type sarifArtifact struct {
	URI         string        `json:"uri,omitempty"`
	URIBaseID   string        `json:"uriBaseId,omitempty"`
	Description *sarifMessage `json:"description,omitempty"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

// ruleTexts are each rule's SARIF title (shortDescription) and what to do
// about a finding (help); the description proper is Rules.
var ruleTexts = map[string]struct{ title, help string }{
	RuleInlineSGE: {"Inline SGE carries a DMA address",
		"Point the SGE at the buffer's kernel virtual address on the inline path (the CPU copies from it), and keep the DMA address for the by-reference path only."},
	RuleInlineReg: {"IB_SEND_INLINE on a registration or invalidation",
		"Clear IB_SEND_INLINE on REG_MR and LOCAL_INV work requests; set it only on the SEND that carries the payload."},
	RuleInlineSize: {"Inline size not covered or not checked against the granted size",
		"Request max_inline_data for what is posted inline, compare with qp_attr.cap.max_inline_data as the provider wrote it back after creating the QP, and record 0 when creation fails."},
	RuleCheckpatch: {"checkpatch.pl message",
		"Fix what checkpatch.pl reports in the regenerated patch, or note in the manifest why the kernel's style does not apply."},
	RuleIncapsule: {"In-capsule bound check can wrap around",
		"Compare the wire offset with the capsule size before adding the length (offset > size || len > size - offset), so a huge 64-bit offset cannot wrap the sum below the bound."},
	RuleVirtSGE: {"Non-inline SGE carries a kernel virtual address",
		"Map the buffer (ib_dma_map_single/ib_dma_map_page, or use an MR's IOVA with its lkey) and put the DMA address in the SGE: without IB_SEND_INLINE the HCA reads the buffer by DMA. Soft-RoCE and soft-iWARP accept a virtual address, real HCAs do not."},
	RuleSizeofPtr: {"sizeof of a pointer used as a length",
		"Use the size of what the pointer points at (sizeof(*p) or the struct type), not sizeof(p), which is the pointer's own 8 bytes."},
	RuleIncomplete: {"Analysis incomplete for a function",
		"Nothing to fix in the code: the function has more paths than the analysis follows, so a problem in it may go unreported. Review it by hand."},
}

var ruleLevels = map[string]string{RuleCheckpatch: SevWarning, RuleIncomplete: SevNote}

// ruleName is a rule's title in PascalCase (SARIF's
// reportingDescriptor.name, a friendly identifier: "Inline SGE carries a
// DMA address" is InlineSgeCarriesADmaAddress).
func ruleName(title string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(title, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		b.WriteString(strings.ToUpper(part[:1]) + strings.ToLower(part[1:]))
	}
	return b.String()
}

// RulesPage is where the rules' help lives in the repository (written by
// WriteRulesMarkdown; a test keeps it current): helpUri links to it when
// no output folder is published.
const RulesPage = "docs/rules.md"

// ruleTitle is a rule's readable title: its entry in ruleTexts, or its
// description's first clause for a rule without one.
func ruleTitle(id string) string {
	if t, ok := ruleTexts[id]; ok {
		return strings.TrimSuffix(t.title, ".")
	}
	full := strings.TrimSuffix(firstSentence(Rules[id]), ".")
	if i := strings.IndexAny(full, ":;("); i > 0 {
		full = strings.TrimSpace(full[:i])
	}
	if full == "" {
		full = strings.ReplaceAll(id, "-", " ")
	}
	return full
}

func sarifRules(urlBase string) ([]sarifRule, map[string]int) {
	ids := make([]string, 0, len(Rules))
	for id := range Rules {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	index := map[string]int{}
	var rules []sarifRule
	for i, id := range ids {
		index[id] = i
		full := Rules[id]
		t, ok := ruleTexts[id]
		if !ok {
			t.help = full
		}
		short := ruleTitle(id)
		level := ruleLevels[id]
		if level == "" {
			level = SevError
		}
		name := ruleName(short)
		if strings.EqualFold(name, id) || name == "" {
			name = ruleName(id) + "Finding" // SARIF1001: a name must differ from the id
		}
		r := sarifRule{ID: id, Name: name, ShortDescription: sarifMessage{short}, FullDescription: sarifMessage{full},
			Help:                 sarifHelp{Text: full + "\n\nWhat to do: " + t.help, Markdown: "**" + short + "**\n\n" + full + "\n\n**What to do:** " + t.help},
			DefaultConfiguration: sarifConfiguration{Level: level}, Properties: map[string]any{"tags": []string{"rdma", "kernel"}}}
		if urlBase != "" {
			r.HelpURI = strings.TrimSuffix(urlBase, "/") + "/rules.md#" + id
		} else {
			r.HelpURI = InformationURI + "/blob/main/" + RulesPage + "#" + id
		}
		rules = append(rules, r)
	}
	return rules, index
}

// WriteSARIF writes the findings as SARIF 2.1.0 with paths relative to
// the kernel tree (%SRCROOT% for nothing): WriteSARIFWith names the bases.
func (r *Report) WriteSARIF(w io.Writer, version string) error {
	return r.WriteSARIFWith(w, SARIFOptions{Version: version})
}

// WriteSARIFWith writes the findings as SARIF 2.1.0 for GitHub code
// scanning.
func (r *Report) WriteSARIFWith(w io.Writer, o SARIFOptions) error {
	rules, index := sarifRules(o.URLBase)
	pl := newPatchLines(o)
	bases := map[string]sarifArtifact{
		BaseRepo:   {Description: &sarifMessage{"The root of the patchctl repository (the checkout), where series/<kernel>/ holds the regenerated patches."}},
		BaseKernel: {Description: &sarifMessage{"The root of the kernel tree the checks read: the pinned pristine tree with the series applied."}},
	}
	automation := "patchctl/check/"
	if o.Kernel != "" {
		automation += o.Kernel + "/"
	}
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "patchctl", FullName: "patchctl static checks for RDMA and NVMe over Fabrics patches",
		Version: strings.TrimPrefix(o.Version, "v"), SemanticVersion: semver(o.Version), InformationURI: InformationURI, Rules: rules}},
		AutomationDetails: &sarifAutomation{ID: automation + o.RunID}, OriginalURIBaseIDs: bases, Results: []sarifResult{}, ColumnKind: "unicodeCodePoints"}
	if c := r.Baseline; c != nil {
		run.Properties = map[string]any{"baseline": map[string]any{"against": c.Against, "new": c.New, "unchanged": c.Unchanged, "absent": len(c.Absent)}}
	}
	seen := map[string]int{}
	lh := lineHashes{}
	for _, f := range r.Findings {
		base, rel := pl.place(f.File)
		if base == BaseOther {
			bases[BaseOther] = sarifArtifact{Description: &sarifMessage{"A file outside the repository and the kernel tree: only its name is kept."}}
		}
		level := f.Severity
		if level != SevError && level != SevWarning && level != SevNote {
			level = "none"
		}
		res := sarifResult{RuleID: f.Rule, RuleIndex: index[f.Rule], Level: level, Message: sarifMessage{sentence(f.Message)}}
		if r.Baseline != nil {
			// Every result of a judged run has a state, a pre-existing
			// one says what it was compared with.
			res.BaselineState = BaselineNew
			if f.PreExisting() {
				res.BaselineState = BaselineUnchanged
				res.Message.Text += " Pre-existing: the " + r.Baseline.Against + " has it too, so it does not count against the patch."
			}
		}
		if f.PreExisting() {
			// not an alert: GitHub reads suppressions, not baselineState
			res.Suppressions = []sarifSuppression{{Kind: "external", Status: "accepted",
				Justification: "Pre-existing: the tree before the patches has it too (patchctl judges what a patch introduces)."}}
		}
		if _, ok := index[f.Rule]; !ok {
			res.RuleIndex = -1
		}
		primary := sarifLocation{PhysicalLocation: loc(base, rel, f.Line)}
		if base == BaseKernel {
			if patch, line, ok := pl.adding(rel, f.Line); ok {
				primary = sarifLocation{PhysicalLocation: loc(BaseRepo, patch, line)}
				m := sarifMessage{fmt.Sprintf("%s:%d in the patched kernel tree.", rel, f.Line)}
				res.RelatedLocations = append(res.RelatedLocations, sarifLocation{ID: 1, PhysicalLocation: loc(BaseKernel, rel, f.Line), Message: &m})
				res.Message.Text += fmt.Sprintf(" Added by %s, at [%s:%d](1) in the patched tree.", path.Base(patch), rel, f.Line)
			}
		}
		res.Locations = []sarifLocation{primary}
		for _, e := range f.Evidence {
			eb, er := pl.place(e.File)
			m := sarifMessage{sentence(e.Message)}
			res.RelatedLocations = append(res.RelatedLocations, sarifLocation{ID: len(res.RelatedLocations) + 1, PhysicalLocation: loc(eb, er, e.Line), Message: &m})
		}
		res.PartialFingerprints = fingerprints(f, base, rel, seen)
		if h := lh.at(pl, primary.PhysicalLocation); h != "" {
			res.PartialFingerprints["primaryLocationLineHash"] = h
		}
		run.Results = append(run.Results, res)
	}
	// A pre-existing finding the patches remove: a result that passes
	// (kind pass, level none: no alert), at the patch line that removes
	// it, so the fix is visible next to the alerts.
	if c := r.Baseline; c != nil {
		for _, f := range c.Absent {
			base, rel := pl.place(f.File)
			res := sarifResult{RuleID: f.Rule, RuleIndex: index[f.Rule], Level: "none", Kind: "pass", BaselineState: "absent",
				Message: sarifMessage{sentence("Fixed: the " + c.Against + " has this finding and the patched tree does not: " + firstLine(f.Message))}}
			if _, ok := index[f.Rule]; !ok {
				res.RuleIndex = -1
			}
			primary := sarifLocation{PhysicalLocation: loc(base, rel, f.Line)}
			if base == BaseKernel {
				if patch, line, ok := pl.removing(rel, f.Line); ok {
					primary = sarifLocation{PhysicalLocation: loc(BaseRepo, patch, line)}
					m := sarifMessage{fmt.Sprintf("%s:%d in the tree before the patches.", rel, f.Line)}
					res.RelatedLocations = []sarifLocation{{ID: 1, PhysicalLocation: loc(BaseKernel, rel, f.Line), Message: &m}}
					res.Message.Text += fmt.Sprintf(" Removed by %s.", path.Base(patch))
				}
			}
			res.Locations = []sarifLocation{primary}
			res.PartialFingerprints = fingerprints(f, base, rel, seen)
			run.Results = append(run.Results, res)
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}})
}

// fingerprints are a result's partialFingerprints: patchctl's own, which
// survives line moves (rule, file, function and the message with its
// numbers masked, plus the occurrence).
func fingerprints(f Finding, base, rel string, seen map[string]int) map[string]string {
	h := sha256.Sum256([]byte(strings.Join([]string{f.Rule, base, rel, f.Function, digits.ReplaceAllString(f.Message, "#")}, "\x00")))
	key := hex.EncodeToString(h[:16])
	seen[key]++
	return map[string]string{"patchctlFinding/v1": fmt.Sprintf("%s:%d", key, seen[key])}
}

// lineHashes are files' primaryLocationLineHash values by line, read
// once per file.
type lineHashes map[string]map[int]string

// at is the primaryLocationLineHash of a location in the repository or
// the kernel tree, "" when its file cannot be read.
func (lh lineHashes) at(pl *patchLines, l sarifPhysicalLocation) string {
	var root string
	switch l.ArtifactLocation.URIBaseID {
	case BaseRepo:
		root = pl.repo
	case BaseKernel:
		root = pl.tree
	}
	if root == "" {
		return ""
	}
	rel, err := url.PathUnescape(l.ArtifactLocation.URI)
	if err != nil {
		return ""
	}
	p := filepath.Join(root, filepath.FromSlash(rel))
	if _, ok := lh[p]; !ok {
		data, err := os.ReadFile(p)
		if err != nil {
			lh[p] = nil
		} else {
			lh[p] = LineHashes(data)
		}
	}
	return lh[p][l.Region.StartLine]
}

// LineHashes computes GitHub code scanning's primaryLocationLineHash of
// every line of a file, as upload-sarif does when a result has none
// (codeql-action's fingerprints.ts): a rolling hash (base 37, modulo 2^64)
// over the next 100 characters from the start of the line, UTF-16 code
// units of the UTF-8 text, spaces and tabs skipped, CR and CRLF read as LF,
// an end-of-file mark (65535) and zeros after the last character; the
// value in hex, ":" and its occurrence count so far.
func LineHashes(data []byte) map[int]string {
	const block = 100
	const mod = uint64(37)
	first := uint64(1)
	for i := 0; i < block; i++ {
		first *= mod
	}
	var window [block]uint64
	var lineNumbers [block]int
	for i := range lineNumbers {
		lineNumbers[i] = -1
	}
	out := map[int]string{}
	counts := map[string]int{}
	var h uint64
	index, lineNumber, lineStart, prevCR := 0, 0, true, false
	emit := func() {
		v := strconv.FormatUint(h, 16)
		counts[v]++
		out[lineNumbers[index]] = v + ":" + strconv.Itoa(counts[v])
		lineNumbers[index] = -1
	}
	update := func(c uint64) {
		begin := window[index]
		window[index] = c
		h = mod*h + c - first*begin
		index = (index + 1) % block
	}
	process := func(c uint64) {
		if c == ' ' || c == '\t' || (prevCR && c == '\n') {
			prevCR = false
			return
		}
		if c == '\r' {
			c, prevCR = '\n', true
		} else {
			prevCR = false
		}
		if lineNumbers[index] != -1 {
			emit()
		}
		if lineStart {
			lineStart = false
			lineNumber++
			lineNumbers[index] = lineNumber
		}
		if c == '\n' {
			lineStart = true
		}
		update(c)
	}
	for _, u := range utf16.Encode([]rune(string(data))) {
		process(uint64(u))
	}
	process(65535)
	for i := 0; i < block; i++ {
		if lineNumbers[index] != -1 {
			emit()
		}
		update(0)
	}
	return out
}

var (
	digits    = regexp.MustCompile(`[0-9]+`)
	semverish = regexp.MustCompile(`^v?([0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.-]+)?)$`)
	nonSemver = regexp.MustCompile(`[^0-9A-Za-z.-]+`)
)

// semver makes a version string SemVer 2.0: v1.2.3 stays, anything else
// (a commit, "dev") becomes build metadata of 0.0.0-dev.
func semver(v string) string {
	if m := semverish.FindStringSubmatch(v); m != nil {
		return m[1]
	}
	meta := strings.Trim(nonSemver.ReplaceAllString(v, "."), ".")
	for strings.Contains(meta, "..") {
		meta = strings.ReplaceAll(meta, "..", ".")
	}
	if meta == "" {
		return "0.0.0-dev"
	}
	return "0.0.0-dev+" + meta
}

// sentence ends a message with a period, as SARIF's style asks.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

func loc(base, rel string, line int) sarifPhysicalLocation {
	if line < 1 {
		line = 1
	}
	return sarifPhysicalLocation{ArtifactLocation: sarifArtifact{URI: uriEscape(rel), URIBaseID: base}, Region: sarifRegion{StartLine: line}}
}

// uriEscape makes a relative path a relative URI reference.
func uriEscape(rel string) string {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i, p := range parts {
		parts[i] = (&url.URL{Path: p}).EscapedPath()
	}
	return strings.Join(parts, "/")
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

// patchLines knows which regenerated patch adds which line of the
// patched tree, and where paths belong.
type patchLines struct {
	repo, tree string
	patches    []patchFile
	byPath     map[string]string // a patch path as given or absolute -> repository-relative
}

type patchFile struct {
	rel   string               // repository-relative path of the patch
	files map[string]*patchMap // tree path -> what the patch does to it
}

// patchMap is one patch's hunks for one file, in new-file line numbers.
type patchMap struct {
	added   map[int]int // new line -> line of the patch file that adds it
	removed map[int]int // old line -> line of the patch file that removes it
	hunks   []hunkSpan
	remove  bool // the patch deletes the file
}

type hunkSpan struct {
	oldStart, oldLines, newStart, newLines int
	context                                map[int]int // new line -> old line
	header                                 int         // the patch file's line of the @@ header
}

func newPatchLines(o SARIFOptions) *patchLines {
	pl := &patchLines{repo: absClean(o.Repo), tree: absClean(o.Tree), byPath: map[string]string{}}
	for _, p := range o.Patches {
		abs := absClean(p)
		rel := ""
		if r, ok := under(pl.repo, abs); ok {
			rel = r
		} else {
			rel = "series/" + filepath.Base(p) // outside the repository: keep the name
		}
		pl.byPath[p], pl.byPath[abs] = rel, rel
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		pl.patches = append(pl.patches, patchFile{rel: rel, files: parseHunks(string(data))})
	}
	return pl
}

func absClean(p string) string {
	if p == "" {
		return ""
	}
	a, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	return a
}

func under(base, p string) (string, bool) {
	if base == "" {
		return "", false
	}
	r, err := filepath.Rel(base, p)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") || filepath.IsAbs(r) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// place names the base of a finding's path and the path relative to it.
func (pl *patchLines) place(file string) (string, string) {
	if rel, ok := pl.byPath[file]; ok {
		return BaseRepo, rel
	}
	if !filepath.IsAbs(file) {
		return BaseKernel, filepath.ToSlash(filepath.Clean(file))
	}
	file = filepath.Clean(file)
	if rel, ok := pl.byPath[file]; ok {
		return BaseRepo, rel
	}
	if rel, ok := under(pl.tree, file); ok {
		return BaseKernel, rel
	}
	if rel, ok := under(pl.repo, file); ok {
		return BaseRepo, rel
	}
	return BaseOther, filepath.Base(file)
}

// adding finds the patch that adds line of the patched tree's file, and
// the line of the patch that adds it. It walks the series backwards,
// carrying the line number through each later patch's hunks.
func (pl *patchLines) adding(file string, line int) (string, int, bool) {
	for i := len(pl.patches) - 1; i >= 0; i-- {
		m := pl.patches[i].files[file]
		if m == nil {
			continue
		}
		if pline, ok := m.added[line]; ok {
			return pl.patches[i].rel, pline, true
		}
		old, ok := m.oldLine(line)
		if !ok {
			return "", 0, false
		}
		line = old
	}
	return "", 0, false
}

// removing finds the patch line that removes line of the tree before
// the series (the first patch that touches the file, whose old lines
// are the pristine ones), or the hunk header of the hunk around it.
func (pl *patchLines) removing(file string, line int) (string, int, bool) {
	for _, p := range pl.patches {
		m := p.files[file]
		if m == nil {
			continue
		}
		if pline, ok := m.removed[line]; ok {
			return p.rel, pline, true
		}
		for _, h := range m.hunks {
			if line >= h.oldStart && line < h.oldStart+h.oldLines {
				return p.rel, h.header, true
			}
		}
		return "", 0, false
	}
	return "", 0, false
}

// oldLine is the line before the patch of a new line it did not add.
func (m *patchMap) oldLine(n int) (int, bool) {
	shift := 0
	for _, h := range m.hunks {
		if n < h.newStart {
			break
		}
		if n < h.newStart+h.newLines {
			o, ok := h.context[n]
			return o, ok
		}
		shift = (h.oldStart + h.oldLines) - (h.newStart + h.newLines)
	}
	return n + shift, true
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// parseHunks reads a unified diff (git format-patch form) into per-file
// line maps. Lines of the commit message never count: only what follows a
// hunk header, for as many lines as the header says.
func parseHunks(text string) map[string]*patchMap {
	files := map[string]*patchMap{}
	lines := strings.Split(text, "\n")
	var cur *patchMap
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "diff --git "):
			cur = nil
		case strings.HasPrefix(l, "+++ "):
			name := strings.TrimSpace(strings.TrimPrefix(l, "+++ "))
			if t := strings.IndexByte(name, '\t'); t >= 0 {
				name = name[:t]
			}
			if name == "/dev/null" {
				cur = &patchMap{added: map[int]int{}, removed: map[int]int{}, remove: true}
				continue
			}
			name = strings.TrimPrefix(name, "b/")
			if files[name] == nil {
				files[name] = &patchMap{added: map[int]int{}, removed: map[int]int{}}
			}
			cur = files[name]
		case cur != nil && hunkHeader.MatchString(l):
			m := hunkHeader.FindStringSubmatch(l)
			h := hunkSpan{oldStart: atoiOr(m[1], 0), oldLines: atoiOr(m[2], 1), newStart: atoiOr(m[3], 0), newLines: atoiOr(m[4], 1), context: map[int]int{}, header: i + 1}
			oldN, newN := h.oldStart, h.newStart
			oldLeft, newLeft := h.oldLines, h.newLines
			for i+1 < len(lines) && (oldLeft > 0 || newLeft > 0) {
				i++
				b := lines[i]
				switch {
				case strings.HasPrefix(b, "+"):
					cur.added[newN] = i + 1
					newN++
					newLeft--
				case strings.HasPrefix(b, "-"):
					cur.removed[oldN] = i + 1
					oldN++
					oldLeft--
				case strings.HasPrefix(b, "\\"):
				default: // context (a lone empty line is a context line whose space was lost)
					h.context[newN] = oldN
					oldN++
					newN++
					oldLeft--
					newLeft--
				}
			}
			if h.newLines == 0 { // a pure deletion: the header names the line before
				h.newStart++
			}
			cur.hunks = append(cur.hunks, h)
		}
	}
	return files
}

func atoiOr(s string, def int) int {
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return def
	}
	return n
}

// WriteRulesMarkdown writes the rules' descriptions and help, one section
// per rule: the page SARIF helpUri links point at (rules.md#<rule-id>).
func WriteRulesMarkdown(w io.Writer) error {
	rules, _ := sarifRules("")
	var b strings.Builder
	b.WriteString("# patchctl check rules\n")
	for _, r := range rules {
		fmt.Fprintf(&b, "\n<a id=%q></a>\n## %s (`%s`, default level %s)\n\n%s\n", r.ID, r.ShortDescription.Text, r.ID, r.DefaultConfiguration.Level, r.Help.Markdown)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
