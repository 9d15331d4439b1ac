package checks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/checks/engine"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// The sizeof-pointer rule reads only the files and functions
// sizeofCandidate passes. These tests hold the prefilter against the
// rule itself: wherever the rule (run on the whole file) reports, the
// prefilter must have passed the file.

// sizeofSinkShapes are the statements a sizeof can be a sink's value
// in, %s the value; spellings vary in case, spacing, line breaks and
// comments or literals that hold semicolons and parentheses.
var sizeofSinkShapes = []string{
	"q->max_inline_data = %s;",
	"attr->cap.Max_Inline_Data\n\t\t= %s;",
	"ctrl->CAPSULE_size = %s;",
	"u32 inline_len = %s;",
	"size_t cmdInlineSize = %s;",
	"req->inl_hdr.inline_size = %s;",
	"req->InlineBuf.len = %s;",
	"sge.length = %s;",
	"wr->sg_list[0]. length = /* bytes; (header) */ %s;",
	"msg->length = %s;",
	"{ struct ib_sge sge = { .addr = 0, .length = %s }; use(&sge); }",
	"*s = (struct ib_sge){ .lkey = 1, .length = %s };",
	"ib_dma_map_single(dev, p, %s, DMA_TO_DEVICE);",
	"dma_map_single(dev,\n\t\tp, // the buffer; (all of it)\n\t\t%s, DMA_TO_DEVICE);",
	"dma_sync_single_for_cpu(dev, a, %s, DMA_FROM_DEVICE);",
	"ib_dma_sync_single_for_device(dev, a, %s, DMA_TO_DEVICE);",
	"log(\"x); y(\"); ctx->capsule_len = %s;",
	"c = ';'; q->inline_data_size = %s;",
	"q->inline_len += %s;",
	"{ struct wrap w = { .sge = { .addr = 0, .length = %s } }; use(&w); }",
	"for (i = 0; i < 2; i++) q->Inline_Hdr_Size[i] = %s;",
}

// sizeofValues are the values that measure a pointer (p a parameter,
// buf a member declared a pointer, l a local pointer).
var sizeofValues = []string{"sizeof(p)", "sizeof p", "sizeof(q2->buf)", "hdr + sizeof(l)", "(u32)sizeof(p)", "sizeof(p)\n\t\t+ 4"}

func TestSizeofPrefilterNeverSkips(t *testing.T) {
	reported := 0
	for i, shape := range sizeofSinkShapes {
		shapeReported := false
		for j, v := range sizeofValues {
			src := fmt.Sprintf(`struct qs { char *buf; };
static int before(void) { return 1; }
static void f%d_%d(struct dev *dev, struct q *q, struct qs *q2, char *p, struct ib_sge *s, u64 a, u32 hdr)
{
	char *l = p;
	%s
}
`, i, j, fmt.Sprintf(shape, v))
			f := engine.Parse("drivers/x/f.c", []byte(src))
			got := checkSizeofPointer([]*engine.File{f})
			f.Close()
			if len(got) == 0 {
				continue
			}
			reported++
			shapeReported = true
			if !sizeofCandidate([]byte(src)) {
				t.Errorf("the rule reports %s:%d (%s) but the prefilter skips the file:\n%s", got[0].File, got[0].Line, got[0].Message, src)
			}
		}
		if !shapeReported {
			t.Errorf("the rule reports on no value in %q: the shape does not exercise it", shape)
		}
	}
	// Not vacuous: the rule reports on (almost) every combination.
	if min := len(sizeofSinkShapes) * len(sizeofValues) * 3 / 4; reported < min {
		t.Errorf("the rule reported on %d combinations, expected at least %d: the shapes no longer exercise it", reported, min)
	}
}

func TestSizeofPrefilterSkips(t *testing.T) {
	for _, src := range []string{
		"static inline int f(void) { return sizeof(long); }\nstatic int g(char *p) { p->length = 4; return 0; }",
		"static inline u32 hdr_len(void) { return sizeof(struct hdr); }",
		"x->msglen = sizeof(*m); y->inline_count = n;",
	} {
		if sizeofCandidate([]byte(src)) {
			t.Errorf("the prefilter passes a file no statement of which takes a sizeof into a sink:\n%s", src)
		}
	}
}

// TestSizeofPrefilterOnTheTree: in the RDMA modules of the default
// kernel, every function where the rule sees a sizeof stored into a sink
// (whatever it measures: every operand taken for a pointer) is in a file
// the prefilter passes, and is a function it passes.
func TestSizeofPrefilterOnTheTree(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: parses every file of the RDMA folders of a kernel tree")
	}
	_, tree := testenv.Kernel(t, testkernel.Default)
	rels, err := engine.ListC(tree, []string{"drivers/infiniband", "drivers/nvme", "net/rds", "net/smc", "net/sunrpc", "net/9p", "fs/smb", "fs/nfs"})
	if err != nil {
		t.Fatal(err)
	}
	files, passed, sinks := 0, 0, 0
	for _, rel := range rels {
		if !strings.HasSuffix(rel, ".c") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(tree, rel))
		if err != nil {
			t.Fatal(err)
		}
		f := engine.Parse(rel, b)
		files++
		if sizeofCandidate(b) {
			passed++
		}
		for _, fn := range engine.Functions(f) {
			got := sizeofFunction(f, fn, nil, true)
			sinks += len(got)
			if len(got) > 0 && !sizeofCandidate(f.Src[fn.StartByte():fn.EndByte()]) {
				t.Errorf("%s:%d: the rule sees a sizeof in a sink (%s) in a function the prefilter skips", rel, got[0].Line, got[0].Evidence[0].Message)
			}
			if len(got) > 0 && !sizeofCandidate(b) {
				t.Errorf("%s:%d: the rule sees a sizeof in a sink (%s) in a file the prefilter skips", rel, got[0].Line, got[0].Evidence[0].Message)
			}
		}
		f.Close()
	}
	if sinks == 0 {
		t.Fatal("no sizeof stored into a sink in the RDMA modules: the test proves nothing")
	}
	t.Logf("%d sizeofs in sinks; %d of %d files pass the prefilter", sinks, passed, files)
}
