package distro

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/vocab"
)

// realInstall is 6.12's Debian binary kernel, fetched with its pinned
// sums and extracted into the user's cache (about 125 MB of packages the
// first time). Not under -short.
func realInstall(t *testing.T) (*Install, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: downloads Debian's binary kernel")
	}
	k, pristine := testenv.Kernel(t, testkernel.Default)
	in, err := Prepare(context.Background(), testenv.Cache(), k)
	if err != nil {
		testenv.Unavailable(t, "distro kernel 6.12: "+err.Error())
	}
	return in, pristine
}

// TestRealPatchedModule builds the patched 6.12 on the distro path: the
// seed-000 series rebuilds nvme-rdma.ko, whose vermagic equals the distro
// kernel's own module's, and the boot list carries it in place of
// Debian's, after its dependencies, with siw's absence noted by its
// config. The DWARF boot reads the kprobe offsets from is there.
func TestRealPatchedModule(t *testing.T) {
	in, pristine := realInstall(t)
	c := testenv.Cache()
	root := testenv.RepoRoot(t)
	out, err := apply.Run(context.Background(), apply.In{Root: root, Kernel: in.Kernel, Pristine: pristine, Cache: c})
	if err != nil {
		t.Fatal(err)
	}
	md, err := Build(context.Background(), Options{Cache: c, Kernel: in.Kernel, Apply: out, Variant: vocab.Patched})
	if err != nil {
		t.Fatal(err)
	}
	if md.KernelFrom != vocab.FromDistro || md.KernelRelease != "6.12.117+deb12-amd64" || len(md.Rebuilt) != 1 || md.Rebuilt[0] != "nvme_rdma" {
		t.Fatalf("metadata: %+v", md)
	}
	ix, err := IndexModules(in.ModulesDir())
	if err != nil {
		t.Fatal(err)
	}
	_, distroInfo, err := in.Module(context.Background(), ix, "nvme_rdma")
	if err != nil {
		t.Fatal(err)
	}
	pos := map[string]int{}
	var rebuilt string
	for i, p := range md.Modules {
		pos[ModuleName(p)] = i
		if ModuleName(p) == "nvme_rdma" {
			rebuilt = p
		}
	}
	if !strings.HasPrefix(rebuilt, md.VariantDir) {
		t.Fatalf("the boot list's nvme_rdma is %q, not the rebuilt one", rebuilt)
	}
	mi, err := ReadModinfo(rebuilt)
	if err != nil {
		t.Fatal(err)
	}
	if why := VermagicMismatch(mi.Get("vermagic"), distroInfo.Get("vermagic")); why != "" || !strings.HasPrefix(mi.Get("vermagic"), "6.12.117+deb12-amd64 ") {
		t.Errorf("rebuilt vermagic %q, distro %q: %s", mi.Get("vermagic"), distroInfo.Get("vermagic"), why)
	}
	for _, d := range mi.Depends() {
		if p, ok := pos[d]; !ok || p > pos["nvme_rdma"] {
			t.Errorf("dependency %s of nvme_rdma not loaded before it: %v", d, md.Modules)
		}
	}
	for _, n := range []string{"rdma_rxe", "nvmet_rdma", "null_blk", "configfs", "virtio_net", "crc32_generic"} {
		if _, ok := pos[n]; !ok {
			t.Errorf("%s not in the boot list", n)
		}
	}
	if _, ok := pos["siw"]; ok {
		t.Error("siw in the boot list of a kernel without RDMA_SIW")
	}
	if _, err := filepath.Glob(filepath.Join(md.BuildDir, "drivers/nvme/host/rdma.o")); err != nil {
		t.Error(err)
	}
}

// TestRealRefusesBuiltIn: on Debian's real config, a change to a file the
// kernel builds in is refused with the file and symbol named; module
// sources map to their modules, mlx5's wr.c to mlx5_ib.
func TestRealRefusesBuiltIn(t *testing.T) {
	in, pristine := realInstall(t)
	cfg, err := in.Config()
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		"net/ipv4/tcp.c":                        "built into the distro kernel (obj-y)",
		"drivers/nvme/host/core.c":              "",
		"drivers/virtio/virtio_pci_common.c":    "built into the distro kernel (CONFIG_VIRTIO_PCI)",
		"drivers/infiniband/core/cma.c":         "",
		"drivers/infiniband/core/verbs.c":       "", // ib_core: =m
		"drivers/infiniband/sw/siw/siw_qp.c":    "CONFIG_RDMA_SIW is not set",
		"drivers/nvme/host/rdma.c":              "",
		"drivers/infiniband/hw/mlx5/wr.c":       "",
		"drivers/nvme/target/rdma.c":            "",
		"include/rdma/ib_verbs.h":               "shared header",
		"drivers/infiniband/sw/rxe/rxe_verbs.c": "",
	} {
		mods, err := Plan(pristine, []string{file}, cfg)
		if want == "" {
			if err != nil || len(mods) != 1 {
				t.Errorf("%s: %v %v", file, mods, err)
			}
			continue
		}
		if !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a refusal saying %q", file, err, want)
		}
	}
	if mods, _ := Plan(pristine, []string{"drivers/infiniband/hw/mlx5/wr.c"}, cfg); len(mods) == 1 && mods[0].Name != "mlx5_ib" {
		t.Errorf("mlx5: %+v", mods)
	}
}

// TestRealModuleBuildReuse: a module build on this path is a build of
// the module's folder against the headers; the same sources built again
// from another folder give back every compile from ccache and the same
// module; an edited copy compiles the edit. make test proves it on
// nvme_rdma (one object); TestRealMLX5CompileTest proves it on mlx5_ib.
func TestRealModuleBuildReuse(t *testing.T) {
	moduleBuiltThrice(t, "drivers/nvme/host/rdma.c", "nvme_rdma", "ib_core", "drivers/nvme/host/rdma.c")
}

