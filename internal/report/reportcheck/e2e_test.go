package reportcheck

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/testenv"
	"gopkg.in/yaml.v3"
)

// The workflow simulated end to end (make test-ci-e2e): the kernel job of
// .github/workflows/patchctl.yml for one kernel, then the verdict job, as
// GitHub's runner would run them. The steps are read from the workflow
// (the same steps in the same order, its expressions and if: conditions
// evaluated), each run: step with the runner's shell (bash -eo pipefail)
// in a fresh checkout, in a mount namespace that stands for a runner
// without /dev/kvm (a /dev of its own without it). docker is
// dockersim.sh: scripts/ci/container's debian:bookworm is the job-image
// test's bookworm root filesystem, each `docker exec` a chroot with the
// binds, variables and devices the script asked for. The uses: steps are
// simulated: checkout and setup-go are the checkout and the host's Go;
// the cache restore is a restore-keys hit of an older entry (the
// kernel's source package and the host's ccache, copied, no build
// folders: kbuild builds, ccache answers when the compiler matches); the
// save reports the sizes; upload-artifact and upload-sarif check their
// paths, and the reports pass the reference validators (Folder).
//
// It builds two kernels (baseline, patched) and boots both under TCG: an
// hour or more on 2 cores with a cold ccache. PATCHCTL_TEST_CI_E2E=1 runs
// it; PATCHCTL_TEST_CI_KERNEL names the kernel (default 6.12), and
// PATCHCTL_TEST_CI_LOCK a lock file held (flock) while a step builds
// kernels, for a machine that serializes its kernel builds.
// PATCHCTL_TEST_CI_WARM=1 simulates an exact cache hit instead: the
// kernel's build folders of this machine's cache restored as well.

//go:embed dockersim.sh
var dockerSim string

type wfStep struct {
	Name string
	ID   string
	If   string
	Run  string
	Uses string
	With map[string]string
}

