package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/patchctl/patchctl/checks"
	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/boot"
	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/progress"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/tree"
)

// Statuses, as KCIDB names them.
const (
	Pass  = "PASS"
	Fail  = "FAIL"
	Error = "ERROR"
	Skip  = "SKIP"
	Done  = "DONE"
)

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
}

// Stage is one stage's outcome.
type Stage struct {
	Name      string    `json:"name"`
	Status    string    `json:"status"`
	Start     time.Time `json:"start_time"`
	Duration  float64   `json:"duration_s"`
	Reused    bool      `json:"reused"`
	Detail    string    `json:"detail,omitempty"`
	InputHash string    `json:"input_hash,omitempty"`
}

// Kernel is one kernel's run.
type Kernel struct {
	Name     string                     `json:"kernel"`
	Source   string                     `json:"source"`
	Stages   []*Stage                   `json:"stages"`
	Apply    []*apply.Result            `json:"apply,omitempty"`
	Patches  []string                   `json:"patches,omitempty"` // series/<kernel>/*.patch applied, in order
	Check    *checks.Report             `json:"check,omitempty"`
	Builds   map[string]*build.Metadata `json:"builds,omitempty"`
	Boots    map[string]*boot.Result    `json:"boots,omitempty"`
	Verdict  string                     `json:"verdict"`
	Reason   string                     `json:"reason,omitempty"`
	Start    time.Time                  `json:"start_time"`
	Duration float64                    `json:"duration_s"`
}

// Result is a whole run.
type Result struct {
	Kernels  []*Kernel `json:"kernels"`
	Verdict  string    `json:"verdict"`
	Duration float64   `json:"duration_s"`
}

// Run runs the pipeline for each kernel.
func Run(ctx context.Context, o Options) (*Result, error) {
	start := time.Now()
	names := o.Kernels
	if len(names) == 0 {
		names = o.Lock.Names()
	}
	if len(o.Transports) == 0 {
		o.Transports = []string{"rxe", "siw"}
	}
	var ks []*tree.Kernel
	for _, n := range names {
		k, err := o.Lock.Find(n)
		if err != nil {
			return nil, err
		}
		ks = append(ks, k)
	}
	parallel := runtime.NumCPU() >= 2*len(ks) && len(ks) > 1
	if o.Parallel != nil {
		parallel = *o.Parallel
	}
	res := &Result{Kernels: make([]*Kernel, len(ks)), Verdict: Pass}
	jobs := runtime.NumCPU()
	if parallel {
		jobs = max(1, runtime.NumCPU()/len(ks))
	}
	var wg sync.WaitGroup
	for i, k := range ks {
		run := func(i int, k *tree.Kernel) {
			res.Kernels[i] = runKernel(ctx, o, k, jobs)
		}
		if parallel {
			wg.Add(1)
			go func(i int, k *tree.Kernel) { defer wg.Done(); run(i, k) }(i, k)
		} else {
			run(i, k)
		}
	}
	wg.Wait()
	for _, k := range res.Kernels {
		if k.Verdict != Pass && res.Verdict != Error {
			res.Verdict = k.Verdict
		}
	}
	res.Duration = time.Since(start).Seconds()
	return res, nil
}

// stageCache records, per kernel, the input hash and outcome of each
// stage's last successful run.
type stageCache struct {
	path    string
	Entries map[string]json.RawMessage `json:"entries"`
	Hashes  map[string]string          `json:"hashes"`
}

func loadStageCache(c *tree.Cache, kernel string) *stageCache {
	sc := &stageCache{path: filepath.Join(c.Dir, "runs", kernel, "stages.json"), Entries: map[string]json.RawMessage{}, Hashes: map[string]string{}}
	if b, err := os.ReadFile(sc.path); err == nil {
		json.Unmarshal(b, sc)
		sc.path = filepath.Join(c.Dir, "runs", kernel, "stages.json")
	}
	return sc
}

