package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/patchctl/patchctl/checks"
	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/boot"
	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/debian/distro"
	"github.com/patchctl/patchctl/internal/defects"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/ktap"
	"github.com/patchctl/patchctl/internal/progress"
	"github.com/patchctl/patchctl/internal/stagecache"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
)

// The stages of a kernel's run, in order.
const (
	StagePrepare       = "prepare"
	StageApply         = "apply"
	StageBuildBaseline = "build-baseline"
	StageCheck         = "check"
	StageBuildPatched  = "build-patched"
	StageBootBaseline  = "boot-baseline"
	StageBootPatched   = "boot-patched"
	StageCompare       = "compare"
)

// Stages lists the stage names in the order they run.
var Stages = []string{StagePrepare, StageApply, StageBuildBaseline, StageBuildPatched, StageCheck, StageBootBaseline, StageBootPatched, StageCompare}

// Options say what to run.
type Options struct {
	Root       string
	Cache      *tree.Cache
	Lock       *tree.Lock
	Kernels    []string // default: every pinned kernel
	Transports []string // default: rxe and siw
	Progress   *progress.Reporter
	// Parallel runs kernels side by side; default: when there are at
	// least two cores per kernel.
	Parallel *bool
	Accel    string // kvm, tcg or "" (probe)
	NoCcache bool
	// KernelFrom is where the kernels under test come from: vocab.FromSource
	// ("" too: build the pinned tree) or vocab.FromDistro (Debian's binary
	// kernel, the touched modules rebuilt against its headers).
	KernelFrom string
	// Targets, when set, are the kernels to run instead of Kernels (a
	// local tree: tree.Local).
	Targets []*tree.Kernel
	// Apply, when set, replaces the manifest's apply stage (patchctl try:
	// a series no manifest lists, dispositions computed, see
	// apply.RunGiven); only its mismatches fail the stage.
	Apply func(ctx context.Context, k *tree.Kernel, pristine string) (*apply.Out, error)
	// Defects is the known provider defects table (nil: the repository's
	// series/provider-defects.yaml).
	Defects *defects.Table
	// Reports is the known kernel reports table (nil: the repository's
	// series/known-reports.yaml).
	Reports *defects.Reports
	// Fragments are the kconfig/ fragments the kernels are built with
	// (none: build's defaults); they are part of the build's key, so a
	// debug kernel is an image of its own.
	Fragments []string
	// DMA is the DMA mode of the builds from source: vocab.DMAFaithful
	// ("" too: the DMA-faithful harness applied after the series, on
	// both variants) or vocab.DMAPlain (--dma plain). Part of the build
	// key. The distro path carries no harness.
	DMA string
	// Reproduce names a reproducer the boots run after their tests
	// (vocab.ReproIncapsule; --reproduce).
	Reproduce string
}

// Stage is one stage's outcome.
type Stage struct {
	Name     string    `json:"name"`
	Status   string    `json:"status"`
	Start    time.Time `json:"start_time"`
	Duration float64   `json:"duration_s"`
	// CPU is the CPU seconds patchctl and the programs it waited for
	// (make, gcc, qemu) spent in the stage: on a shared machine the
	// duration is the load's, this the work's. Not measured when kernels
	// run side by side (one process: their stages overlap). The check
	// runs beside the patched build and the boots: while they overlap,
	// the check is charged patchctl's own CPU and the build and boots
	// the programs they waited for.
	CPU       float64 `json:"cpu_s,omitempty"`
	Reused    bool    `json:"reused"`
	Detail    string  `json:"detail,omitempty"`
	InputHash string  `json:"input_hash,omitempty"`
	// Redone says why a stage that ran before was not reused.
	Redone string `json:"redone,omitempty"`
	// cpu is the process's own and its children's CPU time at the start.
	cpu [2]time.Duration
	// Class says whose fault an ERROR is: "input" (a file or option given
	// to patchctl) or "environment" (the machine or the harness).
	Class string `json:"class,omitempty"`
}

