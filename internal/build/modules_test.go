package build

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/kconfig"
	"github.com/patchctl/patchctl/internal/testenv"
)

// fakeModule compiles an object whose .modinfo says what it depends on,
// named as kbuild names a module.
func fakeModule(t *testing.T, dir, file, depends string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "m.c")
	os.WriteFile(src, []byte(`__attribute__((section(".modinfo"), used)) static const char d[] = "license=GPL\0depends=`+depends+`\0name=x";`+"\n"), 0o644)
	out := filepath.Join(dir, file)
	os.MkdirAll(filepath.Dir(out), 0o755)
	if b, err := exec.Command("gcc", "-c", "-o", out, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
}

func TestModuleLoadOrder(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	fakeModule(t, dir, "drivers/nvme/host/nvme-core.ko", "")
	fakeModule(t, dir, "drivers/nvme/host/nvme-fabrics.ko", "nvme-core")
	fakeModule(t, dir, "drivers/nvme/host/nvme-rdma.ko", "nvme-fabrics,nvme-core")
	fakeModule(t, dir, "net/ipv4/udp_tunnel.ko", "")
	fakeModule(t, dir, "drivers/infiniband/sw/rxe/rdma_rxe.ko", "udp_tunnel")
	// 6.2 and later list objects; the order is kbuild's, not load order.
	os.WriteFile(filepath.Join(dir, "modules.order"), []byte("drivers/infiniband/sw/rxe/rdma_rxe.o\ndrivers/nvme/host/nvme-rdma.o\ndrivers/nvme/host/nvme-fabrics.o\ndrivers/nvme/host/nvme-core.o\nnet/ipv4/udp_tunnel.o\n"), 0o644)
	built, err := builtModules(dir)
	if err != nil {
		t.Fatal(err)
	}
	order, err := loadOrder([]string{"nvme_rdma", "rdma_rxe"}, built)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ko := range order {
		names = append(names, modName(ko))
	}
	if got, want := strings.Join(names, " "), "nvme_core nvme_fabrics nvme_rdma udp_tunnel rdma_rxe"; got != want {
		t.Errorf("load order %q, want %q", got, want)
	}
	if _, err := loadOrder([]string{"siw"}, built); err == nil || !strings.Contains(err.Error(), "siw") {
		t.Errorf("a configured module the build did not make: %v", err)
	}
	fakeModule(t, dir, "drivers/infiniband/sw/siw/siw.ko", "ib_uverbs")
	built["siw"] = filepath.Join(dir, "drivers/infiniband/sw/siw/siw.ko")
	if _, err := loadOrder([]string{"siw"}, built); err == nil || !strings.Contains(err.Error(), "ib_uverbs") {
		t.Errorf("a missing dependency: %v", err)
	}
}

func TestTestModulesFollowConfig(t *testing.T) {
	cfg, err := kconfig.Parse("x", strings.NewReader("CONFIG_RDMA_RXE=m\nCONFIG_RDMA_SIW=y\nCONFIG_NVME_RDMA=m\nCONFIG_NVME_TARGET_RDMA=m\nCONFIG_NVME_CORE=m\nCONFIG_NVME_TARGET=y\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(testModules(cfg), " ")
	for _, want := range []string{"rdma_rxe", "nvme_rdma", "nvmet_rdma", "nvme_core"} {
		if !strings.Contains(got, want) {
			t.Errorf("test modules %q lack %s", got, want)
		}
	}
	for _, not := range []string{"siw", "nvmet "} {
		if strings.Contains(got+" ", not) {
			t.Errorf("test modules %q hold built-in %s", got, not)
		}
	}
}

// fakeModulesFolder is a build folder after a complete build: two
// modules (one with 6.2's .mod, one with 5.10's: objects on the first
// line, undefined symbols on the second), an image newer than its
// configuration.
func fakeModulesFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	w := func(p, s string, age time.Duration) {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte(s), 0o644)
		at := time.Now().Add(-age)
		os.Chtimes(full, at, at)
	}
	w(".config", "CONFIG_MODULES=y\n", time.Hour)
	w("include/config/auto.conf", "CONFIG_MODULES=y\n", time.Hour)
	w("vmlinux.o", "", time.Minute)
	w("arch/x86/boot/bzImage", "", time.Minute)
	w("modules.order", "drivers/nvme/host/nvme-rdma.o\nkernel/drivers/infiniband/sw/rxe/rdma_rxe.ko\n", time.Minute)
	w("drivers/nvme/host/nvme-rdma.mod", "drivers/nvme/host/rdma.o\n", time.Minute)
	w("drivers/infiniband/sw/rxe/rdma_rxe.mod", "drivers/infiniband/sw/rxe/rxe.o drivers/infiniband/sw/rxe/rxe_verbs.o\nib_register_device ib_dealloc_device\n", time.Minute)
	return dir
}

