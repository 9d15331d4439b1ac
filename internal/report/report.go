// Package report writes a pipeline run's results for people and for CI
// systems, all into one folder, each file for a named consumer:
// summary.txt (people), junit.xml (Jenkins, GitLab, GitHub test
// reporters), kcidb.json (KernelCI's KCIDB, schema v5.3),
// check-<kernel>.sarif (GitHub code scanning), rules.md (the SARIF rules'
// help pages), build-<kernel>-<variant>.json (tuxmake's metadata.json
// shape) with the build's log and config, console-<kernel>-<variant>.log
// (KTAP, for the kernel's kunit_parser), patches/<kernel>/ (the patchset
// KCIDB names) and result.json (patchctl's own data).
//
// No report holds a host path: a path is relative to a named base (the
// repository, the kernel tree, the output folder); result.json writes
// the bases as ${repo}, ${cache}, ${out}. Ids are unique per run (Options.RunID),
// links are http(s) under Options.URLBase when the folder is published.
package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/patchctl/patchctl/checks"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
)

// Origin is patchctl's KCIDB origin.
const Origin = "patchctl"

// Options say how the reports name things.
type Options struct {
	Version string // patchctl's version
	Root    string // the repository (default: found above the run's patches)
	Cache   string // patchctl's cache folder (default: the user's)
	// URLBase is where the output folder will be published (http or
	// https): KCIDB's links and SARIF's help links point under it.
	// Without it KCIDB carries no links (a file:// URL is no use to
	// anyone else).
	URLBase string
	// RunID names this run in every id (default: RunID of the result).
	RunID string
}

// RunID names a run: its start time and a hash of the kernels' patchset
// hashes and that time, e.g. 20261201T072910Z-7b77b1b6. Two runs of the
// same patches differ by their start; runs of different patches at the
// same second by the hash.
func RunID(res *pipeline.Result) string {
	start := runStart(res)
	h := sha256.New()
	for _, k := range res.Kernels {
		ph, _ := PatchsetHash(k.Patches)
		fmt.Fprintf(h, "%s=%s\n", k.Name, ph)
	}
	fmt.Fprintln(h, start.Format(time.RFC3339Nano))
	return start.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(h.Sum(nil))[:8]
}

func runStart(res *pipeline.Result) time.Time {
	var start time.Time
	for _, k := range res.Kernels {
		if !k.Start.IsZero() && (start.IsZero() || k.Start.Before(start)) {
			start = k.Start
		}
	}
	return start
}

// CheckURLBase accepts an http(s) URL for --url-base.
func CheckURLBase(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--url-base %q is not an http(s) URL: give where the output folder will be published, e.g. https://ci.example.org/runs/42/", s)
	}
	return nil
}

func (o *Options) defaults(res *pipeline.Result) error {
	if err := CheckURLBase(o.URLBase); err != nil {
		return err
	}
	o.URLBase = strings.TrimSuffix(o.URLBase, "/")
	if o.RunID == "" {
		o.RunID = RunID(res)
	}
	if o.Cache == "" {
		o.Cache = tree.DefaultCacheDir()
	}
	if o.Root == "" {
		for _, k := range res.Kernels {
			for _, p := range k.Patches {
				if r := repoAbove(p); r != "" {
					o.Root = r
				}
			}
		}
	}
	return nil
}

// repoAbove finds the folder holding series/kernels.yaml above p.
func repoAbove(p string) string {
	dir, err := filepath.Abs(filepath.Dir(p))
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "series", "kernels.yaml")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// namer makes paths relative to their base.
type namer struct {
	o     *Options
	out   string
	bases [][2]string // absolute folder, name; longest first
}

func newNamer(o *Options, out string) *namer {
	n := &namer{o: o, out: absOr(out)}
	for _, b := range [][2]string{{absOr(out), "${out}"}, {absOr(o.Root), "${repo}"}, {absOr(o.Cache), "${cache}"}} {
		if b[0] != "" && b[0] != "/" {
			n.bases = append(n.bases, b)
		}
	}
	sort.SliceStable(n.bases, func(i, j int) bool { return len(n.bases[i][0]) > len(n.bases[j][0]) })
	return n
}

