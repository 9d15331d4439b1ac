package build

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/kconfig"
	"github.com/patchctl/patchctl/internal/progress"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/tree"
)

// Variants.
const (
	Baseline = "baseline" // the pristine tree
	Patched  = "patched"  // the tree with the manifest's series
)

// DefaultFragments are built when none are named.
var DefaultFragments = []string{"base", "rdma-loopback", "compile-test"}

// Options say what to build.
type Options struct {
	Root      string // repository: kconfig/ and series/
	Cache     *tree.Cache
	Kernel    *tree.Kernel
	Variant   string
	Fragments []string
	Jobs      int
	Progress  *progress.Reporter
}

// Metadata describes a build, in the shape tuxmake users know.
type Metadata struct {
	Kernel        string            `json:"kernel"`
	Source        string            `json:"source"`
	Variant       string            `json:"variant"`
	KernelRelease string            `json:"kernel_release"`
	ConfigHash    string            `json:"config_hash"`
	Fragments     []string          `json:"fragments"`
	Compiler      string            `json:"compiler"`
	Ccache        bool              `json:"ccache"`
	Jobs          int               `json:"jobs"`
	Duration      float64           `json:"duration_s"`
	UpToDate      bool              `json:"up_to_date"` // make had nothing to do
	Warnings      int               `json:"warnings"`
	Errors        int               `json:"errors"`
	Status        string            `json:"status"` // PASS or FAIL
	Applied       []string          `json:"applied,omitempty"`
	Verified      int               `json:"symbols_verified"`
	CompileTested []string          `json:"compile_tested"`
	BuildDir      string            `json:"build_dir"` // objects (DWARF) of the last variant built
	VariantDir    string            `json:"variant_dir"`
	SourceDir     string            `json:"source_dir"`
	Log           string            `json:"log"`
	Artifacts     map[string]string `json:"artifacts"`
}

// configState is what a build folder records about its configuration.
type configState struct {
	Hash      string            `json:"hash"`
	Fragments []string          `json:"fragments"`
	Requested map[string]string `json:"requested"`
}

// ConfigError is a configuration whose requested symbols did not land.
type ConfigError struct {
	Misses []kconfig.Miss
}

func (e *ConfigError) Error() string {
	var s []string
	for _, m := range e.Misses {
		s = append(s, m.String())
	}
	return fmt.Sprintf("%d requested symbols did not land after olddefconfig:\n  %s", len(e.Misses), strings.Join(s, "\n  "))
}

func (e *ConfigError) Unwrap() error { return errs.ErrInput }

// CompileError is a build that failed, with the first error lines.
type CompileError struct {
	First []string
	Log   string
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("build failed:\n  %s\n(full log: %s)", strings.Join(e.First, "\n  "), e.Log)
}

func (e *CompileError) Unwrap() error { return errs.ErrFindings }

// Dir is the build folder of a kernel and configuration, shared by both
// variants: the source path and the folder never change, so switching
// variant recompiles only what the series changes (kbuild and tools such
// as 6.1's objtool record absolute paths: a copied folder rebuilds all).
func Dir(c *tree.Cache, k *tree.Kernel, hash string) string {
	return filepath.Join(c.Dir, "build", k.Name, hash[:12])
}

// VariantDir holds a variant's snapshot of the artifacts and metadata.
func VariantDir(dir, variant string) string { return filepath.Join(dir, "variants", variant) }

// Locate returns the build folder that Build would use, without building
// (a variant's artifacts are in VariantDir of it).
func Locate(root string, c *tree.Cache, k *tree.Kernel, names []string) (string, error) {
	if len(names) == 0 {
		names = DefaultFragments
	}
	names = withKernelFragment(root, k.Name, names)
	_, hash, err := fragments(root, names)
	if err != nil {
		return "", err
	}
	return Dir(c, k, hash), nil
}

