package report

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/checks"
	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/boot"
	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/ktap"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/testenv"
)

// fixture is a run with a failed KTAP test, a check finding and a
// passing rest.
func fixture(t *testing.T) *pipeline.Result {
	dir := t.TempDir()
	patch := filepath.Join(dir, "0001-x.patch")
	os.WriteFile(patch, []byte("From 0 Mon Sep 17 00:00:00 2001\n"), 0o644)
	console := filepath.Join(dir, "console.log")
	os.WriteFile(console, []byte("KTAP version 1\n"), 0o644)
	doc := ktap.Parse("KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: rxe\n    1..2\n    ok 1 write_read_16k\n    # mismatch at byte 3\n    not ok 2 write_read_32k\nnot ok 1 rxe\n")
	k := &pipeline.Kernel{Name: "6.12", Source: "debian x", Verdict: pipeline.Fail, Start: time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC),
		Patches: []string{patch},
		Stages:  []*pipeline.Stage{{Name: "apply", Status: pipeline.Pass}, {Name: "boot-patched", Status: pipeline.Fail, Detail: "1 failed"}},
		Apply:   []*apply.Result{{Entry: series.Entry{Source: "patches/s/p.txt", Expect: series.Applies}, Source: "patches/s/p.txt", Disposition: series.Applies, Expected: series.Applies, Match: true}},
		Check: &checks.Report{Findings: []checks.Finding{{Rule: checks.RuleInlineSGE, Severity: "error", File: "drivers/x.c", Line: 3, Message: "DMA"},
			{Rule: checks.RuleCheckpatch, Severity: "warning", File: "p.patch", Line: 9, Message: "style"}}},
		Builds: map[string]*build.Metadata{"patched": {Status: "PASS", ConfigHash: strings.Repeat("a", 64), Fragments: []string{"base"}, Duration: 12,
			Compiler: "gcc 12", KernelRelease: "6.12.117", Artifacts: map[string]string{"bzImage": "/x/bzImage"}, Log: "/x/build.log"}},
		Boots: map[string]*boot.Result{"patched": {KTAP: doc, ConsoleLog: console}},
	}
	return &pipeline.Result{Kernels: []*pipeline.Kernel{k}, Verdict: pipeline.Fail}
}

func TestJUnitParses(t *testing.T) {
	var b bytes.Buffer
	if err := JUnit(&b, fixture(t)); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit does not parse: %v", err)
	}
	s := doc.Suites[0]
	if s.Tests != len(s.Cases) || doc.Failures != 3 || doc.Tests != 7 {
		t.Errorf("tests %d failures %d (suite %d/%d):\n%s", doc.Tests, doc.Failures, s.Tests, len(s.Cases), b.String())
	}
	found := false
	for _, c := range s.Cases {
		if c.Name == "write_read_32k" && c.Classname == "patchctl.6.12.boot.patched.rxe" && c.Failure != nil && strings.Contains(c.Failure.Text, "mismatch") {
			found = true
		}
	}
	if !found {
		t.Errorf("the failed KTAP test is not a failing testcase with its diagnostics:\n%s", b.String())
	}
}

func TestKCIDBValidates(t *testing.T) {
	var b bytes.Buffer
	if err := KCIDB(&b, fixture(t), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if errs := ValidateKCIDB(b.Bytes()); len(errs) > 0 {
		t.Fatalf("KCIDB v5.3 violations:\n%s\n%s", strings.Join(errs, "\n"), b.String())
	}
	s := b.String()
	for _, want := range []string{`"path": "nvme.rdma.rxe.write_read_32k"`, `"status": "FAIL"`, `"path": "static.inline-sge-addr"`, `"patchset_hash": "`} {
		if !strings.Contains(s, want) {
			t.Errorf("KCIDB lacks %s", want)
		}
	}
	// The validator catches what the schema forbids.
	for _, broken := range []string{
		strings.Replace(s, `"origin": "patchctl"`, `"origin": "Patch-CTL"`, 1),
		strings.Replace(s, `"status": "FAIL"`, `"status": "BROKEN"`, 1),
		strings.Replace(s, `"tree_name"`, `"tree"`, 1),
		strings.Replace(s, `"minor": 3`, `"minor": 9`, 1),
	} {
		if len(ValidateKCIDB([]byte(broken))) == 0 {
			t.Error("the KCIDB validator accepted a broken report")
		}
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

// TestWriteAllReports writes the folder and validates the SARIF in it.
func TestWriteAllReports(t *testing.T) {
	dir := t.TempDir()
	files, err := Write(dir, fixture(t), "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"summary.txt", "junit.xml", "kcidb.json", "result.json", "check-6.12.sarif", "build-6.12-patched.json", "console-6.12-patched.log"} {
		if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
			t.Errorf("%s not written (%v)", want, files)
		}
	}
	if out := testenv.ValidateSARIF(t, filepath.Join(dir, "check-6.12.sarif")); out != "" {
		t.Errorf("SARIF: %s", out)
	}
	sum, _ := os.ReadFile(filepath.Join(dir, "summary.txt"))
	if !strings.Contains(string(sum), "6.12") || !strings.Contains(string(sum), "verdict: FAIL") {
		t.Errorf("summary:\n%s", sum)
	}
}