// TestModulesOnly: a patched build runs `make modules` alone exactly
// when every changed file is a module's C or assembly source and the
// folder's image is current; anything else (a header, built-in code, an
// unknown past, a newer configuration, no image) builds bzImage too.
func TestModulesOnly(t *testing.T) {
	for _, c := range []struct {
		name    string
		changed []string
		unknown bool
		edit    func(dir string)
		want    bool
	}{
		{name: "nvme-rdma source", changed: []string{"drivers/nvme/host/rdma.c"}, want: true},
		{name: "two modules (5.10's .mod)", changed: []string{"drivers/nvme/host/rdma.c", "drivers/infiniband/sw/rxe/rxe_verbs.c"}, want: true},
		{name: "nothing changed", want: true},
		{name: "a header", changed: []string{"drivers/nvme/host/rdma.c", "drivers/nvme/host/nvme.h"}},
		{name: "built-in code", changed: []string{"drivers/infiniband/core/verbs.c"}},
		{name: "a module's symbol name is no object", changed: []string{"ib_register_device"}},
		{name: "interrupted or new folder", changed: []string{"drivers/nvme/host/rdma.c"}, unknown: true},
		{name: "configuration newer than the image", changed: []string{"drivers/nvme/host/rdma.c"},
			edit: func(dir string) { os.Chtimes(filepath.Join(dir, ".config"), time.Now(), time.Now()) }},
		{name: "no image", changed: []string{"drivers/nvme/host/rdma.c"},
			edit: func(dir string) { os.Remove(filepath.Join(dir, "arch/x86/boot/bzImage")) }},
		{name: "no vmlinux.o for modpost", changed: []string{"drivers/nvme/host/rdma.c"},
			edit: func(dir string) { os.Remove(filepath.Join(dir, "vmlinux.o")) }},
		{name: "a listed module without its .mod", changed: []string{"drivers/nvme/host/rdma.c"},
			edit: func(dir string) { os.Remove(filepath.Join(dir, "drivers/infiniband/sw/rxe/rdma_rxe.mod")) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := fakeModulesFolder(t)
			if c.edit != nil {
				c.edit(dir)
			}
			got := modulesOnly(dir, &sources{Complete: true, changed: c.changed, unknown: c.unknown})
			if (got != nil) != c.want {
				t.Errorf("modules only: %v, want %v", got != nil, c.want)
			}
			if got != nil && (!got["drivers/nvme/host/rdma.o"] || !got["drivers/infiniband/sw/rxe/rxe_verbs.o"] || got["ib_register_device"]) {
				t.Errorf("module objects %v", got)
			}
		})
	}
}