// withKernelFragment adds kconfig/kernel-<name>.config, when it exists:
// what one kernel version needs beyond the shared fragments.
func withKernelFragment(root, kernel string, names []string) []string {
	n := "kernel-" + kernel
	for _, x := range names {
		if x == n {
			return names
		}
	}
	if _, err := os.Stat(filepath.Join(root, "kconfig", n+".config")); err == nil {
		return append(append([]string{}, names...), n)
	}
	return names
}

// fragments reads the named fragments from root/kconfig.
func fragments(root string, names []string) ([]*kconfig.Config, string, error) {
	h := sha256.New()
	var out []*kconfig.Config
	for _, n := range names {
		p := filepath.Join(root, "kconfig", n+".config")
		b, err := os.ReadFile(p)
		if err != nil {
			known, _ := filepath.Glob(filepath.Join(root, "kconfig", "*.config"))
			for i := range known {
				known[i] = strings.TrimSuffix(filepath.Base(known[i]), ".config")
			}
			return nil, "", fmt.Errorf("no fragment %q (kconfig/%s.config); fragments: %s: %w", n, n, strings.Join(known, ", "), errs.ErrInput)
		}
		c, err := kconfig.Parse("kconfig/"+n+".config", strings.NewReader(string(b)))
		if err != nil {
			return nil, "", err
		}
		fmt.Fprintf(h, "%s\n%d\n%s", n, len(b), b)
		out = append(out, c)
	}
	return out, hex.EncodeToString(h.Sum(nil)), nil
}

