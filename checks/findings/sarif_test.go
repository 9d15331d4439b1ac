package findings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/report/reportcheck"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// series is a synthetic series: files whose every line is unique, edited
// by several patches (insertions, deletions, replacements, a new file),
// written by diff -u and applied by GNU patch.
type series struct {
	repo, tree string
	patches    []string
	origin     map[string]string // line content -> patch (repository-relative) that added it
}

func makeSeries(t *testing.T, seed int64, npatches int) *series {
	t.Helper()
	for _, tool := range []string{"diff", "patch"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	rng := rand.New(rand.NewSource(seed))
	dir := t.TempDir()
	s := &series{repo: filepath.Join(dir, "repo"), tree: filepath.Join(dir, "tree"), origin: map[string]string{}}
	files := map[string][]string{"drivers/nvme/host/rdma.c": nil, "drivers/infiniband/sw/rxe/rxe_verbs.c": nil}
	for f := range files {
		for i := 0; i < 80; i++ {
			files[f] = append(files[f], fmt.Sprintf("orig %s %d", filepath.Base(f), i))
		}
	}
	writeTree := func(root string, fs map[string][]string) {
		for f, lines := range fs {
			p := filepath.Join(root, f)
			os.MkdirAll(filepath.Dir(p), 0o755)
			text := ""
			if len(lines) > 0 {
				text = strings.Join(lines, "\n") + "\n"
			}
			os.WriteFile(p, []byte(text), 0o644)
		}
	}
	writeTree(s.tree, files)
	os.MkdirAll(filepath.Join(s.repo, "series", testkernel.Default), 0o755)
	for n := 1; n <= npatches; n++ {
		rel := fmt.Sprintf("series/6.12/%04d-change-%d.patch", n, n)
		next := map[string][]string{}
		for f, lines := range files {
			out := append([]string(nil), lines...)
			for e := 0; e < 1+rng.Intn(5); e++ {
				at := rng.Intn(len(out) + 1)
				switch rng.Intn(3) {
				case 0: // insert
					var add []string
					for k := 0; k < 1+rng.Intn(4); k++ {
						c := fmt.Sprintf("patch %d edit %d line %d of %s", n, e, k, filepath.Base(f))
						add = append(add, c)
						s.origin[c] = rel
					}
					out = append(out[:at], append(add, out[at:]...)...)
				case 1: // delete
					if at < len(out) {
						out = append(out[:at], out[min(at+1+rng.Intn(3), len(out)):]...)
					}
				default: // replace
					if at < len(out) {
						c := fmt.Sprintf("patch %d replaces line %d of %s", n, at, filepath.Base(f))
						s.origin[c] = rel
						out[at] = c
					}
				}
			}
			next[f] = out
		}
		if n == 2 { // a new file
			f := "drivers/nvme/host/inline.h"
			for k := 0; k < 5; k++ {
				c := fmt.Sprintf("patch %d new file line %d", n, k)
				next[f] = append(next[f], c)
				s.origin[c] = rel
			}
		}
		// the patch: a message with a line that looks like an addition,
		// then diff -u per file
		var b bytes.Buffer
		fmt.Fprintf(&b, "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\nFrom: A <a@example.org>\nSubject: [PATCH %d/%d] change %d\n\n+1 to this, says the message\n---\n", n, npatches, n)
		a, c := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		os.RemoveAll(a)
		os.RemoveAll(c)
		writeTree(a, files)
		writeTree(c, next)
		for _, f := range slices.Sorted(maps.Keys(next)) {
			cmd := exec.Command("diff", "-uN", "--label", "a/"+f, "--label", "b/"+f, filepath.Join(a, f), filepath.Join(c, f))
			out, _ := cmd.Output()
			if len(out) > 0 {
				fmt.Fprintf(&b, "diff --git a/%s b/%s\n", f, f)
				b.Write(out)
			}
		}
		b.WriteString("-- \n2.39.5\n")
		p := filepath.Join(s.repo, rel)
		os.WriteFile(p, b.Bytes(), 0o644)
		s.patches = append(s.patches, p)
		// GNU patch applies it to the tree the checks read
		cmd := exec.Command("patch", "-p1", "-s", "-i", p)
		cmd.Dir = s.tree
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("GNU patch refuses %s: %v\n%s", rel, err, out)
		}
		files = next
	}
	// the tree GNU patch made is the series' last state
	for f, lines := range files {
		got, _ := os.ReadFile(filepath.Join(s.tree, f))
		if want := strings.Join(lines, "\n") + "\n"; string(got) != want && !(len(lines) == 0 && len(got) == 0) {
			t.Fatalf("GNU patch made another %s", f)
		}
	}
	return s
}

