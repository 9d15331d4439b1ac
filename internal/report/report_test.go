package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/checks"
	"github.com/patchctl/patchctl/internal/ktap"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/report/reportcheck"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/vocab"
)

func writeRun(t *testing.T, o fixtureOpts, ro Options) (string, *pipeline.Result, string, string) {
	t.Helper()
	res, root, cache := fixtureRun(t, o)
	ro.Root, ro.Cache = root, cache
	if ro.Version == "" {
		ro.Version = "v0.3.0"
	}
	dir := filepath.Join(t.TempDir(), "out")
	if _, err := WriteWith(dir, res, ro); err != nil {
		t.Fatal(err)
	}
	return dir, res, root, cache
}

// expectedCases counts the JUnit test cases a result must give, from
// the result itself: stages, apply results, findings, KTAP leaves, and a
// case for each failed KTAP parent with no failed result below it.
func expectedCases(res *pipeline.Result) (tests, failures, errors, skipped int) {
	var walk func(*ktap.Test)
	walk = func(t *ktap.Test) {
		if len(t.Subtests) == 0 {
			tests++
			switch ktapStatus(t) {
			case vocab.Fail:
				failures++
			case vocab.Error:
				errors++
			case vocab.Skip:
				skipped++
			}
			return
		}
		for _, c := range t.Subtests {
			walk(c)
		}
		if !t.OK && !t.Skip && !failedBelow(t) {
			tests++
			failures++
		}
	}
	for _, k := range res.Kernels {
		for _, s := range k.Stages {
			tests++
			switch s.Status {
			case vocab.Fail:
				failures++
			case vocab.Error:
				errors++
			case vocab.Skip:
				skipped++
			}
		}
		tests += len(k.Apply)
		n := 0
		for _, f := range k.Check.Findings {
			if f.Severity == "error" || f.Severity == "warning" {
				n++
				if f.Severity == "error" && !f.PreExisting() { // a pre-existing error passes
					failures++
				}
			}
		}
		tests += max(n, 1)
		for _, b := range k.Boots {
			if b.KTAP.Bail != "" {
				tests++
				errors++
			}
			for _, c := range b.KTAP.Subtests {
				walk(c)
			}
		}
	}
	return
}

// TestReportsPassTheReferenceTools writes the reports of runs of every
// shape (passing, a failing test, a crashed guest, a guest that could not
// set up, findings on patch lines, two kernels) and runs each consumer's
// own validator on them.
func TestReportsPassTheReferenceTools(t *testing.T) {
	_, tree := testenv.Kernel(t, testkernel.Default)
	for name, o := range map[string]fixtureOpts{
		"pass":          {},
		"failing-test":  {failLeaf: true, checkFinding: true},
		"crash":         {crash: true},
		"setup-error":   {bailBaseline: true},
		"two-kernels":   {kernels: []string{"6.1", testkernel.Default}, checkFinding: true},
		"published-url": {failLeaf: true},
	} {
		t.Run(name, func(t *testing.T) {
			ro := Options{}
			if name == "published-url" {
				ro.URLBase = "https://ci.example.org/patchctl/runs/42/"
			}
			dir, res, root, cache := writeRun(t, o, ro)
			for _, k := range res.Kernels {
				sarif := filepath.Join(dir, "check-"+k.Name+".sarif")
				if errs := reportcheck.SARIFErrors(t, sarif); len(errs) > 0 {
					t.Errorf("SARIF Multitool (Gh;Sarif) errors:\n%s", strings.Join(errs, "\n"))
				}
				if errs := reportcheck.SARIFSchema(t, sarif); len(errs) > 0 {
					t.Errorf("SARIF schema: %s", strings.Join(errs, "\n"))
				}
				for v, b := range k.Boots {
					got := reportcheck.KTAP(t, tree, filepath.Join(dir, "console-"+k.Name+"-"+v+".log"))
					c := b.KTAP.Count()
					if b.KTAP.Bail != "" {
						if got.Status == "FAILURE_TO_PARSE_TESTS" || got.Failed != 1 {
							t.Errorf("%s %s: kunit_parser reads the setup error as %s with %d failed:\n%s", k.Name, v, got.Status, got.Failed, got.Output)
						}
						continue
					}
					if got.Passed != c.Pass || got.Failed != c.Fail || got.Skipped != c.Skip || got.Errors != 0 && b.KTAP.Complete() {
						t.Errorf("%s %s: kunit_parser counts passed %d failed %d skipped %d errors %d, patchctl %+v:\n%s", k.Name, v, got.Passed, got.Failed, got.Skipped, got.Errors, c, got.Output)
					}
					if !b.KTAP.Complete() && got.Status == "SUCCESS" {
						t.Errorf("%s %s: kunit_parser calls the cut-short run a success", k.Name, v)
					}
				}
			}
			junit := filepath.Join(dir, "junit.xml")
			if errs := reportcheck.JUnitSchema(t, junit); len(errs) > 0 {
				t.Errorf("JUnit XSD: %s", strings.Join(errs, "\n"))
			}
			got := reportcheck.JUnitRead(t, junit)
			tests, failures, errors, skipped := expectedCases(res)
			if got.Tests != tests || got.Failures != failures || got.Errors != errors || got.Skipped != skipped {
				t.Errorf("junitparser read %d tests, %d failures, %d errors, %d skipped; the run has %d, %d, %d, %d", got.Tests, got.Failures, got.Errors, got.Skipped, tests, failures, errors, skipped)
			}
			if got.AttrTests != got.Tests || got.AttrFailures != got.Failures || got.AttrErrors != got.Errors || got.AttrSkipped != got.Skipped {
				t.Errorf("the suites' counts %+v differ from their cases", got)
			}
			kc := filepath.Join(dir, "kcidb.json")
			if errs := reportcheck.KCIDB(t, kc); len(errs) > 0 {
				t.Errorf("KCIDB v5.3: %s", strings.Join(errs, "\n"))
			}
			noHostPaths(t, dir, root, cache)
		})
	}
}

