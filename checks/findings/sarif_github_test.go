package findings

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/report/reportcheck"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// TestLineHashesGitHub: primaryLocationLineHash as upload-sarif computes
// it, on the inputs and values of codeql-action's own tests
// (src/fingerprints.test.ts): empty file, mixed newlines, whitespace,
// repeated lines.
func TestLineHashesGitHub(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", []string{"c129715d7a2bc9a3:1"}},
		{" a\nb\n  \t\tc\n d", []string{"271789c17abda88f:1", "54703d4cd895b18:1", "180aee12dab6264:1", "a23a3dc5e078b07b:1"}},
		{" hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End", []string{"8b7cf3e952e7aeb2:1", "b1ae1287ec4718d9:1", "bff680108adb0fcc:1", "c6805c5e1288b612:1", "b86d3392aea1be30:1", "e6ceba753e1a442:1"}},
		{" hello; \t\r\nworld!!!\r\n\r\n\r\n  \t\tGreetings\r\n End\r\n", []string{"e9496ae3ebfced30:1", "fb7c023a8b9ccb3f:1", "ce8ba1a563dcdaca:1", "e20e36e16fcb0cc8:1", "b3edc88f2938467e:1", "c8e28b0b4002a3a0:1", "c129715d7a2bc9a3:1"}},
		{" hello; \t\nworld!!!\r\r\r  \t\tGreetings\r End\r", []string{"e9496ae3ebfced30:1", "fb7c023a8b9ccb3f:1", "ce8ba1a563dcdaca:1", "e20e36e16fcb0cc8:1", "b3edc88f2938467e:1", "c8e28b0b4002a3a0:1", "c129715d7a2bc9a3:1"}},
		{strings.Repeat("Lorem ipsum dolor sit amet.\n", 10), []string{"a7f2ff13bc495cf2:1", "a7f2ff13bc495cf2:2", "a7f2ff13bc495cf2:3", "a7f2ff13bc495cf2:4",
			"a7f2ff13bc495cf2:5", "a7f2ff13bc495cf2:6", "a7f2ff1481e87703:1", "a9cf91f7bbf1862b:1", "55ec222b86bcae53:1", "cc97dc7b1d7d8f7b:1", "c129715d7a2bc9a3:1"}},
	}
	for _, c := range cases {
		got := LineHashes([]byte(c.in))
		if len(got) != len(c.want) {
			t.Errorf("%q: %d lines hashed, want %d", c.in, len(got), len(c.want))
		}
		for i, w := range c.want {
			if got[i+1] != w {
				t.Errorf("%q line %d: %s, want %s", c.in, i+1, got[i+1], w)
			}
		}
	}
}

// githubSeries is a kernel file before and after one patch of the
// repository's series/: the patch removes a line with a pre-existing
// finding, adds one with a new finding, and a pre-existing finding stays.
func githubSeries(t *testing.T) (repo, tree, patch string) {
	dir := t.TempDir()
	repo, tree = filepath.Join(dir, "repo"), filepath.Join(dir, "tree")
	var before, after []string
	for i := 1; i <= 30; i++ {
		before = append(before, "\tline_"+string(rune('a'+i%26))+"();")
	}
	before[9] = "\tsge.addr = old_dma;  /* pre-existing, fixed by the patch */"
	before[19] = "\tlen += le64_to_cpu(off);  /* pre-existing, kept */"
	after = append(after, before[:9]...)
	after = append(after, "\tsge.addr = (u64)buf;", "\tsge.addr = qe->dma;  /* new */")
	after = append(after, before[10:]...)
	os.MkdirAll(filepath.Join(tree, "drivers/nvme/host"), 0o755)
	os.WriteFile(filepath.Join(tree, "drivers/nvme/host/rdma.c"), []byte(strings.Join(after, "\n")+"\n"), 0o644)
	p := "From 0123 Mon Sep 17 00:00:00 2001\nFrom: A <a@example.org>\nSubject: [PATCH] nvme-rdma: fix\n\nbody\n---\n" +
		"diff --git a/drivers/nvme/host/rdma.c b/drivers/nvme/host/rdma.c\n--- a/drivers/nvme/host/rdma.c\n+++ b/drivers/nvme/host/rdma.c\n" +
		"@@ -7,7 +7,8 @@\n" + " " + before[6] + "\n " + before[7] + "\n " + before[8] + "\n-" + before[9] + "\n+" + after[9] + "\n+" + after[10] + "\n " + before[10] + "\n " + before[11] + "\n " + before[12] + "\n"
	patch = filepath.Join(repo, "series", testkernel.Default, "0001-nvme-rdma-fix.patch")
	os.MkdirAll(filepath.Dir(patch), 0o755)
	os.WriteFile(patch, []byte(p), 0o644)
	return repo, tree, patch
}