// TestPatchLinePlacement: for every line of every file GNU patch
// produced, the SARIF placement names the patch that added it and that
// patch's "+" line with the same text; lines of the pristine tree stay in
// the tree.
func TestPatchLinePlacement(t *testing.T) {
	for seed := int64(1); seed <= 30; seed++ {
		s := makeSeries(t, seed, 1+int(seed%4))
		pl := newPatchLines(SARIFOptions{Repo: s.repo, Tree: s.tree, Patches: s.patches})
		placed := 0
		filepath.Walk(s.tree, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(s.tree, p)
			data, _ := os.ReadFile(p)
			if len(data) == 0 {
				return nil
			}
			for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
				patch, pline, ok := pl.adding(filepath.ToSlash(rel), i+1)
				want, added := s.origin[line]
				if ok != added || (ok && patch != want) {
					t.Errorf("seed %d: %s:%d %q placed in %q (%v), added by %q", seed, rel, i+1, line, patch, ok, want)
					continue
				}
				if !ok {
					continue
				}
				placed++
				pdata, _ := os.ReadFile(filepath.Join(s.repo, patch))
				if got := strings.Split(string(pdata), "\n")[pline-1]; got != "+"+line {
					t.Errorf("seed %d: %s:%d placed on %s:%d, which is %q", seed, rel, i+1, patch, pline, got)
				}
			}
			return nil
		})
		if placed == 0 {
			t.Errorf("seed %d: nothing placed", seed)
		}
	}
}