// noHostPaths fails when a report names the repository, the cache or the
// output folder by its place on this machine. (The copied logs, configs
// and patches are the builds' and the series' own bytes.)
func noHostPaths(t *testing.T, dir string, bases ...string) {
	t.Helper()
	bases = append(bases, dir, os.TempDir())
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		name := filepath.Base(p)
		if strings.HasSuffix(name, ".log") || strings.HasPrefix(name, "config-") || strings.HasSuffix(name, ".patch") {
			return nil
		}
		data, _ := os.ReadFile(p)
		for _, b := range bases {
			if bytes.Contains(data, []byte(b)) {
				t.Errorf("%s holds the host path %s", name, b)
			}
		}
		if bytes.Contains(data, []byte("file://")) {
			t.Errorf("%s holds a file:// URL", name)
		}
		return nil
	})
}

func TestValidatorsRejectBrokenReports(t *testing.T) {
	_, tree := testenv.Kernel(t, testkernel.Default)
	dir, _, _, _ := writeRun(t, fixtureOpts{failLeaf: true, checkFinding: true}, Options{})
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	broken := func(name, from, to string) string {
		t.Helper()
		s := read(name)
		if !strings.Contains(s, from) {
			t.Fatalf("%s has no %q to break", name, from)
		}
		p := filepath.Join(t.TempDir(), name)
		os.WriteFile(p, []byte(strings.Replace(s, from, to, 1)), 0o644)
		return p
	}
	sarif := read("check-6.12.sarif")
	var log map[string]any
	json.Unmarshal([]byte(sarif), &log)
	// SARIF: no help on a rule (GitHub's GH2012), an absolute path
	// (SARIF1004), an invalid level (the OASIS schema).
	var help map[string]any
	rules := log["runs"].([]any)[0].(map[string]any)["tool"].(map[string]any)["driver"].(map[string]any)["rules"].([]any)
	help = rules[0].(map[string]any)
	delete(help, "help")
	noHelp, _ := json.Marshal(log)
	p := filepath.Join(t.TempDir(), "nohelp.sarif")
	os.WriteFile(p, noHelp, 0o644)
	if errs := reportcheck.SARIFErrors(t, p); !containsAny(errs, "GH2012") {
		t.Errorf("the Multitool accepts a rule without help: %v", errs)
	}
	if errs := reportcheck.SARIFErrors(t, broken("check-6.12.sarif", `"uri": "series/`, `"uri": "/work/series/`)); !containsAny(errs, "SARIF1004") {
		t.Errorf("the Multitool accepts an absolute path under a uriBaseId: %v", errs)
	}
	if errs := reportcheck.SARIFSchema(t, broken("check-6.12.sarif", `"level": "error"`, `"level": "fatal"`)); len(errs) == 0 {
		t.Error("the SARIF schema accepts an invalid level")
	}
	// JUnit: nine decimals, skipped on testsuites.
	if errs := reportcheck.JUnitSchema(t, broken("junit.xml", `time="0.100"`, `time="0.100000001"`)); len(errs) == 0 {
		t.Error("the JUnit XSD accepts a time with nine decimals")
	}
	if errs := reportcheck.JUnitSchema(t, broken("junit.xml", `<testsuites name="patchctl"`, `<testsuites name="patchctl" skipped="0"`)); len(errs) == 0 {
		t.Error("the JUnit XSD accepts skipped on testsuites")
	}
	// junitparser counts what is there: a failure turned into a pass is
	// seen (the comparison with the run's counts then fails).
	noFailure := broken("junit.xml", `<failure message=`, `<skipped message=`)
	s, _ := os.ReadFile(noFailure)
	os.WriteFile(noFailure, []byte(strings.Replace(string(s), `</failure>`, `</skipped>`, 1)), 0o644)
	if c := reportcheck.JUnitRead(t, noFailure); c.Failures == reportcheck.JUnitRead(t, filepath.Join(dir, "junit.xml")).Failures {
		t.Error("junitparser counts a failure that is not there")
	}
	// KCIDB: an origin the pattern refuses, an unknown status, a property
	// the schema does not have, a bad date, a duplicate id, a dangling
	// build_id.
	for _, b := range [][2]string{
		{`"origin": "patchctl"`, `"origin": "Patch-CTL"`},
		{`"status": "FAIL"`, `"status": "BROKEN"`},
		{`"tree_name"`, `"tree"`},
		{`"start_time": "2026-12-01T07:29`, `"start_time": "yesterday 07:29`},
		{`"minor": 3`, `"minor": 9`},
		{`"path": "nvme.rdma.rxe.link"`, `"path": "nvme.rdma.rxe..link"`},
	} {
		if errs := reportcheck.KCIDB(t, broken("kcidb.json", b[0], b[1])); len(errs) == 0 {
			t.Errorf("the KCIDB schema accepts %s", b[1])
		}
	}
	var kc map[string][]map[string]any
	json.Unmarshal([]byte(read("kcidb.json")), &kc)
	kc["tests"][1]["id"] = kc["tests"][0]["id"]
	kc["tests"][2]["build_id"] = "patchctl:nothing"
	dup, _ := json.Marshal(kc)
	p = filepath.Join(t.TempDir(), "dup.json")
	os.WriteFile(p, dup, 0o644)
	if errs := reportcheck.KCIDB(t, p); !containsAny(errs, "not unique") || !containsAny(errs, "names nothing") {
		t.Errorf("duplicate ids or dangling links pass: %v", errs)
	}
	// kunit_parser: a bare bail-out is no KTAP at all.
	p = filepath.Join(t.TempDir(), "bail.log")
	os.WriteFile(p, []byte("[    1.6] Run /init as init process\nBail out! network: no eth0\n"), 0o644)
	if got := reportcheck.KTAP(t, tree, p); got.Status != "FAILURE_TO_PARSE_TESTS" {
		t.Errorf("kunit_parser reads a bare Bail out! as %s", got.Status)
	}
}

