package pipeline

import (
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/vocab"
	"github.com/patchctl/patchctl/qemu/harness"
)

// TestHarnessDetail: the build stage's line says the DMA mode and the
// harness patches a source build applied (and why one is off); a distro
// build says it carries none.
func TestHarnessDetail(t *testing.T) {
	md := &build.Metadata{KernelFrom: vocab.FromSource, DMA: vocab.DMAFaithful, Harness: []harness.Applied{{Harness: harness.DMAFaithful, Variant: "ib_virt_dma_to_ptr"}, {Harness: harness.IncapsuleWrap, Variant: "nvme-rdma-wrap-icdoff"}}}
	if got := sourceDetail(md); !strings.Contains(got, "dma faithful, harness dma-faithful/ib_virt_dma_to_ptr incapsule-wrap/nvme-rdma-wrap-icdoff") {
		t.Errorf("source: %q", got)
	}
	md = &build.Metadata{KernelFrom: vocab.FromSource, DMA: vocab.DMAPlain, HarnessOff: map[string]string{harness.IncapsuleWrap: "no variant fits", harness.DMAFaithful: "no variant fits"}}
	if got := HarnessDetail(md); got != "dma plain, no harness (dma-faithful off: no variant fits) (incapsule-wrap off: no variant fits)" {
		t.Errorf("none fits: %q", got)
	}
	if got := distroDetail(&build.Metadata{KernelFrom: vocab.FromDistro}); !strings.Contains(got, "no harness (the distro path") {
		t.Errorf("distro: %q", got)
	}
}
