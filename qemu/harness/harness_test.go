package harness

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/testenv"
)

// TestVariantsParse: every embedded patch parses, changes only existing
// files, and the DMA-faithful variants all change the same places: the
// mapping helpers, the sg mapping, and the inline copy of both providers.
func TestVariantsParse(t *testing.T) {
	vs, err := Variants(DMAFaithful)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) < 2 {
		t.Fatalf("%d variants, want one per code shape (at least 2)", len(vs))
	}
	for _, v := range vs {
		ps := strings.Join(v.Paths(), " ")
		for _, want := range []string{"include/rdma/ib_verbs.h", "drivers/infiniband/core/device.c", "drivers/infiniband/sw/rxe/rxe_verbs.c", "drivers/infiniband/sw/siw/siw_verbs.c"} {
			if !strings.Contains(ps, want) {
				t.Errorf("%s does not change %s (changes %s)", v.Name, want, ps)
			}
		}
		// The inline copies use the checking helper, and every variant
		// reports with the line the dmesg gate knows.
		for _, want := range []string{"ib_virt_inline_to_ptr(sge->addr)", "ib_virt_inline_to_ptr(core_sge->addr)", `"patchctl-dma: %s: %#llx at %pS\n"`, "inline SGE carried a DMA address"} {
			if !bytes.Contains(v.Patch, []byte(want)) {
				t.Errorf("%s lacks %q", v.Name, want)
			}
		}
		if len(v.SHA256()) != 64 {
			t.Errorf("%s: hash %q", v.Name, v.SHA256())
		}
	}
	if _, err := Variants("no-such"); err == nil {
		t.Error("an unknown harness was accepted")
	}
}

// TestSelectTakesFirstExactFit: on a tree made here, a variant whose
// context does not match exactly is passed over with its reason, and a
// tree no variant fits gets ErrNoVariant naming each variant.
func TestSelectTakesFirstExactFit(t *testing.T) {
	vs, err := Variants(DMAFaithful)
	if err != nil {
		t.Fatal(err)
	}
	empty := func(string) ([]byte, error) { return nil, os.ErrNotExist }
	_, err = Select(DMAFaithful, empty)
	if !errors.Is(err, ErrNoVariant) {
		t.Fatalf("err = %v, want ErrNoVariant", err)
	}
	for _, v := range vs {
		if !strings.Contains(err.Error(), v.Name+":") {
			t.Errorf("the error does not say why %s did not apply: %v", v.Name, err)
		}
	}
	// Files made of the lines each variant removes and keeps, with one
	// line changed: no variant applies (no fuzz), and the error says so.
	read := func(rel string) ([]byte, error) { return []byte("int x;\n"), nil }
	if _, err := Select(DMAFaithful, read); !errors.Is(err, ErrNoVariant) {
		t.Fatalf("a tree of foreign files got a variant: %v", err)
	}
}

// TestSelectOnPinnedKernels: on every pinned kernel's pristine tree
// exactly the variant made for its code shape applies, and applying it
// changes what the patch says.
func TestSelectOnPinnedKernels(t *testing.T) {
	// 6.12 itself: each pin's harness
	want := map[string]string{"5.10": "rxe-mem-map", "6.1": "rxe-mr-map", "6.12": "ib_virt_dma_to_ptr", "7.2": "ib_virt_dma_to_ptr", "7.3": "ib_virt_dma_to_ptr"}
	for name, variant := range want {
		t.Run(name, func(t *testing.T) {
			_, dir := testenv.Kernel(t, name)
			read := func(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, rel)) }
			r, err := Select(DMAFaithful, read)
			if err != nil {
				t.Fatal(err)
			}
			if r.Name != variant {
				t.Fatalf("variant %s, want %s", r.Name, variant)
			}
			h := r.Files["include/rdma/ib_verbs.h"]
			for _, s := range []string{"#define IB_VIRT_DMA_TAG", "return ib_virt_dma_tag(cpu_addr);"} {
				if !bytes.Contains(h, []byte(s)) {
					t.Errorf("ib_verbs.h after the harness lacks %q", s)
				}
			}
			// No other variant fits this tree: the variants are shapes,
			// not alternatives that hide each other.
			vs, _ := Variants(DMAFaithful)
			for _, v := range vs {
				if v.Name == variant {
					continue
				}
				if _, err := v.apply(read); err == nil {
					t.Errorf("%s applies to %s too", v.Name, name)
				}
			}
		})
	}
}

// TestReportFailsTheGate: the line the harness prints for an address of
// the wrong kind (its printk format, filled in as the kernel would) is a
// splat the dmesg gate names as the harness's.
func TestReportFailsTheGate(t *testing.T) {
	for _, what := range []string{"inline SGE carried a DMA address", "DMA SGE carried a CPU address"} {
		line := "[   41.250311] patchctl-dma: " + what + ": 0xbfff888003a1c000 at nvme_rdma_post_send+0x8e/0x1d0"
		if got := guestconf.SplatIn(line); got != "patchctl-dma:" {
			t.Errorf("%q: gate says %q", line, got)
		}
		vs, _ := Variants(DMAFaithful)
		for _, v := range vs {
			if !bytes.Contains(v.Patch, []byte(`"`+what+`"`)) {
				t.Errorf("%s never reports %q", v.Name, what)
			}
		}
	}
}

// TestIncapsuleWrapOnPinnedKernels: the reproducer's host patch fits
// every pinned kernel, adds the one-shot parameter, and the fixture fix
// (compare without the addition) applies to every pinned target (with
// fuzz where a kernel spells the status bits otherwise, as a patch under
// test may).
func TestIncapsuleWrapOnPinnedKernels(t *testing.T) {
	fix, err := os.ReadFile(filepath.Join("testdata", "nvmet-rdma-incapsule-bounds-fix.patch"))
	if err != nil {
		t.Fatal(err)
	}
	fixVariant := &Variant{Harness: "testdata", Name: "nvmet-rdma-incapsule-bounds-fix", Patch: fix}
	// 6.12 itself: every pin
	for _, name := range []string{"5.10", "6.1", "6.12", "7.2", "7.3"} {
		t.Run(name, func(t *testing.T) {
			_, dir := testenv.Kernel(t, name)
			read := func(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, rel)) }
			r, err := Select(IncapsuleWrap, read)
			if err != nil {
				t.Fatal(err)
			}
			host := r.Files["drivers/nvme/host/rdma.c"]
			for _, s := range []string{"module_param(patchctl_wrap_icdoff, int, 0644);", "sg->addr = cpu_to_le64(-(u64)len);", "patchctl-repro: "} {
				if !bytes.Contains(host, []byte(s)) {
					t.Errorf("host rdma.c lacks %q", s)
				}
			}
			files, err := fixVariant.applyWith(read, true)
			if err != nil {
				t.Fatalf("the fix fixture does not apply: %v", err)
			}
			if bytes.Contains(files["drivers/nvme/target/rdma.c"], []byte("off + len > rsp->queue->dev->inline_data_size")) {
				t.Error("the fixed target still adds off + len")
			}
		})
	}
}