func (sc *stageCache) get(stage, hash string, v any) bool {
	if sc.Hashes[stage] != hash {
		return false
	}
	raw, ok := sc.Entries[stage]
	return ok && json.Unmarshal(raw, v) == nil
}

func (sc *stageCache) put(stage, hash string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	sc.Entries[stage], sc.Hashes[stage] = b, hash
	os.MkdirAll(filepath.Dir(sc.path), 0o755)
	if out, err := json.Marshal(sc); err == nil {
		tmp := sc.path + ".tmp"
		if os.WriteFile(tmp, out, 0o644) == nil {
			os.Rename(tmp, sc.path)
		}
	}
}

func (sc *stageCache) forget(stage string) { delete(sc.Hashes, stage) }

// hasher hashes inputs.
type hasher struct{ h []string }

func (x *hasher) add(parts ...string) *hasher { x.h = append(x.h, parts...); return x }

// file adds files by name and content (not by their folder: the same
// inputs in another checkout hash the same).
func (x *hasher) file(paths ...string) *hasher {
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			x.h = append(x.h, filepath.Base(p)+":missing")
			continue
		}
		s := sha256.Sum256(b)
		x.h = append(x.h, filepath.Base(p)+":"+hex.EncodeToString(s[:]))
	}
	return x
}

func (x *hasher) sum() string {
	s := sha256.Sum256([]byte(strings.Join(x.h, "\n")))
	return hex.EncodeToString(s[:])
}