func TestJobImageWorkflow(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and boots a kernel: make test-ci-e2e")
	}
	if os.Getenv("PATCHCTL_TEST_CI_E2E") == "" {
		t.Skip("the workflow simulation runs under make test-ci-e2e (PATCHCTL_TEST_CI_E2E=1)")
	}
	if os.Geteuid() != 0 {
		testenv.Unavailable(t, "the workflow simulation mounts (chroot, /dev of its own): run it as root")
	}
	for _, tool := range []string{"mmdebstrap", "unshare", "chroot", "tar", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Unavailable(t, tool+" not installed (apt-get install mmdebstrap util-linux coreutils tar git)")
		}
	}
	kernel := os.Getenv("PATCHCTL_TEST_CI_KERNEL")
	if kernel == "" {
		kernel = jobImageKernel
	}
	repo := testenv.RepoRoot(t)
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	bin := filepath.Join(tmp, "bin")
	state := filepath.Join(tmp, "docker")
	for _, d := range []string{home, bin, state, filepath.Join(tmp, "runner-temp"), filepath.Join(tmp, "hostdev")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "docker"), []byte(dockerSim), 0o755); err != nil {
		t.Fatal(err)
	}
	checkout := freshCheckout(t, repo, filepath.Join(tmp, "work", "patchctl", "patchctl"))

	// debian:bookworm: the job-image test's kernel root filesystem, with
	// the sandbox's network settings (resolver, CA bundle, apt's local
	// settings) a runner would not need
	out, err := exec.Command(filepath.Join(checkout, "scripts", "ci", "packages"), "kernel").Output()
	if err != nil {
		t.Fatalf("scripts/ci/packages kernel: %v", err)
	}
	rootfs := rootWith(t, strings.Fields(string(out)))
	hostNetwork(t, rootfs)

	data, err := os.ReadFile(filepath.Join(checkout, ".github", "workflows", "patchctl.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct{ Steps []wfStep }
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("the workflow: %v", err)
	}
	goroot := strings.TrimSpace(goEnv(t, "GOROOT"))
	sim := &runner{t: t, tmp: tmp, home: home, checkout: checkout, kernel: kernel, outputs: map[string]map[string]string{},
		env: []string{
			"PATH=" + bin + ":" + goroot + "/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			"HOME=" + home, "LANG=C.UTF-8", "CI=true", "GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=push",
			"GITHUB_WORKSPACE=" + checkout, "RUNNER_OS=Linux", "RUNNER_TEMP=" + filepath.Join(tmp, "runner-temp"),
			"DOCKER_SIM_STATE=" + state, "DOCKER_SIM_ROOTFS=" + rootfs,
		}}
	start, cpu0 := time.Now(), childCPU()
	sim.job(wf.Jobs["kernel"].Steps, "")
	kernelFailed := sim.failed
	t.Logf("kernel job: %s wall, %s CPU (user+sys of every process it ran)", time.Since(start).Round(time.Second), (childCPU() - cpu0).Round(time.Second))

	result := "success"
	if kernelFailed {
		result = "failure"
	}
	sim.failed = false
	sim.job(wf.Jobs["verdict"].Steps, result)
	if sim.failed || kernelFailed {
		t.Errorf("the workflow run fails (kernel job %s)", result)
	}
	if !strings.Contains(sim.log, "every kernel passed") {
		t.Errorf("the verdict job does not say every kernel passed")
	}

	// The job summary: which accelerator, said by the container's start
	// (the runner has no /dev/kvm) and by the run (what the boots used);
	// the JUnit results as a table.
	for _, want := range []string{
		"no /dev/kvm on this runner: boots run under TCG",
		"Boots of kernel " + kernel + ": TCG",
		"Boots of kernel " + kernel + " ran under tcg",
		"## Test results",
	} {
		if !strings.Contains(sim.summary, want) {
			t.Errorf("the job summary does not say %q:\n%s", want, sim.summary)
		}
	}

	// The artifact: every report, the verdict PASS, every boot under TCG.
	run := filepath.Join(checkout, "out", "run")
	for _, f := range []string{"check-" + kernel + ".sarif", "junit.xml", "kcidb.json", "result.json", "summary.txt",
		"build-" + kernel + "-baseline.json", "build-" + kernel + "-patched.json",
		"console-" + kernel + "-baseline.log", "console-" + kernel + "-patched.log"} {
		if _, err := os.Stat(filepath.Join(run, f)); err != nil {
			t.Errorf("the artifact lacks %s", f)
		}
	}
	if s, _ := os.ReadFile(filepath.Join(run, "summary.txt")); !regexp.MustCompile(`(?m)^verdict: PASS`).Match(s) {
		t.Errorf("the run's verdict is not PASS:\n%s", s)
	}
	if accels := accelsOf(t, filepath.Join(run, "result.json")); len(accels) == 0 || strings.Join(accels, ",") != "tcg" {
		t.Errorf("boots ran under %v: want tcg only (no /dev/kvm in the job's container)", accels)
	}
	trees, _ := filepath.Glob(filepath.Join(home, ".cache", "patchctl", "trees", "*", "tools", "testing", "kunit", "kunit_parser.py"))
	if len(trees) == 0 {
		t.Fatalf("no prepared tree in the job's cache")
	}
	tree := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(trees[0]))))
	if problems := Folder(t, run, tree); len(problems) > 0 {
		t.Errorf("the reports fail their validators:\n%s", strings.Join(problems, "\n"))
	}
}

// runner runs a job's steps as GitHub's runner would.
type runner struct {
	t        *testing.T
	tmp      string
	home     string
	checkout string
	kernel   string
	env      []string
	outputs  map[string]map[string]string
	failed   bool
	summary  string
	log      string
}

var expr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// job runs steps in order: a step runs when no earlier one failed, or
// when its if: holds always(); result is needs.kernel.result.
func (r *runner) job(steps []wfStep, result string) {
	t := r.t
	if len(steps) == 0 {
		t.Fatal("the workflow has no such job")
	}
	for i, s := range steps {
		name := s.Name
		if name == "" {
			name = s.Uses + s.Run
		}
		if !r.cond(s.If) {
			t.Logf("step %d %q: skipped (if: %s)", i+1, name, s.If)
			continue
		}
		start, cpu0 := time.Now(), childCPU()
		var err error
		if s.Run != "" {
			unlock := r.lockKernelBuild(r.expand(s.Run, result))
			err = r.run(s, result)
			unlock()
		} else {
			err = r.uses(s)
		}
		status := "ok"
		if err != nil {
			r.failed = true
			status = "FAILED: " + err.Error()
			t.Errorf("step %d %q: %v", i+1, name, err)
		}
		t.Logf("step %d %q: %s in %s wall, %s CPU", i+1, name, status, time.Since(start).Round(time.Second), (childCPU() - cpu0).Round(time.Second))
	}
}

