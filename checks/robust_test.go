package checks

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/patchctl/patchctl/checks/engine"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/tree"
)

// TestGNUConditional: a ?: b (no consequence) in an address, a flag, a
// condition and a grant record once crashed valueOf.
func TestGNUConditional(t *testing.T) {
	src := `
struct q { struct ib_qp *qp; u32 max_inline; void *buf; u64 dma; };
static int f(struct q *q, struct ib_sge *sge, u32 len, u64 alt)
{
	struct ib_send_wr wr = {};
	int ret = 0;

	sge->addr = (uintptr_t)q->buf ?: alt;
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.send_flags = (len <= q->max_inline ? IB_SEND_INLINE : 0) ?: IB_SEND_SIGNALED;
	q->max_inline = ret ?: 0;
	if (q->buf ?: NULL)
		ret = ib_post_send(q->qp, &wr, NULL);
	return ret ?: -EIO;
}
`
	rep := runSource(t, src)
	for _, f := range rep.Findings {
		if f.Rule == RuleIncomplete {
			t.Errorf("the engine failed: %s", f)
		}
	}
}

func runSource(t *testing.T, src string) *Report {
	t.Helper()
	tree := t.TempDir()
	dir := filepath.Join(tree, caseModule)
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "x.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(Options{Tree: tree, Paths: []string{caseModule}})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestNodeKinds: every named node kind of the C grammar is in the
// table that says what the analysis does with it.
func TestNodeKinds(t *testing.T) {
	for id := uint16(0); id < uint16(engine.Language.NodeKindCount()); id++ {
		if !engine.Language.NodeKindIsNamed(id) || !engine.Language.NodeKindIsVisible(id) {
			continue
		}
		k := engine.Language.NodeKindForId(id)
		if k == "" || strings.HasPrefix(k, "_") {
			continue
		}
		if _, ok := engine.NodeKinds[k]; !ok {
			t.Errorf("node kind %q is neither handled nor skipped with a note", k)
		}
	}
}

// analyseEverything runs the engine over every function of f with no
// prefilter, facts from f alone; it returns what went wrong.
func analyseEverything(f *engine.File) (problems []string) {
	defer func() {
		if r := recover(); r != nil {
			problems = append(problems, fmt.Sprintf("%s: panic: %v", f.Rel, r))
		}
	}()
	facts := engine.NewFacts()
	facts.Learn(f)
	facts.Learn(f)
	visits := map[siteKey][]engine.SiteVisit{}
	var sites []engine.InlineSite
	for _, fn := range engine.Functions(f) {
		out, s := analyseFunction(f, fn, facts, visits, false)
		sites = append(sites, s...)
		for _, fd := range out {
			if fd.Rule == RuleIncomplete && strings.Contains(fd.Message, "internal error") {
				problems = append(problems, fd.String())
			}
		}
	}
	checkInlineSize(Options{}, sites, visits, map[string]*engine.Facts{filepath.Dir(f.Rel): facts}, []*engine.File{f}, nil)
	checkSizeofPointer([]*engine.File{f})
	return problems
}

// TestEveryFileOfTheTree: the engine, with the prefilter off, over every
// .c file of the default scope (drivers/infiniband, drivers/nvme, net,
// fs) of each end-to-end kernel's pristine tree (the default kernel in
// make test, every pinned kernel in make test-matrix): no panic, and
// every function within its budget of states and steps (the budget is
// what bounds the time, not a clock).
func TestEveryFileOfTheTree(t *testing.T) {
	if testing.Short() {
		t.Skip("every file of a kernel tree: not with -short")
	}
	lock, err := tree.LoadLock(filepath.Join(testenv.RepoRoot(t), "series", "kernels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range testenv.EndToEndKernels(t, lock) {
		t.Run(name, func(t *testing.T) { everyFileOf(t, name) })
	}
}

func everyFileOf(t *testing.T, name string) {
	_, dir := testenv.Kernel(t, name)
	rels, err := engine.ListC(dir, DefaultPaths)
	if err != nil {
		t.Fatal(err)
	}
	var cs []string
	for _, r := range rels {
		if strings.HasSuffix(r, ".c") {
			cs = append(cs, r)
		}
	}
	var mu sync.Mutex
	var problems []string
	work := make(chan string)
	var wg sync.WaitGroup
	for i := 0; i < runtime.NumCPU(); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rel := range work {
				b, err := os.ReadFile(filepath.Join(dir, rel))
				if err != nil {
					continue
				}
				src, uses := engine.ExpandMacros(dir, rel, b)
				f := engine.Parse(rel, src)
				f.Macros = uses
				p := analyseEverything(f)
				if len(p) > 0 {
					mu.Lock()
					problems = append(problems, p...)
					mu.Unlock()
				}
			}
		}()
	}
	for _, c := range cs {
		work <- c
	}
	close(work)
	wg.Wait()
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("%d .c files analysed with the prefilter off", len(cs))
}
