package checks

import (
	"bytes"
	"cmp"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/patchctl/patchctl/checks/findings"
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
	// CheckpatchTree is the tree whose scripts/checkpatch.pl runs (and
	// reads its own data files); default Tree.
	CheckpatchTree string
	// Preprocessor, when set, gives the .c files' preprocessed source
	// (preprocessed.go); nil reads raw C.
	Preprocessor Preprocessor
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
	all, analysed, linkedDirs, err := moduleFiles(opts.Tree, rels, opts.Preprocessor)
	if err != nil {
		<-provCh
		return nil, err
	}
	// What a field holds is learned per module (folder): a provider's
	// sg_list[i].addr says nothing about a ULP's.
	byDir := map[string]*Facts{}
	for _, f := range all {
		if byDir[path.Dir(f.Rel)] == nil {
			byDir[path.Dir(f.Rel)] = newFacts()
		}
	}
	// Twice: a file's facts may need another's learned first. A linked
	// module is learned once, its headers first (link.go: it is read for
	// the link and the reverse rule only).
	for _, f := range all {
		if linkedDirs[path.Dir(f.Rel)] && strings.HasSuffix(f.Rel, ".h") {
			byDir[path.Dir(f.Rel)].learn(f)
		}
	}
	for i := 0; i < 2; i++ {
		for _, f := range all {
			if d := path.Dir(f.Rel); !linkedDirs[d] || i == 1 && !strings.HasSuffix(f.Rel, ".h") {
				byDir[d].learn(f)
			}
		}
	}
	newLinker(all, byDir)
	rep := &Report{Files: len(all), Inline: []string{}, Analysis: AnalysisRawC}
	seenFile := map[string]bool{}
	for _, f := range all {
		seenFile[f.Rel] = true
	}
	for _, f := range analysed {
		if !seenFile[f.Rel] {
			rep.Files++ // read, and nothing in its module sets the flag
		}
	}
	for _, f := range analysed {
		if bytes.Contains(f.Src, []byte("IB_SEND_INLINE")) {
			rep.Inline = append(rep.Inline, f.Rel)
		}
	}
	var sites []inlineSite
	visits := map[siteKey][]siteVisit{}
	isAnalysed := map[*file]bool{}
	for _, f := range analysed {
		isAnalysed[f] = true
	}
	for _, f := range all {
		facts := byDir[path.Dir(f.Rel)]
		for _, fn := range functions(f) {
			grantsOnly := !isAnalysed[f]
			if grantsOnly && !recordsCaps(f, fn) || !grantsOnly && !worthRunning(f, fn, facts) {
				continue
			}
			if linkedDirs[path.Dir(f.Rel)] && !grantsOnly && !worthLinked(f, fn, facts) {
				continue // a linked module: only what touches the link
			}
			rep.Functions++
			fs, fsites := analyseFunction(f, fn, facts, visits, grantsOnly)
			if linkedDirs[path.Dir(f.Rel)] && slices.ContainsFunc(fs, func(x Finding) bool { return x.Rule == RuleIncomplete }) {
				// A function of a linked module the budget cut short
				// is not judged: said in the report, not guessed at.
				rep.LinkedIncomplete = append(rep.LinkedIncomplete, fmt.Sprintf("%s:%d %s", f.Rel, f.line(fn), functionName(f, fn)))
				continue
			}
			rep.Findings = append(rep.Findings, fs...)
			sites = append(sites, fsites...)
		}
	}
	prov := <-provCh
	if prov.err != nil {
		return nil, prov.err
	}
	rep.Providers = prov.rows
	sizeFindings, layouts := checkInlineSize(opts, sites, visits, byDir, all, prov.rows)
	rep.Findings = append(rep.Findings, sizeFindings...)
	rep.Findings = append(rep.Findings, checkSizeofPointer(all)...)
	bounds, err := checkIncapsuleBounds(opts.Tree, rels, opts.Preprocessor)
	if err != nil {
		return nil, err
	}
	rep.Findings = append(rep.Findings, bounds...)
	rep.Layouts = layouts
	if len(opts.Patches) > 0 {
		cp, err := checkpatch(cmp.Or(opts.CheckpatchTree, opts.Tree), opts.Patches)
		if err != nil {
			return nil, err
		}
		rep.Findings = append(rep.Findings, cp...)
	}
	addMacroEvidence(rep.Findings, append(append([]*file{}, all...), analysed...))
	rep.Findings = findings.Sort(rep.Findings)
	if rep.Findings == nil {
		rep.Findings = []Finding{}
	}
	if opts.Preprocessor != nil {
		rep.Analysis, rep.Read = opts.Preprocessor.Analysis(), opts.Preprocessor.Read()
	}
	rep.Duration = time.Since(start).Seconds()
	return rep, nil
}

