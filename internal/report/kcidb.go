package report

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/patchctl/patchctl/checks"

	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/ktap"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/vocab"
)

// KCIDB v5.3 (KernelCI's common report schema): checkouts, builds, tests.
// Each kernel has two checkouts, the pristine source and the source with
// the series (patchset_files, patchset_hash), each with its build; every
// KTAP test and every static check rule is a test of its build, under
// parent nodes (nvme, nvme.rdma, static) that summarize them. Every id
// carries the run id, so a second run's report adds to the database
// instead of overwriting the first.

type kcidbDoc struct {
	Version   kcidbVersion    `json:"version"`
	Checkouts []kcidbCheckout `json:"checkouts"`
	Builds    []kcidbBuild    `json:"builds"`
	Tests     []kcidbTest     `json:"tests"`
}

type kcidbVersion struct {
	Major int `json:"major"`
	Minor int `json:"minor"`
}

type kcidbResource struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

type kcidbCheckout struct {
	ID            string          `json:"id"`
	Origin        string          `json:"origin"`
	TreeName      string          `json:"tree_name,omitempty"`
	GitRepoURL    string          `json:"git_repository_url,omitempty"`
	GitCommitHash string          `json:"git_commit_hash,omitempty"`
	GitCommitName string          `json:"git_commit_name,omitempty"`
	GitCommitTags []string        `json:"git_commit_tags,omitempty"`
	PatchsetFiles []kcidbResource `json:"patchset_files,omitempty"`
	PatchsetHash  string          `json:"patchset_hash"`
	Comment       string          `json:"comment,omitempty"`
	StartTime     string          `json:"start_time,omitempty"`
	Valid         bool            `json:"valid"`
	Misc          map[string]any  `json:"misc,omitempty"`
}

type kcidbBuild struct {
	ID           string          `json:"id"`
	CheckoutID   string          `json:"checkout_id"`
	Origin       string          `json:"origin"`
	Comment      string          `json:"comment,omitempty"`
	StartTime    string          `json:"start_time,omitempty"`
	Duration     float64         `json:"duration"`
	Architecture string          `json:"architecture"`
	Command      string          `json:"command,omitempty"`
	Compiler     string          `json:"compiler,omitempty"`
	ConfigName   string          `json:"config_name"`
	ConfigURL    string          `json:"config_url,omitempty"`
	LogURL       string          `json:"log_url,omitempty"`
	OutputFiles  []kcidbResource `json:"output_files,omitempty"`
	Status       string          `json:"status"`
	Misc         map[string]any  `json:"misc,omitempty"`
}

type kcidbTest struct {
	ID          string         `json:"id"`
	BuildID     string         `json:"build_id"`
	Origin      string         `json:"origin"`
	Environment *kcidbEnv      `json:"environment,omitempty"`
	Path        string         `json:"path"`
	Status      string         `json:"status"`
	Comment     string         `json:"comment,omitempty"`
	LogURL      string         `json:"log_url,omitempty"`
	StartTime   string         `json:"start_time,omitempty"`
	Duration    *float64       `json:"duration,omitempty"`
	Misc        map[string]any `json:"misc,omitempty"`
}

type kcidbEnv struct {
	Comment string `json:"comment,omitempty"`
}

var idUnsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// pathPart makes a KCIDB path component (no dots inside a component).
func pathPart(s string) string {
	p := strings.Trim(idUnsafe.ReplaceAllString(strings.ReplaceAll(s, ".", "_"), "_"), "_")
	if p == "" {
		p = "unnamed"
	}
	return p
}

// kcidbTime is KCIDB's date-time: RFC 3339, UTC, microseconds.
func kcidbTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000000Z07:00")
}

func dur(d float64) *float64 {
	d = float64(int64(d*1000+0.5)) / 1000
	return &d
}

// statusRank is KCIDB's priority of statuses (highest first).
var statusRank = map[string]int{vocab.Fail: 6, vocab.Error: 5, "MISS": 4, vocab.Pass: 3, vocab.Done: 2, vocab.Skip: 1}

func worst(a, b string) string {
	if statusRank[b] > statusRank[a] {
		return b
	}
	return a
}

