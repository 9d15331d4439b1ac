package checks

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/checks/engine"
	"github.com/patchctl/patchctl/internal/preproc"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/kbuild"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/vocab"
)

// TestPreprocessedReal runs the preprocessed path on the nvme-rdma host
// and target of the pinned 6.12 and 7.3 with the flags of their build
// folders: it draws the same findings as raw C (the known in-capsule
// bound, at the same source line) and nothing else. It logs the times of
// both paths and of parsing the whole translation unit. The default
// kernel's baseline is built when missing; 7.3 without a completed build
// is skipped.
func TestPreprocessedReal(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads build folders and runs gcc -E on two files per kernel")
	}
	// Each kernel's own preprocessed facts: the default kernel, built
	// when needed, and 7.3 when a build of it is there.
	for _, k := range []string{testkernel.Default, "7.3"} {
		t.Run(k, func(t *testing.T) { preprocessedReal(t, k) })
	}
}

func preprocessedReal(t *testing.T, kernel string) {
	var build string
	if kernel == testkernel.Default {
		// The default kernel's baseline, built (or reused) and complete:
		// a folder another test is still configuring has a .config and
		// no command records yet.
		build = kbuild.Build(t, kernel, vocab.Baseline).BuildDir
	} else {
		// Another kernel's folder only when a build of it completed.
		done, _ := filepath.Glob(filepath.Join(testenv.Cache().Dir, "build", kernel, "*", "variants", vocab.Baseline, "metadata.json"))
		if len(done) == 0 {
			t.Skipf("no completed %s build folder", kernel)
		}
		build = filepath.Dir(filepath.Dir(filepath.Dir(done[0])))
	}
	_, tree := testenv.Kernel(t, kernel)
	files := []string{"drivers/nvme/host/rdma.c", "drivers/nvme/target/rdma.c"}
	t0 := time.Now()
	raw, err := Run(Options{Tree: tree, Paths: files})
	if err != nil {
		t.Fatal(err)
	}
	rawTime := time.Since(t0)
	s, err := preproc.New(preproc.Options{Tree: tree, BuildDir: build, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, warm := range []bool{false, true} {
		t0 = time.Now()
		rep, err := Run(Options{Tree: tree, Paths: files, Preprocessor: NewPreprocessor(context.Background(), s)})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("raw C %v; preprocessed (cache warm %v) %v: %s", rawTime, warm, time.Since(t0), rep.Analysis)
		if !strings.Contains(rep.Analysis, "preprocessed translation units for 2 .c files") || !strings.Contains(rep.Analysis, build) {
			t.Errorf("analysis: %s", rep.Analysis)
		}
		g, w := findingKeys(rep), findingKeys(raw)
		if !slices.Equal(g, w) {
			t.Errorf("preprocessed and raw differ\n pre: %v\n raw: %v\n%s", g, w, describe(rep))
		}
		if len(g) != 1 || !strings.Contains(g[0], "drivers/nvme/target/rdma.c") || !strings.Contains(g[0], RuleIncapsule) {
			t.Errorf("want exactly the known in-capsule bound of nvmet-rdma, got %v", g)
		}
	}
	// The whole translation unit, for the record: what parsing it would
	// cost against parsing the projection.
	for _, rel := range files {
		u, err := s.Preprocess(context.Background(), rel)
		if err != nil {
			t.Fatal(err)
		}
		t0 = time.Now()
		f := engine.Parse(rel, u.Output)
		whole := time.Since(t0)
		n := len(engine.Functions(f))
		f.Close()
		t.Logf("%s: whole unit %d bytes, %d functions, parsed in %v", rel, len(u.Output), n, whole)
	}
}