// Build configures (when the configuration changed) and builds.
func Build(ctx context.Context, o Options) (*Metadata, error) {
	start := time.Now()
	if o.Variant == "" {
		o.Variant = Patched
	}
	if o.Variant != Baseline && o.Variant != Patched {
		return nil, fmt.Errorf("variant %q: want baseline or patched: %w", o.Variant, errs.ErrUsage)
	}
	if len(o.Fragments) == 0 {
		o.Fragments = DefaultFragments
	}
	o.Fragments = withKernelFragment(o.Root, o.Kernel.Name, o.Fragments)
	if o.Jobs <= 0 {
		o.Jobs = runtime.NumCPU()
	}
	if err := CheckHostTools(); err != nil {
		return nil, err
	}
	frags, hash, err := fragments(o.Root, o.Fragments)
	if err != nil {
		return nil, err
	}
	pristine, err := o.Cache.Prepare(ctx, o.Kernel)
	if err != nil {
		return nil, err
	}
	// One build of a kernel at a time, across processes: both variants
	// share the work tree.
	unlock, err := tree.Exclusive(o.Cache.LockPath("build-" + o.Kernel.Name))
	if err != nil {
		return nil, err
	}
	defer unlock()
	md := &Metadata{Kernel: o.Kernel.Name, Variant: o.Variant, ConfigHash: hash, Fragments: o.Fragments, Jobs: o.Jobs,
		Source: o.Kernel.Key(), Artifacts: map[string]string{}}
	src, touched, applied, err := prepareSource(o, pristine)
	if err != nil {
		return nil, err
	}
	md.SourceDir, md.Applied = src.Dir, applied
	dir := Dir(o.Cache, o.Kernel, hash)
	migrate(o.Cache, o.Kernel, hash, dir)
	md.BuildDir, md.VariantDir = dir, VariantDir(dir, o.Variant)
	md.Log = filepath.Join(md.VariantDir, "build.log")
	if err := os.MkdirAll(md.VariantDir, 0o755); err != nil {
		return nil, err
	}
	// make compares times, and the reset to pristine brings back files
	// older than the objects built from the series: when the folder's
	// objects come from another state of the touched files, give those
	// files a new inode and time so make recompiles exactly them.
	state, err := sourceState(src.Dir, touched)
	if err != nil {
		return nil, err
	}
	stateFile := filepath.Join(dir, ".patchctl-source-state")
	if old, _ := os.ReadFile(stateFile); string(old) != state {
		if err := freshen(src.Dir, touched); err != nil {
			return nil, err
		}
	}
	os.Remove(stateFile) // rewritten only after a successful build
	if err := os.MkdirAll(md.VariantDir, 0o755); err != nil {
		return nil, err
	}
	m := &maker{src: src.Dir, dir: dir, jobs: o.Jobs, progress: o.Progress}
	m.ccache = os.Getenv("PATCHCTL_NO_CCACHE") == ""
	if _, err := exec.LookPath("ccache"); err != nil {
		m.ccache = false
	}
	md.Ccache = m.ccache
	st, err := configure(ctx, m, pristine, frags, hash, o.Fragments)
	if err != nil {
		return nil, err
	}
	md.Verified = len(st.Requested)

	logf, err := os.Create(md.Log)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	m.log = logf
	o.Progress.Start(fmt.Sprintf("build %s %s", o.Kernel.Name, o.Variant))
	res, err := m.make(ctx, "bzImage")
	md.Warnings, md.Errors = res.warnings, res.errors
	if err != nil {
		return finish(md, start, err)
	}
	work := res.work
	// Compile-test every C file the manifest's patches touch that the
	// tree has, whether or not the boot config needs it.
	targets := compileTargets(src.Dir, touched)
	if len(targets) > 0 {
		res, err := m.make(ctx, targets...)
		md.Warnings += res.warnings
		md.Errors += res.errors
		work += res.work
		if err != nil {
			return finish(md, start, err)
		}
		md.CompileTested = targets
	}
	md.UpToDate = work == 0
	if b, err := os.ReadFile(filepath.Join(dir, "include", "config", "kernel.release")); err == nil {
		md.KernelRelease = strings.TrimSpace(string(b))
	}
	md.Compiler = compilerVersion()
	// Snapshot the variant's artifacts: the folder's own are the next
	// variant's once it builds.
	for name, rel := range map[string]string{"bzImage": "arch/x86/boot/bzImage", "System.map": "System.map", "config": ".config"} {
		dst := filepath.Join(md.VariantDir, filepath.Base(rel))
		if err := copyFile(filepath.Join(dir, rel), dst); err == nil {
			md.Artifacts[name] = dst
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "vmlinux")); err == nil {
		md.Artifacts["vmlinux"] = filepath.Join(dir, "vmlinux")
	}
	if err := os.WriteFile(stateFile, []byte(state), 0o644); err != nil {
		return finish(md, start, err)
	}
	if md.UpToDate {
		o.Progress.Done("up to date")
	} else {
		o.Progress.Done("%s built (%d objects)", md.KernelRelease, work)
	}
	return finish(md, start, nil)
}

func finish(md *Metadata, start time.Time, err error) (*Metadata, error) {
	md.Duration = time.Since(start).Seconds()
	md.Status = "PASS"
	if err != nil {
		md.Status = "FAIL"
	}
	if b, jerr := json.MarshalIndent(md, "", "  "); jerr == nil && md.VariantDir != "" {
		os.WriteFile(filepath.Join(md.VariantDir, "metadata.json"), append(b, '\n'), 0o644)
	}
	return md, err
}

