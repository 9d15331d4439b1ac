package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/kbuild"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
)

// A ULP made for these tests: a buffer mapped for DMA, a QP created, a
// send posted. The patch of record adds an inline path: it requests an
// inline size, records the size granted, and posts small buffers inline
// with their CPU address.
const mutULP = `// SPDX-License-Identifier: GPL-2.0
struct ulp_buf {
	void *data;
	u64 dma;
	u32 len;
};

static int ulp_map(struct ib_device *dev, struct ulp_buf *b)
{
	b->dma = ib_dma_map_single(dev, b->data, b->len, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(dev, b->dma))
		return -ENOMEM;
	return 0;
}

static int ulp_make_qp(struct ulp_queue *q)
{
	struct ib_qp_init_attr attr = {};
	int ret;

	ret = ib_create_qp(q->pd, &attr);
	return ret;
}

static int ulp_post(struct ulp_queue *q, struct ulp_buf *b)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;

	sge.addr = b->dma;
	sge.length = b->len;
	sge.lkey = q->pd->local_dma_lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	return ib_post_send(q->qp, &wr, NULL);
}
`

const mutFile = "drivers/infiniband/ulp/post.c"

// mutWorkspace makes a repository (a manifest listing the patch of
// record) and a local kernel tree, and returns the target.
func mutWorkspace(t *testing.T) *pipeline.Target {
	t.Helper()
	linux := filepath.Join(t.TempDir(), "linux")
	writeFiles(t, linux, map[string]string{
		"Makefile":              "VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 0\nEXTRAVERSION =\n",
		"scripts/checkpatch.pl": "exit 0;\n",
		mutFile:                 mutULP,
	})
	root := t.TempDir()
	mail := mutMail(t, linux)
	writeFiles(t, root, map[string]string{
		"patches/ulp-inline/000.txt": mail,
		"series/6.12/manifest.yaml": "kernel: \"6.12\"\npatches:\n  - source: patches/ulp-inline/000.txt\n    expect: applies\n" +
			"boot:\n  inline_data_size: 16384\n  expect_inline_capsules:\n    baseline: false\n    patched: true\n",
	})
	// The fragments, so that the build folder can be located.
	frags, err := filepath.Glob(filepath.Join(testenv.RepoRoot(t), "kconfig", "*.config"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frags {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		writeFiles(t, root, map[string]string{filepath.Join("kconfig", filepath.Base(f)): string(b)})
	}
	c := &tree.Cache{Dir: t.TempDir()}
	k, err := c.Local(context.Background(), linux, testkernel.Default, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &pipeline.Target{Root: root, Lock: &tree.Lock{}, Kernel: k, Cache: c}
}

// mutMail is the patch of record: both hunks, as git format-patch writes
// them.
func mutMail(t *testing.T, linux string) string {
	t.Helper()
	ps := mailPatch(t, linux, "ulp: post small buffers inline", map[string][2]string{mutFile: {
		"\tret = ib_create_qp(q->pd, &attr);\n\treturn ret;\n}\n\nstatic int ulp_post(struct ulp_queue *q, struct ulp_buf *b)\n{\n\tstruct ib_send_wr wr = {};\n\tstruct ib_sge sge;\n\n\tsge.addr = b->dma;\n",
		"\tattr.cap.max_inline_data = sizeof(struct ulp_hdr);\n\tret = ib_create_qp(q->pd, &attr);\n\tq->inline_size = ret ? 0 : attr.cap.max_inline_data;\n\treturn ret;\n}\n\nstatic int ulp_post(struct ulp_queue *q, struct ulp_buf *b)\n{\n\tstruct ib_send_wr wr = {};\n\tstruct ib_sge sge;\n\n\tsge.addr = b->dma;\n" +
			"\tif (b->len <= q->inline_size) {\n\t\tsge.addr = (uintptr_t)b->data;\n\t\twr.send_flags |= IB_SEND_INLINE;\n\t}\n",
	}})
	return string(ps[0].Format())
}

// fakeRuntime stands for the build and the DMA-faithful boot: the inline
// SGE carrying the DMA address fails the boot (as the harness makes it),
// a size one byte short does not compile (a stand-in for a compile
// error), anything else passes. It counts its calls.
type fakeRuntime struct {
	calls  int
	onCall func(n int) error
	// buildDir, when set, gets each build's snapshot and latest link,
	// as a build leaves them.
	buildDir string
}

func (f *fakeRuntime) run(ctx context.Context, out *apply.Out, dir string) (*pipeline.RuntimeOutcome, error) {
	f.calls++
	if f.onCall != nil {
		if err := f.onCall(f.calls); err != nil {
			return nil, err
		}
	}
	if f.buildDir != "" {
		snap := build.StateDir(f.buildDir, vocab.Patched, out.State(vocab.Patched))
		if err := os.MkdirAll(snap, 0o755); err != nil {
			return nil, err
		}
		if err := build.LinkLatest(f.buildDir, vocab.Patched, snap); err != nil {
			return nil, err
		}
	}
	src := string(out.Result.Files[mutFile])
	switch {
	case strings.Contains(src, "sizeof(struct ulp_hdr) - 1"):
		return &pipeline.RuntimeOutcome{Reason: "post.c:20: error: made up for the test"}, nil
	case strings.Contains(src, "\t\tsge.addr = b->dma;\n\t\twr.send_flags |= IB_SEND_INLINE;"):
		return &pipeline.RuntimeOutcome{Built: true, Verdict: vocab.Fail, Reason: "inline SGE carried a DMA address", FailedTests: []string{"rxe.inline"}}, nil
	}
	return &pipeline.RuntimeOutcome{Built: true, Verdict: vocab.Pass, BuildSeconds: 1, BootSeconds: 2}, nil
}

func mutOptions(t *testing.T, rt *fakeRuntime) pipeline.MutateOptions {
	return pipeline.MutateOptions{OutDir: t.TempDir(), Paths: []string{"drivers/infiniband"}, Runtime: rt.run}
}

// workState is the work tree's state file and touched files' content.
func workState(t *testing.T, tg *pipeline.Target) string {
	t.Helper()
	dir := tg.Cache.WorkTreeDir(tg.Kernel)
	b, err := os.ReadFile(filepath.Join(dir, ".patchctl", "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(dir, mutFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n" + string(src)
}

// holdPatched puts the work tree into the series' patched state, as a
// build of the series of record leaves it.
func holdPatched(t *testing.T, tg *pipeline.Target) {
	t.Helper()
	out, err := tg.Applied(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	wt, release, err := tg.Cache.HoldWorkTree(context.Background(), tg.Kernel)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := apply.Checkout(wt, out, vocab.Patched); err != nil {
		t.Fatal(err)
	}
}

// TestMutateKillTable: every mutant of the fixture's patch is judged by
// the real check on the fixture tree and by a stubbed build and boot;
// the table, the scores, the survivors with their diff and the JSON
// report say the same; the work tree ends as it began.
func TestMutateKillTable(t *testing.T) {
	tg := mutWorkspace(t)
	holdPatched(t, tg)
	before := workState(t, tg)
	rt := &fakeRuntime{}
	o := mutOptions(t, rt)
	var log bytes.Buffer
	o.Log = &log
	rep, err := tg.Mutate(context.Background(), o)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if rt.calls != len(rep.Mutants)+1 {
		t.Errorf("%d builds and boots for %d mutants and the reference", rt.calls, len(rep.Mutants))
	}
	by := map[string]*pipeline.MutantResult{}
	for _, m := range rep.Mutants {
		by[strings.TrimSpace(m.After)] = m
	}
	want := map[string]string{
		// The DMA address on the inline SGE: the check's inline-sge-addr
		// and the DMA-faithful boot both see it.
		"sge.addr = b->dma;": pipeline.KilledBoth,
		// The CPU address posted without IB_SEND_INLINE: only the check.
		"wr.send_flags &= ~(IB_SEND_INLINE);": pipeline.KilledStatic,
		// The stand-in compile error.
		"attr.cap.max_inline_data = (sizeof(struct ulp_hdr) - 1);": pipeline.KilledCompiler,
	}
	for after, v := range want {
		m := by[after]
		if m == nil {
			t.Errorf("no mutant %q (have %d)", after, len(rep.Mutants))
			continue
		}
		if m.Verdict != v {
			t.Errorf("%s %q: verdict %s, want %s (new findings %q, outcome %s)", m.ID, after, m.Verdict, v, m.NewFindings, m.Outcome.Summary())
		}
	}
	var survivors []string
	for _, m := range rep.Survivors() {
		survivors = append(survivors, m.ID)
		if m.Static || m.Runtime || m.Compiler {
			t.Errorf("%s is a survivor but was killed", m.ID)
		}
		if m.CheckSeconds <= 0 || m.CheckSeconds > m.Seconds {
			t.Errorf("%s: check %.3fs of %.3fs", m.ID, m.CheckSeconds, m.Seconds)
		}
	}
	if len(survivors) == 0 {
		t.Error("no survivor: the fixture has mutants neither oracle sees (a size one byte long)")
	}
	// Scores are the kill counts over the mutants.
	n := float64(len(rep.Mutants))
	k := 0
	for _, m := range rep.Mutants {
		if m.Verdict != pipeline.Survived {
			k++
		}
	}
	if rep.Scores.All != float64(k)/n || rep.Scores.Static == 0 || rep.Scores.Runtime == 0 || rep.Scores.Compiler == 0 || rep.Scores.All > 1 {
		t.Errorf("scores %+v for %d of %d killed", rep.Scores, k, len(rep.Mutants))
	}
	// The table: a row per mutant, the scores, the survivors' diffs.
	table, err := os.ReadFile(filepath.Join(o.OutDir, "mutate.txt"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s\n%s", log.String(), table)
	for _, m := range rep.Mutants {
		row := ""
		for _, l := range strings.Split(string(table), "\n") {
			if strings.HasPrefix(l, m.ID+" ") && row == "" {
				row = l
			}
		}
		if f := strings.Fields(row); len(f) != 7 || f[1] != m.Operator || f[len(f)-1] != m.Verdict {
			t.Errorf("%s: table row %q", m.ID, row)
		}
	}
	for _, w := range []string{"static (check)", "runtime (boot)", "all oracles", "surviving mutants"} {
		if !strings.Contains(string(table), w) {
			t.Errorf("the table does not say %q:\n%s", w, table)
		}
	}
	for _, m := range rep.Survivors() {
		if !strings.Contains(string(table), "-"+m.Before+"\n+"+m.After+"\n") {
			t.Errorf("survivor %s's diff is not listed:\n%s", m.ID, table)
		}
	}
	var js pipeline.MutateReport
	b, err := os.ReadFile(filepath.Join(o.OutDir, "mutate.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &js); err != nil || len(js.Mutants) != len(rep.Mutants) || js.Scores != rep.Scores {
		t.Errorf("mutate.json: %v, %d mutants, scores %+v", err, len(js.Mutants), js.Scores)
	}
	// The count and the estimate come first, said as defaults here.
	if first := strings.SplitN(log.String(), "\n", 3); len(first) < 3 || !strings.Contains(first[0], " mutants of 1 patches") || !strings.Contains(first[1], "estimate:") || !strings.Contains(first[1], "default") {
		t.Errorf("the log does not start with the count and estimate:\n%s", log.String())
	}
	if after := workState(t, tg); after != before {
		t.Errorf("the work tree was left changed:\n%s\nwas:\n%s", after, before)
	}
}

// TestMutateMaxAndStaticOnly: --max caps the mutants judged (the table
// says how many were not); --static-only runs no build or boot and says
// the runtime scores do not apply.
func TestMutateMaxAndStaticOnly(t *testing.T) {
	tg := mutWorkspace(t)
	rt := &fakeRuntime{}
	o := mutOptions(t, rt)
	o.Max, o.StaticOnly = 3, true
	rep, err := tg.Mutate(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Mutants) != 3 || rep.Generated <= 3 || rt.calls != 0 {
		t.Fatalf("%d mutants judged of %d, %d builds", len(rep.Mutants), rep.Generated, rt.calls)
	}
	var table bytes.Buffer
	pipeline.WriteMutateTable(&table, rep)
	if !strings.Contains(table.String(), "n/a (--static-only)") || !strings.Contains(table.String(), "3 of ") {
		t.Errorf("table:\n%s", table.String())
	}
	for _, bad := range []pipeline.MutateOptions{{Max: -1}, {Operators: []string{"no-such"}}} {
		bad.OutDir = t.TempDir()
		if _, err := tg.Mutate(context.Background(), bad); !errors.Is(err, errs.ErrUsage) {
			t.Errorf("%+v: err %v, want a usage error", bad, err)
		}
	}
}

// TestMutateEstimate: with patched builds and boots recorded in the
// cache, the estimate is their median per mutant (reference included),
// said as measured; without, the defaults, said as such.
func TestMutateEstimate(t *testing.T) {
	tg := mutWorkspace(t)
	e := tg.EstimateMutants(4, false, "")
	if e.Measured["build"] != "default" || e.Measured["boot"] != "default" || e.Total <= 0 {
		t.Errorf("no records: %+v", e)
	}
	for i, d := range []string{"10", "12", "300"} {
		writeFiles(t, tg.Cache.Dir, map[string]string{
			filepath.Join("build", tg.Kernel.Name, "abc", "variants", "patched-"+strings.Repeat(d, 4), "metadata.json"): `{"kernel":"6.12","variant":"patched","duration_s":` + d + `}`,
			filepath.Join("runs", tg.Kernel.Name, "boot-patched", "k"+string(rune('0'+i)), "result.json"):               `{"verdict":"PASS","duration_s":` + map[string]string{"10": "4", "12": "6", "300": "5"}[d] + `}`,
		})
	}
	writeFiles(t, tg.Cache.Dir, map[string]string{
		filepath.Join("runs", tg.Kernel.Name, "records", "check", "a.json"): `{"key":"a","output":{"duration_s":2}}`,
	})
	e = tg.EstimateMutants(4, false, "")
	if e.CheckSeconds != 2 || !strings.HasPrefix(e.Measured["check"], "median of 1 check") {
		t.Errorf("check measured: %+v", e)
	}
	if e.BuildSeconds != 12 || e.BootSeconds != 5 || !strings.HasPrefix(e.Measured["build"], "median of 3") {
		t.Errorf("measured: %+v", e)
	}
	if got, want := e.Total.Seconds(), 5*(e.CheckSeconds+12+5); got != want {
		t.Errorf("total %v s, want %v s (4 mutants and the reference)", got, want)
	}
	if s := tg.EstimateMutants(4, true, ""); s.Total.Seconds() != 5*s.CheckSeconds {
		t.Errorf("static only: %v", s.Total)
	}
	// An earlier run's report in the output folder comes first: what its
	// mutants cost (a report of another kernel does not count).
	prev := filepath.Join(t.TempDir(), "mutate.json")
	writeFiles(t, filepath.Dir(prev), map[string]string{"mutate.json": `{"kernel":"` + tg.Kernel.Name + `","mutants":[
		{"id":"m01","check_s":3,"runtime_outcome":{"built":true,"build_s":7,"boot_s":4}},
		{"id":"m02","check_s":5,"runtime_outcome":{"built":true,"build_s":9,"boot_s":2}},
		{"id":"m03","check_s":4,"runtime_outcome":{"built":false,"build_s":1}}]}`})
	e = tg.EstimateMutants(4, false, prev)
	if e.CheckSeconds != 4 || e.BuildSeconds != 9 || e.BootSeconds != 4 || !strings.Contains(e.Measured["build"], "median of 2 mutants of the last run") {
		t.Errorf("from the last run: %+v", e)
	}
	writeFiles(t, filepath.Dir(prev), map[string]string{"mutate.json": `{"kernel":"other","mutants":[{"id":"m01","check_s":3}]}`})
	if e := tg.EstimateMutants(4, false, prev); e.CheckSeconds != 2 {
		t.Errorf("another kernel's report was read: %+v", e)
	}
}

// TestMutateInterrupt: an interrupt during a mutant's build stops the
// run with an environment error (exit 3), and the work tree is put back
// into the state it had, though the mutant was in it.
func TestMutateInterrupt(t *testing.T) {
	tg := mutWorkspace(t)
	holdPatched(t, tg)
	before := workState(t, tg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rt := &fakeRuntime{onCall: func(n int) error {
		if n == 3 { // the reference, a mutant, then the interrupt
			cancel()
			return ctx.Err()
		}
		return nil
	}}
	o := mutOptions(t, rt)
	rep, err := tg.Mutate(ctx, o)
	if err == nil || !errors.Is(err, errs.ErrEnv) || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("err %v (exit %d), want an interrupt (exit 3)", err, errs.Code(err))
	}
	if rep == nil || len(rep.Mutants) != 1 {
		t.Errorf("report %+v: want the one mutant judged before the interrupt", rep)
	}
	var js pipeline.MutateReport
	if b, err := os.ReadFile(filepath.Join(o.OutDir, "mutate.json")); err != nil || json.Unmarshal(b, &js) != nil || len(js.Mutants) != 1 {
		t.Errorf("mutate.json of the interrupted run: %v, %d mutants", err, len(js.Mutants))
	}
	if after := workState(t, tg); after != before {
		t.Errorf("the work tree was left changed by the interrupted run:\n%s\nwas:\n%s", after, before)
	}
}

// TestMutateRestoresImages: the build folder's latest patched image
// points where it pointed before the run, and the snapshots the mutants'
// builds made are gone; the series of record's snapshot stays.
func TestMutateRestoresImages(t *testing.T) {
	tg := mutWorkspace(t)
	out, err := tg.Applied(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	bd, err := tg.BuildFolder(out)
	if err != nil {
		t.Fatal(err)
	}
	record := build.StateDir(bd, vocab.Patched, out.State(vocab.Patched))
	other := build.StateDir(bd, vocab.Patched, "0123456789abcdef")
	for _, d := range []string{record, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := build.LinkLatest(bd, vocab.Patched, other); err != nil {
		t.Fatal(err)
	}
	rt := &fakeRuntime{buildDir: bd}
	o := mutOptions(t, rt)
	o.Max = 4
	if _, err := tg.Mutate(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if l, err := os.Readlink(build.VariantDir(bd, vocab.Patched)); err != nil || l != filepath.Base(other) {
		t.Errorf("latest patched image -> %q (%v), want %q as before", l, err, filepath.Base(other))
	}
	got, _ := filepath.Glob(filepath.Join(bd, "variants", vocab.Patched+"-*"))
	if len(got) != 2 {
		t.Errorf("patched snapshots after the run: %q, want the two there before", got)
	}
}

// TestMutateReal612 judges two addr-kind mutants of seed 000 on the
// pinned 6.12 tree with both real oracles (the baseline is built first
// when missing; each mutant rebuilds nvme-rdma and boots over rxe), and
// checks that the run puts the work tree back. The DMA address on the
// inline SGE is killed by the check; the boot's verdict is logged (it
// kills it only where the builds carry the DMA-faithful harness).
func TestMutateReal612(t *testing.T) {
	_, _ = testenv.Kernel(t, testkernel.Default)
	kbuild.Exclusive(t, testkernel.Default)
	kbuild.Build(t, testkernel.Default, vocab.Baseline)
	root := testenv.RepoRoot(t)
	c := testenv.Cache()
	w := &pipeline.Workspace{Root: root, Lock: lock(t, root), CacheDir: c.Dir}
	tg, err := w.Target(context.Background(), testkernel.Default, "")
	if err != nil {
		t.Fatal(err)
	}
	before := func() string {
		b, _ := os.ReadFile(filepath.Join(c.WorkTreeDir(tg.Kernel), ".patchctl", "state.json"))
		return string(b)
	}()
	var log bytes.Buffer
	rep, err := tg.Mutate(context.Background(), pipeline.MutateOptions{Max: 2, Operators: []string{"addr-kind"}, Transports: []string{vocab.RXE},
		OutDir: t.TempDir(), Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	var table bytes.Buffer
	pipeline.WriteMutateTable(&table, rep)
	t.Logf("%s\n%s", log.String(), table.String())
	if len(rep.Mutants) != 2 || rep.Reference == nil || !rep.Reference.Built {
		t.Fatalf("%d mutants, reference %s", len(rep.Mutants), rep.Reference.Summary())
	}
	for _, m := range rep.Mutants {
		if strings.Contains(m.After, "sge->addr = qe->dma;") && !m.Static {
			t.Errorf("%s (the DMA address on the inline SGE) not killed by the check", m.ID)
		}
		if m.Outcome == nil || !m.Outcome.Built {
			t.Errorf("%s: %s", m.ID, m.Outcome.Summary())
		}
	}
	after, _ := os.ReadFile(filepath.Join(c.WorkTreeDir(tg.Kernel), ".patchctl", "state.json"))
	if string(after) != before {
		t.Errorf("work tree state %s, was %s", after, before)
	}
}

// TestMutateOneRunPerKernel: a second mutation run of the same kernel
// waits for the first (the cache's mutate-<kernel> lock): each puts back
// the work tree it found, so two must not interleave. Here the wait ends
// with its context.
func TestMutateOneRunPerKernel(t *testing.T) {
	tg := mutWorkspace(t)
	unlock, err := tg.Cache.Lock(context.Background(), "mutate-"+tg.Kernel.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rt := &fakeRuntime{}
	_, err = tg.Mutate(ctx, mutOptions(t, rt))
	if err == nil || !strings.Contains(err.Error(), "mutate-"+tg.Kernel.Name) || rt.calls != 0 {
		t.Fatalf("err %v, %d builds: want the wait for the run holding the lock", err, rt.calls)
	}
}