func containsAny(list []string, s string) bool {
	for _, l := range list {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// TestRunIDsDiffer: a second run of the same patches submits new
// objects, not the first run's again.
func TestRunIDsDiffer(t *testing.T) {
	a, _, _, _ := writeRun(t, fixtureOpts{}, Options{})
	b, _, _, _ := writeRun(t, fixtureOpts{start: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}, Options{})
	ida := reportcheck.KCIDBIDs(t, filepath.Join(a, "kcidb.json"))
	idb := reportcheck.KCIDBIDs(t, filepath.Join(b, "kcidb.json"))
	if len(ida) == 0 || len(ida) != len(idb) {
		t.Fatalf("%d and %d ids", len(ida), len(idb))
	}
	seen := map[string]bool{}
	for _, id := range ida {
		seen[id] = true
	}
	for _, id := range idb {
		if seen[id] {
			t.Errorf("id %s is in both runs' reports", id)
		}
	}
	// The same patches and start time give the same id (a rewrite of one
	// run's reports is the same submission).
	r1, _, _ := fixtureRun(t, fixtureOpts{})
	r2, _, _ := fixtureRun(t, fixtureOpts{})
	if RunID(r1) != RunID(r2) || !regexp.MustCompile(`^20261201T072910Z-[0-9a-f]{8}$`).MatchString(RunID(r1)) {
		t.Errorf("run ids %s %s", RunID(r1), RunID(r2))
	}
	r3, _, _ := fixtureRun(t, fixtureOpts{patchContent: strings.Replace(fixturePatch, "qe->dma", "qe->data", 1)})
	if RunID(r3) == RunID(r1) {
		t.Error("another patchset at the same start has the same run id")
	}
}

// TestKCIDBObjects: every object has its own start time, tests have
// durations, parents exist, links are http(s) files of the folder.
func TestKCIDBObjects(t *testing.T) {
	for _, base := range []string{"", "https://ci.example.org/runs/42"} {
		dir, res, _, _ := writeRun(t, fixtureOpts{crash: true}, Options{URLBase: base})
		var doc kcidbDoc
		data, _ := os.ReadFile(filepath.Join(dir, "kcidb.json"))
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		starts := map[string]bool{}
		paths := map[string]bool{}
		for _, c := range doc.Checkouts {
			starts[c.StartTime] = true
		}
		for _, b := range doc.Builds {
			starts[b.StartTime] = true
		}
		for _, x := range doc.Tests {
			starts[x.StartTime] = true
			paths[x.Path] = true
			if x.Duration == nil {
				t.Errorf("test %s has no duration", x.Path)
			}
		}
		if len(starts) < 8 {
			t.Errorf("only %d distinct start times over %d objects", len(starts), len(doc.Checkouts)+len(doc.Builds)+len(doc.Tests))
		}
		for p := range paths {
			for i := strings.IndexByte(p, '.'); i > 0; i = strings.IndexByte(p[i+1:], '.') + i + 1 {
				if !paths[p[:i]] {
					t.Errorf("test %s has no parent node %s", p, p[:i])
				}
				if strings.IndexByte(p[i+1:], '.') < 0 {
					break
				}
			}
		}
		for _, want := range []string{"nvme", "nvme.rdma", "static", "nvme.rdma.rxe", "static.checkpatch"} {
			if !paths[want] {
				t.Errorf("no test node %s", want)
			}
		}
		// the crashed transport's parent failed while its results passed
		for _, x := range doc.Tests {
			if x.Path == "nvme.rdma.rxe" && strings.HasSuffix(x.BuildID, "patched-build") && x.Status != vocab.Fail {
				t.Errorf("the crashed rxe run is %s", x.Status)
			}
		}
		var urls []string
		for _, c := range doc.Checkouts {
			if strings.HasSuffix(c.ID, "-patched") && len(c.PatchsetFiles) != 1 {
				t.Errorf("checkout %s: patchset_files %v, want the patch", c.ID, c.PatchsetFiles)
			}
			for _, f := range c.PatchsetFiles {
				if base == "" {
					// no output folder: the patch in the repository
					if !strings.HasPrefix(f.URL, checks.InformationURI+"/blob/main/series/") {
						t.Errorf("patchset file %s without --url-base: %s", f.Name, f.URL)
					}
					continue
				}
				urls = append(urls, f.URL)
			}
		}
		for _, b := range doc.Builds {
			urls = append(urls, b.LogURL, b.ConfigURL)
			for _, f := range b.OutputFiles {
				urls = append(urls, f.URL)
			}
		}
		for _, x := range doc.Tests {
			urls = append(urls, x.LogURL)
		}
		n := 0
		for _, u := range urls {
			if u == "" {
				continue
			}
			n++
			if base == "" {
				t.Errorf("a link without --url-base: %s", u)
				continue
			}
			rel, ok := strings.CutPrefix(u, base+"/")
			if !ok {
				t.Errorf("link %s is not under %s", u, base)
			} else if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
				t.Errorf("link %s names no file of the output folder", u)
			}
		}
		if base != "" && n < 2*len(res.Kernels)*3 {
			t.Errorf("only %d links", n)
		}
	}
}

// TestJUnitFailedParent: a transport that died after passing results is
// a failing test case, not a run of passes.
func TestJUnitFailedParent(t *testing.T) {
	res, _, _ := fixtureRun(t, fixtureOpts{crash: true})
	var b bytes.Buffer
	if err := JUnit(&b, res); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit does not parse: %v", err)
	}
	found := false
	for _, c := range doc.Suites[0].Cases {
		if c.Name == "rxe" && c.Classname == "patchctl.6.12.boot.patched" && c.Failure != nil && strings.Contains(c.Failure.Text, "cut short") {
			found = true
		}
		if strings.Contains(c.Name, "/") && strings.HasPrefix(c.Name, "check.") && !strings.HasPrefix(strings.TrimPrefix(c.Name, "check.checkpatch:"), "series/") {
			t.Errorf("test case name %q is not relative to the repository", c.Name)
		}
	}
	if !found {
		t.Errorf("no failing case for the crashed transport:\n%s", b.String())
	}
	if !regexp.MustCompile(`time="481\.702"`).Match(b.Bytes()) || bytes.Contains(b.Bytes(), []byte(`skipped="`+"0\" time=\"481")) {
		t.Errorf("root attributes: %s", strings.SplitN(b.String(), "\n", 3)[1])
	}
}

