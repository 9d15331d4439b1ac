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

// TestRealMLX5CompileTest: the mlx5 compile-test on this path is a module
// build of drivers/infiniband/hw/mlx5 against the headers.
func TestRealMLX5CompileTest(t *testing.T) {
	in, pristine := realInstall(t)
	cfg, _ := in.Config()
	mods, err := Plan(pristine, []string{"drivers/infiniband/hw/mlx5/wr.c"}, cfg)
	if err != nil {
		t.Fatal(err)
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
	p := built["mlx5_ib"]
	mi, err := ReadModinfo(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(mi.Get("vermagic"), in.Release+" ") || !strings.Contains(mi.Get("depends"), "mlx5_core") {
		t.Errorf("mlx5_ib.ko modinfo %v", mi)
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
	b, err := sectionsBut(built2["mlx5_ib"], ".BTF")
	if err != nil {
		t.Fatal(err)
	}
	if len(a) < 10 || !reflect.DeepEqual(a, b) {
		var differ []string
		for name := range a {
			if !bytes.Equal(a[name], b[name]) {
				differ = append(differ, name)
			}
		}
		t.Errorf("mlx5_ib.ko from ccache differs from the one compiled: sections %v (of %d)", differ, len(a))
	}
	// An edited source (a tree of its own: the module's folders copied,
	// main.c given a module tag no build here had): ccache never gives
	// back an object of the unedited main.c; the module carries the edit.
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
	mainC := filepath.Join(edited, "drivers/infiniband/hw/mlx5/main.c")
	src, err := os.ReadFile(mainC)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mainC, append(src, "MODULE_INFO(patchctl_edit, \""+tag+"\");\n"...), 0o644); err != nil {
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
	if mi, err := ReadModinfo(built3["mlx5_ib"]); err != nil || mi.Get("patchctl_edit") != tag {
		t.Errorf("the module built from the edited main.c lacks its tag %s (%v): an object of the unedited source", tag, err)
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
