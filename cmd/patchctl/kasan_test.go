package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/kbuild"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// kasanPatch plants a use-after-free in nvmet_rdma_alloc_queue (each
// queue connect of the boot test reads a freed object).
var kasanPatch = filepath.Join("testdata", "kasan", "nvmet-rdma-planted-uaf.patch")

// TestKASANPatchApplies: the planted use-after-free applies on the
// prepared 6.12 tree as it is (so the KASAN test below tests the gate,
// not the patch).
func TestKASANPatchApplies(t *testing.T) {
	k, pristine := testenv.Kernel(t, testkernel.Default)
	ps, err := mailpatch.ImportFile(kasanPatch, "kasan", mailpatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := apply.RunGiven(t.Context(), apply.Given{Kernel: k, Pristine: pristine, Patches: ps, Sources: []string{kasanPatch}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Mismatch(); err != nil {
		t.Fatal(err)
	}
}

// TestTryKASANPlantedUAF is the real debug-fragment test: try builds
// 6.12 with base,rdma-loopback,debug (KASAN, lockdep, KFENCE, UBSAN) in
// both variants and boots them over rxe; the patched kernel's KASAN
// report of the planted use-after-free must fail the patched boot's dmesg
// gate, named in the result and the text, while the baseline debug kernel
// passes. It builds two KASAN kernels (long): it runs only with
// PATCHCTL_TEST_KASAN=1, not under -short.
//
//	PATCHCTL_TEST_KASAN=1 flock /tmp/patchctl-kbuild.lock \
//	  go test -timeout 3h -run TestTryKASANPlantedUAF -v ./cmd/patchctl/
func TestTryKASANPlantedUAF(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and boots two KASAN kernels")
	}
	if os.Getenv("PATCHCTL_TEST_KASAN") == "" {
		t.Skip("builds and boots two KASAN kernels: set PATCHCTL_TEST_KASAN=1 to run it")
	}
	root := testenv.RepoRoot(t)
	testenv.Kernel(t, testkernel.Default)
	kbuild.Exclusive(t, testkernel.Default)
	patch, err := filepath.Abs(kasanPatch)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, stdout, stderr := child(t, "--root", root, "--cache", testenv.Cache().Dir, "try", patch,
		"--kernel", testkernel.Default, "--fragment", "base,rdma-loopback,debug", "--transport", "rxe", "--out", out)
	t.Logf("try: exit %d\n%s\n%s", code, stdout, stderr)
	if code != 1 {
		t.Fatalf("try of the planted use-after-free: exit %d, want 1 (the patched boot fails)", code)
	}
	var r struct {
		Kernels []struct {
			Builds map[string]struct {
				ID        string   `json:"image_id"`
				Fragments []string `json:"fragments"`
			} `json:"builds"`
			Boots map[string]struct {
				Verdict string `json:"verdict"`
				Splats  []struct {
					Kind    string   `json:"kind"`
					Excerpt []string `json:"excerpt"`
				} `json:"splats"`
			} `json:"boots"`
		} `json:"kernels"`
	}
	b, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r); err != nil || len(r.Kernels) != 1 {
		t.Fatalf("result.json: %v", err)
	}
	k := r.Kernels[0]
	if f := strings.Join(k.Builds["patched"].Fragments, ","); !strings.Contains(f, "debug") {
		t.Errorf("the patched image %s was built with %s, not the debug fragment", k.Builds["patched"].ID, f)
	}
	if v := k.Boots["baseline"].Verdict; v != "PASS" {
		t.Errorf("the baseline debug kernel's boot: %s, want PASS (splats: %+v)", v, k.Boots["baseline"].Splats)
	}
	pb := k.Boots["patched"]
	found := false
	for _, s := range pb.Splats {
		ex := strings.Join(s.Excerpt, "\n")
		// The planted read is in nvmet_rdma_alloc_queue, which the
		// compiler may inline into its caller (6.12: reported in
		// nvmet_rdma_cm_handler): the report names nvmet_rdma's code.
		found = found || strings.Contains(ex, "KASAN") && strings.Contains(ex, "use-after-free") && strings.Contains(ex, "[nvmet_rdma]")
	}
	if pb.Verdict != "FAIL" || !found {
		t.Errorf("patched boot: %s with splats %+v, want FAIL on \"BUG: KASAN: slab-use-after-free in ... [nvmet_rdma]\"", pb.Verdict, pb.Splats)
	}
	if !strings.Contains(stdout, "KASAN") {
		t.Errorf("the text output does not name the KASAN report:\n%s", stdout)
	}
}