func TestPatchsetHash(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.patch"), filepath.Join(dir, "b.patch")
	os.WriteFile(a, []byte("a\n"), 0o644)
	os.WriteFile(b, []byte("b\n"), 0o644)
	// sha256sum *.patch | cut -c-64 | sha256sum | cut -c-64
	got, err := PatchsetHash([]string{a, b})
	if err != nil || got != "7b77b1b66500ed66bdb3e5f10e78f55ab6d4b404fa676ec1bee2ab5b31346a80" {
		t.Fatalf("hash %q %v", got, err)
	}
	if h, _ := PatchsetHash(nil); h != "" {
		t.Errorf("no patches: %q", h)
	}
}

// TestWriteAllReports writes the folder; every file is there and the
// in-process KCIDB check agrees.
func TestWriteAllReports(t *testing.T) {
	dir, _, _, _ := writeRun(t, fixtureOpts{failLeaf: true}, Options{})
	for _, want := range []string{"summary.txt", "junit.xml", "kcidb.json", "result.json", "rules.md", "check-6.12.sarif", "build-6.12-patched.json",
		"build-6.12-patched.log", "config-6.12-patched", "console-6.12-patched.log", "patches/6.12/0001-nvme-rdma-example.patch"} {
		if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
			t.Errorf("%s not written", want)
		}
	}
	kc, _ := os.ReadFile(filepath.Join(dir, "kcidb.json"))
	if errs := ValidateKCIDB(kc); len(errs) > 0 {
		t.Errorf("KCIDB: %s", strings.Join(errs, "\n"))
	}
	sum, _ := os.ReadFile(filepath.Join(dir, "summary.txt"))
	if !strings.Contains(string(sum), testkernel.Default) || !strings.Contains(string(sum), "verdict: FAIL") {
		t.Errorf("summary:\n%s", sum)
	}
	rj, _ := os.ReadFile(filepath.Join(dir, "result.json"))
	if !bytes.Contains(rj, []byte(`"${repo}/series/6.12/0001-nvme-rdma-example.patch"`)) || !bytes.Contains(rj, []byte(`${cache}/build/6.12/`)) {
		t.Errorf("result.json does not name its bases:\n%.600s", rj)
	}
	if err := CheckURLBase("file:///srv/out"); err == nil {
		t.Error("--url-base accepts file://")
	}
}