// lockKernelBuild takes $PATCHCTL_TEST_CI_LOCK (when set) for a step that
// builds kernels (scripts/ci/kernel run), so that on a shared machine one
// kernel build runs at a time, and returns its release.
func (r *runner) lockKernelBuild(script string) func() {
	path := os.Getenv("PATCHCTL_TEST_CI_LOCK")
	if path == "" || !strings.Contains(script, "scripts/ci/kernel run") {
		return func() {}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		r.t.Fatalf("the kernel build lock: %v", err)
	}
	start := time.Now()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		r.t.Fatalf("the kernel build lock %s: %v", path, err)
	}
	r.t.Logf("waited %s for %s", time.Since(start).Round(time.Second), path)
	return func() { f.Close() }
}

// value evaluates one operand of the workflow's expressions.
func (r *runner) value(e, result string) string {
	e = strings.TrimSpace(e)
	switch {
	case e == "matrix.kernel":
		return r.kernel
	case e == "needs.kernel.result":
		return result
	case e == "github.event_name":
		return "push"
	case strings.HasPrefix(e, "steps."):
		p := strings.Split(e, ".")
		if len(p) == 4 && p[2] == "outputs" {
			return r.outputs[p[1]][p[3]]
		}
	case len(e) >= 2 && e[0] == '\'' && e[len(e)-1] == '\'':
		return e[1 : len(e)-1]
	case strings.HasPrefix(e, "format(") && strings.HasSuffix(e, ")"):
		args := strings.SplitN(e[len("format("):len(e)-1], ",", 2)
		if len(args) == 2 {
			return strings.ReplaceAll(r.value(args[0], result), "{0}", r.value(args[1], result))
		}
	case strings.HasPrefix(e, "hashFiles(") && strings.HasSuffix(e, ")"):
		arg := r.value(e[len("hashFiles("):len(e)-1], result)
		if strings.ContainsAny(arg, "*?") {
			m, _ := filepath.Glob(filepath.Join(r.checkout, arg))
			if len(m) > 0 {
				return "hash"
			}
			return ""
		}
		if _, err := os.Stat(filepath.Join(r.checkout, arg)); err == nil {
			return "hash"
		}
		return ""
	}
	r.t.Fatalf("the simulation cannot evaluate %q: teach runner.value", e)
	return ""
}

// cond evaluates an if: (terms joined by &&: always(), A != B, A == B).
func (r *runner) cond(c string) bool {
	if c == "" {
		return !r.failed
	}
	always := false
	for _, term := range strings.Split(c, "&&") {
		term = strings.TrimSpace(term)
		switch {
		case term == "always()":
			always = true
		case strings.Contains(term, "!="):
			p := strings.SplitN(term, "!=", 2)
			if r.value(p[0], "") == r.value(p[1], "") {
				return false
			}
		case strings.Contains(term, "=="):
			p := strings.SplitN(term, "==", 2)
			if r.value(p[0], "") != r.value(p[1], "") {
				return false
			}
		default:
			r.t.Fatalf("the simulation cannot evaluate the condition %q", term)
		}
	}
	return always || !r.failed
}

func (r *runner) expand(s, result string) string {
	return expr.ReplaceAllStringFunc(s, func(m string) string {
		return r.value(expr.FindStringSubmatch(m)[1], result)
	})
}

// noKVM is the runner's view: a /dev of its own with the usual nodes and
// no kvm (this machine's /dev/kvm exists but runs no guest code; a
// runner without KVM has none).
const noKVM = `set -eu
mount --make-rprivate /
mount --rbind /dev "$SIM_HOSTDEV"
mount -t tmpfs -o mode=755 tmpfs /dev
for n in null zero full random urandom tty; do touch /dev/$n; mount --bind "$SIM_HOSTDEV/$n" /dev/$n; done
mkdir /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts /dev/pts
ln -s pts/ptmx /dev/ptmx
mount -t tmpfs -o mode=1777 shm /dev/shm
ln -s /proc/self/fd /dev/fd; ln -s /proc/self/fd/0 /dev/stdin; ln -s /proc/self/fd/1 /dev/stdout; ln -s /proc/self/fd/2 /dev/stderr
exec bash --noprofile --norc -eo pipefail -c "$SIM_STEP"
`