// TestSARIFForCodeScanning writes findings on lines the series adds and
// on pristine lines, with a checkpatch finding on a patch, and has the
// SARIF Multitool (GitHub's rules) and the OASIS schema validate it.
func TestSARIFForCodeScanning(t *testing.T) {
	s := makeSeries(t, 7, 3)
	var findings []Finding
	var added, pristine string
	data, _ := os.ReadFile(filepath.Join(s.tree, "drivers/nvme/host/rdma.c"))
	lines := strings.Split(string(data), "\n")
	// An added line the patched file still has (a later patch may have
	// replaced one), the first in the file: not one picked by map order.
	for _, l := range lines {
		if _, ok := s.origin[l]; ok && strings.Contains(l, "rdma.c") {
			added = l
			break
		}
	}
	if added == "" {
		t.Fatal("the series adds no line to rdma.c that the patched file keeps")
	}
	for i, l := range lines {
		if l == added {
			findings = append(findings, Finding{Rule: RuleInlineSGE, Severity: SevError, File: "drivers/nvme/host/rdma.c", Line: i + 1, Function: "nvme_rdma_post_send",
				Message: "SGE 0 holds a DMA address on the inline path", Evidence: []Evidence{{File: "drivers/nvme/host/rdma.c", Line: 1, Message: "IB_SEND_INLINE set on this path"}}})
		}
		if strings.HasPrefix(l, "orig") && pristine == "" {
			pristine = l
			findings = append(findings, Finding{Rule: RuleInlineSize, Severity: SevWarning, File: "drivers/nvme/host/rdma.c", Line: i + 1, Message: "guard compares with the requested size"})
		}
	}
	findings = append(findings, Finding{Rule: RuleCheckpatch, Severity: SevWarning, File: s.patches[0], Line: 9, Message: "LONG_LINE: line length of 101 exceeds 100 columns"},
		Finding{Rule: "unknown-rule", Severity: SevNote, File: "/elsewhere/x.c", Line: 0, Message: "outside"})
	rep := &Report{Findings: findings}
	var b bytes.Buffer
	if err := rep.WriteSARIFWith(&b, SARIFOptions{Version: "v1.2.3", Repo: s.repo, Tree: s.tree, Patches: s.patches, Kernel: testkernel.Default, RunID: "20261201T072910Z-0123abcd", URLBase: "https://ci.example.org/run/1"}); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte(s.repo)) || bytes.Contains(b.Bytes(), []byte(s.tree)) || bytes.Contains(b.Bytes(), []byte("/elsewhere")) {
		t.Errorf("host paths in the SARIF:\n%s", b.String())
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID    string
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI, URIBaseID string }
						Region           struct{ StartLine int }
					}
				}
				RelatedLocations    []json.RawMessage
				PartialFingerprints map[string]string
			}
			Tool struct {
				Driver struct {
					Rules []struct {
						ShortDescription, FullDescription struct{ Text string }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	byRule := map[string]int{}
	for i, x := range log.Runs[0].Results {
		byRule[x.RuleID] = i
	}
	res := log.Runs[0].Results
	r := []struct {
		RuleID    string
		Locations []struct {
			PhysicalLocation struct {
				ArtifactLocation struct{ URI, URIBaseID string }
				Region           struct{ StartLine int }
			}
		}
		RelatedLocations    []json.RawMessage
		PartialFingerprints map[string]string
	}{res[byRule[RuleInlineSGE]], res[byRule[RuleInlineSize]], res[byRule[RuleCheckpatch]], res[byRule["unknown-rule"]]}
	if loc := r[0].Locations[0].PhysicalLocation; loc.ArtifactLocation.URIBaseID != BaseRepo || !strings.HasPrefix(loc.ArtifactLocation.URI, "series/6.12/") || len(r[0].RelatedLocations) != 2 {
		t.Errorf("the finding on an added line is at %+v with %d related locations", loc, len(r[0].RelatedLocations))
	}
	if loc := r[1].Locations[0].PhysicalLocation; loc.ArtifactLocation.URIBaseID != BaseKernel {
		t.Errorf("the finding on a pristine line is at %+v", loc)
	}
	if loc := r[2].Locations[0].PhysicalLocation; loc.ArtifactLocation.URIBaseID != BaseRepo || loc.ArtifactLocation.URI != "series/6.12/0001-change-1.patch" || loc.Region.StartLine != 9 {
		t.Errorf("the checkpatch finding is at %+v", loc)
	}
	for _, x := range r {
		if len(x.PartialFingerprints) == 0 {
			t.Errorf("%s has no partialFingerprints", x.RuleID)
		}
	}
	for _, rule := range log.Runs[0].Tool.Driver.Rules {
		if rule.ShortDescription.Text == rule.FullDescription.Text {
			t.Errorf("short description = full description: %q", rule.FullDescription.Text)
		}
	}
	p := filepath.Join(t.TempDir(), "check.sarif")
	os.WriteFile(p, b.Bytes(), 0o644)
	if errs := reportcheck.SARIFErrors(t, p); len(errs) > 0 {
		t.Errorf("SARIF Multitool:\n%s", strings.Join(errs, "\n"))
	}
	if errs := reportcheck.SARIFSchema(t, p); len(errs) > 0 {
		t.Errorf("SARIF schema:\n%s", strings.Join(errs, "\n"))
	}
	// the old output, with host paths and no help, is what the Multitool
	// rejects
	old := strings.ReplaceAll(b.String(), `"uri": "series/`, `"uri": "`+s.repo+`/series/`)
	os.WriteFile(p, []byte(old), 0o644)
	if errs := reportcheck.SARIFErrors(t, p); len(errs) == 0 {
		t.Error("the Multitool accepts absolute paths")
	}
}

func TestSemver(t *testing.T) {
	for in, want := range map[string]string{"v1.2.3": "1.2.3", "1.2.3-rc.1": "1.2.3-rc.1", "7d8fc59-dirty": "0.0.0-dev+7d8fc59-dirty", "": "0.0.0-dev", "(devel)": "0.0.0-dev+devel"} {
		if got := semver(in); got != want {
			t.Errorf("semver(%q) = %q, want %q", in, got, want)
		}
	}
}