// moduleFiles reads the files to analyse: every file under the paths
// that mentions IB_SEND_INLINE at all, and every .c file of a module
// (folder) one of whose headers mentions it. A module none of whose files
// sets the flag (a provider that only tests it) has nothing to check; in
// the others, every header and the .c files that map DMA, post, create or
// size QPs, or set opcodes are read for facts.
func moduleFiles(tree string, rels []string, pp Preprocessor) (all, analysed []*file, linkedDirs map[string]bool, err error) {
	// The first read of the scope also keeps the .c files that use RDMA
	// requests: the candidates for linking (link.go).
	var mu sync.Mutex
	rdma := map[string][]byte{}
	files, err := loadFilesScan(tree, pp, true, rels, func(rel string, b []byte) {
		if strings.HasSuffix(rel, ".c") && containsAny(b, rdmaNeedles) {
			mu.Lock()
			rdma[rel] = b
			mu.Unlock()
		}
	}, "IB_SEND_INLINE")
	if err != nil {
		return nil, nil, nil, err
	}
	have := map[string]bool{}
	headerDirs := map[string]bool{}
	for _, f := range files {
		have[f.Rel] = true
		if strings.HasSuffix(f.Rel, ".h") {
			headerDirs[path.Dir(f.Rel)] = true
		}
	}
	var more []string
	for _, r := range rels {
		if headerDirs[path.Dir(r)] && !have[r] && strings.HasSuffix(r, ".c") {
			more = append(more, r)
		}
	}
	mod, err := loadFilesOpt(tree, pp, true, more)
	if err != nil {
		return nil, nil, nil, err
	}
	analysed = append(files, mod...)
	sort.Slice(analysed, func(i, j int) bool { return analysed[i].Rel < analysed[j].Rel })
	// Modules where some function sets the flag.
	dirs := map[string]bool{}
	for _, f := range analysed {
		if !dirs[path.Dir(f.Rel)] && (len(findInlineSites(f, f.Tree.RootNode())) > 0 || definesFlag(f)) {
			dirs[path.Dir(f.Rel)] = true
		}
	}
	// Modules linked to them (link.go).
	var read []*file
	for _, f := range analysed {
		if dirs[path.Dir(f.Rel)] {
			read = append(read, f)
		}
	}
	// A few rounds: a module linked in may call into a third.
	linkedDirs = map[string]bool{}
	for round := 0; round < maxLinkRounds; round++ {
		linked, err := linkedModules(rdma, dirs, read)
		if err != nil {
			return nil, nil, nil, err
		}
		if len(linked) == 0 {
			break
		}
		for _, d := range linked {
			dirs[d] = true
			linkedDirs[d] = true
		}
		have = map[string]bool{}
		for _, f := range analysed {
			have[f.Rel] = true
		}
		read = read[:0]
		for _, f := range analysed {
			if dirs[path.Dir(f.Rel)] {
				read = append(read, f)
			}
		}
		var linkedC []string
		for _, r := range rels {
			if !have[r] && strings.HasSuffix(r, ".c") && slices.Contains(linked, path.Dir(r)) {
				linkedC = append(linkedC, r)
			}
		}
		lfiles, err := loadFilesOpt(tree, pp, true, linkedC, rdmaNeedles...)
		if err != nil {
			return nil, nil, nil, err
		}
		analysed = append(analysed, lfiles...)
		read = append(read, lfiles...)
	}
	sort.Slice(analysed, func(i, j int) bool { return analysed[i].Rel < analysed[j].Rel })
	var nearC, nearH []string
	have = map[string]bool{}
	for _, f := range analysed {
		have[f.Rel] = true
	}
	for _, r := range rels {
		if !dirs[path.Dir(r)] || have[r] {
			continue
		}
		if strings.HasSuffix(r, ".h") {
			nearH = append(nearH, r)
		} else if !linkedDirs[path.Dir(r)] {
			// A linked module is read only where it uses RDMA
			// requests (and its headers).
			nearC = append(nearC, r)
		}
	}
	var nearHLinked []string
	for i := 0; i < len(nearH); i++ {
		if linkedDirs[path.Dir(nearH[i])] {
			nearHLinked = append(nearHLinked, nearH[i])
			nearH = append(nearH[:i], nearH[i+1:]...)
			i--
		}
	}
	headers, err := loadFilesOpt(tree, pp, true, nearH)
	if err != nil {
		return nil, nil, nil, err
	}
	// A linked module's headers that declare what the rules read.
	lheaders, err := loadFilesOpt(tree, pp, true, nearHLinked, "ib_sge", "ib_send_wr", "dma_addr_t", "IB_SEND_INLINE", "max_inline_data")
	if err != nil {
		return nil, nil, nil, err
	}
	headers = append(headers, lheaders...)
	neighbours, err := loadFilesOpt(tree, pp, true, nearC, "dma_addr_t", "dma_map", "post_send", "max_inline_data", "ib_query_qp", "opcode")
	if err != nil {
		return nil, nil, nil, err
	}
	var work []*file
	for _, f := range analysed {
		if dirs[path.Dir(f.Rel)] {
			work = append(work, f)
		}
	}
	all = append(append(append([]*file{}, work...), headers...), neighbours...)
	return all, analysed, linkedDirs, nil
}