// Kernel is one kernel's run.
type Kernel struct {
	Name    string                     `json:"kernel"`
	Source  string                     `json:"source"`
	Stages  []*Stage                   `json:"stages"`
	Apply   []*apply.Result            `json:"apply,omitempty"`
	Patches []string                   `json:"patches,omitempty"` // series/<kernel>/*.patch applied, in order
	Check   *checks.Report             `json:"check,omitempty"`
	Builds  map[string]*build.Metadata `json:"builds,omitempty"`
	Boots   map[string]*boot.Result    `json:"boots,omitempty"`
	Verdict string                     `json:"verdict"`
	Reason  string                     `json:"reason,omitempty"`
	// KernelFrom says which path the results came from: source or distro.
	KernelFrom string `json:"kernel_from"`
	// KnownDefects are the provider defects of series/provider-defects.yaml
	// that this kernel has, for the transports run.
	KnownDefects []defects.Defect `json:"known_defects,omitempty"`
	// KnownReports are the kernel reports of series/known-reports.yaml
	// this kernel's version is known to have: a boot that meets one
	// reports it and does not fail on it.
	KnownReports []defects.Report `json:"known_reports,omitempty"`
	Start        time.Time        `json:"start_time"`
	Duration     float64          `json:"duration_s"`
}

// Result is a whole run.
type Result struct {
	Kernels  []*Kernel `json:"kernels"`
	Verdict  string    `json:"verdict"`
	Duration float64   `json:"duration_s"`
	// Reason says why a run that could not start (no kernel, an unknown
	// kernel, unreadable input) did not.
	Reason string `json:"reason,omitempty"`
}

// Run runs the pipeline for each kernel.
func Run(ctx context.Context, o Options) (*Result, error) {
	start := time.Now()
	if len(o.Transports) == 0 {
		o.Transports = vocab.DefaultTransports()
	}
	from, err := vocab.ParseKernelFrom(o.KernelFrom)
	if err != nil {
		return nil, err
	}
	o.KernelFrom = from
	if o.DMA, err = vocab.ParseDMA(o.DMA); err != nil {
		return nil, err
	}
	if o.Reproduce, err = vocab.ParseReproduce(o.Reproduce); err != nil {
		return nil, err
	}
	if from == vocab.FromDistro && len(o.Fragments) > 0 {
		return nil, fmt.Errorf("--fragment %s goes with kernels built from source: Debian's binary kernel has its own configuration (drop --kernel-from distro or --fragment): %w", strings.Join(o.Fragments, ","), errs.ErrUsage)
	}
	if o.Defects == nil {
		t, err := defects.Load(defects.Path(o.Root))
		if err != nil {
			return nil, err
		}
		o.Defects = t
	}
	if o.Reports == nil {
		t, err := defects.LoadReports(defects.ReportsPath(o.Root))
		if err != nil {
			return nil, err
		}
		o.Reports = t
	}
	ks := o.Targets
	if len(ks) == 0 {
		names := o.Kernels
		if len(names) == 0 {
			names = o.Lock.Names()
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("no kernels to run: series/kernels.yaml pins none: %w", errs.ErrInput)
		}
		for _, n := range names {
			k, err := o.Lock.Find(n)
			if err != nil {
				return nil, err
			}
			ks = append(ks, k)
		}
	}
	parallel := runtime.NumCPU() >= 2*len(ks) && len(ks) > 1
	if o.Parallel != nil {
		parallel = *o.Parallel
	}
	res := &Result{Kernels: make([]*Kernel, len(ks)), Verdict: vocab.Pass}
	jobs := runtime.NumCPU()
	if parallel {
		jobs = max(1, runtime.NumCPU()/len(ks))
	}
	var wg sync.WaitGroup
	for i, k := range ks {
		r := &kernelRun{o: o, k: k, jobs: jobs, measureCPU: !parallel, store: &stagecache.Store{Dir: filepath.Join(o.Cache.Dir, "runs")},
			kr: &Kernel{Name: k.Name, Source: k.Key(), Builds: map[string]*build.Metadata{}, Boots: map[string]*boot.Result{}, Verdict: vocab.Pass, KernelFrom: o.KernelFrom}}
		res.Kernels[i] = r.kr
		if parallel {
			wg.Add(1)
			go func() { defer wg.Done(); r.run(ctx) }()
		} else {
			r.run(ctx)
		}
	}
	wg.Wait()
	for _, k := range res.Kernels {
		if k.Verdict != vocab.Pass && res.Verdict != vocab.Error {
			res.Verdict = k.Verdict
		}
	}
	res.Duration = time.Since(start).Seconds()
	return res, nil
}

