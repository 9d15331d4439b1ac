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

	"github.com/patchctl/patchctl/checks/engine"
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
	Preprocessor engine.Preprocessor
	// Cache is a folder where reports are kept for reuse, Code the
	// digest of the code that makes them (the running program's); both
	// set, a report is reused when nothing it read has changed
	// (reuse.go). Empty: every run analyses.
	Cache, Code string
}

// Run runs every rule. With opts.Cache and opts.Code, a report of the
// same code on the same tree is reused when nothing it read has changed
// (reuse.go).
func Run(opts Options) (*Report, error) {
	start := time.Now()
	if len(opts.Paths) == 0 {
		opts.Paths = DefaultPaths
	}
	// Checkpatch reads only the patches and its own tree: it runs beside
	// the analysis (or the reuse's verification).
	type cpResult struct {
		fs  []Finding
		err error
	}
	var cpCh chan cpResult
	if len(opts.Patches) > 0 {
		cpCh = make(chan cpResult, 1)
		go func() {
			fs, err := checkpatch(cmp.Or(opts.CheckpatchTree, opts.Tree), opts.Patches)
			cpCh <- cpResult{fs, err}
		}()
	}
	var rep *Report
	if reusable(opts) {
		if r, _ := reuseReport(opts); r != nil {
			rep = r
			rep.Reused = true
		}
	}
	if rep == nil {
		var reads *engine.Reads
		if reusable(opts) {
			reads = engine.Record()
		}
		r, err := analyse(opts)
		if reads != nil {
			reads.Stop()
		}
		if err != nil {
			if cpCh != nil {
				<-cpCh
			}
			return nil, err
		}
		if reads != nil {
			// A report not kept (a cache that cannot be written, a
			// file changed while analysed) is analysed again next
			// time; this one is the fresh analysis's either way.
			_ = keepReport(opts, reads, r)
		}
		rep = r
	}
	if cpCh != nil {
		cp := <-cpCh
		if cp.err != nil {
			return nil, cp.err
		}
		rep.Findings = findings.Sort(append(rep.Findings, cp.fs...))
	}
	rep.Duration = time.Since(start).Seconds()
	return rep, nil
}

// analyse runs every rule but checkpatch.
func analyse(opts Options) (*Report, error) {
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
	rels, err := engine.ListC(opts.Tree, opts.Paths)
	if err != nil {
		<-provCh
		return nil, err
	}
	all, analysed, linkedDirs, sizeofRels, err := moduleFiles(opts.Tree, rels, opts.Preprocessor)
	if err != nil {
		<-provCh
		return nil, err
	}
	// The sizeof-pointer and in-capsule rules read files of their own:
	// read and parsed meanwhile. Only loaded here (new trees, or cached
	// ones left untouched): the rules walk them below, after the
	// analysis, so no tree is read by two goroutines at once.
	type loaded struct {
		files []*engine.File
		err   error
	}
	sizeofCh, boundsCh := make(chan loaded, 1), make(chan loaded, 1)
	go func() {
		fs, err := sizeofScope(opts.Tree, opts.Preprocessor, all, sizeofRels)
		sizeofCh <- loaded{fs, err}
	}()
	go func() {
		fs, err := incapsuleFiles(opts.Tree, rels, opts.Preprocessor)
		boundsCh <- loaded{fs, err}
	}()
	// What a field holds is learned per module (folder): a provider's
	// sg_list[i].addr says nothing about a ULP's.
	byDir := map[string]*engine.Facts{}
	for _, f := range all {
		if byDir[path.Dir(f.Rel)] == nil {
			byDir[path.Dir(f.Rel)] = engine.NewFacts()
		}
	}
	// Twice: a file's facts may need another's learned first. A linked
	// module is learned once, its headers first (link.go: it is read for
	// the link and the reverse rule only).
	for _, f := range all {
		if linkedDirs[path.Dir(f.Rel)] && strings.HasSuffix(f.Rel, ".h") {
			byDir[path.Dir(f.Rel)].Learn(f)
		}
	}
	for i := 0; i < 2; i++ {
		for _, f := range all {
			if d := path.Dir(f.Rel); !linkedDirs[d] || i == 1 && !strings.HasSuffix(f.Rel, ".h") {
				byDir[d].Learn(f)
			}
		}
	}
	engine.NewLinker(all, byDir)
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
	var sites []engine.InlineSite
	visits := map[siteKey][]engine.SiteVisit{}
	isAnalysed := map[*engine.File]bool{}
	for _, f := range analysed {
		isAnalysed[f] = true
	}
	for _, f := range all {
		facts := byDir[path.Dir(f.Rel)]
		for _, fn := range engine.Functions(f) {
			grantsOnly := !isAnalysed[f]
			if grantsOnly && !recordsCaps(f, fn) || !grantsOnly && !worthRunning(f, fn, facts) {
				continue
			}
			if linkedDirs[path.Dir(f.Rel)] && !grantsOnly && !engine.WorthLinked(f, fn, facts) {
				continue // a linked module: only what touches the link
			}
			rep.Functions++
			fs, fsites := analyseFunction(f, fn, facts, visits, grantsOnly)
			if linkedDirs[path.Dir(f.Rel)] && slices.ContainsFunc(fs, func(x Finding) bool { return x.Rule == RuleIncomplete }) {
				// A function of a linked module the budget cut short
				// is not judged: said in the report, not guessed at.
				rep.LinkedIncomplete = append(rep.LinkedIncomplete, fmt.Sprintf("%s:%d %s", f.Rel, f.Line(fn), engine.FunctionName(f, fn)))
				continue
			}
			rep.Findings = append(rep.Findings, fs...)
			sites = append(sites, fsites...)
		}
	}
	rep.Findings = dropRestatements(rep.Findings)
	prov := <-provCh
	if prov.err != nil {
		return nil, prov.err
	}
	rep.Providers = prov.rows
	sizeFindings, layouts := checkInlineSize(opts, sites, visits, byDir, all, prov.rows)
	rep.Findings = append(rep.Findings, sizeFindings...)
	sizeofFiles := <-sizeofCh
	if sizeofFiles.err != nil {
		return nil, sizeofFiles.err
	}
	rep.Findings = append(rep.Findings, checkSizeofPointer(sizeofFiles.files)...)
	bounds := <-boundsCh
	if bounds.err != nil {
		return nil, bounds.err
	}
	rep.Findings = append(rep.Findings, incapsuleFindings(bounds.files)...)
	rep.Layouts = layouts
	addMacroEvidence(rep.Findings, append(append([]*engine.File{}, all...), analysed...))
	rep.Findings = findings.Sort(rep.Findings)
	if rep.Findings == nil {
		rep.Findings = []Finding{}
	}
	if opts.Preprocessor != nil {
		rep.Analysis, rep.Read = opts.Preprocessor.Analysis(), opts.Preprocessor.Read()
	}
	return rep, nil
}