// addMacroEvidence names, for findings and evidence on a line where a
// macro of the module was expanded, the macro's definition.
func addMacroEvidence(fs []Finding, files []*file) {
	byRel := map[string]*file{}
	for _, f := range files {
		if len(f.Macros) > 0 {
			byRel[f.Rel] = f
		}
	}
	if len(byRel) == 0 {
		return
	}
	for i := range fs {
		seen := map[int]bool{}
		add := func(file string, line int) {
			f := byRel[file]
			if f == nil || seen[line] {
				return
			}
			if u, ok := f.Macros[line]; ok {
				seen[line] = true
				fs[i].Evidence = append(fs[i].Evidence, Evidence{File: u.file, Line: u.line, Message: fmt.Sprintf("line %d expands macro %s, defined here", line, u.name)})
			}
		}
		add(fs[i].File, fs[i].Line)
		for _, e := range fs[i].Evidence {
			add(e.File, e.Line)
		}
	}
}

// definesFlag reports whether a file #defines a value that carries
// IB_SEND_INLINE.
func definesFlag(f *file) bool {
	found := false
	walk(f.Tree.RootNode(), func(n *sitter.Node) bool {
		if n.Kind() == "preproc_def" {
			v := f.text(n.ChildByFieldName("value"))
			found = found || strings.Contains(v, "IB_SEND_INLINE") && !strings.Contains(v, "~")
			return false
		}
		return !found && n.Kind() != "function_definition"
	})
	return found
}

// traceFn, when set (by a test), hears of every function analysed.
var traceFn func(f *file, name string, d time.Duration, steps int)

// postSuffix marks the keys of visits that are posts, by the line that
// set the flag.
const postSuffix = "#post"

type siteKey struct {
	file  string
	start uint
}

// analyseFunction runs the engine over one function: its inline-sge and
// inline-on-registration findings, its grant records, its inline sites
// and the paths that reach them. A panic is a bug in the engine: it is
// reported as the function's incomplete analysis, never a crash.
func analyseFunction(f *file, fn *sitter.Node, facts *Facts, visits map[siteKey][]siteVisit, grantsOnly bool) (out []Finding, sites []inlineSite) {
	name := functionName(f, fn)
	defer func() {
		if r := recover(); r != nil {
			out = append(out, Finding{Rule: RuleIncomplete, Severity: SevNote, File: f.Rel, Line: f.line(fn), Function: name,
				Message: fmt.Sprintf("internal error in the analysis of this function (%v): its findings are incomplete", r)})
		}
	}()
	rule := &inlineSGE{fnName: name}
	grants := map[siteKey]grantRecord{}
	in := &interp{f: f, fn: fn, facts: facts, onCheck: rule.check,
		onSite: func(v siteVisit) {
			k := siteKey{f.Rel, v.node.StartByte()}
			visits[k] = append(visits[k], v)
		},
		onPost: func(line int, v siteVisit) {
			k := siteKey{f.Rel + postSuffix, uint(line)}
			visits[k] = append(visits[k], v)
		},
		onGrant: func(g grantRecord) {
			k := siteKey{f.Rel, g.node.StartByte()}
			if old, ok := grants[k]; !ok || old.msg == "" {
				grants[k] = g
			}
		}}
	rule.in = in
	if traceFn != nil {
		t0 := time.Now()
		defer func() { traceFn(f, name, time.Since(t0), in.steps) }()
	}
	if grantsOnly {
		in.onCheck = func(checkpoint) {}
		in.onSite = nil
		in.onPost = nil
	}
	in.run()
	out = append(out, rule.findings...)
	for _, k := range sortedGrantKeys(grants) {
		if g := grants[k]; g.msg != "" {
			out = append(out, Finding{Rule: RuleInlineSize, Severity: SevError, File: f.Rel, Line: f.line(g.node), Function: name, Message: g.msg})
		}
	}
	if in.capped {
		out = append(out, Finding{Rule: RuleIncomplete, Severity: SevNote, File: f.Rel, Line: f.line(fn), Function: name,
			Message: fmt.Sprintf("more than %d states at a statement or %d steps: the analysis of this function is incomplete", maxStates, maxSteps)})
	}
	if grantsOnly {
		return out, nil
	}
	for _, s := range findInlineSites(f, fn) {
		sites = append(sites, s)
		k := siteKey{f.Rel, s.node.StartByte()}
		if visits[k] == nil {
			visits[k] = []siteVisit{} // analysed, no path reaches it
		}
	}
	return out, sites
}