// kernelRun is one kernel's stages: each stage's package computes its key
// and output; this records, reuses and reports.
type kernelRun struct {
	o     Options
	k     *tree.Kernel
	jobs  int
	store *stagecache.Store
	kr    *Kernel
	paths []string // the check's paths ("": checks.DefaultPaths)
	// measureCPU: the process runs this kernel alone, so its CPU time
	// during a stage is the stage's (Stage.CPU).
	measureCPU bool

	// mu guards the record (kr's stages and verdict) while the check
	// runs beside the other stages; active are the stages running, each
	// marked once another ran beside it.
	mu     sync.Mutex
	active map[*Stage]bool
}

// stage runs fn as the named stage: it is timed, and its error becomes
// the stage's status (ERROR for a harness fault, FAIL otherwise).
func (r *kernelRun) stage(name string, fn func(s *Stage) error) *Stage {
	s := r.begin(name)
	r.end(s, fn(s))
	return s
}

// begin records a stage as started; end ends it with fn's error.
func (r *kernelRun) begin(name string) *Stage {
	s := &Stage{Name: name, Status: vocab.Pass, Start: time.Now()}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kr.Stages = append(r.kr.Stages, s)
	if r.active == nil {
		r.active = map[*Stage]bool{}
	}
	beside := len(r.active) > 0
	for o := range r.active {
		r.active[o] = true
	}
	r.active[s] = beside
	s.cpu = [2]time.Duration{selfCPU(), childCPU()}
	return s
}

func (r *kernelRun) end(s *Stage, err error) {
	self, children := selfCPU()-s.cpu[0], childCPU()-s.cpu[1]
	r.mu.Lock()
	defer r.mu.Unlock()
	s.Duration = time.Since(s.Start).Seconds()
	beside := r.active[s]
	delete(r.active, s)
	if r.measureCPU {
		switch {
		case !beside:
			s.CPU = (self + children).Seconds()
		case s.Name == StageCheck:
			s.CPU = self.Seconds()
		default:
			s.CPU = children.Seconds()
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, errKnownDefect):
		s.Class = ClassKnownDefect
		r.fail(s, vocab.Error, err.Error())
	case errors.Is(err, errs.ErrFindings):
		r.fail(s, vocab.Fail, err.Error())
	case errors.Is(err, errs.ErrInput), errors.Is(err, errs.ErrUsage):
		s.Class = ClassInput
		r.fail(s, vocab.Error, err.Error())
	default:
		s.Class = ClassEnv
		r.fail(s, vocab.Error, err.Error())
	}
}

// Classes of an ERROR.
const (
	ClassInput = "input"
	ClassEnv   = "environment"
	// ClassKnownDefect: a boot failed over a provider with a known defect
	// on this kernel (series/provider-defects.yaml): the provider's fault,
	// not the patch's. It counts as an environment error (exit 3).
	ClassKnownDefect = "known-provider-defect"
)

// errKnownDefect marks a boot failure explained by a known defect.
var errKnownDefect = errors.New("known provider defect")

// Err is the run's outcome as an error for the exit status: nil when
// every kernel passed; an input error when a stage was refused its input
// (exit 2), an environment error when a stage could not run (exit 3), and
// findings when a stage failed (exit 1).
func (res *Result) Err() error {
	worst := ""
	for _, k := range res.Kernels {
		for _, s := range k.Stages {
			switch {
			case s.Class == ClassInput:
				worst = ClassInput
			case (s.Class == ClassEnv || s.Class == ClassKnownDefect) && worst != ClassInput:
				worst = ClassEnv
			case s.Status == vocab.Fail && worst == "":
				worst = vocab.Fail
			}
		}
	}
	switch worst {
	case ClassInput:
		return errs.ErrInput
	case ClassEnv:
		return errs.ErrEnv
	case vocab.Fail:
		return errs.ErrFindings
	}
	if res.Verdict != vocab.Pass {
		return errs.ErrFindings
	}
	return nil
}

func (r *kernelRun) fail(s *Stage, status, detail string) {
	s.Status, s.Detail = status, detail
	if r.kr.Verdict == vocab.Pass || status == vocab.Error {
		r.kr.Verdict, r.kr.Reason = status, s.Name+": "+detail
	}
}

// reuse loads the stage's output recorded under key, its artifacts
// checked; it says on s whether and why not.
func reuse[T any](r *kernelRun, s *Stage, key string, out *T) bool {
	s.InputHash = key
	ok, why := r.store.Load(r.k.Name, s.Name, key, out)
	s.Reused = ok
	if !ok && why != "not run before" {
		s.Redone = why
	}
	return ok
}