// TestSyncSourcesNamesChanges: what the folder compiled is known from its
// record; the changed paths are those whose content differs from it,
// and unrecorded paths a series names whose content is not pristine (a
// patch that does not apply leaves its file pristine: not a change).
func TestSyncSourcesNamesChanges(t *testing.T) {
	src, pristine, dir := t.TempDir(), t.TempDir(), t.TempDir()
	w := func(root, p, s string) {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
		os.WriteFile(filepath.Join(root, p), []byte(s), 0o644)
	}
	for _, root := range []string{src, pristine} {
		w(root, "a.c", "int a;\n")
		w(root, "b.h", "int b;\n")
		w(root, "c.c", "int c;\n")
		w(root, "d.c", "int d;\n")
	}
	rec, err := syncSources(src, pristine, dir, []string{"a.c", "b.h"}, nil)
	if err != nil || !rec.unknown {
		t.Fatalf("a new folder: %+v, %v", rec, err)
	}
	rec.Complete = true
	writeRecord(dir, rec)
	w(src, "a.c", "int a = 1;\n")
	w(src, "d.c", "int d = 1;\n")
	rec, err = syncSources(src, pristine, dir, []string{"a.c", "b.h", "c.c", "d.c", "e.c"}, nil)
	if got := strings.Join(rec.changed, " "); err != nil || rec.unknown || got != "a.c d.c" {
		t.Errorf("changed %q (unknown %v), want a.c and d.c: %v", got, rec.unknown, err)
	}
}

// Top Makefiles' single-target module rules, written after the shapes
// of kbuild's: one that runs modpost then the final link (6.1 on), one
// that stops after modpost (5.10), and one whose final link is another
// rule's.
const (
	singleModulesLinking = "single_modules: $(single-no-ko) modules_prepare\n" +
		"\t$(Q){ $(foreach m, $(single-ko), echo $(m:%.ko=%.o);) } > modules.order\n" +
		"\t$(Q)$(MAKE) -f $(srctree)/scripts/Makefile.modpost\n" +
		"ifneq ($(KBUILD_MODPOST_NOFINAL),1)\n" +
		"\t$(Q)$(MAKE) -f $(srctree)/scripts/Makefile.modfinal\n" +
		"endif\n" +
		"\t$(Q)rm -f modules.order\n\n"
	singleModpostOnly = "single_modpost: $(single-no-ko) modules_prepare\n" +
		"\t$(Q){ $(foreach m, $(single-ko), echo $(extmod-prefix)$m;) } > $(MODORDER)\n" +
		"\t$(Q)$(MAKE) -f $(srctree)/scripts/Makefile.modpost\n" +
		"\t$(Q)rm -f $(MODORDER)\n\n"
	singleModulesNoLink = "single_modules: $(single-no-ko) modules_prepare\n" +
		"\t$(Q)$(MAKE) -f $(srctree)/scripts/Makefile.modpost\n\n" +
		"modules: modpost\n\t$(Q)$(MAKE) -f $(srctree)/scripts/Makefile.modfinal\n"
)