func absOr(p string) string {
	if p == "" {
		return ""
	}
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// rel names a finding's or a patch's path: relative to the repository
// when it is in it, else as given when relative (the kernel tree's
// paths), else its name alone.
func (n *namer) rel(p string) string {
	if !filepath.IsAbs(p) {
		return filepath.ToSlash(p)
	}
	if n.o.Root != "" {
		if r, err := filepath.Rel(absOr(n.o.Root), p); err == nil && !strings.HasPrefix(r, "..") {
			return filepath.ToSlash(r)
		}
	}
	return filepath.Base(p)
}

// subst writes every base in s as its name.
func (n *namer) subst(s string) string {
	for _, b := range n.bases {
		s = strings.ReplaceAll(s, b[0], b[1])
	}
	return s
}

// url is the published URL of a file in the output folder ("" without a
// URL base).
func (n *namer) url(rel string) string {
	if n.o.URLBase == "" || rel == "" {
		return ""
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return n.o.URLBase + "/" + strings.Join(parts, "/")
}

// relativize rewrites every string in a JSON document with subst.
func (n *namer) relativize(v any) any {
	switch x := v.(type) {
	case string:
		return n.subst(x)
	case []any:
		for i := range x {
			x[i] = n.relativize(x[i])
		}
	case map[string]any:
		for k, e := range x {
			x[k] = n.relativize(e)
		}
	}
	return v
}

// WriteWith writes every report into dir and returns the files written.
func WriteWith(dir string, res *pipeline.Result, o Options) ([]string, error) {
	if err := o.defaults(res); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	n := newNamer(&o, dir)
	out := &outDir{dir: dir}
	// What KCIDB links to is copied in first, so links only name files
	// that are there.
	pub := published{}
	for _, k := range res.Kernels {
		if err := out.kernelFiles(k, o, pub); err != nil {
			return nil, err
		}
	}
	// Each report is written whatever happened to the others, result.json
	// always: a failed run is when they are read.
	var failed []error
	for _, r := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"rules.md", checks.WriteRulesMarkdown},
		{"summary.txt", func(w io.Writer) error { summary(w, res, n.subst); return nil }},
		{"junit.xml", func(w io.Writer) error { return junit(w, res, n) }},
		{"kcidb.json", func(w io.Writer) error { return kcidb(w, res, n, pub) }},
		{"result.json", func(w io.Writer) error { return resultJSON(w, res, n) }},
	} {
		if err := out.put(r.name, r.write); err != nil {
			failed = append(failed, err)
		}
	}
	return out.files, errors.Join(failed...)
}

// outDir is the output folder and the files written into it.
type outDir struct {
	dir   string
	files []string
}

// put writes the file name (a path under the folder) with write.
func (d *outDir) put(name string, write func(io.Writer) error) error {
	p := filepath.Join(d.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	d.files = append(d.files, p)
	return f.Close()
}

// copyIn copies the file src in as name; false when src is not there (a
// reused stage's file cleaned away): not linked.
func (d *outDir) copyIn(name, src string) (bool, error) {
	data, err := os.ReadFile(src)
	if err != nil {
		return false, nil // not there: not linked
	}
	return true, d.put(name, func(w io.Writer) error { _, err := w.Write(data); return err })
}

// kernelFiles copies in one kernel's patches, build logs, configurations
// and consoles and writes its builds' metadata and its SARIF, noting in
// pub what KCIDB may link to.
func (d *outDir) kernelFiles(k *pipeline.Kernel, o Options, pub published) error {
	link := func(name, src, what string) error {
		ok, err := d.copyIn(name, src)
		if ok {
			pub[what] = name
		}
		return err
	}
	for i, p := range k.Patches {
		if err := link(fmt.Sprintf("patches/%s/%s", k.Name, filepath.Base(p)), p, key(k.Name, "patch", fmt.Sprint(i))); err != nil {
			return err
		}
	}
	for v, b := range k.Builds {
		if b.Log != "" {
			if err := link(fmt.Sprintf("build-%s-%s.log", k.Name, v), b.Log, key(k.Name, v, "log")); err != nil {
				return err
			}
		}
		if c := b.Artifacts["config"]; c != "" {
			if err := link(fmt.Sprintf("config-%s-%s", k.Name, v), c, key(k.Name, v, "config")); err != nil {
				return err
			}
		}
		name := fmt.Sprintf("build-%s-%s.json", k.Name, v)
		if err := d.put(name, b.WriteTuxmake); err != nil {
			return err
		}
		pub[key(k.Name, v, "metadata")] = name
	}
	for v, bt := range k.Boots {
		if err := link(fmt.Sprintf("console-%s-%s.log", k.Name, v), bt.ConsoleLog, key(k.Name, v, "console")); err != nil {
			return err
		}
	}
	if k.Check != nil {
		var tree string
		if b := k.Builds[vocab.Patched]; b != nil {
			tree = b.SourceDir
		}
		so := checks.SARIFOptions{Version: o.Version, Repo: o.Root, Tree: tree, Patches: k.Patches, Kernel: k.Name, RunID: o.RunID, URLBase: o.URLBase}
		if err := d.put("check-"+k.Name+".sarif", func(w io.Writer) error { return k.Check.WriteSARIFWith(w, so) }); err != nil {
			return err
		}
	}
	return nil
}

// resultJSON writes the run as one document, its paths relative.
func resultJSON(w io.Writer, res *pipeline.Result, n *namer) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(n.relativize(doc))
}