// record saves a stage's output with its artifacts; forget drops it.
func (r *kernelRun) record(s *Stage, out any, artifacts ...string) error {
	arts, err := stagecache.Artifacts(artifacts...)
	if err != nil {
		return err
	}
	return r.store.Save(r.k.Name, s.Name, s.InputHash, out, arts)
}

func (r *kernelRun) forget(s *Stage) error { return r.store.Forget(r.k.Name, s.Name, s.InputHash) }

func (r *kernelRun) run(ctx context.Context) {
	r.kr.Start = time.Now()
	defer func() { r.kr.Duration = time.Since(r.kr.Start).Seconds() }()
	defer r.skipRest()
	if r.o.KernelFrom == vocab.FromDistro {
		// Debian's packages download and extract while the source tree
		// is prepared; the build stage waits for them (the distro lock)
		// and reports their errors.
		r.o.Progress.Note("fetching Debian's binary kernel of %s in the background", r.k.Name)
		quiet := r.quietCache()
		defer beside(ctx, func(ctx context.Context) { _, _ = distro.Prepare(ctx, quiet, r.k) })() // a failure is met again, and reported, where the stage needs it
	}

	// The guest agent compiles from the start, beside the tree's
	// preparation: on a fresh machine its first compile (static, the
	// standard library again: about 30 CPU-s) then holds up neither the
	// configuration (one core: make and conf) nor the first boot, which
	// waits for it (boot.BuildAgent builds each agent once). Measured on
	// a fresh machine (2026-12-05): the extraction 13 -> 26 s beside it,
	// the configuration 54 -> 36 s without it, the two 75 -> 68 s.
	// Warm, it is read back. A run that ends before its boots stops the
	// compile; a failure is met again, and reported, by the boot.
	defer beside(ctx, func(ctx context.Context) { _, _ = boot.BuildAgent(ctx, r.o.Root, AgentCache(r.o.Cache)) })()

	var pristine string
	if r.stage(StagePrepare, func(s *Stage) (err error) {
		pristine, err = r.o.Cache.Prepare(ctx, r.k)
		return err
	}).Status != vocab.Pass {
		return
	}

	// apply: in memory, every time (a fraction of a second)
	var out *apply.Out
	if r.stage(StageApply, func(s *Stage) (err error) {
		if r.o.Apply != nil {
			out, err = r.o.Apply(ctx, r.k, pristine)
		} else {
			out, err = apply.Run(ctx, apply.In{Root: r.o.Root, Kernel: r.k, Pristine: pristine, Cache: r.o.Cache})
		}
		if err != nil {
			return err
		}
		r.kr.Apply, r.kr.Patches = out.Result.Results, out.Patches
		var problems []string
		if err := out.Mismatch(); err != nil {
			problems = append(problems, err.Error())
		}
		if out.Given {
			var ds []string
			for _, res := range out.Result.Results {
				ds = append(ds, res.Disposition)
			}
			s.Detail = fmt.Sprintf("%d of %d patches apply; dispositions computed: %s", len(out.Applied()), len(out.Result.Results), strings.Join(ds, ", "))
			if c := out.Causes(); len(c) > 0 { // accepted with --allow: still say why and where
				s.Detail += "; " + strings.Join(c, "; ")
			}
		} else {
			if d := out.Stale(); len(d) > 0 {
				n := r.k.SeriesName()
				problems = append(problems, fmt.Sprintf("series/%s differs from what refresh generates: %s (run patchctl refresh --kernel %s)", n, strings.Join(d, ", "), n))
			}
			s.Detail = fmt.Sprintf("%d of %d patches apply; dispositions as the manifest says", len(out.Applied()), len(out.Result.Results))
		}
		if len(problems) > 0 {
			return fmt.Errorf("%s: %w", strings.Join(problems, "; "), errs.ErrFindings)
		}
		return nil
	}).Status != vocab.Pass {
		return
	}

	// The files of the kernel whose checkpatch.pl judges the patches,
	// when they come from its package (on a fresh machine: 166 MB
	// fetched and decompressed for 7.3's), are made beside the
	// configuration (one core: make and conf) for the check stage,
	// which waits for them (the kit's lock). A failure is met again,
	// and reported, by the stage that needs it.
	if ck, err := r.o.Lock.CheckpatchKernel(r.k); err == nil && ck != nil && !r.o.Cache.Prepared(ck) {
		quiet := r.quietCache()
		defer beside(ctx, func(ctx context.Context) { _, _ = quiet.CheckpatchFiles(ctx, ck) })()
	}

	r.defects(pristine)
	r.build(ctx, out, vocab.Baseline)
	// The check reads its own tree (the check tree) and the baseline's
	// layouts, so it runs beside the boots: a one-line edit's verdict
	// waits for the longer of the check and the boots, not for both.
	// Not beside the patched build: make and the compiler, slowed by the
	// check's CPU, cost the verdict more than the boots do (a one-line
	// edit: 11.5 s beside the build, 10.5 s beside the boots; 2 cores).
	r.build(ctx, out, vocab.Patched)
	checked := r.goCheck(ctx, out)
	r.boot(ctx, out, vocab.Baseline)
	r.boot(ctx, out, vocab.Patched)
	<-checked
	r.compare(out)
}