// TestSummaryPrintsFindings: the summary names each finding (severity,
// rule, place, first line) rather than only counting them; result.json
// speaks one status vocabulary for stages and boots.
func TestSummaryPrintsFindings(t *testing.T) {
	dir, _, _, _ := writeRun(t, fixtureOpts{checkFinding: true}, Options{})
	sum, _ := os.ReadFile(filepath.Join(dir, "summary.txt"))
	for _, want := range []string{
		"    warning checkpatch ",
		"LONG_LINE: line length of 101 exceeds 100 columns",
		"    error inline-sge-addr drivers/nvme/host/rdma.c:12: SGE 0 of wr holds a DMA address (qe->dma) on the inline path",
		"    note inline-size drivers/nvme/host/rdma.c:40: note only",
	} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	rj, _ := os.ReadFile(filepath.Join(dir, "result.json"))
	for _, bad := range []string{`"verdict": "pass"`, `"verdict": "fail"`, `"verdict": "error"`, `"status": "pass"`} {
		if bytes.Contains(rj, []byte(bad)) {
			t.Errorf("result.json has %s: one vocabulary is PASS, FAIL, ERROR", bad)
		}
	}
	if !bytes.Contains(rj, []byte(`"verdict": "PASS"`)) {
		t.Errorf("result.json has no boot verdict PASS:\n%.400s", rj)
	}
}