func runKernel(ctx context.Context, o Options, k *tree.Kernel, jobs int) *Kernel {
	kr := &Kernel{Name: k.Name, Source: k.Key(), Builds: map[string]*build.Metadata{}, Boots: map[string]*boot.Result{}, Start: time.Now(), Verdict: Pass}
	sc := loadStageCache(o.Cache, k.Name)
	defer func() { kr.Duration = time.Since(kr.Start).Seconds() }()
	stage := func(name string) *Stage {
		s := &Stage{Name: name, Status: Pass, Start: time.Now()}
		kr.Stages = append(kr.Stages, s)
		return s
	}
	fail := func(s *Stage, status, detail string) {
		s.Status, s.Detail = status, detail
		if kr.Verdict == Pass || status == Error {
			kr.Verdict, kr.Reason = status, s.Name+": "+detail
		}
	}
	timed := func(s *Stage, t time.Time) { s.Duration = time.Since(t).Seconds() }

	// prepare
	s, t := stage("prepare"), time.Now()
	pristine, err := o.Cache.Prepare(ctx, k)
	timed(s, t)
	if err != nil {
		fail(s, Error, err.Error())
		return skipRest(kr)
	}

	// apply: computed every time (a fraction of a second)
	s, t = stage("apply"), time.Now()
	plan, err := apply.LoadPlan(o.Root, k.Name, "")
	if err != nil {
		fail(s, Error, err.Error())
		return skipRest(kr)
	}
	res, err := plan.Run(pristine)
	timed(s, t)
	if err != nil {
		fail(s, Error, err.Error())
		return skipRest(kr)
	}
	kr.Apply = res.Results
	ref := apply.Refresh(res)
	for _, n := range ref.Order {
		kr.Patches = append(kr.Patches, filepath.Join(plan.Manifest.Dir(), n))
	}
	var problems []string
	for _, m := range res.Mismatches() {
		problems = append(problems, fmt.Sprintf("%s is %s, the manifest expects %s", m.Source, m.Disposition, m.Expected))
	}
	if d := ref.Diff(plan.Manifest.Dir()); len(d) > 0 {
		problems = append(problems, fmt.Sprintf("series/%s differs from what refresh generates: %s", k.Name, strings.Join(d, ", ")))
	}
	applied := 0
	for _, r := range res.Results {
		if series.IsApplied(r.Disposition) {
			applied++
		}
	}
	s.Detail = fmt.Sprintf("%d of %d patches apply; dispositions as the manifest says", applied, len(res.Results))
	if len(problems) > 0 {
		fail(s, Fail, strings.Join(problems, "; "))
		return skipRest(kr)
	}
	seriesHash := (&hasher{}).add(k.Key()).file(plan.Manifest.Path())
	for _, e := range plan.Entries {
		seriesHash.file(filepath.Join(o.Root, e.Source))
	}
	for _, p := range res.Touched() {
		sum := sha256.Sum256(res.Files[p])
		seriesHash.add(p, hex.EncodeToString(sum[:]))
	}
	s.InputHash = seriesHash.sum()
	frags := (&hasher{}).add(k.Key())
	for _, f := range append(build.DefaultFragments, "kernel-"+k.Name) {
		frags.file(filepath.Join(o.Root, "kconfig", f+".config"))
	}

	// build baseline (before the work tree takes the series)
	builds := map[string]string{build.Baseline: frags.sum(), build.Patched: (&hasher{}).add(frags.sum(), seriesHash.sum()).sum()}
	doBuild := func(variant string) bool {
		s, t := stage("build-"+variant), time.Now()
		s.InputHash = builds[variant]
		var md build.Metadata
		// Reuse only a build whose artifacts are its variant's snapshot
		// and still there.
		if sc.get(s.Name, s.InputHash, &md) && md.VariantDir != "" && strings.HasPrefix(md.Artifacts["bzImage"], md.VariantDir) && fileExists(md.Artifacts["bzImage"]) {
			s.Reused, s.Detail = true, md.KernelRelease+" (reused)"
			kr.Builds[variant] = &md
			timed(s, t)
			return true
		}
		m, err := build.Build(ctx, build.Options{Root: o.Root, Cache: o.Cache, Kernel: k, Variant: variant, Jobs: jobs, Progress: o.Progress})
		timed(s, t)
		if m != nil {
			kr.Builds[variant] = m
		}
		if err != nil {
			sc.forget(s.Name)
			fail(s, Fail, err.Error())
			return false
		}
		s.Detail = fmt.Sprintf("%s in %.0fs", m.KernelRelease, m.Duration)
		sc.put(s.Name, s.InputHash, m)
		return true
	}
	baseOK := doBuild(build.Baseline)

	// the work tree with the series, for the checks and the patched build
	wt, err := o.Cache.WorkTree(k)
	if err == nil {
		err = apply.Commit(wt, res)
	}
	if err != nil {
		s := stage("check")
		fail(s, Error, err.Error())
		return skipRest(kr)
	}

	// check
	s, t = stage("check"), time.Now()
	exe, _ := os.Executable()
	s.InputHash = (&hasher{}).add(seriesHash.sum()).file(exe).file(kr.Patches...).sum()
	var rep checks.Report
	if sc.get("check", s.InputHash, &rep) {
		s.Reused = true
	} else {
		co := checks.Options{Tree: wt.Dir, Patches: kr.Patches}
		if dir, err := build.Locate(o.Root, o.Cache, k, nil); err == nil && fileExists(filepath.Join(dir, "vmlinux")) {
			co.BuildDir = dir
		}
		r, err := checks.Run(co)
		if err != nil {
			timed(s, t)
			fail(s, Error, err.Error())
			return skipRest(kr)
		}
		rep = *r
		if rep.Errors() == 0 {
			sc.put("check", s.InputHash, rep)
		}
	}
	timed(s, t)
	kr.Check = &rep
	s.Detail = fmt.Sprintf("%d errors, %d findings", rep.Errors(), len(rep.Findings))
	if rep.Errors() > 0 {
		fail(s, Fail, s.Detail)
	}

	patchedOK := doBuild(build.Patched)

	// boots
	agent := (&hasher{})
	if srcs, _ := filepath.Glob(filepath.Join(o.Root, "qemu", "agent", "*.go")); len(srcs) > 0 {
		sort.Strings(srcs)
		agent.file(srcs...)
	}
	agent.file(filepath.Join(o.Root, "go.sum"))
	for _, v := range []string{build.Baseline, build.Patched} {
		s, t := stage("boot-"+v), time.Now()
		md := kr.Builds[v]
		if md == nil || (v == build.Baseline && !baseOK) || (v == build.Patched && !patchedOK) {
			s.Status, s.Detail = Skip, "no kernel image"
			continue
		}
		s.InputHash = (&hasher{}).add(agent.sum(), strings.Join(o.Transports, ","), strconv.Itoa(plan.Manifest.Boot.InlineDataSize),
			strconv.FormatBool(plan.Manifest.Boot.ExpectInline[v])).file(md.Artifacts["bzImage"]).sum()
		var br boot.Result
		if sc.get(s.Name, s.InputHash, &br) && fileExists(br.ConsoleLog) {
			s.Reused = true
		} else {
			r, err := boot.Run(ctx, boot.Options{Root: o.Root, Kernel: k.Name, Variant: v, BzImage: md.Artifacts["bzImage"], BuildDir: md.BuildDir,
				OutDir: filepath.Join(o.Cache.Dir, "runs", k.Name, "boot-"+v), Transports: o.Transports,
				InlineDataSize: plan.Manifest.Boot.InlineDataSize, ExpectInline: plan.Manifest.Boot.ExpectInline[v], Progress: o.Progress})
			if err != nil {
				timed(s, t)
				fail(s, Error, err.Error())
				continue
			}
			br = *r
			if br.Verdict == "pass" {
				sc.put(s.Name, s.InputHash, br)
			} else {
				sc.forget(s.Name)
			}
		}
		timed(s, t)
		kr.Boots[v] = &br
		c := br.KTAP.Count()
		s.Detail = fmt.Sprintf("%d passed, %d failed, %d skipped (%s)", c.Pass, c.Fail, c.Skip, br.Accel)
		switch br.Verdict {
		case "fail":
			fail(s, Fail, br.Reason)
		case "error":
			fail(s, Error, br.Reason)
		}
	}

	// compare: the patched kernel shows the inline path, the baseline not
	s = stage("compare")
	s.Status, s.Detail = compare(kr, plan.Manifest.Boot.ExpectInline)
	if s.Status != Pass {
		fail(s, s.Status, s.Detail)
	}
	return kr
}