// quietCache is the run's cache without progress, for work beside a
// stage: the reporter shows one task at a time.
func (r *kernelRun) quietCache() *tree.Cache {
	quiet := *r.o.Cache
	quiet.Progress = nil
	return &quiet
}

// beside starts fn in a goroutine and returns what stops it: cancel its
// context, and wait for it to return.
func beside(ctx context.Context, fn func(context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); fn(ctx) }()
	return func() { cancel(); <-done }
}

func (r *kernelRun) buildOptions(out *apply.Out, variant string) build.Options {
	return build.Options{Root: r.o.Root, Cache: r.o.Cache, Kernel: r.k, Apply: out, Variant: variant, Fragments: r.o.Fragments,
		Jobs: r.jobs, NoCcache: r.o.NoCcache, DMA: r.o.DMA, Progress: r.o.Progress}
}

func (r *kernelRun) build(ctx context.Context, out *apply.Out, variant string) {
	if r.o.KernelFrom == vocab.FromDistro {
		r.distroBuild(ctx, out, variant)
		return
	}
	r.stage("build-"+variant, func(s *Stage) error {
		bo := r.buildOptions(out, variant)
		key, err := build.Key(bo)
		if err != nil {
			return err
		}
		var md build.Metadata
		if reuse(r, s, key, &md) {
			r.kr.Builds[variant] = &md
			s.Detail = md.KernelRelease + sourceDetail(&md) + " (reused)"
			return nil
		}
		m, err := build.Build(ctx, bo)
		if m != nil {
			r.kr.Builds[variant] = m
		}
		if err != nil {
			return errors.Join(err, r.forget(s))
		}
		s.Detail = fmt.Sprintf("%s%s in %.0fs", m.KernelRelease, sourceDetail(m), m.Duration)
		return r.record(s, m, append([]string{m.Artifacts["bzImage"]}, m.Modules...)...)
	})
}

// distroBuild is the build stage on the distro path: Debian's kernel, and
// for patched the touched modules rebuilt (internal/debian/distro).
func (r *kernelRun) distroBuild(ctx context.Context, out *apply.Out, variant string) {
	r.stage("build-"+variant, func(s *Stage) error {
		do := distro.Options{Cache: r.o.Cache, Kernel: r.k, Apply: out, Variant: variant, Jobs: r.jobs, NoCcache: r.o.NoCcache, Progress: r.o.Progress}
		key, err := distro.Key(do)
		if err != nil {
			return err
		}
		var md build.Metadata
		if reuse(r, s, key, &md) {
			r.kr.Builds[variant] = &md
			s.Detail = distroDetail(&md) + " (reused)"
			return nil
		}
		m, err := distro.Build(ctx, do)
		if m != nil {
			r.kr.Builds[variant] = m
		}
		if err != nil {
			return errors.Join(err, r.forget(s))
		}
		s.Detail = distroDetail(m) + fmt.Sprintf(" in %.0fs", m.Duration)
		return r.record(s, m, append([]string{m.Artifacts["bzImage"]}, m.Modules...)...)
	})
}