func sortedGrantKeys(m map[siteKey]grantRecord) []siteKey {
	var out []siteKey
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

// recordsCaps reports whether a function creates a QP and reads its
// caps' max_inline_data.
func recordsCaps(f *file, fn *sitter.Node) bool {
	if !strings.Contains(f.text(fn), "max_inline_data") {
		return false
	}
	found := false
	walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		if n.Kind() == "call_expression" && createFuncs[f.text(n.ChildByFieldName("function"))] {
			found = true
		}
		return !found
	})
	return found
}

// worthRunning selects the functions worth interpreting: those that set
// IB_SEND_INLINE, post a request, or create a QP and record its caps.
func worthRunning(f *file, fn *sitter.Node, facts *Facts) bool {
	if len(findInlineSites(f, fn)) > 0 {
		return true
	}
	found := false
	walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		if n.Kind() == "call_expression" {
			c := n.ChildByFieldName("function")
			name := f.text(c)
			_, poster := facts.posterOf(name)
			if name == "ib_post_send" || poster || c.Kind() == "field_expression" && f.text(c.ChildByFieldName("field")) == "post_send" {
				found = true
			}
		}
		return !found
	})
	return found || recordsCaps(f, fn)
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
		if n.Kind() == "identifier" && f.text(n) == "IB_SEND_INLINE" && setsFlag(f, n) {
			if s := siteStatement(n); s != nil {
				out = append(out, inlineSite{f, fn, s})
			}
		}
		return true
	})
	return out
}

// setsFlag reports whether this mention of IB_SEND_INLINE sets the flag
// (is or-ed or assigned into a value), rather than testing or clearing it
// (x & IB_SEND_INLINE, ~IB_SEND_INLINE, == and the like).
func setsFlag(f *file, n *sitter.Node) bool {
	for p := n.Parent(); p != nil; p = p.Parent() {
		switch p.Kind() {
		case "unary_expression":
			return false
		case "binary_expression":
			if op := f.text(p.ChildByFieldName("operator")); op != "|" {
				return false
			}
		case "assignment_expression":
			return f.text(p.ChildByFieldName("operator")) != "&="
		case "if_statement", "while_statement", "for_statement", "do_statement", "switch_statement", "case_statement", "call_expression":
			return false
		case "init_declarator", "initializer_pair", "return_statement":
			return true
		case "conditional_expression":
			if c := p.ChildByFieldName("condition"); c != nil && c.StartByte() <= n.StartByte() && n.EndByte() <= c.EndByte() {
				return false
			}
		case "expression_statement", "compound_statement", "function_definition":
			return false
		}
	}
	return false
}

// siteStatement is the assignment, declaration or return that a mention
// belongs to.
func siteStatement(n *sitter.Node) *sitter.Node {
	for p := n.Parent(); p != nil; p = p.Parent() {
		switch p.Kind() {
		case "assignment_expression", "init_declarator", "initializer_pair", "return_statement":
			return p
		}
	}
	return nil
}

// sortRows keeps tables stable.
func sortRows(rows []ProviderRow) {
	sort.Slice(rows, func(i, j int) bool { return rows[i].Provider < rows[j].Provider })
}
