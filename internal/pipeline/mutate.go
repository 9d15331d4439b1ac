package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/patchctl/patchctl/checks"
	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/boot"
	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/ktap"
	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/mutate"
	"github.com/patchctl/patchctl/internal/vocab"
)

// The verdicts of a mutant: which oracle killed it.
const (
	KilledBoth     = "both"     // the static checks and the build or boot
	KilledStatic   = "static"   // the static checks only
	KilledRuntime  = "runtime"  // the boot only
	KilledCompiler = "compiler" // the build failed (and the checks saw nothing)
	Survived       = "survived"
)

// MutateOptions say which mutants the Mutate step makes of a target's
// series and how it judges them.
type MutateOptions struct {
	// Series is the manifest's series to mutate ("": all it lists).
	Series    string
	Max       int
	Operators []string
	// StaticOnly judges by the static checks alone (no build, no boot).
	StaticOnly bool
	Transports []string // the boots' transports (default rxe and siw)
	Accel      string
	Fragments  []string
	Jobs       int
	NoCcache   bool
	// Paths are the check's paths (nil: checks.DefaultPaths).
	Paths []string
	// OutDir receives mutate.json, mutate.txt and per mutant its
	// regenerated series and boot logs.
	OutDir string
	// Log gets the count and estimate first, then a line per mutant.
	Log io.Writer
	// Static and Runtime replace the oracles (tests); nil: the real ones
	// (the check stage on the mutated work tree; an incremental build of
	// the patched variant and its boot).
	Static  StaticOracle
	Runtime RuntimeOracle
}

// StaticOracle checks the work tree put into out's patched state; dir
// holds out's regenerated patches (checkpatch reads them).
type StaticOracle func(ctx context.Context, out *apply.Out) (*checks.Report, error)

// RuntimeOracle builds out's patched state and boots it, its logs under
// dir. A compile error is an outcome (Built false), not an error; an
// error is the harness's (the run stops).
type RuntimeOracle func(ctx context.Context, out *apply.Out, dir string) (*RuntimeOutcome, error)

// RuntimeOutcome is what the build and boot of one series said.
type RuntimeOutcome struct {
	Built        bool     `json:"built"`
	Verdict      string   `json:"verdict"` // the boot's PASS, FAIL or ERROR ("" when not built)
	Reason       string   `json:"reason,omitempty"`
	TimedOut     bool     `json:"timed_out,omitempty"`
	Splats       []string `json:"splats,omitempty"`       // the splats' kinds
	FailedTests  []string `json:"failed_tests,omitempty"` // KTAP paths
	Rebuilt      []string `json:"rebuilt,omitempty"`      // modules the build relinked
	BuildSeconds float64  `json:"build_s"`
	BootSeconds  float64  `json:"boot_s"`
}

// signature is what two outcomes must share to count as the same.
func (r *RuntimeOutcome) signature() string {
	if !r.Built {
		return "not built"
	}
	return strings.Join([]string{r.Verdict, fmt.Sprint(r.TimedOut), strings.Join(r.Splats, ","), strings.Join(r.FailedTests, ",")}, "|")
}

// Summary says the outcome in a few words.
func (r *RuntimeOutcome) Summary() string {
	if r == nil {
		return "not run"
	}
	if !r.Built {
		return "compile error: " + r.Reason
	}
	s := r.Verdict
	if r.TimedOut {
		s += ", timed out"
	}
	if len(r.Splats) > 0 {
		s += ", splat " + strings.Join(r.Splats, " ")
	}
	if len(r.FailedTests) > 0 {
		s += ", failed " + strings.Join(r.FailedTests, " ")
	}
	if r.Reason != "" && r.Verdict != vocab.Pass {
		s += ": " + r.Reason
	}
	return s
}

// MutantResult is one mutant judged.
type MutantResult struct {
	*mutate.Mutant
	Diff string `json:"diff"`
	// NewFindings are the error and warning findings of the mutated tree
	// that the unmutated series' check does not have.
	NewFindings []string        `json:"new_findings,omitempty"`
	Static      bool            `json:"killed_static"`
	Compiler    bool            `json:"killed_compiler"`
	Runtime     bool            `json:"killed_runtime"`
	Outcome     *RuntimeOutcome `json:"runtime_outcome,omitempty"`
	Verdict     string          `json:"verdict"`
	Seconds     float64         `json:"duration_s"`
	// CheckSeconds is the static oracle's part of Seconds.
	CheckSeconds float64 `json:"check_s"`
}