// sourceDetail says what a build from source carries beyond bzImage: its
// modules and, for patched, which differ from the baseline's and whether
// vmlinux is the baseline's.
func sourceDetail(m *build.Metadata) string {
	d := ""
	if len(m.Modules) > 0 {
		d = fmt.Sprintf(", %d modules", len(m.Modules))
	}
	if m.Variant == vocab.Patched && len(m.Modules) > 0 {
		if len(m.Rebuilt) > 0 {
			d += ", rebuilt " + strings.Join(m.Rebuilt, " ")
		} else {
			d += ", no module differs from the baseline's"
		}
	}
	d += ", " + HarnessDetail(m) + ccacheDetail(m)
	if m.VmlinuxShared != nil {
		if *m.VmlinuxShared {
			d += ", vmlinux shared with the baseline"
		} else {
			d += ", vmlinux rebuilt"
		}
	}
	return d
}

// HarnessNames are the harness patches a build applied
// ("dma-faithful/ib_virt_dma_to_ptr", ...).
func HarnessNames(m *build.Metadata) []string {
	var out []string
	for _, h := range m.Harness {
		out = append(out, h.String())
	}
	return out
}

// HarnessDetail says which harness patches a build applied, in its DMA
// mode, and why one of the mode is not.
func HarnessDetail(m *build.Metadata) string {
	if m.KernelFrom == vocab.FromDistro {
		return "no harness (the distro path rebuilds only the series' modules against Debian's kernel; the harness changes ib_core and the ib_verbs.h inlines every RDMA module is built with)"
	}
	d := "dma " + m.DMA + ", harness " + strings.Join(HarnessNames(m), " ")
	if len(m.Harness) == 0 {
		d = "dma " + m.DMA + ", no harness"
	}
	off := make([]string, 0, len(m.HarnessOff))
	for h := range m.HarnessOff {
		off = append(off, h)
	}
	sort.Strings(off)
	for _, h := range off {
		d += fmt.Sprintf(" (%s off: %s)", h, m.HarnessOff[h])
	}
	return d
}

func distroDetail(m *build.Metadata) string {
	d := fmt.Sprintf("Debian %s, %d modules, %s", m.KernelRelease, len(m.Modules), HarnessDetail(m))
	if len(m.Rebuilt) > 0 {
		d += ", rebuilt " + strings.Join(m.Rebuilt, " ")
	}
	return d + ccacheDetail(m)
}

// ccacheDetail says how many files a build compiled and how many of them
// ccache gave back ("" when ccache did not run).
func ccacheDetail(m *build.Metadata) string {
	if c := m.CcacheStats; c != nil && c.Hits+c.Misses > 0 {
		return fmt.Sprintf(", %d compiles (%d from ccache)", c.Hits+c.Misses, c.Hits)
	}
	return ""
}

// StageCheckPristine names the record of the pristine tree's check
// (part of the check stage: the baseline its findings are judged
// against).
const StageCheckPristine = "check-pristine"

// goCheck starts the check stage beside what follows; the channel closes
// when it ends. The stage is recorded as started at once, so the stages
// keep their order.
func (r *kernelRun) goCheck(ctx context.Context, out *apply.Out) <-chan struct{} {
	baseline := r.kr.Builds[vocab.Baseline] // read here: the patched build writes the map
	s := r.begin(StageCheck)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.end(s, r.check(ctx, s, out, baseline))
	}()
	return done
}