// moduleFiles reads the files to analyse: every file under the paths
// that mentions IB_SEND_INLINE at all, and every .c file of a module
// (folder) one of whose headers mentions it. A module none of whose files
// sets the flag (a provider that only tests it) has nothing to check; in
// the others, every header and the .c files that map DMA, post, create or
// size QPs, or set opcodes are read for facts.
//
// The same read of the scope names the .c files the sizeof-pointer rule
// reads (sizeofRels): a capsule size, a DMA mapping's length or an SGE's
// length is set in files that never mention IB_SEND_INLINE.
func moduleFiles(tree string, rels []string, pp engine.Preprocessor) (all, analysed []*engine.File, linkedDirs map[string]bool, sizeofRels []string, err error) {
	// The first read of the scope also keeps the .c files that use RDMA
	// requests: the candidates for linking (link.go).
	var mu sync.Mutex
	rdma := map[string][]byte{}
	files, err := engine.LoadFilesScan(tree, pp, true, rels, func(rel string, b []byte) {
		if !strings.HasSuffix(rel, ".c") {
			return
		}
		r, s := engine.ContainsAny(b, engine.RdmaNeedles), sizeofCandidate(b)
		if r || s {
			mu.Lock()
			if r {
				rdma[rel] = b
			}
			if s {
				sizeofRels = append(sizeofRels, rel)
			}
			mu.Unlock()
		}
	}, "IB_SEND_INLINE")
	if err != nil {
		return nil, nil, nil, nil, err
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
	mod, err := engine.LoadFilesOpt(tree, pp, true, more)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	analysed = append(files, mod...)
	sort.Slice(analysed, func(i, j int) bool { return analysed[i].Rel < analysed[j].Rel })
	// Modules where some function sets the flag.
	dirs := map[string]bool{}
	for _, f := range analysed {
		if !dirs[path.Dir(f.Rel)] && (len(engine.FindInlineSites(f, f.Tree.RootNode())) > 0 || definesFlag(f)) {
			dirs[path.Dir(f.Rel)] = true
		}
	}
	// Modules linked to them (link.go).
	var read []*engine.File
	for _, f := range analysed {
		if dirs[path.Dir(f.Rel)] {
			read = append(read, f)
		}
	}
	// A few rounds: a module linked in may call into a third.
	linkedDirs = map[string]bool{}
	for round := 0; round < engine.MaxLinkRounds; round++ {
		linked, err := engine.LinkedModules(rdma, dirs, read)
		if err != nil {
			return nil, nil, nil, nil, err
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
		lfiles, err := engine.LoadFilesOpt(tree, pp, true, linkedC, engine.RdmaNeedles...)
		if err != nil {
			return nil, nil, nil, nil, err
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
	headers, err := engine.LoadFilesOpt(tree, pp, true, nearH)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	// A linked module's headers that declare what the rules read.
	lheaders, err := engine.LoadFilesOpt(tree, pp, true, nearHLinked, "ib_sge", "ib_send_wr", "dma_addr_t", "IB_SEND_INLINE", "max_inline_data")
	if err != nil {
		return nil, nil, nil, nil, err
	}
	headers = append(headers, lheaders...)
	neighbours, err := engine.LoadFilesOpt(tree, pp, true, nearC, "dma_addr_t", "dma_map", "post_send", "max_inline_data", "ib_query_qp", "opcode")
	if err != nil {
		return nil, nil, nil, nil, err
	}
	// A file of the module that posts what another file's function
	// flags inline (a request built in one file, posted in another) is
	// analysed, not only read for facts.
	setters := map[string]bool{}
	for _, f := range analysed {
		if dirs[path.Dir(f.Rel)] && !linkedDirs[path.Dir(f.Rel)] {
			if !bytes.Contains(f.Src, []byte("IB_SEND_INLINE")) {
				continue
			}
			for _, fn := range engine.Functions(f) {
				if !bytes.Contains(f.Src[fn.StartByte():fn.EndByte()], []byte("IB_SEND_INLINE")) {
					continue
				}
				if !engine.IsStatic(f, fn) && len(engine.FindInlineSites(f, fn)) > 0 {
					setters[engine.FunctionName(f, fn)] = true
				}
			}
		}
	}
	var rest []*engine.File
	for _, nb := range neighbours {
		if len(setters) > 0 && bytes.Contains(nb.Src, []byte("post_send")) && slices.ContainsFunc(nb.CallNames(), func(c string) bool { return setters[c] }) {
			analysed = append(analysed, nb)
		} else {
			rest = append(rest, nb)
		}
	}
	neighbours = rest
	sort.Slice(analysed, func(i, j int) bool { return analysed[i].Rel < analysed[j].Rel })
	var work []*engine.File
	for _, f := range analysed {
		if dirs[path.Dir(f.Rel)] {
			work = append(work, f)
		}
	}
	all = append(append(append([]*engine.File{}, work...), headers...), neighbours...)
	sort.Strings(sizeofRels)
	return all, analysed, linkedDirs, sizeofRels, nil
}

// addMacroEvidence names, for findings and evidence on a line where a
// macro of the module was expanded, the macro's definition.
func addMacroEvidence(fs []Finding, files []*engine.File) {
	byRel := map[string]*engine.File{}
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
				fs[i].Evidence = append(fs[i].Evidence, Evidence{File: u.File, Line: u.Line, Message: fmt.Sprintf("line %d expands macro %s, defined here", line, u.Name)})
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
func definesFlag(f *engine.File) bool {
	found := false
	engine.Walk(f.Tree.RootNode(), func(n *sitter.Node) bool {
		if engine.KindOf(n) == "preproc_def" {
			v := f.Text(n.ChildByFieldName("value"))
			found = found || strings.Contains(v, "IB_SEND_INLINE") && !strings.Contains(v, "~")
			return false
		}
		return !found && engine.KindOf(n) != "function_definition"
	})
	return found
}

// traceFn, when set (by a test), hears of every function analysed.
var traceFn func(f *engine.File, name string, d time.Duration, in *engine.Interp)

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
func analyseFunction(f *engine.File, fn *sitter.Node, facts *engine.Facts, visits map[siteKey][]engine.SiteVisit, grantsOnly bool) (out []Finding, sites []engine.InlineSite) {
	name := engine.FunctionName(f, fn)
	defer func() {
		if r := recover(); r != nil {
			out = append(out, Finding{Rule: RuleIncomplete, Severity: SevNote, File: f.Rel, Line: f.Line(fn), Function: name,
				Message: fmt.Sprintf("internal error in the analysis of this function (%v): its findings are incomplete", r)})
		}
	}()
	rule := &inlineSGE{fnName: name}
	grants := map[siteKey]engine.GrantRecord{}
	// The calls on a post's line, once per line: OnPost hears of every
	// path, and a walk of the body per path made a function's cost its
	// paths times its size.
	calls := map[int][]*sitter.Node{}
	in := &engine.Interp{F: f, Fn: fn, Facts: facts, OnCheck: rule.check,
		OnSite: func(v engine.SiteVisit) {
			k := siteKey{f.Rel, v.Node.StartByte()}
			if v.SiteF != nil {
				k.file = v.SiteF.Rel
			}
			visits[k] = append(visits[k], v)
		},
		OnPost: func(line int, v engine.SiteVisit) {
			k := siteKey{f.Rel + postSuffix, uint(line)}
			visits[k] = append(visits[k], v)
			// The flag set by a call of the module's helper (or
			// builder): the post is one of the helper's sites' too.
			cs, ok := calls[line]
			if !ok {
				cs = callsAt(f, fn, line)
				calls[line] = cs
			}
			for _, c := range cs {
				if hf, hfn, ok := facts.Func(f.Text(c.ChildByFieldName("function"))); ok {
					for _, s := range engine.FindInlineSitesFacts(hf, hfn, facts) {
						hk := siteKey{hf.Rel + postSuffix, uint(hf.Line(s.Node))}
						visits[hk] = append(visits[hk], v)
					}
				}
			}
		},
		OnGrant: func(g engine.GrantRecord) {
			k := siteKey{f.Rel, g.Node.StartByte()}
			if old, ok := grants[k]; !ok || old.Msg == "" {
				grants[k] = g
			}
		}}
	rule.in = in
	if traceFn != nil {
		t0 := time.Now()
		defer func() { traceFn(f, name, time.Since(t0), in) }()
	}
	if grantsOnly {
		in.OnCheck = func(engine.Checkpoint) {}
		in.OnSite = nil
		in.OnPost = nil
	}
	in.Run()
	out = append(out, rule.postedFirst()...)
	for _, k := range sortedGrantKeys(grants) {
		if g := grants[k]; g.Msg != "" {
			out = append(out, Finding{Rule: RuleInlineSize, Severity: SevError, File: f.Rel, Line: f.Line(g.Node), Function: name, Message: g.Msg})
		}
	}
	switch {
	case in.WorkCapped:
		out = append(out, Finding{Rule: RuleIncomplete, Severity: SevNote, File: f.Rel, Line: f.Line(fn), Function: name,
			Message: fmt.Sprintf("more than %d expressions evaluated: the analysis of this function was cut short and is incomplete", engine.MaxWork)})
	case in.Capped:
		out = append(out, Finding{Rule: RuleIncomplete, Severity: SevNote, File: f.Rel, Line: f.Line(fn), Function: name,
			Message: fmt.Sprintf("more than %d states at a statement or %d steps: the analysis of this function is incomplete", engine.MaxStates, engine.MaxSteps)})
	}
	if grantsOnly {
		return out, nil
	}
	for _, s := range engine.FindInlineSitesFacts(f, fn, facts) {
		sites = append(sites, s)
		k := siteKey{f.Rel, s.Node.StartByte()}
		if visits[k] == nil {
			visits[k] = []engine.SiteVisit{} // analysed, no path reaches it
		}
	}
	return out, sites
}

func sortedGrantKeys(m map[siteKey]engine.GrantRecord) []siteKey {
	var out []siteKey
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

// recordsCaps reports whether a function creates a QP and reads its
// caps' max_inline_data.
func recordsCaps(f *engine.File, fn *sitter.Node) bool {
	if !strings.Contains(f.Text(fn), "max_inline_data") {
		return false
	}
	found := false
	engine.Walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		if engine.KindOf(n) == "call_expression" && engine.CreateFuncs[f.Text(n.ChildByFieldName("function"))] {
			found = true
		}
		return !found
	})
	return found
}

// worthRunning selects the functions worth interpreting: those that set
// IB_SEND_INLINE, post a request, or create a QP and record its caps.
func worthRunning(f *engine.File, fn *sitter.Node, facts *engine.Facts) bool {
	if len(engine.FindInlineSites(f, fn)) > 0 {
		return true
	}
	found := false
	engine.Walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		if engine.KindOf(n) == "call_expression" {
			c := n.ChildByFieldName("function")
			name := f.Text(c)
			_, poster := facts.PosterOf(name)
			if name == "ib_post_send" || poster || facts.TakesSGEs(name) || engine.KindOf(c) == "field_expression" && f.Text(c.ChildByFieldName("field")) == "post_send" {
				found = true
			}
		}
		return !found
	})
	return found || recordsCaps(f, fn)
}

// callsAt are the calls of a function that start on a line.
func callsAt(f *engine.File, fn *sitter.Node, line int) []*sitter.Node {
	var out []*sitter.Node
	engine.Walk(fn.ChildByFieldName("body"), func(n *sitter.Node) bool {
		if engine.KindOf(n) == "call_expression" && f.Line(n) == line {
			out = append(out, n)
		}
		return f.Line(n) <= line || engine.KindOf(n) == "compound_statement"
	})
	return out
}

// sortRows keeps tables stable.
func sortRows(rows []ProviderRow) {
	sort.Slice(rows, func(i, j int) bool { return rows[i].Provider < rows[j].Provider })
}
