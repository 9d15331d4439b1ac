package checks

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"time"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// DefaultPaths are the RDMA users of a tree.
var DefaultPaths = []string{"drivers/infiniband", "drivers/nvme", "net", "fs"}

// Options say what to check.
type Options struct {
	Tree     string   // kernel tree
	Paths    []string // files or folders relative to Tree; default DefaultPaths
	BuildDir string   // a build of the tree with debug info (optional): DWARF layouts
	Patches  []string // patches to run checkpatch.pl on
}

// Report is a check's result.
type Report struct {
	Findings  []Finding     `json:"findings"`
	Providers []ProviderRow `json:"providers"`
	Layouts   []LayoutRow   `json:"layouts,omitempty"`
	Inline    []string      `json:"inline_users"` // files that set IB_SEND_INLINE
	Files     int           `json:"files_analysed"`
	Functions int           `json:"functions_analysed"`
	Duration  float64       `json:"duration_s"`
}

// Errors counts findings of severity error.
func (r *Report) Errors() int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == SevError {
			n++
		}
	}
	return n
}

// Run runs every rule.
func Run(opts Options) (*Report, error) {
	start := time.Now()
	if len(opts.Paths) == 0 {
		opts.Paths = DefaultPaths
	}
	// The provider table does not depend on the analysis: read it
	// meanwhile.
	type provResult struct {
		rows []ProviderRow
		err  error
	}
	provCh := make(chan provResult, 1)
	go func() {
		rows, err := providerTable(opts.Tree)
		provCh <- provResult{rows, err}
	}()
	rels, err := listC(opts.Tree, opts.Paths)
	if err != nil {
		<-provCh
		return nil, err
	}
	analysed, err := loadFiles(opts.Tree, rels, "IB_SEND_INLINE")
	if err != nil {
		<-provCh
		return nil, err
	}
	// Providers only test the flag (send_flags & IB_SEND_INLINE); the
	// files that set it are the ones to analyse, with their folders.
	setters := analysed[:0]
	for _, f := range analysed {
		if setsInlineBytes.Match(f.Src) {
			setters = append(setters, f)
		}
	}
	analysed = setters
	// Facts come from the analysed files and their neighbours that map
	// DMA, post, or size inline data.
	dirs := map[string]bool{}
	have := map[string]bool{}
	for _, f := range analysed {
		dirs[path.Dir(f.Rel)] = true
		have[f.Rel] = true
	}
	var near []string
	for _, r := range rels {
		if dirs[path.Dir(r)] && !have[r] {
			near = append(near, r)
		}
	}
	neighbours, err := loadFiles(opts.Tree, near, "dma_addr_t", "dma_map", "post_send", "max_inline_data", "ib_query_qp")
	if err != nil {
		return nil, err
	}
	all := append(append([]*file{}, analysed...), neighbours...)
	// What a field holds is learned per module (folder): a provider's
	// sg_list[i].addr says nothing about a ULP's.
	byDir := map[string]*Facts{}
	for _, f := range all {
		if byDir[path.Dir(f.Rel)] == nil {
			byDir[path.Dir(f.Rel)] = newFacts()
		}
	}
	for i := 0; i < 2; i++ {
		for _, f := range all {
			byDir[path.Dir(f.Rel)].learn(f)
		}
	}
	rep := &Report{Files: len(all), Inline: []string{}}
	for _, f := range analysed {
		rep.Inline = append(rep.Inline, f.Rel)
	}
	var sites []inlineSite
	for _, f := range all {
		facts := byDir[path.Dir(f.Rel)]
		for _, fn := range functions(f) {
			if !setsInlineOrPosts(f, fn, facts) {
				continue
			}
			rep.Functions++
			rule := &inlineSGE{fnName: functionName(f, fn)}
			in := &interp{f: f, fn: fn, facts: facts, onCheck: rule.check}
			rule.in = in
			in.run()
			rep.Findings = append(rep.Findings, rule.findings...)
			if in.capped {
				rep.Findings = append(rep.Findings, Finding{Rule: RuleIncomplete, Severity: SevNote, File: f.Rel, Line: f.line(fn), Function: rule.fnName,
					Message: fmt.Sprintf("more than %d paths: the analysis of this function is incomplete", maxStates)})
			}
			sites = append(sites, findInlineSites(f, fn)...)
		}
	}
	sizeFindings, layouts := checkInlineSize(opts, sites, byDir, all)
	rep.Findings = append(rep.Findings, sizeFindings...)
	rep.Layouts = layouts
	prov := <-provCh
	if prov.err != nil {
		return nil, prov.err
	}
	rep.Providers = prov.rows
	if len(opts.Patches) > 0 {
		cp, err := checkpatch(opts.Tree, opts.Patches)
		if err != nil {
			return nil, err
		}
		rep.Findings = append(rep.Findings, cp...)
	}
	rep.Findings = sortFindings(rep.Findings)
	if rep.Findings == nil {
		rep.Findings = []Finding{}
	}
	rep.Duration = time.Since(start).Seconds()
	return rep, nil
}

// setsInlineBytes prefilters files that may set IB_SEND_INLINE: an
// assignment or designated initializer of send_flags that names it.
var setsInlineBytes = regexp.MustCompile(`send_flags\s*(\|=|=)[^;]*IB_SEND_INLINE`)

// setsInlineOrPosts selects the functions worth interpreting: those that
// set IB_SEND_INLINE on a request or post one (providers' post_send
// implementations only test the flag).
func setsInlineOrPosts(f *file, fn *sitter.Node, facts *Facts) bool {
	if len(findInlineSites(f, fn)) > 0 {
		return true
	}
	found := false
	walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		if n.Kind() == "call_expression" {
			c := n.ChildByFieldName("function")
			name := f.text(c)
			_, poster := facts.posters[name]
			if name == "ib_post_send" || poster || c.Kind() == "field_expression" && f.text(c.ChildByFieldName("field")) == "post_send" {
				found = true
			}
		}
		return !found
	})
	return found
}

// inlineSite is a statement that sets IB_SEND_INLINE on a request.
type inlineSite struct {
	f    *file
	fn   *sitter.Node
	node *sitter.Node
}

func findInlineSites(f *file, fn *sitter.Node) []inlineSite {
	var out []inlineSite
	walk(fn, func(n *sitter.Node) bool {
		if n.Kind() == "assignment_expression" {
			lhs := n.ChildByFieldName("left")
			if lhs.Kind() == "field_expression" && f.text(lhs.ChildByFieldName("field")) == "send_flags" &&
				mentions(f, n.ChildByFieldName("right"), "IB_SEND_INLINE") && f.text(n.ChildByFieldName("operator")) != "&=" {
				out = append(out, inlineSite{f, fn, n})
			}
		}
		return true
	})
	return out
}

// sortRows keeps tables stable.
func sortRows(rows []ProviderRow) {
	sort.Slice(rows, func(i, j int) bool { return rows[i].Provider < rows[j].Provider })
}
