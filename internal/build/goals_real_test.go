package build_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/kbuild"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/vocab"
)

// TestModuleGoalsMakeWhatMakeModulesMakes: a patched build whose only
// change is a module's C file (seed 000's inline-send test in nvme-rdma
// edited, a bound that never decides, a new one each run) names every
// module of modules.order as a goal instead of `make modules`; the same
// state built again through `make modules`, from the same objects with
// the link products removed, compiles nothing anew (rdma.o keeps its
// time: the goals compiled it with the command the walk uses, which
// kbuild compares) and makes every .ko byte
// for byte the same, and Module.symvers the same lines; modules.order is
// the folder's own after each.
func TestModuleGoalsMakeWhatMakeModulesMakes(t *testing.T) {
	kbuild.Exclusive(t, testkernel.Default)
	k, pristine := testenv.Kernel(t, testkernel.Default)
	root := editedSeed000(t, time.Now().UnixNano()%1e6*1000)
	out, err := apply.Run(context.Background(), apply.In{Root: root, Kernel: k, Pristine: pristine})
	if err != nil {
		t.Fatal(err)
	}
	edited := func(o *build.Options) { o.Apply = out }

	goals := kbuild.Build(t, testkernel.Default, vocab.Patched, edited)
	if !goals.ModulesOnly || !goals.ModuleGoals {
		t.Fatalf("the edit of a module's C file did not build module goals: modules only %v, goals %v", goals.ModulesOnly, goals.ModuleGoals)
	}
	dir := goals.BuildDir
	order := mustReadFile(t, filepath.Join(dir, "modules.order"))
	log := string(mustReadFile(t, goals.Log))
	for _, want := range []string{"CC [M]  drivers/nvme/host/rdma.o", "LD [M]  drivers/nvme/host/nvme-rdma.ko"} {
		if !strings.Contains(log, want) {
			t.Errorf("the build with module goals did not %q:\n%s", want, log)
		}
	}
	byGoals, symvers := linked(t, dir, order)
	obj := filepath.Join(dir, "drivers/nvme/host/rdma.o")
	compiled := stamp(t, obj)

	// The same state through make modules (its log is not kept: the
	// state's snapshot is the first build's).
	removeLinked(t, dir, order)
	walk := kbuild.Build(t, testkernel.Default, vocab.Patched, edited, build.WalkModules)
	if !walk.ModulesOnly || walk.ModuleGoals {
		t.Fatalf("modules only %v, goals %v: want make modules", walk.ModulesOnly, walk.ModuleGoals)
	}
	if got := stamp(t, obj); got != compiled {
		t.Errorf("make modules compiled rdma.o again (the goals compiled it with another command line): %s, was %s", got, compiled)
	}
	if got := mustReadFile(t, filepath.Join(dir, "modules.order")); string(got) != string(order) {
		t.Errorf("modules.order after make modules:\n%s\nafter the goals:\n%s", got, order)
	}
	byWalk, walkSymvers := linked(t, dir, order)
	for ko, h := range byGoals {
		if byWalk[ko] != h {
			t.Errorf("%s: the module goals made %s, make modules %s", ko, h, byWalk[ko])
		}
	}
	if len(byWalk) != len(byGoals) || len(byGoals) < 4 {
		t.Errorf("modules: goals %d, make modules %d", len(byGoals), len(byWalk))
	}
	if !slices.Equal(symvers, walkSymvers) {
		t.Errorf("Module.symvers differs between the goals and make modules (sorted lines)")
	}

	// And back: the goals link the walk's objects into the same modules,
	// and with nothing changed they are up to date.
	removeLinked(t, dir, order)
	again := kbuild.Build(t, testkernel.Default, vocab.Patched, edited)
	if !again.ModuleGoals {
		t.Error("the second build did not use module goals")
	}
	if got, _ := linked(t, dir, order); fmt.Sprint(got) != fmt.Sprint(byGoals) {
		t.Errorf("the goals linked other modules the second time: %v, first %v", got, byGoals)
	}
	if noop := kbuild.Build(t, testkernel.Default, vocab.Patched, edited); !noop.ModuleGoals || !noop.UpToDate {
		t.Errorf("a build with nothing changed: goals %v, up to date %v", noop.ModuleGoals, noop.UpToDate)
	}
}

// editedSeed000 is a project root with what a 6.12 apply reads (the
// manifest, its patches, the fragments), seed 000's inline-send test
// given an upper bound n+2^20 on the granted size that never decides.
func editedSeed000(t *testing.T, n int64) string {
	t.Helper()
	src, root := testenv.RepoRoot(t), t.TempDir()
	const seed = "patches/nvme-rdma-inline-capsule/000_97dfe90d7f7f5563.txt"
	files := []string{"series/6.12/manifest.yaml", seed, "patches/mlx5-umr-inline-reg-wr/002_ae99e225fbf26f56.txt", "patches/nvmet-rdma-inline-16k/003_be5ede6ad577d1fd.txt"}
	frags, _ := filepath.Glob(filepath.Join(src, "kconfig", "*.config"))
	for _, f := range frags {
		files = append(files, filepath.Join("kconfig", filepath.Base(f)))
	}
	for _, p := range files {
		b := mustReadFile(t, filepath.Join(src, p))
		if p == seed {
			const line = "+\tif (num_sge == 1 && sge->length <= queue->max_inline_data"
			s := string(b)
			i := strings.Index(s, line+") {\n")
			if i < 0 {
				t.Fatalf("%s has no line %q", seed, line)
			}
			b = []byte(s[:i] + fmt.Sprintf("%s && queue->max_inline_data <= %d) {\n", line, 1<<20+n) + s[i+len(line)+4:])
		}
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// koPaths are the .ko files of the modules modules.order lists.
func koPaths(order []byte) []string {
	var out []string
	for _, l := range strings.Fields(string(order)) {
		out = append(out, strings.TrimSuffix(strings.TrimSuffix(l, ".o"), ".ko")+".ko")
	}
	return out
}

// linked hashes each module of order in dir, and returns Module.symvers'
// lines sorted.
func linked(t *testing.T, dir string, order []byte) (map[string]string, []string) {
	t.Helper()
	out := map[string]string{}
	for _, ko := range koPaths(order) {
		out[ko] = fmt.Sprintf("%x", sha256.Sum256(mustReadFile(t, filepath.Join(dir, ko))))
	}
	lines := strings.Split(strings.TrimSpace(string(mustReadFile(t, filepath.Join(dir, "Module.symvers")))), "\n")
	slices.Sort(lines)
	return out, lines
}

// removeLinked removes what modpost and the final link make of each
// module (the .ko, its .mod.c and .mod.o) and Module.symvers: the next
// build links them all again from the compiled objects.
func removeLinked(t *testing.T, dir string, order []byte) {
	t.Helper()
	for _, ko := range koPaths(order) {
		base := strings.TrimSuffix(ko, ".ko")
		for _, p := range []string{ko, base + ".mod.c", base + ".mod.o"} {
			if err := os.Remove(filepath.Join(dir, p)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Remove(filepath.Join(dir, "Module.symvers")); err != nil {
		t.Fatal(err)
	}
}

// stamp is a file's time and content hash.
func stamp(t *testing.T, p string) string {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s %x", st.ModTime(), sha256.Sum256(mustReadFile(t, p)))
}

func mustReadFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