func (r *runner) run(s wfStep, result string) error {
	script := r.expand(s.Run, result)
	summary := filepath.Join(r.tmp, "step-summary")
	output := filepath.Join(r.tmp, "step-output")
	for _, f := range []string{summary, output} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	cmd := exec.Command("unshare", "--mount", "/bin/sh", "-c", noKVM)
	cmd.Dir = r.checkout
	cmd.Env = append(append([]string{}, r.env...), "GITHUB_STEP_SUMMARY="+summary, "GITHUB_OUTPUT="+output,
		"SIM_HOSTDEV="+filepath.Join(r.tmp, "hostdev"), "SIM_STEP="+script)
	var buf strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	r.log += buf.String()
	if err != nil {
		r.t.Logf("$ %s\n%s", script, tail(buf.String(), 6000))
	}
	if b, _ := os.ReadFile(summary); len(b) > 0 {
		r.summary += string(b)
	}
	if b, _ := os.ReadFile(output); s.ID != "" {
		o := map[string]string{}
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				o[k] = v
			}
		}
		r.outputs[s.ID] = o
	}
	return err
}

// uses simulates an action.
func (r *runner) uses(s wfStep) error {
	t := r.t
	action, _, _ := strings.Cut(s.Uses, "@")
	paths := func() []string {
		var ps []string
		for _, p := range strings.Fields(r.expand(s.With["path"], "")) {
			ps = append(ps, strings.Replace(p, "~", r.home, 1))
		}
		return ps
	}
	switch action {
	case "actions/checkout", "actions/setup-go":
		return nil // the fresh checkout; the host's Go first on PATH
	case "actions/cache/restore":
		key := r.expand(s.With["key"], "")
		if strings.Contains(key, "--") || strings.HasSuffix(key, "-") {
			return fmt.Errorf("cache key %q has an empty part (the key step's outputs: %v)", key, r.outputs)
		}
		warm := os.Getenv("PATCHCTL_TEST_CI_WARM") != ""
		restoreCache(t, r.home, r.kernel, warm)
		hit := "false"
		if warm {
			hit = "true"
			t.Logf("cache key %s: an exact hit (PATCHCTL_TEST_CI_WARM): source package, ccache and build folders", key)
		} else {
			t.Logf("cache key %s: restored an older entry of the kernel (restore-keys): its source package and ccache", key)
		}
		if s.ID != "" {
			r.outputs[s.ID] = map[string]string{"cache-hit": hit}
		}
		return nil
	case "actions/cache/save":
		key := r.expand(s.With["key"], "")
		var sizes []string
		for _, p := range paths() {
			out, err := exec.Command("du", "-sh", p).Output()
			if err != nil {
				t.Logf("cache path %s: %v (the action warns and saves the rest)", p, err)
				continue
			}
			sizes = append(sizes, strings.TrimSpace(string(out)))
		}
		t.Logf("cache save %s:\n%s", key, strings.Join(sizes, "\n"))
		return nil
	case "actions/upload-artifact":
		for _, p := range paths() {
			ents, err := os.ReadDir(filepath.Join(r.checkout, p))
			if err != nil || len(ents) == 0 {
				t.Logf("artifact path %s: empty or missing (%v): the action warns (if-no-files-found: warn)", p, err)
			}
		}
		return nil
	case "github/codeql-action/upload-sarif":
		p := filepath.Join(r.checkout, r.expand(s.With["sarif_file"], ""))
		var log struct {
			Runs []json.RawMessage `json:"runs"`
		}
		b, err := os.ReadFile(p)
		if err == nil {
			err = json.Unmarshal(b, &log)
		}
		if err != nil || len(log.Runs) == 0 {
			return fmt.Errorf("sarif_file %s: no runs (%v)", p, err)
		}
		return nil
	}
	return fmt.Errorf("the simulation does not know the action %s", s.Uses)
}