// prepareSource puts the work tree into the variant's state: pristine for
// baseline, the manifest's series for patched. It returns the paths the
// manifest's patches touch (all of them, applied or not) and the patches
// applied.
func prepareSource(o Options, pristine string) (wt *tree.WorkTree, touched, applied []string, err error) {
	wt, err = o.Cache.WorkTree(o.Kernel)
	if err != nil {
		return nil, nil, nil, err
	}
	plan, err := apply.LoadPlan(o.Root, o.Kernel.Name, "")
	if err != nil {
		return nil, nil, nil, err
	}
	seen := map[string]bool{}
	for _, p := range plan.Patches {
		for _, f := range p.Files {
			for _, n := range []string{f.OldName, f.NewName} {
				if n != "" && !seen[n] {
					seen[n] = true
					touched = append(touched, n)
				}
			}
		}
	}
	sort.Strings(touched)
	res := &apply.SeriesResult{Files: map[string][]byte{}}
	if o.Variant == Patched {
		if res, err = plan.Run(pristine); err != nil {
			return nil, nil, nil, err
		}
		if mm := res.Mismatches(); len(mm) > 0 {
			return nil, nil, nil, fmt.Errorf("%s: %s is %s, the manifest expects %s (see patchctl apply --kernel %s): %w",
				o.Kernel.Name, mm[0].Source, mm[0].Disposition, mm[0].Expected, o.Kernel.Name, errs.ErrFindings)
		}
	}
	if err := apply.Commit(wt, res); err != nil {
		return nil, nil, nil, fmt.Errorf("putting the %s work tree into the %s state: %w", o.Kernel.Name, o.Variant, err)
	}
	for _, r := range res.Results {
		if series.IsApplied(r.Disposition) {
			applied = append(applied, r.Source)
		}
	}
	return wt, touched, applied, nil
}

