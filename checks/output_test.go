package checks

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/testenv"
)

// mutantReport is a report with real findings: seed 000 with a DMA address
// on the inline path.
func mutantReport(t *testing.T) *Report {
	_, patched := patchedFiles(t)
	files := map[string][]byte{rdma: patched[rdma]}
	tree, _ := mutate(t, files, nvmeMutants[0])
	rep, err := Run(Options{Tree: tree, Paths: []string{"drivers/nvme/host"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors() == 0 {
		t.Fatal("the mutant has no findings")
	}
	return rep
}

func TestTextAndJSON(t *testing.T) {
	rep := mutantReport(t)
	var b bytes.Buffer
	rep.WriteText(&b)
	first := strings.SplitN(b.String(), "\n", 2)[0]
	if !strings.HasPrefix(first, "drivers/nvme/host/rdma.c:") || !strings.Contains(first, ": inline-sge-addr: SGE 0") {
		t.Errorf("text output is not compiler-like: %q", first)
	}
	if !strings.Contains(b.String(), "IB_SEND_INLINE set on this path") || !strings.Contains(b.String(), "address from qe->dma") {
		t.Errorf("evidence missing:\n%s", b.String())
	}
	b.Reset()
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"rule", "severity", "file", "line", "function", "message", "evidence"} {
		if _, ok := doc.Findings[0][k]; !ok {
			t.Errorf("JSON finding lacks %q: %v", k, doc.Findings[0])
		}
	}
	if doc.Findings[0]["function"] != "nvme_rdma_post_send" {
		t.Errorf("function %v", doc.Findings[0]["function"])
	}
}

// TestSARIFValidates checks the SARIF output against the SARIF 2.1.0 JSON
// schema, and that a broken log fails the same validation.
func TestSARIFValidates(t *testing.T) {
	rep := mutantReport(t)
	p := filepath.Join(t.TempDir(), "check.sarif")
	f, _ := os.Create(p)
	if err := rep.WriteSARIF(f, "test"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := testenv.ValidateSARIF(t, p)
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID, Level string
				Message       struct{ Text string }
			}
		}
	}
	b, _ := os.ReadFile(p)
	if err := json.Unmarshal(b, &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs[0].Results) != len(rep.Findings) {
		t.Errorf("%d results for %d findings", len(log.Runs[0].Results), len(rep.Findings))
	}
	if out != "" {
		t.Errorf("SARIF does not validate:\n%s", out)
	}
	bad := filepath.Join(t.TempDir(), "bad.sarif")
	os.WriteFile(bad, []byte(strings.Replace(string(b), `"level": "error"`, `"level": "fatal"`, 1)), 0o644)
	if testenv.ValidateSARIF(t, bad) == "" {
		t.Error("the validator accepts an invalid level: it validates nothing")
	}
}