// freshCheckout is a clone of the repository's HEAD (with its uncommitted
// changes to tracked files) at dst, as actions/checkout makes one.
func freshCheckout(t *testing.T, repo, dst string) string {
	t.Helper()
	sha, err := exec.Command("git", "-C", repo, "stash", "create").Output()
	if err != nil {
		t.Fatalf("git stash create: %v", err)
	}
	rev := strings.TrimSpace(string(sha))
	if rev == "" {
		rev = "HEAD"
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	// its own objects (a --shared clone's alternates point at a folder the
	// job's container does not have: git, and so go build's VCS stamp,
	// would fail there)
	for _, args := range [][]string{{"clone", "-q", "--shared", "--no-checkout", repo, dst}, {"-C", dst, "checkout", "-q", "--detach", strings.TrimSpace(mustRev(t, repo, rev))},
		{"-C", dst, "repack", "-a", "-d", "-q"}} {
		if b, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, b)
		}
	}
	if err := os.Remove(filepath.Join(dst, ".git", "objects", "info", "alternates")); err != nil {
		t.Fatal(err)
	}
	return dst
}

func mustRev(t *testing.T, repo, rev string) string {
	t.Helper()
	b, err := exec.Command("git", "-C", repo, "rev-parse", rev).Output()
	if err != nil {
		t.Fatalf("git rev-parse %s: %v", rev, err)
	}
	return string(b)
}

// hostNetwork gives the root filesystem this machine's resolver, CA
// bundle (a TLS-inspecting proxy's CA) and local apt settings.
func hostNetwork(t *testing.T, root string) {
	t.Helper()
	files := []string{"/etc/resolv.conf", "/etc/ssl/certs/ca-certificates.crt"}
	confs, _ := filepath.Glob("/etc/apt/apt.conf.d/*")
	for _, c := range confs {
		if _, err := os.Stat(filepath.Join(root, c)); err != nil {
			files = append(files, c)
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(root, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// restoreCache puts into the runner's ~/.cache what an older cache entry
// of the kernel holds: its source package (linked from the host's cache)
// and a copy of the host's ccache (same compiler: bookworm's gcc); warm,
// a copy of the host's build folders of the kernel too (an exact hit: the
// same paths in the container, so kbuild rebuilds only what changed).
func restoreCache(t *testing.T, home, kernel string, warm bool) {
	t.Helper()
	if warm {
		src := filepath.Join(testenv.Cache().Dir, "build", kernel)
		dst := filepath.Join(home, ".cache", "patchctl", "build")
		if err := os.MkdirAll(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		if b, err := exec.Command("cp", "-a", "--reflink=auto", src, dst).CombinedOutput(); err != nil {
			t.Fatalf("copying the build folders %s: %v: %s", src, err, b)
		}
	}
	debs := filepath.Join(home, ".cache", "patchctl", "debs")
	if err := os.MkdirAll(debs, 0o755); err != nil {
		t.Fatal(err)
	}
	host, _ := filepath.Glob(filepath.Join(testenv.Cache().Dir, "debs", "linux-source-"+kernel+"_*.deb"))
	for _, d := range host {
		if os.Link(d, filepath.Join(debs, filepath.Base(d))) != nil {
			t.Logf("%s not linked: the job downloads it", filepath.Base(d))
		}
	}
	ccache := os.Getenv("CCACHE_DIR")
	if ccache == "" {
		if c, err := os.UserCacheDir(); err == nil {
			ccache = filepath.Join(c, "ccache")
		}
	}
	if fi, err := os.Stat(ccache); err != nil || !fi.IsDir() {
		t.Logf("no ccache at %q: the job's ccache is cold", ccache)
		return
	}
	if b, err := exec.Command("cp", "-a", ccache, filepath.Join(home, ".cache", "ccache")).CombinedOutput(); err != nil {
		t.Fatalf("copying the ccache: %v: %s", err, b)
	}
}

// accelsOf is every boot's accelerator in a result.json.
func accelsOf(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("result.json: %v", err)
		return nil
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Errorf("result.json: %v", err)
		return nil
	}
	seen := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && k == "accel" {
					seen[s] = true
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// childCPU is the user+sys time of the waited-for children so far.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
