package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
	"github.com/patchctl/patchctl/qemu/harness"
)

// preimage makes, for each file a harness variant changes, a file the
// variant applies to: each hunk's context and removed lines, apart.
func preimage(t *testing.T, v *harness.Variant, files map[string][]byte) {
	t.Helper()
	fs, _, err := gitdiff.Parse(bytes.NewReader(v.Patch))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		var b strings.Builder
		for i, frag := range f.TextFragments {
			fmt.Fprintf(&b, "/* %s: before hunk %d */\n\n", v.Name, i+1)
			for _, l := range frag.Lines {
				if l.Op != gitdiff.OpAdd {
					b.WriteString(l.Line)
				}
			}
			b.WriteString("\n")
		}
		files[f.NewName] = []byte(b.String())
	}
}

func variantNamed(t *testing.T, h, name string) *harness.Variant {
	t.Helper()
	vs, err := harness.Variants(h)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no variant %s of %s", name, h)
	return nil
}

// harnessKernel is a fake kernel whose tree holds what the 6.4+
// DMA-faithful variant and the in-capsule host patch apply to; its
// "bzImage" is main.o followed by every file the harness changes, so an
// image shows which sources it was made from.
func harnessKernel(t *testing.T, series string) Options {
	t.Helper()
	for _, tool := range []string{"git", "gcc", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	files := map[string][]byte{}
	preimage(t, variantNamed(t, harness.DMAFaithful, "ib_virt_dma_to_ptr"), files)
	preimage(t, variantNamed(t, harness.IncapsuleWrap, "nvme-rdma-wrap-icdoff"), files)
	var hfiles []string
	for p := range files {
		hfiles = append(hfiles, "$(SRC)/"+p)
	}
	sort.Strings(hfiles)
	mk := strings.Replace(fakeMakefile, "$(O)/arch/x86/boot/bzImage: $(O)/main.o\n\t@mkdir -p $(dir $@) $(O)/include/config\n\t$(SAY) echo \"  LD      bzImage\"\n\t@cp $< $@;",
		"$(O)/arch/x86/boot/bzImage: $(O)/main.o "+strings.Join(hfiles, " ")+"\n\t@mkdir -p $(dir $@) $(O)/include/config\n\t$(SAY) echo \"  LD      bzImage\"\n\t@cat $^ > $@;", 1)
	if mk == fakeMakefile {
		t.Fatal("the fake Makefile's link rule changed: adapt harnessKernel")
	}
	files["Makefile"] = []byte(mk)
	files["main.c"] = []byte(fakeMain)
	files["Kconfig"] = []byte("config A\n\tbool \"a\"\n")
	src := t.TempDir()
	for p, b := range files {
		os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(src, p), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, src, "init", "-q")
	gitIn(t, src, "add", "-A")
	gitIn(t, src, "commit", "-qm", "fake kernel")
	gitIn(t, src, "tag", "v9.9")
	root := t.TempDir()
	w := func(p, s string) {
		os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(root, p), []byte(s), 0o644)
	}
	w("kconfig/base.config", "CONFIG_A=y\n")
	w("patches/s/0001.patch", series)
	w("series/9.9/manifest.yaml", "kernel: \"9.9\"\npatches:\n  - source: patches/s/0001.patch\n    expect: applies\n")
	k := &tree.Kernel{Name: "9.9", Git: &tree.GitSource{URL: src, Tag: "v9.9"}}
	o := Options{Root: root, Cache: &tree.Cache{Dir: t.TempDir()}, Kernel: k, Fragments: []string{"base"}, Jobs: 2}
	o.Apply = applied(t, o)
	return o
}

const mainSeries = "From: J <j@example.org>\nSubject: [PATCH] main: return 1\n\n---\n" +
	"diff --git a/main.c b/main.c\n--- a/main.c\n+++ b/main.c\n@@ -1,5 +1,5 @@\n int main_fn(void)\n {\n-\treturn 0;\n+\treturn 1;\n }\n #ifdef BROKEN\n"