var capsuleRe = regexp.MustCompile(`capsule sends without in-capsule data: (\d+) inline, (\d+) by reference`)

// compare reads the inline evidence of both boots per transport.
func compare(kr *Kernel, expect map[string]bool) (string, string) {
	var notes []string
	status := Pass
	for _, v := range []string{build.Baseline, build.Patched} {
		b := kr.Boots[v]
		if b == nil || b.KTAP == nil {
			return Skip, "a boot did not run"
		}
		for _, tr := range b.KTAP.Subtests {
			ev := tr.Find("inline_evidence")
			if ev == nil {
				continue
			}
			for _, d := range ev.Diagnostics {
				m := capsuleRe.FindStringSubmatch(d)
				if m == nil {
					continue
				}
				in, _ := strconv.Atoi(m[1])
				ref, _ := strconv.Atoi(m[2])
				notes = append(notes, fmt.Sprintf("%s/%s %d inline, %d by reference", v, tr.Name, in, ref))
				if expect[v] && (in == 0 || ref > 0) || !expect[v] && in > 0 {
					status = Fail
				}
			}
		}
	}
	if len(notes) == 0 {
		return Fail, "no inline evidence in either boot"
	}
	return status, strings.Join(notes, "; ")
}

func skipRest(kr *Kernel) *Kernel {
	have := map[string]bool{}
	for _, s := range kr.Stages {
		have[s.Name] = true
	}
	for _, n := range []string{"prepare", "apply", "build-baseline", "check", "build-patched", "boot-baseline", "boot-patched", "compare"} {
		if !have[n] {
			kr.Stages = append(kr.Stages, &Stage{Name: n, Status: Skip, Detail: "an earlier stage failed"})
		}
	}
	return kr
}

func fileExists(p string) bool {
	if p == "" {
		return false
	}
	_, err := os.Stat(p)
	return err == nil
}