// TestModuleGoals: module goals replace `make modules` only where the
// kernel's single-target rule links what modpost wrote, the
// configuration has no module versions or module BTF, and modules.order
// names modules by path; the goals are every listed module as a .ko, and
// restore puts the folder's list back.
func TestModuleGoals(t *testing.T) {
	cfg := func(s string) *kconfig.Config {
		c, err := kconfig.Parse("config", strings.NewReader("CONFIG_MODULES=y\n"+s))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, c := range []struct {
		name, makefile, order, config string
		want                          []string
	}{
		{name: "6.2 on: objects", makefile: "all:\n\n" + singleModulesLinking, order: "lib/libcrc32c.o\ndrivers/nvme/host/nvme-rdma.o\n",
			want: []string{"lib/libcrc32c.ko", "drivers/nvme/host/nvme-rdma.ko"}},
		{name: "6.1: modules", makefile: singleModulesLinking, order: "drivers/nvme/host/nvme-rdma.ko\n", want: []string{"drivers/nvme/host/nvme-rdma.ko"}},
		{name: "5.10: modpost only", makefile: "x:\n\n" + singleModpostOnly, order: "kernel/drivers/nvme/host/nvme-rdma.ko\n"},
		{name: "final link in another rule", makefile: "x:\n" + singleModulesNoLink, order: "drivers/nvme/host/nvme-rdma.o\n"},
		{name: "kernel/ prefix", makefile: "x:\n" + singleModulesLinking, order: "kernel/drivers/nvme/host/nvme-rdma.ko\n"},
		{name: "no module", makefile: "x:\n" + singleModulesLinking, order: "\n"},
		{name: "module versions", makefile: "x:\n" + singleModulesLinking, order: "drivers/nvme/host/nvme-rdma.o\n", config: "CONFIG_MODVERSIONS=y\n"},
		{name: "module BTF", makefile: "x:\n" + singleModulesLinking, order: "drivers/nvme/host/nvme-rdma.o\n", config: "CONFIG_DEBUG_INFO_BTF_MODULES=y\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, dir := t.TempDir(), t.TempDir()
			os.WriteFile(filepath.Join(src, "Makefile"), []byte(c.makefile), 0o644)
			order := filepath.Join(dir, "modules.order")
			os.WriteFile(order, []byte(c.order), 0o644)
			g := moduleGoals(src, dir, cfg(c.config))
			if c.want == nil {
				if g != nil {
					t.Fatalf("goals %v, want make modules", g.targets)
				}
				return
			}
			if g == nil || strings.Join(g.targets, " ") != strings.Join(c.want, " ") {
				t.Fatalf("goals %+v, want %v", g, c.want)
			}
			os.WriteFile(order, []byte("drivers/nvme/host/nvme-rdma.o\nlib/libcrc32c.o\n"), 0o644) // kbuild's, sorted
			os.Remove(order)
			if err := g.restore(); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(order); string(b) != c.order {
				t.Errorf("modules.order restored as %q, want %q", b, c.order)
			}
		})
	}
	if moduleGoals(t.TempDir(), t.TempDir(), cfg("")) != nil {
		t.Error("goals without a top Makefile or modules.order")
	}
}

// TestCodeHashIgnoresTheFolder: the same source compiled with debug info
// in two folders and linked with a build ID (as kbuild links a module)
// makes two files that differ, stripped too (the build ID is a hash over
// the debug info, which names the folder), but one code hash; a change of
// the code changes it. So a module compiled again in the patched folder
// from the baseline's source is not "rebuilt".
func TestCodeHashIgnoresTheFolder(t *testing.T) {
	for _, tool := range []string{"gcc", "ld", "strip"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Unavailable(t, tool+" not installed")
		}
	}
	src := "int answer(int x) { return x * 42; }\n"
	module := func(code string) string {
		t.Helper()
		dir := t.TempDir() // the folder the object is compiled in
		os.WriteFile(filepath.Join(dir, "m.c"), []byte(code), 0o644)
		for _, args := range [][]string{{"gcc", "-g", "-O2", "-c", "-o", "m.o", "m.c"}, {"ld", "-r", "--build-id=sha1", "-o", "m.ko", "m.o"}} {
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", args, err, out)
			}
		}
		return filepath.Join(dir, "m.ko")
	}
	stripped := func(ko string) []byte {
		t.Helper()
		out := ko + ".stripped"
		if b, err := exec.Command("strip", "--strip-debug", "-o", out, ko).CombinedOutput(); err != nil {
			t.Fatalf("strip: %v\n%s", err, b)
		}
		b, _ := os.ReadFile(out)
		return b
	}
	a, b, c := module(src), module(src), module(strings.Replace(src, "42", "43", 1))
	sa, sb := stripped(a), stripped(b)
	if string(sa) == string(sb) {
		t.Fatal("the same source compiled in two folders made one stripped module: the test shows nothing (the build ID no longer depends on the folder)")
	}
	ha, err := strippedCodeHash(context.Background(), a, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	hb, _ := codeHash(sb)
	hc, _ := strippedCodeHash(context.Background(), c, t.TempDir())
	if ha != hb {
		t.Errorf("the same code compiled in two folders: code hashes %.12s and %.12s", ha, hb)
	}
	if hc == ha {
		t.Error("another code, the same code hash")
	}
	if _, err := codeHash([]byte("not an ELF file")); err == nil {
		t.Error("a file that is no ELF object hashed")
	}
}