// check is the check stage: the patched tree's findings judged against
// the pristine tree's, read with the baseline build's layouts.
func (r *kernelRun) check(ctx context.Context, s *Stage, out *apply.Out, baseline *build.Metadata) error {
	// Its progress (a check tree made, a lock waited for) prints beside
	// the build's and boots' live line, not over it.
	c := *r.o.Cache
	c.Progress = c.Progress.Beside()
	in := CheckStageIn{Cache: &c, Apply: out, Paths: r.paths}
	cp, err := CheckpatchTree(ctx, &c, r.o.Lock, r.k)
	if err != nil {
		return err
	}
	in.CheckpatchTree = cp
	if md := baseline; md != nil && md.Artifacts["vmlinux"] != "" {
		in.BuildDir, in.BuildID = md.BuildDir, md.SHA256["bzImage"]
	}
	// The baseline first: the same check on the pristine tree,
	// recorded apart, its findings an input of the judged check.
	pkey, err := CheckPristineKey(in)
	if err != nil {
		return err
	}
	var pristine checks.Report
	if ok, _ := r.store.Load(r.k.Name, StageCheckPristine, pkey, &pristine); !ok {
		got, err := RunCheckPristine(ctx, in)
		if err != nil {
			return err
		}
		pristine = *got
		if err := r.store.Save(r.k.Name, StageCheckPristine, pkey, pristine, nil); err != nil {
			return err
		}
	}
	in.Pristine = &pristine
	key, err := CheckStageKey(in)
	if err != nil {
		return err
	}
	var rep checks.Report
	if !reuse(r, s, key, &rep) {
		got, err := RunCheckStage(ctx, in)
		if err != nil {
			return err
		}
		rep = *got
		if err := r.record(s, rep); err != nil {
			return err
		}
	}
	r.mu.Lock()
	r.kr.Check = &rep
	r.mu.Unlock()
	s.Detail = errs.Count(rep.Errors(), "new error") + ", " + errs.Count(len(rep.Findings), "finding") +
		fmt.Sprintf(" (%d pre-existing: on the pristine tree too, not judged)", rep.PreExisting())
	if rep.Errors() > 0 {
		return fmt.Errorf("%s: %w", s.Detail, errs.ErrFindings)
	}
	return nil
}

func (r *kernelRun) boot(ctx context.Context, out *apply.Out, variant string) {
	name := "boot-" + variant
	md := r.kr.Builds[variant]
	if md == nil || md.Status != vocab.Pass {
		r.mu.Lock()
		r.kr.Stages = append(r.kr.Stages, &Stage{Name: name, Status: vocab.Skip, Start: time.Now(), Detail: "no kernel image"})
		r.mu.Unlock()
		return
	}
	r.stage(name, func(s *Stage) error {
		m := out.Plan.Manifest
		p, err := boot.Prepare(ctx, boot.Options{Root: r.o.Root, AgentCache: AgentCache(r.o.Cache), Kernel: r.k.Name, Variant: variant, BzImage: md.Artifacts["bzImage"],
			BzImageSHA256: md.SHA256["bzImage"], BuildDir: md.BuildDir, Modules: md.Modules, Transports: r.o.Transports, InlineDataSize: m.Boot.InlineDataSize,
			ExpectInline: m.Boot.Expect(variant), Accel: r.o.Accel, Progress: r.o.Progress, Harness: HarnessNames(md), Reproduce: r.o.Reproduce,
			Known: guestKnown(r.kr.KnownReports)})
		if err != nil {
			return err
		}
		var br boot.Result
		if !reuse(r, s, p.Key(), &br) {
			dir := filepath.Join(r.o.Cache.Dir, "runs", r.k.Name, name, p.Key()[:12])
			got, err := p.Run(ctx, dir)
			if err != nil {
				return errors.Join(err, r.forget(s))
			}
			br = *got
			if br.Verdict == vocab.Pass {
				err = r.record(s, br, br.ConsoleLog, boot.ResultPath(dir))
			} else {
				err = r.forget(s)
			}
			if err != nil {
				return err
			}
		}
		r.kr.Boots[variant] = &br
		c := br.KTAP.Count()
		s.Detail = fmt.Sprintf("%d passed, %d failed, %d skipped (%s)", c.Pass, c.Fail, c.Skip, br.Accel)
		if br.Repro != nil {
			s.Detail += "; reproducer " + br.Repro.Name + ": " + br.Repro.Outcome
			if br.Repro.Outcome == guestconf.ReproShown {
				s.Detail += " (known pre-existing defect: " + br.Repro.Splat + ")"
			}
		}
		for _, k := range br.KnownSplats {
			if k.KernelReport() {
				s.Detail += "; known pre-existing kernel report " + k.Known + " (not the patch's): " + k.Text
			}
		}
		switch br.Verdict {
		case vocab.Fail:
			if d := r.explains(&br, m.Boot.ExpectInline[variant]); len(d) > 0 {
				return fmt.Errorf("%s: %s; not the patch's fault: %w", br.Reason, strings.Join(d, "; "), errKnownDefect)
			}
			return fmt.Errorf("%s: %w", br.Reason, errs.ErrFindings)
		case vocab.Error:
			return fmt.Errorf("%s: %w", br.Reason, errs.ErrEnv)
		}
		return nil
	})
}