// TestRealMLX5CompileTest: the mlx5 compile-test on this path is a module
// build of drivers/infiniband/hw/mlx5 against the headers: 29 compiles,
// about 100 CPU-s on an empty ccache and as many again for the edited
// copy (from another tree most files miss, docs/distro.md). make test
// proves the same steps on nvme_rdma (TestRealModuleBuildReuse) and that
// the series' mlx5 file plans mlx5_ib (TestRealRefusesBuiltIn);
// PATCHCTL_TEST_FULL=1 (make test-matrix) builds mlx5_ib.
func TestRealMLX5CompileTest(t *testing.T) {
	if !testenv.Full() {
		t.Skip("make test: the module build's steps are proved on nvme_rdma (TestRealModuleBuildReuse); PATCHCTL_TEST_FULL=1 builds mlx5_ib")
	}
	moduleBuiltThrice(t, "drivers/infiniband/hw/mlx5/wr.c", "mlx5_ib", "mlx5_core", "drivers/infiniband/hw/mlx5/main.c")
}

// moduleBuiltThrice builds the module that touched plans (name, whose
// modinfo depends on dep) three times: from the pristine sources, again
// from another folder (every compile a ccache hit, the module the same),
// and from a copy with edit given a module tag no build had (the edit
// compiled, never an object of the unedited file).
func moduleBuiltThrice(t *testing.T, touched, name, dep, edit string) {
	t.Helper()
	in, pristine := realInstall(t)
	cfg, _ := in.Config()
	mods, err := Plan(pristine, []string{touched}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) != 1 || ModuleName(mods[0].Name) != name {
		t.Fatalf("%s plans %+v, want %s", touched, mods, name)
	}
	k := in.Kernel
	o := &Options{Cache: testenv.Cache(), Kernel: k, Apply: &apply.Out{}, Variant: vocab.Baseline}
	o.normalize()
	var log bytes.Buffer
	md := &build.Metadata{}
	built, err := buildModules(context.Background(), o, in, pristine, mods, t.TempDir(), &log, md)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	p := built[name]
	mi, err := ReadModinfo(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(mi.Get("vermagic"), in.Release+" ") || !slices.Contains(strings.Split(mi.Get("depends"), ","), dep) {
		t.Errorf("%s.ko modinfo %v, want vermagic %s and %s among its dependencies", name, mi, in.Release, dep)
	}
	if md.CcacheStats == nil {
		t.Skip("ccache not installed: the second build below would compile everything again")
	}
	// The same sources in another temporary folder: kbuild names them by
	// the fixed path (moduleBuildPath), so ccache gives back every object,
	// and the module is the same in every section but .BTF.
	md2 := &build.Metadata{}
	built2, err := buildModules(context.Background(), o, in, pristine, mods, t.TempDir(), &log, md2)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if c := md2.CcacheStats; c == nil || c.Misses != 0 || c.Hits == 0 {
		t.Errorf("the same sources built again in another folder: ccache %+v (first build %+v), want every compile a hit", c, md.CcacheStats)
	}
	// Every section but .BTF, which pahole writes anew at each link and
	// not the same twice (the compiled objects are).
	a, err := sectionsBut(p, ".BTF")
	if err != nil {
		t.Fatal(err)
	}
	b, err := sectionsBut(built2[name], ".BTF")
	if err != nil {
		t.Fatal(err)
	}
	if len(a) < 10 || !reflect.DeepEqual(a, b) {
		var differ []string
		for s := range a {
			if !bytes.Equal(a[s], b[s]) {
				differ = append(differ, s)
			}
		}
		t.Errorf("%s.ko from ccache differs from the one compiled: sections %v (of %d)", name, differ, len(a))
	}
	// An edited source (a tree of its own: the module's folders copied,
	// the file given a module tag no build here had): ccache never gives
	// back an object of the unedited file; the module carries the edit.
	// (From another tree most files missed too on an empty cache, though
	// the compile commands are the same: not asserted, docs/distro.md.)
	edited := t.TempDir()
	for _, m := range mods {
		from, to := filepath.Join(pristine, m.Dir), filepath.Join(edited, m.Dir)
		if err := copySources(from, to); err != nil {
			t.Fatal(err)
		}
		if err := fsutil.CopyFile(filepath.Join(from, "Makefile"), filepath.Join(to, "Makefile")); err != nil {
			t.Fatal(err)
		}
	}
	tag := fmt.Sprint(time.Now().UnixNano())
	editPath := filepath.Join(edited, edit)
	src, err := os.ReadFile(editPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(editPath, append(src, "MODULE_INFO(patchctl_edit, \""+tag+"\");\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	md3 := &build.Metadata{}
	built3, err := buildModules(context.Background(), o, in, edited, mods, t.TempDir(), &log, md3)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if c := md3.CcacheStats; c == nil || c.Misses == 0 {
		t.Errorf("one source edited: ccache %+v, want at least its compile a miss", c)
	}
	if mi, err := ReadModinfo(built3[name]); err != nil || mi.Get("patchctl_edit") != tag {
		t.Errorf("the module built from the edited %s lacks its tag %s (%v): an object of the unedited source", edit, tag, err)
	}
}

// sectionsBut is the content of each section of the ELF file at path but
// those named skip.
func sectionsBut(path string, skip ...string) (map[string][]byte, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]byte{}
	for _, s := range f.Sections {
		if slices.Contains(skip, s.Name) || s.Type == elf.SHT_NOBITS {
			continue
		}
		b, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("%s: section %s: %w", path, s.Name, err)
		}
		out[s.Name] = b
	}
	return out, nil
}