// TestHarnessInEveryBuild: both variants carry the DMA mode's harness
// (and say which), the work tree others see never does, a work tree that
// went back to its state without the harness in between costs no
// rebuild, and switching the mode rebuilds exactly what it changes, with
// its own key and snapshot.
func TestHarnessInEveryBuild(t *testing.T) {
	o := harnessKernel(t, mainSeries)
	ctx := context.Background()
	has := func(md *Metadata, s string) bool {
		b, err := os.ReadFile(md.Artifacts["bzImage"])
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Contains(b, []byte(s))
	}
	const tag, wrap = "IB_VIRT_DMA_TAG", "patchctl_wrap_icdoff"
	clean := func(md *Metadata) {
		t.Helper()
		for _, p := range []string{"include/rdma/ib_verbs.h", "drivers/nvme/host/rdma.c"} {
			b, _ := os.ReadFile(filepath.Join(md.SourceDir, p))
			if bytes.Contains(b, []byte(tag)) || bytes.Contains(b, []byte(wrap)) {
				t.Errorf("the work tree's %s kept the harness after the %s build", p, md.Variant)
			}
		}
	}
	names := func(md *Metadata) string {
		var s []string
		for _, h := range md.Harness {
			s = append(s, h.String())
		}
		return strings.Join(s, " ")
	}
	build := func(variant, dma string) *Metadata {
		t.Helper()
		o.Variant, o.DMA = variant, dma
		md, err := Build(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		clean(md)
		return md
	}

	b := build(vocab.Baseline, "")
	if got := names(b); got != "dma-faithful/ib_virt_dma_to_ptr incapsule-wrap/nvme-rdma-wrap-icdoff" || b.DMA != vocab.DMAFaithful {
		t.Errorf("baseline harness %q, dma %q", got, b.DMA)
	}
	if !has(b, tag) || !has(b, wrap) {
		t.Error("the baseline image was not made from the harness")
	}
	p := build(vocab.Patched, "")
	if names(p) != names(b) || !has(p, tag) || !has(p, wrap) || !has(p, "main_fn") {
		t.Errorf("patched harness %q", names(p))
	}
	if mc, _ := os.ReadFile(filepath.Join(p.SourceDir, "main.c")); !bytes.Contains(mc, []byte("return 1;")) {
		t.Error("the patched work tree lost the series")
	}
	// The work tree went back to its state without the harness after
	// each build: building again is a no-op, both variants.
	if again := build(vocab.Patched, ""); !again.UpToDate {
		t.Error("a second patched build recompiled: the harness's rewrite looked like a change")
	}
	if again := build(vocab.Baseline, ""); !again.UpToDate {
		t.Error("the baseline after the patched build recompiled")
	}

	// --dma plain: the in-capsule host switch only, a key and snapshot
	// of its own, the DMA-faithful files rebuilt from pristine.
	kf, _ := Key(Options{Root: o.Root, Cache: o.Cache, Kernel: o.Kernel, Apply: o.Apply, Variant: vocab.Baseline, Fragments: o.Fragments})
	kp, _ := Key(Options{Root: o.Root, Cache: o.Cache, Kernel: o.Kernel, Apply: o.Apply, Variant: vocab.Baseline, Fragments: o.Fragments, DMA: vocab.DMAPlain})
	if kf == "" || kf == kp {
		t.Error("--dma plain and faithful share a build key")
	}
	pl := build(vocab.Baseline, vocab.DMAPlain)
	if names(pl) != "incapsule-wrap/nvme-rdma-wrap-icdoff" || pl.DMA != vocab.DMAPlain || pl.UpToDate || has(pl, tag) || !has(pl, wrap) {
		t.Errorf("plain baseline: harness %q, dma %q, up to date %v, tag %v", names(pl), pl.DMA, pl.UpToDate, has(pl, tag))
	}
	if pl.VariantDir == b.VariantDir {
		t.Error("the plain and faithful baselines share a snapshot")
	}
	back := build(vocab.Baseline, "")
	if back.UpToDate || !has(back, tag) {
		t.Error("back to faithful did not rebuild with the tag")
	}
	if _, err := Key(Options{Root: o.Root, Cache: o.Cache, Kernel: o.Kernel, Apply: o.Apply, Fragments: o.Fragments, DMA: "virtual"}); !errors.Is(err, errs.ErrUsage) {
		t.Errorf("an unknown --dma: %v", err)
	}
}

// TestHarnessConflict: a series that changes what a harness patch needs
// fails the patched build as a finding naming the harness, and leaves
// the work tree as it was.
func TestHarnessConflict(t *testing.T) {
	series := "From: J <j@example.org>\nSubject: [PATCH] nvme-rdma: spell the SGL type otherwise\n\n---\n" +
		"diff --git a/drivers/nvme/host/rdma.c b/drivers/nvme/host/rdma.c\n--- a/drivers/nvme/host/rdma.c\n+++ b/drivers/nvme/host/rdma.c\n"
	pre := map[string][]byte{}
	preimage(t, variantNamed(t, harness.IncapsuleWrap, "nvme-rdma-wrap-icdoff"), pre)
	lines := strings.SplitAfter(string(pre["drivers/nvme/host/rdma.c"]), "\n")
	at := -1
	for i, l := range lines {
		if strings.Contains(l, "sg->type = ") {
			at = i
		}
	}
	if at < 3 || at+3 >= len(lines) {
		t.Fatal("the in-capsule patch no longer has the context this test changes")
	}
	series += fmt.Sprintf("@@ -%d,7 +%d,7 @@\n", at-2, at-2)
	for i := at - 3; i <= at+3; i++ {
		if i == at {
			series += "-" + lines[i] + "+\tsg->type = NVME_SGL_FMT_OFFSET | (NVME_SGL_FMT_DATA_DESC << 4);\n"
			continue
		}
		series += " " + lines[i]
	}
	o := harnessKernel(t, series)
	o.Variant = vocab.Patched
	_, err := Build(context.Background(), o)
	if !errors.Is(err, harness.ErrConflict) || !errors.Is(err, errs.ErrFindings) || !strings.Contains(err.Error(), "incapsule-wrap") {
		t.Fatalf("err = %v, want a finding naming the conflicting harness", err)
	}
	wt := o.Cache.WorkTreeDir(o.Kernel)
	if b, err := os.ReadFile(filepath.Join(wt, "drivers/nvme/host/rdma.c")); err == nil && bytes.Contains(b, []byte("patchctl_wrap_icdoff")) {
		t.Error("the failed build left the harness in the work tree")
	}
}

// TestStrictSourcesFreshened: a harness file, written with its pristine
// time, that a complete build folder's record does not know (a folder
// built before the harness) is freshened, so make recompiles what
// includes it; one the record knows with that content is not.
func TestStrictSourcesFreshened(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	old := time.Unix(1_000_000, 0)
	p := filepath.Join(src, "h.h")
	if err := os.WriteFile(p, []byte("harness\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, old, old)
	if err := writeRecord(dir, &sources{Complete: true, Files: map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	rec, err := syncSources(src, "", dir, nil, []string{"h.h"})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); !st.ModTime().After(old) {
		t.Error("a harness file the folder's record does not know was not freshened")
	}
	rec.Complete = true
	if err := writeRecord(dir, rec); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, old, old)
	if _, err := syncSources(src, "", dir, nil, []string{"h.h"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); !st.ModTime().Equal(old) {
		t.Error("a harness file the record knows with this content was freshened")
	}
}
