package checks

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
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

// TestEveryFileOfTheTree: the engine, with the prefilter off, over the
// .c files of the default scope (drivers/infiniband, drivers/nvme, net,
// fs) of each end-to-end kernel's pristine tree (the default kernel in
// make test, every pinned kernel in make test-matrix): no panic, and
// every function within its budget of states and steps (the budget is
// what bounds the time, not a clock). With PATCHCTL_TEST_FULL=1 (make
// test-matrix) every file; without it (make test) a fixed part,
// wholeTreeShare: the ~3,400 files of 6.12's scope cost minutes of CPU.
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
	full := testenv.Full()
	open := engine.OpenTrees()
	var mu sync.Mutex
	var problems []string
	analysed := map[string]bool{}
	work := make(chan string)
	var wg sync.WaitGroup
	for i := 0; i < runtime.NumCPU(); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rel := range work {
				b, err := os.ReadFile(filepath.Join(dir, rel))
				if err != nil {
					mu.Lock()
					problems = append(problems, fmt.Sprintf("%s: %v", rel, err))
					mu.Unlock()
					continue
				}
				if !full && !inWholeTreeShare(rel, b) {
					continue
				}
				mu.Lock()
				analysed[rel] = true
				mu.Unlock()
				src, uses := engine.ExpandMacros(dir, rel, b)
				f := engine.Parse(rel, src)
				f.Macros = uses
				p := analyseEverything(f)
				f.Close()
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
	// Every tree the files' analyses made (the files', the headers' the
	// layouts read) was freed: thousands of files in one process.
	if left := engine.OpenTrees() - open; left != 0 {
		t.Errorf("%s: %d parsed trees left open (C memory held until the process ends)", name, left)
	}
	// The part still covers each class: every folder of the scope, and
	// every file that once found an engine bug.
	for _, scope := range DefaultPaths {
		n := 0
		for rel := range analysed {
			if strings.HasPrefix(rel, scope+"/") {
				n++
			}
		}
		if n == 0 {
			t.Errorf("%s: no .c file of %s analysed", name, scope)
		}
	}
	for _, rel := range wholeTreeFound {
		if !analysed[rel] {
			t.Errorf("%s: %s, which once found an engine bug, was not analysed", name, rel)
		}
	}
	if full {
		t.Logf("%d .c files analysed with the prefilter off", len(analysed))
	} else {
		t.Logf("%d of the %d .c files analysed with the prefilter off (the RDMA users, drivers/nvme, the files that found bugs and one in %d of the rest; PATCHCTL_TEST_FULL=1, make test-matrix: every file)", len(analysed), len(cs), wholeTreeShare)
	}
}

// wholeTreeShare: without PATCHCTL_TEST_FULL, TestEveryFileOfTheTree
// analyses one in wholeTreeShare of the files no other reason selects,
// by a hash of the path (testenv.Share: the same files every run).
const wholeTreeShare = 8

// wholeTreeFound are the files on which the whole-tree test once found
// an engine bug (a function over its budget, a crash): analysed in every
// run. net/smc/smc_tx.c: smcr_tx_rdma_writes' loop paths did not merge
// (5c8e723).
var wholeTreeFound = []string{"net/smc/smc_tx.c"}

// rdmaUse are the words of a file that uses the verbs the rules judge:
// such a file is analysed in every run (the engine's interesting paths
// are there; 106 of 6.12's 3,439 files).
var rdmaUse = [][]byte{[]byte("ib_post_send"), []byte("IB_SEND_INLINE"), []byte("ib_dma_map"), []byte("ib_sge"), []byte("rdma_cm")}

// inWholeTreeShare: whether TestEveryFileOfTheTree analyses rel (content
// b) without PATCHCTL_TEST_FULL.
func inWholeTreeShare(rel string, b []byte) bool {
	if slices.Contains(wholeTreeFound, rel) || strings.HasPrefix(rel, "drivers/nvme/") {
		return true
	}
	for _, w := range rdmaUse {
		if bytes.Contains(b, w) {
			return true
		}
	}
	return testenv.Share(rel, wholeTreeShare)
}

// TestWholeTreeShare: the part TestEveryFileOfTheTree analyses without
// PATCHCTL_TEST_FULL keeps the files that found bugs, drivers/nvme and
// the RDMA verb users whatever their hash, and takes about one in
// wholeTreeShare of the rest, the same ones every time.
func TestWholeTreeShare(t *testing.T) {
	for _, rel := range wholeTreeFound {
		if !inWholeTreeShare(rel, nil) {
			t.Errorf("%s, which found an engine bug, is not in the part", rel)
		}
	}
	if !inWholeTreeShare("drivers/nvme/host/x.c", nil) {
		t.Error("drivers/nvme is not in the part")
	}
	n, users := 4000, 0
	for i := 0; i < n; i++ {
		rel := fmt.Sprintf("fs/x%d/y.c", i)
		if inWholeTreeShare(rel, []byte("int f(void) { return ib_post_send(qp, &wr, NULL); }")) {
			users++
		}
	}
	if users != n {
		t.Errorf("%d of %d RDMA verb users in the part, want all", users, n)
	}
	in := 0
	for i := 0; i < n; i++ {
		rel := fmt.Sprintf("net/x%d/y.c", i)
		a, b := inWholeTreeShare(rel, []byte("int f(void) { return 0; }")), inWholeTreeShare(rel, []byte("int g(void) { return 1; }"))
		if a != b {
			t.Fatalf("%s: chosen by its content, not its path", rel)
		}
		if a {
			in++
		}
	}
	if lo, hi := n/wholeTreeShare/2, 2*n/wholeTreeShare; in < lo || in > hi {
		t.Errorf("%d of %d other files in the part, want about %d", in, n, n/wholeTreeShare)
	}
}