func kcidb(w io.Writer, res *pipeline.Result, n *namer, pub published) error {
	kw := &kcidbWriter{n: n, pub: pub, run: n.o.RunID,
		doc: kcidbDoc{Version: kcidbVersion{5, 3}, Checkouts: []kcidbCheckout{}, Builds: []kcidbBuild{}, Tests: []kcidbTest{}}}
	for _, k := range res.Kernels {
		for _, v := range vocab.Variants() {
			co := kw.checkout(k, v)
			kw.doc.Checkouts = append(kw.doc.Checkouts, co)
			b := k.Builds[v]
			if b == nil {
				continue
			}
			kb := kw.build(k, v, b, co.ID)
			kw.doc.Builds = append(kw.doc.Builds, kb)
			if bt := k.Boots[v]; bt != nil && bt.KTAP != nil {
				kw.doc.Tests = append(kw.doc.Tests, kw.bootTests(k, v, bt.KTAP, bt.Accel, kb.ID)...)
			}
			if v == vocab.Patched && k.Check != nil {
				kw.doc.Tests = append(kw.doc.Tests, staticTests(k, kw.id, kb.ID, n)...)
			}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(kw.doc)
}

// kcidbWriter makes a run's KCIDB document: per kernel and variant a
// checkout, its build and the boot's tests.
type kcidbWriter struct {
	n   *namer
	pub published
	run string
	doc kcidbDoc
}

// id is the KCIDB id of the run's object named by parts.
func (kw *kcidbWriter) id(parts ...string) string {
	return Origin + ":" + idUnsafe.ReplaceAllString(kw.run+"-"+strings.Join(parts, "-"), "_")
}

// link is the URL of the published file named by parts ("" when none).
func (kw *kcidbWriter) link(parts ...string) string { return kw.n.url(kw.pub[key(parts...)]) }

// checkout is the pristine tree (baseline) or the tree with the patches
// (patched, valid when they applied).
func (kw *kcidbWriter) checkout(k *pipeline.Kernel, v string) kcidbCheckout {
	n := kw.n
	_, prepStart := stageOf(k, pipeline.StagePrepare)
	treeName, what := "debian-"+k.Name, "Debian linux-source "+k.Name
	if strings.HasPrefix(k.Source, "local ") {
		treeName, what = k.Name, "the local tree "+k.Name
	}
	co := kcidbCheckout{ID: kw.id(k.Name, v), Origin: Origin, TreeName: treeName,
		StartTime: kcidbTime(prepStart), Valid: true, Misc: map[string]any{"source": n.subst(k.Source), "run_id": kw.run}}
	if up := Upstream(k.Source); up.URL != "" {
		co.GitRepoURL, co.GitCommitHash = up.URL, up.Commit
		if up.Tag != "" {
			co.GitCommitName, co.GitCommitTags = up.Tag, []string{up.Tag}
		}
	}
	co.Comment = what + ", pristine"
	if v != vocab.Patched {
		return co
	}
	applyOK := true
	for _, s := range k.Stages {
		if s.Name == pipeline.StageApply && s.Status != vocab.Pass {
			applyOK = false
		}
	}
	_, applyStart := stageOf(k, pipeline.StageApply)
	co.Comment = what + " with the patches"
	co.StartTime = kcidbTime(applyStart)
	co.Valid = applyOK
	var names []string
	for i, p := range k.Patches {
		names = append(names, filepath.Base(p))
		u := kw.link(k.Name, "patch", fmt.Sprint(i))
		if u == "" {
			u = repoFileURL(n.rel(p))
		}
		co.PatchsetFiles = append(co.PatchsetFiles, kcidbResource{Name: filepath.Base(p), URL: u})
	}
	co.Misc["patches"] = names
	h, err := PatchsetHash(k.Patches)
	if err != nil {
		// A patch the run names is not there (series/ not
		// refreshed): the checkout is not valid, and says why.
		co.Valid = false
		co.Misc["error"] = n.subst(err.Error())
	}
	co.PatchsetHash = h
	var disp []string
	for _, r := range k.Apply {
		disp = append(disp, r.Entry.Series()+"="+r.Disposition)
	}
	co.Misc["dispositions"] = disp
	return co
}

// build is variant v's build of the checkout coID.
func (kw *kcidbWriter) build(k *pipeline.Kernel, v string, b *build.Metadata, coID string) kcidbBuild {
	status := vocab.Pass
	if b.Status != vocab.Pass {
		status = vocab.Fail
	}
	bst, bstart := stageOf(k, "build-"+v)
	kb := kcidbBuild{ID: kw.id(k.Name, v, "build"), CheckoutID: coID, Origin: Origin, Duration: *dur(b.Duration), Architecture: "x86_64", Compiler: b.Compiler,
		Command:    fmt.Sprintf("patchctl build --kernel %s --variant %s", k.Name, v),
		ConfigName: "tinyconfig+" + strings.Join(b.Fragments, "+"), Status: status, StartTime: kcidbTime(bstart),
		Misc: map[string]any{"kernel_release": b.KernelRelease, "config_hash": b.ConfigHash, "compile_tested": b.CompileTested,
			"reused": bst != nil && bst.Reused, "warnings": b.Warnings, "errors": b.Errors}}
	from := b.KernelFrom
	if from == "" {
		from = vocab.FromSource
	}
	kb.Misc["kernel_from"] = from
	if from == vocab.FromDistro {
		kb.Command += " --kernel-from distro"
		kb.ConfigName = "debian " + b.KernelRelease
		kb.Misc["rebuilt_modules"] = append([]string{}, b.Rebuilt...)
	}
	kb.LogURL = kw.link(k.Name, v, "log")
	kb.ConfigURL = kw.link(k.Name, v, "config")
	if u := kw.link(k.Name, v, "metadata"); u != "" {
		kb.OutputFiles = append(kb.OutputFiles, kcidbResource{Name: "metadata.json", URL: u})
	}
	return kb
}

// bootTests are variant v's boot's KTAP results (root, booted with
// accel) as tests of build bid, under the "nvme" and "nvme.rdma" nodes.
func (kw *kcidbWriter) bootTests(k *pipeline.Kernel, v string, root *ktap.Test, accel, bid string) []kcidbTest {
	st, start := stageOf(k, "boot-"+v)
	sdur := 0.0
	if st != nil {
		sdur = st.Duration
	}
	times := ktapTimes(root, start, sdur)
	log := kw.link(k.Name, v, "console")
	env := &kcidbEnv{Comment: fmt.Sprintf("QEMU x86_64 (%s), soft-RoCE and soft-iWARP loopback", accel)}
	var tests []kcidbTest
	for _, tr := range root.Subtests {
		addTests(&tests, kw.id, bid, k.Name+"-"+v, "nvme.rdma."+pathPart(tr.Name), tr, log, env, times)
	}
	rt := times[root]
	rootStatus := vocab.Pass
	for _, t := range tests {
		rootStatus = worst(rootStatus, t.Status)
	}
	comment := ""
	if root.Bail != "" {
		rootStatus, comment = vocab.Error, "the guest could not run its tests: "+root.Bail
	}
	var out []kcidbTest
	for _, p := range []string{"nvme", "nvme.rdma"} {
		t := kcidbTest{ID: kw.id(k.Name, v, p), BuildID: bid, Origin: Origin, Path: p, Status: rootStatus, Comment: comment,
			LogURL: log, Environment: env, StartTime: kcidbTime(rt.start)}
		if rt.known {
			t.Duration = dur(rt.dur)
		}
		out = append(out, t)
	}
	return append(out, tests...)
}

// staticTests are the check stage's rules as tests of the patched build,
// under a "static" node.
func staticTests(k *pipeline.Kernel, kid func(...string) string, bid string, n *namer) []kcidbTest {
	st, start := stageOf(k, "check")
	var d *float64
	if st != nil {
		d = dur(st.Duration)
	}
	rules := map[string]string{"inline-sge-addr": vocab.Pass, "inline-on-registration": vocab.Pass, "inline-size": vocab.Pass, "checkpatch": vocab.Pass}
	notes := map[string][]string{}
	for _, f := range k.Check.Findings {
		if _, ok := rules[f.Rule]; !ok {
			rules[f.Rule] = vocab.Pass
		}
		switch {
		case f.Severity == "error" && f.Judged():
			rules[f.Rule] = vocab.Fail
		case f.Severity == "error" || f.Severity == "warning":
			if rules[f.Rule] == vocab.Pass {
				rules[f.Rule] = vocab.Done // warnings only: reported, not judged
			}
		}
		pre := ""
		if f.PreExisting() {
			pre = "pre-existing: "
		}
		notes[f.Rule] = append(notes[f.Rule], fmt.Sprintf("%s%s:%d: %s", pre, n.rel(f.File), f.Line, n.subst(f.Message)))
	}
	ids := make([]string, 0, len(rules))
	for r := range rules {
		ids = append(ids, r)
	}
	sort.Strings(ids)
	status := vocab.Pass
	var out []kcidbTest
	for _, rule := range ids {
		status = worst(status, rules[rule])
		out = append(out, kcidbTest{ID: kid(k.Name, vocab.Patched, "static", rule), BuildID: bid, Origin: Origin, Path: "static." + pathPart(rule),
			Status: rules[rule], Comment: strings.Join(notes[rule], "\n"), StartTime: kcidbTime(start), Duration: d})
	}
	parent := kcidbTest{ID: kid(k.Name, vocab.Patched, "static"), BuildID: bid, Origin: Origin, Path: "static", Status: status,
		Comment: fmt.Sprintf("%d findings in %d files, %d functions", len(k.Check.Findings), k.Check.Files, k.Check.Functions), StartTime: kcidbTime(start), Duration: d}
	return append([]kcidbTest{parent}, out...)
}

func addTests(out *[]kcidbTest, kid func(...string) string, buildID, prefix, path string, t *ktap.Test, log string, env *kcidbEnv, times map[*ktap.Test]timing) {
	tm := times[t]
	kt := kcidbTest{ID: kid(prefix, path), BuildID: buildID, Origin: Origin, Path: path, Status: ktapStatus(t),
		Comment: strings.Join(diagnostics(t), "\n"), LogURL: log, Environment: env, StartTime: kcidbTime(tm.start)}
	if tm.known {
		kt.Duration = dur(tm.dur)
	}
	*out = append(*out, kt)
	for _, c := range t.Subtests {
		addTests(out, kid, buildID, prefix, path+"."+pathPart(c.Name), c, log, env, times)
	}
}

// Kernel.org's repositories: mainline (release candidates and X.Y
// releases) and stable (X.Y.Z).
const (
	MainlineURL = "https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git"
	StableURL   = "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git"
)

// UpstreamRef is where a pinned tree is in upstream git.
type UpstreamRef struct {
	URL, Tag, Commit string
}

var (
	debianUpstream = regexp.MustCompile(`^(?:\d+:)?(\d+)\.(\d+)(?:\.(\d+))?(?:~rc(\d+))?$`)
	gitKey         = regexp.MustCompile(`^git (\S+) tag:(\S*) commit:(\S*)$`)
	commitHash     = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// Upstream maps a kernel's source (tree.Kernel.Key) to its upstream
// repository and tag: a Debian linux-source version's upstream part
// (before the Debian revision) X.Y.Z is stable's vX.Y.Z, X.Y mainline's
// vX.Y, X.Y~rcN mainline's vX.Y-rcN; a git source is its URL, tag and
// commit. A version that does not map (a Debian-only suffix), a local
// tree or a non-https/git URL gives the zero UpstreamRef.
func Upstream(source string) UpstreamRef {
	if m := gitKey.FindStringSubmatch(source); m != nil {
		if !strings.HasPrefix(m[1], "https://") && !strings.HasPrefix(m[1], "git://") {
			return UpstreamRef{}
		}
		r := UpstreamRef{URL: m[1], Tag: m[2]}
		if commitHash.MatchString(m[3]) {
			r.Commit = m[3]
		}
		return r
	}
	f := strings.Fields(source)
	if len(f) < 2 || f[0] != "debian" {
		return UpstreamRef{}
	}
	_, version, ok := strings.Cut(f[1], "=")
	if !ok {
		return UpstreamRef{}
	}
	if i := strings.LastIndex(version, "-"); i > 0 {
		version = version[:i] // the Debian revision
	}
	m := debianUpstream.FindStringSubmatch(version)
	if m == nil {
		return UpstreamRef{}
	}
	switch {
	case m[4] != "" && m[3] == "":
		return UpstreamRef{URL: MainlineURL, Tag: "v" + m[1] + "." + m[2] + "-rc" + m[4]}
	case m[4] != "":
		return UpstreamRef{} // X.Y.Z~rcN: no such tag
	case m[3] == "" || m[3] == "0":
		return UpstreamRef{URL: MainlineURL, Tag: "v" + m[1] + "." + m[2]}
	}
	return UpstreamRef{URL: StableURL, Tag: "v" + m[1] + "." + m[2] + "." + m[3]}
}

// repoFileURL links a repository file when no output folder is
// published: on GitHub Actions the file at the run's commit, else the
// project's default branch.
func repoFileURL(rel string) string {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	rel = strings.Join(parts, "/")
	server, repo, sha := os.Getenv("GITHUB_SERVER_URL"), os.Getenv("GITHUB_REPOSITORY"), os.Getenv("GITHUB_SHA")
	if strings.HasPrefix(server, "https://") && repo != "" && commitHash.MatchString(sha) {
		return server + "/" + repo + "/blob/" + sha + "/" + rel
	}
	return checks.InformationURI + "/blob/main/" + rel
}