// sourceState hashes the touched files as the work tree has them.
func sourceState(src string, touched []string) (string, error) {
	h := sha256.New()
	for _, p := range touched {
		b, err := os.ReadFile(filepath.Join(src, p))
		if err != nil && !os.IsNotExist(err) {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", p, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// freshen replaces each file by a copy of itself: a new inode (never a
// link into the pristine tree) with the time of now.
func freshen(src string, touched []string) error {
	for _, p := range touched {
		full := filepath.Join(src, p)
		b, err := os.ReadFile(full)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return err
		}
		st, err := os.Stat(full)
		if err != nil {
			return err
		}
		tmp := full + ".patchctl-tmp"
		if err := os.WriteFile(tmp, b, st.Mode().Perm()); err != nil {
			return err
		}
		if err := os.Rename(tmp, full); err != nil {
			return err
		}
	}
	return nil
}

// migrate renames a build folder of the former layout (one per variant)
// to the shared one, and drops the other variant's folder.
func migrate(c *tree.Cache, k *tree.Kernel, hash, dir string) {
	old := filepath.Join(c.Dir, "build", k.Name, "baseline-"+hash[:12])
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		if _, err := os.Stat(old); err == nil {
			os.Rename(old, dir)
		}
	}
	os.RemoveAll(old)
	os.RemoveAll(filepath.Join(c.Dir, "build", k.Name, "patched-"+hash[:12]))
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	tmp := dst + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// configure makes the folder's .config when the fragments changed:
// tinyconfig, merge, olddefconfig, verify.
func configure(ctx context.Context, m *maker, pristine string, frags []*kconfig.Config, hash string, names []string) (*configState, error) {
	statePath := filepath.Join(m.dir, ".patchctl-config.json")
	var st configState
	if b, err := os.ReadFile(statePath); err == nil && json.Unmarshal(b, &st) == nil && st.Hash == hash {
		if _, err := os.Stat(filepath.Join(m.dir, ".config")); err == nil {
			return &st, nil
		}
	}
	m.progress.Start("configure " + filepath.Base(m.dir))
	m.log = io.Discard
	if _, err := m.make(ctx, "tinyconfig"); err != nil {
		return nil, fmt.Errorf("make tinyconfig: %w", err)
	}
	base, err := kconfig.Load(filepath.Join(m.dir, ".config"))
	if err != nil {
		return nil, err
	}
	merged, _ := kconfig.Merge(base, frags...)
	f, err := os.Create(filepath.Join(m.dir, ".config"))
	if err != nil {
		return nil, err
	}
	if err := merged.Write(f); err != nil {
		f.Close()
		return nil, err
	}
	f.Close()
	if _, err := m.make(ctx, "olddefconfig"); err != nil {
		return nil, fmt.Errorf("make olddefconfig: %w", err)
	}
	final, err := kconfig.Load(filepath.Join(m.dir, ".config"))
	if err != nil {
		return nil, err
	}
	req := kconfig.Requested(frags...)
	if miss := kconfig.Verify(req, final, nil); len(miss) > 0 {
		db, err := kconfig.LoadDB(pristine, "x86")
		if err == nil {
			miss = kconfig.Verify(req, final, db)
		}
		os.Remove(statePath)
		return nil, &ConfigError{Misses: miss}
	}
	st = configState{Hash: hash, Fragments: names, Requested: req}
	b, _ := json.MarshalIndent(st, "", "  ")
	if err := os.WriteFile(statePath, b, 0o644); err != nil {
		return nil, err
	}
	m.progress.Done("%d requested symbols verified", len(req))
	return &st, nil
}

// compileTargets lists the objects of touched C files present in the tree.
func compileTargets(src string, touched []string) []string {
	var out []string
	for _, p := range touched {
		if !strings.HasSuffix(p, ".c") {
			continue
		}
		if _, err := os.Stat(filepath.Join(src, p)); err != nil {
			continue
		}
		out = append(out, strings.TrimSuffix(p, ".c")+".o")
	}
	return out
}

func compilerVersion() string {
	out, err := exec.Command("gcc", "--version").Output()
	if err != nil {
		return ""
	}
	return strings.SplitN(string(out), "\n", 2)[0]
}

// maker runs make in the source tree with O=dir.
type maker struct {
	src, dir string
	jobs     int
	ccache   bool
	log      io.Writer
	progress *progress.Reporter
}

type makeResult struct {
	work, warnings, errors int
	firstErrors            []string
}

// alwaysRun are the quiet-mode steps kbuild prints on every run, even when
// nothing is rebuilt: they are not work.
var alwaysRun = map[string]bool{"GEN": true, "DESCEND": true, "CALL": true, "INSTALL": true, "SYNC": true, "CHK": true}

var (
	quietLine = regexp.MustCompile(`^\s+([A-Z0-9_]+)\s+(\S+)`) // "  CC      kernel/fork.o"
	errorLine = regexp.MustCompile(`^(\S+?):(\d+):(\d+:)? (fatal )?error: `)
)

func (m *maker) make(ctx context.Context, targets ...string) (makeResult, error) {
	var res makeResult
	args := []string{"-C", m.src, "O=" + m.dir, fmt.Sprintf("-j%d", m.jobs),
		"KBUILD_BUILD_USER=patchctl", "KBUILD_BUILD_HOST=patchctl"}
	if m.ccache {
		args = append(args, "CC=ccache gcc", "HOSTCC=ccache gcc")
	}
	args = append(args, targets...)
	cmd := exec.CommandContext(ctx, "make", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return res, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if m.log != nil {
				fmt.Fprintln(m.log, line)
			}
			if q := quietLine.FindStringSubmatch(line); q != nil && !alwaysRun[q[1]] {
				res.work++
				m.progress.Update("%s %s", q[1], q[2])
			}
			if strings.Contains(line, "warning:") {
				res.warnings++
			}
			if errorLine.MatchString(line) || strings.HasPrefix(line, "make") && strings.Contains(line, "Error ") {
				res.errors++
				if len(res.firstErrors) < 6 {
					res.firstErrors = append(res.firstErrors, line)
				}
			}
		}
	}()
	err := cmd.Wait()
	pw.Close()
	<-done
	if err != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("build interrupted; %s is kept and the next build goes on from it: %w", m.dir, ctx.Err())
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			first := res.firstErrors
			if len(first) == 0 {
				first = []string{"make " + strings.Join(targets, " ") + ": " + err.Error()}
			}
			return res, &CompileError{First: first, Log: logName(m.log)}
		}
		return res, err
	}
	return res, nil
}

func logName(w io.Writer) string {
	if f, ok := w.(*os.File); ok {
		return f.Name()
	}
	return "(not kept)"
}
