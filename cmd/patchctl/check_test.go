package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/testenv"
)

func TestCheckCLI(t *testing.T) {
	_, pristine := testenv.Kernel(t, "6.12")
	root := testenv.RepoRoot(t)
	// A tree with one DMA address on net/smc's inline path: exit 1.
	tree := t.TempDir()
	ents, _ := os.ReadDir(filepath.Join(pristine, "net/smc"))
	os.MkdirAll(filepath.Join(tree, "net/smc"), 0o755)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(pristine, "net/smc", e.Name()))
		if e.Name() == "smc_tx.c" {
			b = []byte(strings.Replace(string(b), "\t\t\tbase_addr = virt_addr;", "\t\t\tbase_addr = dma_addr;", 1))
		}
		os.WriteFile(filepath.Join(tree, "net/smc", e.Name()), b, 0o644)
	}
	code, out, _ := run(t, "--root", root, "check", "--tree", tree, "--format", "json", "net/smc")
	var rep struct {
		Findings []struct{ Rule, File string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if code != 1 || len(rep.Findings) == 0 || rep.Findings[0].Rule != "inline-sge-addr" || rep.Findings[0].File != "net/smc/smc_tx.c" {
		t.Errorf("mutant: exit %d, %+v", code, rep.Findings)
	}
	// The pristine folder is clean: exit 0.
	if code, out, errOut := run(t, "--root", root, "check", "--tree", pristine, "net/smc", "drivers/nvme"); code != 0 {
		t.Errorf("pristine: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, _ := run(t, "--root", root, "check", "--format", "xml"); code != 2 {
		t.Errorf("bad format: exit %d", code)
	}
}