// TestUpstream: Debian versions map to the upstream tag (stable for
// X.Y.Z, mainline for X.Y and release candidates), git sources to their
// URL, tag and commit; what does not map gives nothing.
func TestUpstream(t *testing.T) {
	deb := func(v string) string { return "debian linux-source-x=" + v + " deb:0 tar:0" }
	for _, c := range []struct {
		source string
		want   UpstreamRef
	}{
		{deb("6.12.117-1~deb12u1"), UpstreamRef{StableURL, "v6.12.117", ""}},
		{deb("5.10.223-1"), UpstreamRef{StableURL, "v5.10.223", ""}},
		{deb("7.3~rc7-1~exp1"), UpstreamRef{MainlineURL, "v7.3-rc7", ""}},
		{deb("6.1-1"), UpstreamRef{MainlineURL, "v6.1", ""}},
		{deb("6.1.0-1"), UpstreamRef{MainlineURL, "v6.1", ""}},
		{deb("1:6.12.5-2"), UpstreamRef{StableURL, "v6.12.5", ""}},
		{deb("6.12.5+dfsg-1"), UpstreamRef{}},
		{deb("6.12.5~rc1-1"), UpstreamRef{}},
		{"debian linux-source-x", UpstreamRef{}},
		{"local abc", UpstreamRef{}},
		{"git https://example.org/linux.git tag:v7.0 commit:0123456789abcdef0123456789abcdef01234567", UpstreamRef{"https://example.org/linux.git", "v7.0", "0123456789abcdef0123456789abcdef01234567"}},
		{"git /home/me/linux tag:v7.0 commit:", UpstreamRef{}},
	} {
		if got := Upstream(c.source); got != c.want {
			t.Errorf("Upstream(%q) = %+v, want %+v", c.source, got, c.want)
		}
	}
	dir, _, _, _ := writeRun(t, fixtureOpts{kernels: []string{testkernel.Default, "7.3"}}, Options{})
	var doc kcidbDoc
	data, _ := os.ReadFile(filepath.Join(dir, "kcidb.json"))
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	// 6.12 itself: its upstream tag
	want := map[string]string{"6.12": StableURL + " v6.12.117", "7.3": MainlineURL + " v7.3-rc7"}
	for _, c := range doc.Checkouts {
		// 6.12 itself: its upstream tag
		k := "6.12"
		if strings.Contains(c.ID, "7_3") || strings.Contains(c.ID, "7.3") {
			k = "7.3"
		}
		if got := c.GitRepoURL + " " + strings.Join(c.GitCommitTags, ","); got != want[k] || c.GitCommitName != strings.Fields(want[k])[1] {
			t.Errorf("checkout %s: %s (name %q), want %s", c.ID, got, c.GitCommitName, want[k])
		}
	}
	if errs := reportcheck.KCIDB(t, filepath.Join(dir, "kcidb.json")); len(errs) > 0 {
		t.Errorf("kcidb-io:\n%s", strings.Join(errs, "\n"))
	}
}