// Scores are kill ratios over the mutants judged.
type Scores struct {
	Static   float64 `json:"static"`
	Compiler float64 `json:"compiler"`
	// Runtime counts the boots' kills; Dynamic the compiler's and the
	// boots' (what building and booting catch).
	Runtime float64 `json:"runtime"`
	Dynamic float64 `json:"dynamic"`
	// All: killed by any oracle.
	All float64 `json:"all"`
}

// Estimate is the time the mutants are expected to take.
type Estimate struct {
	CheckSeconds, BuildSeconds, BootSeconds float64
	// Measured says where each figure comes from ("measured: ..." or
	// "default").
	Measured map[string]string
	Total    time.Duration
}

// MutateReport is a mutation run.
type MutateReport struct {
	Kernel     string          `json:"kernel"`
	Series     string          `json:"series,omitempty"`
	StaticOnly bool            `json:"static_only"`
	Transports []string        `json:"transports,omitempty"`
	Generated  int             `json:"generated"`
	Mutants    []*MutantResult `json:"mutants"`
	// Reference is the unmutated series' runtime outcome and findings.
	Reference         *RuntimeOutcome `json:"reference_outcome,omitempty"`
	ReferenceFindings int             `json:"reference_findings"`
	Scores            Scores          `json:"scores"`
	EstimateSeconds   float64         `json:"estimate_s"`
	Duration          float64         `json:"duration_s"`
}

// Survivors are the mutants no oracle killed.
func (r *MutateReport) Survivors() []*MutantResult {
	var out []*MutantResult
	for _, m := range r.Mutants {
		if m.Verdict == Survived {
			out = append(out, m)
		}
	}
	return out
}