// TestSARIFGitHubAlerts: the new finding is at the patch's "+" line with
// the tree location related and GitHub's line hash of that patch line;
// the pre-existing one is suppressed (no alert); the fixed one is a
// passing result at the patch's "-" line; every rule has a readable
// title, help and helpUri (the repository's rules page without
// --url-base); the Multitool (--rule-kind Gh;Sarif) finds no error.
func TestSARIFGitHubAlerts(t *testing.T) {
	repo, tree, patch := githubSeries(t)
	rep := &Report{Findings: []Finding{
		{Rule: RuleInlineSGE, Severity: SevError, File: "drivers/nvme/host/rdma.c", Line: 11, Message: "SGE 0 holds a DMA address on the inline path", Baseline: BaselineNew},
		{Rule: RuleIncapsule, Severity: SevError, File: "drivers/nvme/host/rdma.c", Line: 21, Message: "in-capsule bound adds a wire value", Baseline: BaselineUnchanged},
	}, Baseline: &Comparison{Against: "pristine tree", New: 1, Unchanged: 1,
		Absent: []Finding{{Rule: RuleInlineSGE, Severity: SevError, File: "drivers/nvme/host/rdma.c", Line: 10, Message: "SGE 0 holds a DMA address"}}}}
	var b bytes.Buffer
	if err := rep.WriteSARIFWith(&b, SARIFOptions{Version: "v1.2.3", Repo: repo, Tree: tree, Patches: []string{patch}, Kernel: testkernel.Default, RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	type loc struct {
		PhysicalLocation struct {
			ArtifactLocation struct{ URI, URIBaseID string }
			Region           struct{ StartLine int }
		}
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID, Kind, Level string
				Locations           []loc
				RelatedLocations    []loc
				PartialFingerprints map[string]string
				Suppressions        []struct{ Kind, Status string }
			}
			Tool struct {
				Driver struct {
					Rules []struct {
						ID, Name, HelpURI string
						ShortDescription  struct{ Text string }
						Help              struct{ Text string }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	res := log.Runs[0].Results
	if len(res) != 3 {
		t.Fatalf("%d results, want 3 (new, pre-existing, fixed):\n%s", len(res), b.String())
	}
	pdata, _ := os.ReadFile(patch)
	plines := strings.Split(string(pdata), "\n")
	hashes := LineHashes(pdata)
	// new: at the patch's + line
	n := res[0]
	at := n.Locations[0].PhysicalLocation
	if at.ArtifactLocation.URIBaseID != BaseRepo || at.ArtifactLocation.URI != "series/6.12/0001-nvme-rdma-fix.patch" || plines[at.Region.StartLine-1] != "+\tsge.addr = qe->dma;  /* new */" {
		t.Errorf("the new finding is at %+v", at)
	}
	if len(n.RelatedLocations) == 0 || n.RelatedLocations[0].PhysicalLocation.ArtifactLocation.URIBaseID != BaseKernel || n.RelatedLocations[0].PhysicalLocation.Region.StartLine != 11 {
		t.Errorf("the new finding's related locations %+v lack the kernel line", n.RelatedLocations)
	}
	if got := n.PartialFingerprints["primaryLocationLineHash"]; got == "" || got != hashes[at.Region.StartLine] {
		t.Errorf("primaryLocationLineHash %q, want %q", got, hashes[at.Region.StartLine])
	}
	if len(n.Suppressions) != 0 {
		t.Errorf("the new finding is suppressed: %+v", n.Suppressions)
	}
	// pre-existing: suppressed, so no alert
	if p := res[1]; len(p.Suppressions) != 1 || p.Suppressions[0].Kind != "external" || p.Suppressions[0].Status != "accepted" {
		t.Errorf("the pre-existing finding is not suppressed: %+v", p.Suppressions)
	}
	// fixed: a passing result at the - line
	f := res[2]
	fat := f.Locations[0].PhysicalLocation
	if f.Kind != "pass" || f.Level != "none" || fat.ArtifactLocation.URIBaseID != BaseRepo || !strings.HasPrefix(plines[fat.Region.StartLine-1], "-\tsge.addr = old_dma;") {
		t.Errorf("the fixed finding: kind %q level %q at %+v", f.Kind, f.Level, fat)
	}
	titles := map[string]string{}
	for _, r := range log.Runs[0].Tool.Driver.Rules {
		titles[r.ID] = r.ShortDescription.Text
		if r.HelpURI != InformationURI+"/blob/main/docs/rules.md#"+r.ID || r.Help.Text == "" {
			t.Errorf("rule %s: helpUri %q, help %q", r.ID, r.HelpURI, r.Help.Text)
		}
		if !strings.Contains(r.ShortDescription.Text, " ") || strings.EqualFold(r.Name, r.ID) {
			t.Errorf("rule %s: title %q, name %q: want a readable title", r.ID, r.ShortDescription.Text, r.Name)
		}
	}
	if titles[RuleInlineSGE] != "Inline SGE carries a DMA address" {
		t.Errorf("inline-sge-addr is titled %q", titles[RuleInlineSGE])
	}
	p := filepath.Join(t.TempDir(), "check.sarif")
	os.WriteFile(p, b.Bytes(), 0o644)
	if errs := reportcheck.SARIFErrors(t, p); len(errs) > 0 {
		t.Errorf("SARIF Multitool:\n%s", strings.Join(errs, "\n"))
	}
	if errs := reportcheck.SARIFSchema(t, p); len(errs) > 0 {
		t.Errorf("SARIF schema:\n%s", strings.Join(errs, "\n"))
	}
}

// TestRulesPageCurrent: docs/rules.md, which helpUri links to, is what
// WriteRulesMarkdown writes.
func TestRulesPageCurrent(t *testing.T) {
	var b bytes.Buffer
	if err := WriteRulesMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", RulesPage)
	if os.Getenv("PATCHCTL_UPDATE_RULES") != "" {
		os.WriteFile(path, b.Bytes(), 0o644)
	}
	have, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(have, b.Bytes()) {
		t.Errorf("%s is not current (%v): PATCHCTL_UPDATE_RULES=1 go test -run TestRulesPageCurrent ./checks/findings", RulesPage, err)
	}
}

// TestEveryRuleHasTexts: every rule the engine can report has its own
// SARIF title and help, never the description repeated (a rule added
// without them would reach GitHub and docs/rules.md as its description).
func TestEveryRuleHasTexts(t *testing.T) {
	for id := range Rules {
		tx, ok := ruleTexts[id]
		if !ok || tx.title == "" || tx.help == "" {
			t.Errorf("rule %s has no title or help in ruleTexts", id)
			continue
		}
		if tx.help == Rules[id] {
			t.Errorf("rule %s: help repeats the description", id)
		}
	}
}
