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
	"github.com/patchctl/patchctl/internal/vocab"
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
			_, dir := testenv.KernelIfTested(t, name)
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
			_, dir := testenv.KernelIfTested(t, name)
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

// TestForBuildOnPinnedKernels: on every pinned tree the faithful mode
// applies both harnesses (the variant Select picks on the pristine tree)
// and plain only the in-capsule switch; over a series that moved the
// host driver's lines, the same variant still applies; one that changed
// a line the harness needs is ErrConflict naming it.
func TestForBuildOnPinnedKernels(t *testing.T) {
	// 6.12 itself: each pin's harness
	want := map[string]string{"5.10": "rxe-mem-map", "6.1": "rxe-mr-map", "6.12": "ib_virt_dma_to_ptr", "7.2": "ib_virt_dma_to_ptr", "7.3": "ib_virt_dma_to_ptr"}
	for name, variant := range want {
		t.Run(name, func(t *testing.T) {
			_, dir := testenv.KernelIfTested(t, name)
			read := func(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, rel)) }
			p, err := ForBuild(ForMode(vocab.DMAFaithful), read, read)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Applied) != 2 || p.Applied[0].String() != DMAFaithful+"/"+variant || p.Applied[1].String() != IncapsuleWrap+"/nvme-rdma-wrap-icdoff" || len(p.Off) != 0 {
				t.Fatalf("faithful: applied %v, off %v", p.Applied, p.Off)
			}
			plain, err := ForBuild(ForMode(vocab.DMAPlain), read, read)
			if err != nil || len(plain.Applied) != 1 || plain.Applied[0].Harness != IncapsuleWrap || plain.Files["include/rdma/ib_verbs.h"] != nil {
				t.Fatalf("plain: %v %+v", err, plain)
			}
			// A series that adds lines at the top of the host driver.
			host := "drivers/nvme/host/rdma.c"
			orig, err := read(host)
			if err != nil {
				t.Fatal(err)
			}
			moved := append([]byte("/* a series' new comment */\n/* and another */\n"), orig...)
			state := func(rel string) ([]byte, error) {
				if rel == host {
					return moved, nil
				}
				return read(rel)
			}
			p, err = ForBuild(ForMode(vocab.DMAFaithful), read, state)
			if err != nil {
				t.Fatalf("over a series that moved the lines: %v", err)
			}
			if got := p.Files[host]; !bytes.HasPrefix(got, []byte("/* a series' new comment */")) || !bytes.Contains(got, []byte("patchctl_wrap_icdoff")) {
				t.Error("the harness did not apply over the series' state")
			}
			// A series that rewrites the line the host switch follows.
			changed := bytes.Replace(orig, []byte("sg->type = (NVME_SGL_FMT_DATA_DESC << 4) | NVME_SGL_FMT_OFFSET;"), []byte("sg->type = NVME_SGL_FMT_OFFSET | (NVME_SGL_FMT_DATA_DESC << 4);\n\tsg->type |= 0;\n\tsg->type |= 0;"), 1)
			if bytes.Equal(changed, orig) {
				t.Fatal("the host driver no longer has the line this test changes")
			}
			_, err = ForBuild(ForMode(vocab.DMAFaithful), read, func(rel string) ([]byte, error) {
				if rel == host {
					return changed, nil
				}
				return read(rel)
			})
			if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), IncapsuleWrap) {
				t.Errorf("err = %v, want ErrConflict naming %s", err, IncapsuleWrap)
			}
		})
	}
}

// TestForBuildLeavesOffWhatDoesNotFit: a tree no variant fits gets no
// harness and, per harness, the reason; the key covers every variant's
// content and differs between the modes.
func TestForBuildLeavesOffWhatDoesNotFit(t *testing.T) {
	empty := func(string) ([]byte, error) { return nil, os.ErrNotExist }
	p, err := ForBuild(ForMode(vocab.DMAFaithful), empty, empty)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Applied) != 0 || len(p.Files) != 0 || !strings.Contains(p.Off[DMAFaithful], "ib_virt_dma_to_ptr") || p.Off[IncapsuleWrap] == "" {
		t.Errorf("plan %+v", p)
	}
	kf, err := Key(ForMode(vocab.DMAFaithful))
	if err != nil {
		t.Fatal(err)
	}
	kp, _ := Key(ForMode(vocab.DMAPlain))
	if kf == kp || len(kf) != 64 {
		t.Errorf("keys %q %q", kf, kp)
	}
}