// Mutate makes mutants of the lines the target's series adds and judges
// each by the static checks (killed: an error or warning the unmutated
// series does not have) and, unless StaticOnly, by an incremental build
// of the patched variant and its boot (killed: a compile error, or a boot
// whose verdict, splats or failed tests differ from the unmutated
// series'). The mutant takes its patch's place in the series, applied as
// patchctl try applies a series; the work tree's state and the build
// folder's latest patched image are put back as they were when it ends,
// interrupted or not.
func (t *Target) Mutate(ctx context.Context, o MutateOptions) (*MutateReport, error) {
	start := time.Now()
	if err := CheckMutate(o.Max, o.Operators); err != nil {
		return nil, err
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.OutDir == "" {
		return nil, fmt.Errorf("the mutate step needs an output folder: %w", errs.ErrUsage)
	}
	if len(o.Transports) == 0 {
		o.Transports = vocab.DefaultTransports()
	}
	// One mutation run per kernel and cache at a time: each puts the work
	// tree back as it found it, so two must not interleave.
	unlock, err := t.Cache.Lock(ctx, "mutate-"+t.Kernel.Name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	pristine, err := t.Cache.Prepare(ctx, t.Kernel)
	if err != nil {
		return nil, err
	}
	applied, err := t.Applied(ctx, o.Series)
	if err != nil {
		return nil, err
	}
	if err := applied.Mismatch(); err != nil {
		return nil, fmt.Errorf("the series does not apply as the manifest says, so its mutants would not either: %w", err)
	}
	ps, names, err := regenerated(applied)
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("%s: no patch of the series applies: nothing to mutate: %w", t.Kernel.Name, errs.ErrInput)
	}
	read := func(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(pristine, filepath.FromSlash(rel))) }
	ms, err := mutate.Generate(ps, read, mutate.Options{Max: o.Max, Operators: o.Operators})
	if err != nil {
		return nil, fmt.Errorf("making the mutants of %s's series: %w: %w", t.Kernel.Name, err, errs.ErrInput)
	}
	all, err := mutate.Generate(ps, read, mutate.Options{Operators: o.Operators})
	if err != nil {
		return nil, err
	}
	rep := &MutateReport{Kernel: t.Kernel.Name, Series: o.Series, StaticOnly: o.StaticOnly, Generated: len(all), Mutants: []*MutantResult{}}
	if !o.StaticOnly {
		rep.Transports = o.Transports
	}
	est := t.EstimateMutants(len(ms), o.StaticOnly, filepath.Join(o.OutDir, "mutate.json"))
	rep.EstimateSeconds = est.Total.Seconds()
	fmt.Fprintf(o.Log, "%s: %d mutants of %d patches (%d made, --max %d)\n", t.Kernel.Name, len(ms), len(ps), len(all), o.Max)
	fmt.Fprintf(o.Log, "estimate: %s (%s)\n", est.Total.Round(time.Second), est.Words(o.StaticOnly))
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("making the output folder: %w", err)
	}

	if o.Static == nil {
		o.Static = t.staticOracle(ctx, o.Paths)
	}
	if o.Runtime == nil && !o.StaticOnly {
		o.Runtime = t.runtimeOracle(o)
	}
	saved, err := t.saveState(ctx, o.Fragments, applied)
	if err != nil {
		return nil, err
	}
	defer func() {
		// Put back what the mutants changed, interrupted or not.
		if rerr := t.restoreState(context.WithoutCancel(ctx), saved); rerr != nil {
			fmt.Fprintf(o.Log, "restoring the %s work tree: %v\n", t.Kernel.Name, rerr)
		}
	}()

	series := func(dir string, repl int, p *mailpatch.Patch) (*apply.Out, error) {
		given := append([]*mailpatch.Patch(nil), ps...)
		if repl >= 0 {
			given[repl] = p
		}
		out, err := apply.RunGiven(ctx, apply.Given{Kernel: t.Kernel, Pristine: pristine, Patches: given, Sources: names, Dir: dir, Boot: applied.Plan.Manifest.Boot})
		if err != nil {
			return nil, err
		}
		if err := out.Mismatch(); err != nil {
			return nil, err
		}
		saved.made = append(saved.made, out.State(vocab.Patched))
		return out, out.Refreshed.Write(dir)
	}

	// The unmutated series: what every mutant is compared with.
	refDir := filepath.Join(o.OutDir, "reference")
	ref, err := series(filepath.Join(refDir, "series"), -1, nil)
	if err != nil {
		return nil, fmt.Errorf("the unmutated series: %w", err)
	}
	refRep, err := o.Static(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("checking the unmutated series: %w", err)
	}
	rep.ReferenceFindings = len(counted(refRep))
	if !o.StaticOnly {
		fmt.Fprintf(o.Log, "reference: building and booting the unmutated series\n")
		if rep.Reference, err = o.Runtime(ctx, ref, refDir); err != nil {
			return nil, fmt.Errorf("building and booting the unmutated series: %w", err)
		}
		if !rep.Reference.Built {
			return nil, fmt.Errorf("the unmutated series does not build (%s): its mutants cannot be judged at runtime (fix it, or --static-only): %w", rep.Reference.Reason, errs.ErrFindings)
		}
		fmt.Fprintf(o.Log, "reference: %s (build %.0fs, boot %.0fs)\n", rep.Reference.Summary(), rep.Reference.BuildSeconds, rep.Reference.BootSeconds)
	}

	// partial writes what was judged before an error or an interrupt.
	partial := func(err error) (*MutateReport, error) {
		if ctx.Err() != nil && !errors.Is(err, errs.ErrEnv) {
			err = fmt.Errorf("interrupted: %w: %w", err, errs.ErrEnv)
		}
		rep.Scores = scores(rep.Mutants)
		rep.Duration = time.Since(start).Seconds()
		if werr := WriteMutateReport(o.OutDir, rep); werr != nil {
			err = errors.Join(err, werr)
		}
		return rep, err
	}
	for _, m := range ms {
		if err := ctx.Err(); err != nil {
			return partial(fmt.Errorf("interrupted after %d of %d mutants: %w: %w", len(rep.Mutants), len(ms), err, errs.ErrEnv))
		}
		mstart := time.Now()
		mr := &MutantResult{Mutant: m, Diff: m.Diff()}
		dir := filepath.Join(o.OutDir, "mutants", m.ID)
		out, err := series(filepath.Join(dir, "series"), m.Index, m.Patch)
		if err != nil {
			return partial(fmt.Errorf("mutant %s (%s:%d): %w", m.ID, m.File, m.Line, err))
		}
		cstart := time.Now()
		got, err := o.Static(ctx, out)
		mr.CheckSeconds = time.Since(cstart).Seconds()
		if err != nil {
			return partial(fmt.Errorf("checking mutant %s: %w", m.ID, err))
		}
		mr.NewFindings = newFindings(refRep, got)
		mr.Static = len(mr.NewFindings) > 0
		if !o.StaticOnly {
			oc, err := o.Runtime(ctx, out, dir)
			if err != nil {
				return partial(fmt.Errorf("building and booting mutant %s: %w", m.ID, err))
			}
			mr.Outcome = oc
			mr.Compiler = !oc.Built
			mr.Runtime = oc.Built && oc.signature() != rep.Reference.signature()
		}
		mr.Verdict = verdictOf(mr)
		mr.Seconds = time.Since(mstart).Seconds()
		rep.Mutants = append(rep.Mutants, mr)
		fmt.Fprintf(o.Log, "%s %-17s %s:%d %s (%.0fs)\n", m.ID, m.Operator, m.File, m.Line, mr.Verdict, mr.Seconds)
	}
	rep.Scores = scores(rep.Mutants)
	rep.Duration = time.Since(start).Seconds()
	if err := WriteMutateReport(o.OutDir, rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// CheckMutate refuses a negative --max and an unknown operator class
// (usage errors), before any work.
func CheckMutate(max int, operators []string) error {
	if max < 0 {
		return fmt.Errorf("--max %d: want 0 (no cap) or more: %w", max, errs.ErrUsage)
	}
	for _, op := range operators {
		if !slicesContains(mutate.Operators, op) {
			return fmt.Errorf("unknown mutation operator %q (known: %s): %w", op, strings.Join(mutate.Operators, ", "), errs.ErrUsage)
		}
	}
	return nil
}

func slicesContains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// regenerated imports the series' patches as regenerated for the tree
// (every hunk applies exactly), in git am order, with their names.
func regenerated(out *apply.Out) ([]*mailpatch.Patch, []string, error) {
	var ps []*mailpatch.Patch
	var names []string
	for _, n := range out.Refreshed.Order {
		got, err := mailpatch.ImportBytes(n, out.Refreshed.Files[n], "", mailpatch.Options{})
		if err != nil {
			return nil, nil, fmt.Errorf("reading the regenerated %s: %w", n, err)
		}
		if len(got) != 1 {
			return nil, nil, fmt.Errorf("the regenerated %s holds %d patches, want 1", n, len(got))
		}
		ps = append(ps, got[0])
		names = append(names, n)
	}
	return ps, names, nil
}

// counted are a report's findings that count for the static oracle:
// errors and warnings, by their match key (line numbers left out: the
// lines a mutant does not change keep their findings).
func counted(r *checks.Report) []string {
	var out []string
	for _, f := range r.Findings {
		if f.Severity == checks.SevError || f.Severity == checks.SevWarning {
			out = append(out, checks.MatchKey(f))
		}
	}
	return out
}

// newFindings lists got's error and warning findings beyond ref's (as a
// multiset: a second copy of a finding is new).
func newFindings(ref, got *checks.Report) []string {
	left := map[string]int{}
	for _, k := range counted(ref) {
		left[k]++
	}
	var out []string
	for _, f := range got.Findings {
		if f.Severity != checks.SevError && f.Severity != checks.SevWarning {
			continue
		}
		k := checks.MatchKey(f)
		if left[k] > 0 {
			left[k]--
			continue
		}
		out = append(out, fmt.Sprintf("%s:%d: %s %s: %s", f.File, f.Line, f.Severity, f.Rule, f.Message))
	}
	return out
}

func verdictOf(m *MutantResult) string {
	dynamic := m.Runtime || m.Compiler
	switch {
	case m.Static && dynamic:
		return KilledBoth
	case m.Static:
		return KilledStatic
	case m.Runtime:
		return KilledRuntime
	case m.Compiler:
		return KilledCompiler
	}
	return Survived
}

func scores(ms []*MutantResult) Scores {
	var s Scores
	if len(ms) == 0 {
		return s
	}
	n := float64(len(ms))
	for _, m := range ms {
		if m.Static {
			s.Static++
		}
		if m.Compiler {
			s.Compiler++
		}
		if m.Runtime {
			s.Runtime++
		}
		if m.Runtime || m.Compiler {
			s.Dynamic++
		}
		if m.Verdict != Survived {
			s.All++
		}
	}
	s.Static, s.Compiler, s.Runtime, s.Dynamic, s.All = s.Static/n, s.Compiler/n, s.Runtime/n, s.Dynamic/n, s.All/n
	return s
}

// staticOracle is the check stage on the work tree in out's patched
// state, with the kernel's checkpatch.pl and the baseline build's
// layouts when that build exists.
func (t *Target) staticOracle(ctx context.Context, paths []string) StaticOracle {
	var cp, bd, bid string
	var looked bool
	return func(ctx context.Context, out *apply.Out) (*checks.Report, error) {
		if !looked {
			looked = true
			var err error
			if cp, err = CheckpatchTree(ctx, t.Cache, t.Lock, t.Kernel); err != nil {
				return nil, err
			}
			if img, err := t.Image(ctx, "", vocab.Baseline, vocab.FromSource, nil, ""); err == nil && img.Metadata.Artifacts["vmlinux"] != "" {
				bd, bid = img.Metadata.BuildDir, img.Metadata.SHA256["bzImage"]
			}
		}
		return RunCheckStage(ctx, CheckStageIn{Cache: t.Cache, Apply: out, Paths: paths, CheckpatchTree: cp, BuildDir: bd, BuildID: bid})
	}
}

// runtimeOracle builds out's patched state (incremental, in the patched
// build folder) and boots it over o's transports, judged with the
// manifest's inline expectation as the pipeline's run judges it.
func (t *Target) runtimeOracle(o MutateOptions) RuntimeOracle {
	return func(ctx context.Context, out *apply.Out, dir string) (*RuntimeOutcome, error) {
		md, err := t.Build(ctx, out, BuildOptions{Variant: vocab.Patched, From: vocab.FromSource, Fragments: o.Fragments, Jobs: o.Jobs, NoCcache: o.NoCcache})
		oc := &RuntimeOutcome{}
		if md != nil {
			oc.BuildSeconds, oc.Rebuilt = md.Duration, md.Rebuilt
		}
		var ce *build.CompileError
		if errors.As(err, &ce) {
			oc.Reason = firstLine(ce.Error())
			return oc, nil
		}
		if err != nil {
			return nil, err
		}
		oc.Built = true
		m := out.Plan.Manifest
		p, err := boot.Prepare(ctx, boot.Options{Root: t.Root, AgentCache: AgentCache(t.Cache), Kernel: t.Kernel.Name, Variant: vocab.Patched, BzImage: md.Artifacts["bzImage"],
			BzImageSHA256: md.SHA256["bzImage"], BuildDir: md.BuildDir, Modules: md.Modules, Transports: o.Transports, InlineDataSize: m.Boot.InlineDataSize,
			ExpectInline: m.Boot.Expect(vocab.Patched), Accel: o.Accel, Progress: t.Cache.Progress})
		if err != nil {
			return nil, err
		}
		br, err := p.Run(ctx, filepath.Join(dir, "boot"))
		if err != nil {
			return nil, err
		}
		oc.Verdict, oc.Reason, oc.TimedOut, oc.BootSeconds = br.Verdict, br.Reason, br.TimedOut, br.Duration
		for _, s := range br.Splats {
			oc.Splats = append(oc.Splats, s.Kind)
		}
		oc.FailedTests = failedTests(br.KTAP)
		return oc, nil
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// failedTests lists the KTAP paths of the failed tests, sorted.
func failedTests(t *ktap.Test) []string {
	var out []string
	var walk func(t *ktap.Test, path string)
	walk = func(t *ktap.Test, path string) {
		p := t.Name
		if path != "" {
			p = path + "." + t.Name
		}
		if !t.OK && !t.Skip && len(t.Subtests) == 0 {
			out = append(out, p)
		}
		for _, c := range t.Subtests {
			walk(c, p)
		}
	}
	if t != nil {
		walk(t, "")
	}
	sort.Strings(out)
	return out
}

// Defaults of the estimate when the cache has no measured figure.
const (
	defaultCheckSeconds = 5
	defaultBuildSeconds = 20
	defaultBootSeconds  = 15
)

// EstimateMutants is the time n mutants (and the unmutated reference)
// are expected to take: the patched builds and boots the cache recorded
// and the checks the cache recorded (their median), else defaults, said
// as such.
//
// previous, when it names the mutate.json of an earlier run on the same
// kernel (the --out folder's), is read first: its mutants' medians are
// what a mutant costs, measured.
func (t *Target) EstimateMutants(n int, staticOnly bool, previous string) Estimate {
	e := Estimate{CheckSeconds: defaultCheckSeconds, BuildSeconds: defaultBuildSeconds, BootSeconds: defaultBootSeconds,
		Measured: map[string]string{"check": "default", "build": "default", "boot": "default"}}
	var builds []float64
	snaps, _ := filepath.Glob(filepath.Join(t.Cache.Dir, "build", t.Kernel.Name, "*", "variants", vocab.Patched+"-*", "metadata.json"))
	for _, s := range snaps {
		var md build.Metadata
		if b, err := os.ReadFile(s); err == nil && json.Unmarshal(b, &md) == nil && md.Duration > 0 {
			builds = append(builds, md.Duration)
		}
	}
	if v, ok := median(builds); ok {
		e.BuildSeconds, e.Measured["build"] = v, fmt.Sprintf("median of %d patched builds in the cache", len(builds))
	}
	var boots []float64
	results, _ := filepath.Glob(filepath.Join(t.Cache.Dir, "runs", t.Kernel.Name, "boot-"+vocab.Patched, "*", "result.json"))
	for _, r := range results {
		var br boot.Result
		if b, err := os.ReadFile(r); err == nil && json.Unmarshal(b, &br) == nil && br.Duration > 0 {
			boots = append(boots, br.Duration)
		}
	}
	if v, ok := median(boots); ok {
		e.BootSeconds, e.Measured["boot"] = v, fmt.Sprintf("median of %d patched boots in the cache", len(boots))
	}
	var checksRec []float64
	recs, _ := filepath.Glob(filepath.Join(t.Cache.Dir, "runs", t.Kernel.Name, "records", StageCheck, "*.json"))
	for _, r := range recs {
		var rec struct {
			Output struct {
				Duration float64 `json:"duration_s"`
			} `json:"output"`
		}
		if b, err := os.ReadFile(r); err == nil && json.Unmarshal(b, &rec) == nil && rec.Output.Duration > 0 {
			checksRec = append(checksRec, rec.Output.Duration)
		}
	}
	if v, ok := median(checksRec); ok {
		e.CheckSeconds, e.Measured["check"] = v, fmt.Sprintf("median of %d checks in the cache", len(checksRec))
	}
	e.fromPrevious(previous, t.Kernel.Name)
	per := e.CheckSeconds
	if !staticOnly {
		per += e.BuildSeconds + e.BootSeconds
	}
	e.Total = time.Duration(float64(n+1) * per * float64(time.Second))
	return e
}

// fromPrevious takes the medians of an earlier run's mutants on the same
// kernel (its mutate.json), when there is one.
func (e *Estimate) fromPrevious(path, kernel string) {
	if path == "" {
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var prev MutateReport
	if json.Unmarshal(b, &prev) != nil || prev.Kernel != kernel {
		return
	}
	var checks, builds, boots []float64
	for _, m := range prev.Mutants {
		if m.CheckSeconds > 0 {
			checks = append(checks, m.CheckSeconds)
		}
		if oc := m.Outcome; oc != nil && oc.Built {
			builds, boots = append(builds, oc.BuildSeconds), append(boots, oc.BootSeconds)
		}
	}
	say := func(n int) string { return fmt.Sprintf("median of %d mutants of the last run", n) }
	if v, ok := median(checks); ok {
		e.CheckSeconds, e.Measured["check"] = v, say(len(checks))
	}
	if v, ok := median(builds); ok {
		e.BuildSeconds, e.Measured["build"] = v, say(len(builds))
	}
	if v, ok := median(boots); ok {
		e.BootSeconds, e.Measured["boot"] = v, say(len(boots))
	}
}

// Words says the estimate's parts and where each comes from.
func (e Estimate) Words(staticOnly bool) string {
	s := fmt.Sprintf("per mutant: check %.0fs (%s)", e.CheckSeconds, e.Measured["check"])
	if !staticOnly {
		s += fmt.Sprintf(", build %.0fs (%s), boot %.0fs (%s)", e.BuildSeconds, e.Measured["build"], e.BootSeconds, e.Measured["boot"])
	}
	return s + "; the unmutated series once more"
}

func median(v []float64) (float64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	sort.Float64s(v)
	return v[len(v)/2], true
}

// MutationOperators lists the operator classes, in the order mutants are
// numbered.
func MutationOperators() []string { return append([]string(nil), mutate.Operators...) }