// published maps what KCIDB links to onto files in the output folder.
type published map[string]string

func key(parts ...string) string { return strings.Join(parts, "\x00") }

// Summary prints the kernel x stage table and the verdict.
func Summary(w io.Writer, res *pipeline.Result) { summary(w, res, func(s string) string { return s }) }

// summary is Summary with paths in details named by name.
func summary(w io.Writer, res *pipeline.Result, name func(string) string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	var stages []string
	if len(res.Kernels) > 0 {
		for _, s := range res.Kernels[0].Stages {
			stages = append(stages, s.Name)
		}
	}
	fmt.Fprintf(tw, "KERNEL\t%s\tVERDICT\n", strings.ToUpper(strings.Join(stages, "\t")))
	for _, k := range res.Kernels {
		var cells []string
		for _, n := range stages {
			cell := "-"
			for _, s := range k.Stages {
				if s.Name == n {
					cell = fmt.Sprintf("%s %.0fs", s.Status, s.Duration)
					if s.Reused {
						cell = s.Status + " reused"
					}
				}
			}
			cells = append(cells, cell)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", k.Name, strings.Join(cells, "\t"), k.Verdict)
	}
	tw.Flush()
	if res.Reason != "" {
		fmt.Fprintf(w, "%s: %s\n", res.Verdict, name(res.Reason))
	}
	for _, k := range res.Kernels {
		for _, s := range k.Stages {
			if s.Detail != "" {
				fmt.Fprintf(w, "%s %s: %s\n", k.Name, s.Name, name(s.Detail))
			}
			if s.Name == pipeline.StageCheck && k.Check != nil {
				printFindings(w, k.Check.Findings, name)
			}
		}
		if k.KernelFrom != "" {
			fmt.Fprintf(w, "%s: kernels from %s\n", k.Name, k.KernelFrom)
		}
		for _, d := range k.KnownDefects {
			fmt.Fprintf(w, "%s: %s\n", k.Name, d.String())
		}
		if k.Reason != "" {
			fmt.Fprintf(w, "%s: %s because %s\n", k.Name, k.Verdict, name(k.Reason))
		}
	}
	fmt.Fprintf(w, "verdict: %s (%.0fs)\n", res.Verdict, res.Duration)
}

// maxFindings is how many findings the summary prints per kernel (the
// SARIF file has them all).
const maxFindings = 10

// printFindings prints each finding's first line: severity, rule, place.
func printFindings(w io.Writer, fs []checks.Finding, name func(string) string) {
	for i, f := range fs {
		if i == maxFindings {
			fmt.Fprintf(w, "    ... and %d more (see check-<kernel>.sarif)\n", len(fs)-maxFindings)
			return
		}
		msg, _, _ := strings.Cut(strings.TrimSpace(f.Message), "\n")
		place := f.File
		if f.Line > 0 {
			place = fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		pre := ""
		if f.PreExisting() {
			pre = " (pre-existing)"
		}
		fmt.Fprintf(w, "    %s%s %s %s: %s\n", f.Severity, pre, f.Rule, name(place), msg)
	}
}

// PatchsetHash is KCIDB's: sha256 over the newline-terminated sha256 of
// each patch, in order ("" without patches).
func PatchsetHash(patches []string) (string, error) {
	if len(patches) == 0 {
		return "", nil
	}
	var b strings.Builder
	for _, p := range patches {
		data, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		s := sha256.Sum256(data)
		b.WriteString(hex.EncodeToString(s[:]) + "\n")
	}
	s := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(s[:]), nil
}

// stageOf finds a kernel's stage and when it began: its recorded start,
// or (a result from before stages had one) the kernel's start plus the
// stages before it.
func stageOf(k *pipeline.Kernel, name string) (*pipeline.Stage, time.Time) {
	t := k.Start
	for _, s := range k.Stages {
		if s.Name == name {
			if !s.Start.IsZero() {
				return s, s.Start
			}
			return s, t
		}
		t = t.Add(time.Duration(s.Duration * float64(time.Second)))
	}
	return nil, k.Start
}
