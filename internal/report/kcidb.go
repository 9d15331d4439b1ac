package report

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/patchctl/patchctl/internal/ktap"
	"github.com/patchctl/patchctl/internal/pipeline"
)

// KCIDB v5.3 (KernelCI's common report schema): checkouts, builds, tests.
// Each kernel has two checkouts, the pristine source and the source with
// the series (patchset_files, patchset_hash), each with its build; every
// KTAP test and every static check rule is a test of the patched build
// (the checks of the patched checkout's source).

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
	PatchsetFiles []kcidbResource `json:"patchset_files"`
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
	Compiler     string          `json:"compiler,omitempty"`
	ConfigName   string          `json:"config_name"`
	ConfigURL    string          `json:"config_url,omitempty"`
	LogURL       string          `json:"log_url,omitempty"`
	OutputFiles  []kcidbResource `json:"output_files,omitempty"`
	Status       string          `json:"status"`
	Misc         map[string]any  `json:"misc,omitempty"`
}

type kcidbTest struct {
	ID        string         `json:"id"`
	BuildID   string         `json:"build_id"`
	Origin    string         `json:"origin"`
	Path      string         `json:"path"`
	Status    string         `json:"status"`
	Comment   string         `json:"comment,omitempty"`
	LogURL    string         `json:"log_url,omitempty"`
	StartTime string         `json:"start_time,omitempty"`
	Duration  float64        `json:"duration,omitempty"`
	Misc      map[string]any `json:"misc,omitempty"`
}

var idUnsafe = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func kid(parts ...string) string {
	return Origin + ":" + idUnsafe.ReplaceAllString(strings.Join(parts, "-"), "_")
}

// pathPart makes a KCIDB path component (no dots inside a component).
func pathPart(s string) string {
	return strings.Trim(idUnsafe.ReplaceAllString(strings.ReplaceAll(s, ".", "_"), "_"), "_")
}

func fileURL(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		abs = p
	}
	return "file://" + filepath.ToSlash(abs)
}

// KCIDB writes the run as KCIDB v5.3 JSON; dir is where the logs were put.
func KCIDB(w io.Writer, res *pipeline.Result, dir string) error {
	doc := kcidbDoc{Version: kcidbVersion{5, 3}, Checkouts: []kcidbCheckout{}, Builds: []kcidbBuild{}, Tests: []kcidbTest{}}
	for _, k := range res.Kernels {
		start := k.Start.UTC().Format(time.RFC3339)
		applyOK := true
		for _, s := range k.Stages {
			if s.Name == "apply" && s.Status != pipeline.Pass {
				applyOK = false
			}
		}
		for _, v := range []string{"baseline", "patched"} {
			co := kcidbCheckout{ID: kid(k.Name, v), Origin: Origin, TreeName: "debian-" + k.Name, PatchsetFiles: []kcidbResource{},
				StartTime: start, Valid: true, Misc: map[string]any{"source": k.Source}}
			co.Comment = "Debian linux-source " + k.Name + ", pristine"
			if v == "patched" {
				co.Comment = "Debian linux-source " + k.Name + " with the series of record"
				co.Valid = applyOK
				for _, p := range k.Patches {
					co.PatchsetFiles = append(co.PatchsetFiles, kcidbResource{Name: filepath.Base(p), URL: fileURL(p)})
				}
				h, err := PatchsetHash(k.Patches)
				if err != nil {
					return err
				}
				co.PatchsetHash = h
				var disp []string
				for _, r := range k.Apply {
					disp = append(disp, r.Entry.Series()+"="+r.Disposition)
				}
				co.Misc["dispositions"] = disp
			}
			doc.Checkouts = append(doc.Checkouts, co)
			b := k.Builds[v]
			if b == nil {
				continue
			}
			status := pipeline.Pass
			if b.Status != "PASS" {
				status = pipeline.Fail
			}
			bid := kid(k.Name, v, b.ConfigHash[:12])
			kb := kcidbBuild{ID: bid, CheckoutID: co.ID, Origin: Origin, Duration: b.Duration, Architecture: "x86_64", Compiler: b.Compiler,
				ConfigName: "tinyconfig+" + strings.Join(b.Fragments, "+"), Status: status, StartTime: start,
				Misc: map[string]any{"kernel_release": b.KernelRelease, "config_hash": b.ConfigHash, "compile_tested": b.CompileTested}}
			if b.Log != "" {
				kb.LogURL = fileURL(b.Log)
			}
			if c := b.Artifacts["config"]; c != "" {
				kb.ConfigURL = fileURL(c)
			}
			if img := b.Artifacts["bzImage"]; img != "" {
				kb.OutputFiles = []kcidbResource{{Name: "bzImage", URL: fileURL(img)}}
			}
			doc.Builds = append(doc.Builds, kb)
			if bt := k.Boots[v]; bt != nil && bt.KTAP != nil {
				log := fileURL(filepath.Join(dir, fmt.Sprintf("console-%s-%s.log", k.Name, v)))
				for _, tr := range bt.KTAP.Subtests {
					addTests(&doc, bid, k.Name+"-"+v, "nvme.rdma."+pathPart(tr.Name), tr, log, start)
				}
			}
			if v == "patched" && k.Check != nil {
				rules := map[string]string{"inline-sge-addr": pipeline.Pass, "inline-on-registration": pipeline.Pass, "inline-size": pipeline.Pass}
				notes := map[string][]string{}
				for _, f := range k.Check.Findings {
					if f.Severity == "error" {
						rules[f.Rule] = pipeline.Fail
					}
					notes[f.Rule] = append(notes[f.Rule], fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.Message))
				}
				for _, rule := range []string{"inline-sge-addr", "inline-on-registration", "inline-size", "checkpatch"} {
					st, ok := rules[rule]
					if !ok {
						st = pipeline.Pass
						if rule == "checkpatch" && len(notes[rule]) > 0 {
							st = pipeline.Done // warnings only: reported, not judged
						}
					}
					doc.Tests = append(doc.Tests, kcidbTest{ID: kid(k.Name, v, "static", rule), BuildID: bid, Origin: Origin,
						Path: "static." + pathPart(rule), Status: st, Comment: strings.Join(notes[rule], "\n"), StartTime: start})
				}
			}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func addTests(doc *kcidbDoc, buildID, prefix, path string, t *ktap.Test, log, start string) {
	st := pipeline.Pass
	switch {
	case t.Skip:
		st = pipeline.Skip
	case !t.OK:
		st = pipeline.Fail
	}
	doc.Tests = append(doc.Tests, kcidbTest{ID: kid(prefix, path), BuildID: buildID, Origin: Origin, Path: path, Status: st,
		Comment: strings.Join(t.Diagnostics, "\n"), LogURL: log, StartTime: start})
	for _, c := range t.Subtests {
		addTests(doc, buildID, prefix, path+"."+pathPart(c.Name), c, log, start)
	}
}