// defects finds the known provider defects of this kernel (by its tree's
// version) for the transports run, and its known kernel reports.
func (r *kernelRun) defects(pristine string) {
	v, err := defects.TreeVersion(pristine)
	if err != nil {
		return
	}
	if t := r.o.Defects; t != nil {
		for _, tr := range r.o.Transports {
			r.kr.KnownDefects = append(r.kr.KnownDefects, t.Match(v, tr)...)
		}
	}
	if t := r.o.Reports; t != nil {
		r.kr.KnownReports = t.Match(v)
	}
}

// AgentCache is where the cache keeps built guest agents
// (boot.BuildAgent).
func AgentCache(c *tree.Cache) string { return filepath.Join(c.Dir, "tools", "agent") }

// guestKnown is what the guest's and the console's gates need of known
// kernel reports.
func guestKnown(rs []defects.Report) []guestconf.KnownReport {
	var out []guestconf.KnownReport
	for _, r := range rs {
		out = append(out, guestconf.KnownReport{ID: r.ID, Match: r.Match})
	}
	return out
}

// explains lists the known defects that account for a failed boot: the
// defect's provider is a transport whose tests failed, and the defect
// breaks what the variant does (inline sends, or everything).
func (r *kernelRun) explains(br *boot.Result, inline bool) []string {
	var out []string
	for _, d := range r.kr.KnownDefects {
		if d.Affects == "inline" && !inline {
			continue
		}
		if failedOver(br, d.Provider) {
			out = append(out, d.String())
		}
	}
	return out
}

// failedOver reports whether a test of the transport failed (or the run
// broke off while on it).
func failedOver(br *boot.Result, transport string) bool {
	if br.KTAP == nil {
		return strings.Contains(br.Phase, transport)
	}
	var walk func(t *ktap.Test, path string) bool
	walk = func(t *ktap.Test, path string) bool {
		p := path + "." + t.Name
		if !t.OK && !t.Skip && strings.Contains(p, transport) {
			return true
		}
		for _, c := range t.Subtests {
			if walk(c, p) {
				return true
			}
		}
		return false
	}
	return walk(br.KTAP, "")
}

// compare: the patched kernel shows the inline path, the baseline not,
// by the agent's typed evidence and the one inline rule.
func (r *kernelRun) compare(out *apply.Out) {
	s := &Stage{Name: StageCompare, Status: vocab.Pass, Start: time.Now()}
	r.kr.Stages = append(r.kr.Stages, s)
	var notes []string
	for _, v := range []string{vocab.Baseline, vocab.Patched} {
		b := r.kr.Boots[v]
		if b == nil {
			s.Status, s.Detail = vocab.Skip, "a boot did not run"
			return
		}
		for _, ev := range b.Evidence {
			notes = append(notes, fmt.Sprintf("%s/%s %d inline, %d by reference", v, ev.Transport, ev.Inline, ev.ByRef))
			x := out.Plan.Manifest.Boot.Expect(v)
			if !x.Judged() {
				notes[len(notes)-1] += " (reported, not judged)"
			}
			if err := guestconf.JudgeInline(ev, x); err != nil {
				s.Status = vocab.Fail
				notes[len(notes)-1] += " (" + err.Error() + ")"
			}
		}
	}
	s.Detail = strings.Join(notes, "; ")
	if len(notes) == 0 {
		s.Status, s.Detail = vocab.Fail, "no inline evidence in either boot"
		if b := out.Plan.Manifest.Boot; !b.Expect(vocab.Baseline).Judged() && !b.Expect(vocab.Patched).Judged() {
			s.Status, s.Detail = vocab.Pass, "no inline evidence in either boot (reported, not judged)"
		}
	}
	if s.Status != vocab.Pass {
		r.fail(s, s.Status, s.Detail)
	}
}

// skipRest adds the stages that did not run as skipped.
func (r *kernelRun) skipRest() {
	have := map[string]bool{}
	for _, s := range r.kr.Stages {
		have[s.Name] = true
	}
	for _, n := range Stages {
		if !have[n] {
			r.kr.Stages = append(r.kr.Stages, &Stage{Name: n, Status: vocab.Skip, Start: time.Now(), Detail: "an earlier stage failed"})
		}
	}
}

// selfCPU is the user and system time of this process; childCPU of its
// children that have been waited for.
func selfCPU() time.Duration  { return rusage(syscall.RUSAGE_SELF) }
func childCPU() time.Duration { return rusage(syscall.RUSAGE_CHILDREN) }

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(who, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
