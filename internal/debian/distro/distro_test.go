package distro

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/debian"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/tree"
)

// elfWithSection writes a minimal ELF64 relocatable object holding one
// section of the given name and content (what a .ko's .modinfo is).
func elfWithSection(name string, content []byte) []byte {
	shstr := append([]byte{0}, append([]byte(name), 0)...)
	shstr = append(shstr, []byte(".shstrtab\x00")...)
	const ehsize, shentsize = 64, 64
	dataOff := uint64(ehsize)
	strOff := dataOff + uint64(len(content))
	shOff := strOff + uint64(len(shstr))
	var b bytes.Buffer
	b.Write([]byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0})
	b.Write(make([]byte, 8))
	le := binary.LittleEndian
	w := func(v any) { binary.Write(&b, le, v) }
	w(uint16(1))  // ET_REL
	w(uint16(62)) // EM_X86_64
	w(uint32(1))
	w(uint64(0)) // entry
	w(uint64(0)) // phoff
	w(shOff)
	w(uint32(0))
	w(uint16(ehsize))
	w(uint16(0))
	w(uint16(0))
	w(uint16(shentsize))
	w(uint16(3)) // shnum
	w(uint16(2)) // shstrndx
	b.Write(content)
	b.Write(shstr)
	sh := func(nameOff uint32, typ uint32, off, size uint64) {
		w(nameOff)
		w(typ)
		w(uint64(0))
		w(uint64(0))
		w(off)
		w(size)
		w(uint32(0))
		w(uint32(0))
		w(uint64(1))
		w(uint64(0))
	}
	sh(0, 0, 0, 0)
	sh(1, 1, dataOff, uint64(len(content)))                // PROGBITS
	sh(uint32(2+len(name)), 3, strOff, uint64(len(shstr))) // STRTAB
	return b.Bytes()
}

func TestParseModinfo(t *testing.T) {
	info := "license=GPL\x00depends=ib_core,rdma_cm,nvme-fabrics\x00alias=a\x00alias=b\x00vermagic=6.12.117+deb12-amd64 SMP preempt mod_unload modversions \x00name=nvme_rdma\x00\x00"
	mi, err := ParseModinfo(bytes.NewReader(elfWithSection(".modinfo", []byte(info))))
	if err != nil {
		t.Fatal(err)
	}
	if got := mi.Depends(); !reflect.DeepEqual(got, []string{"ib_core", "rdma_cm", "nvme_fabrics"}) {
		t.Errorf("depends %v", got)
	}
	if mi.Get("name") != "nvme_rdma" || len(mi["alias"]) != 2 || !strings.HasPrefix(mi.Get("vermagic"), "6.12.117+deb12-amd64 SMP") {
		t.Errorf("modinfo %v", mi)
	}
	empty, err := ParseModinfo(bytes.NewReader(elfWithSection(".modinfo", []byte("depends=\x00"))))
	if err != nil || len(empty.Depends()) != 0 {
		t.Errorf("empty depends: %v %v", empty.Depends(), err)
	}
	// Not a module: no .modinfo; not ELF; truncated. Errors, no panic.
	if _, err := ParseModinfo(bytes.NewReader(elfWithSection(".text", []byte{0x90}))); err == nil || !strings.Contains(err.Error(), "no .modinfo") {
		t.Errorf("no .modinfo: %v", err)
	}
	for _, bad := range [][]byte{nil, []byte("not elf"), elfWithSection(".modinfo", []byte(info))[:70]} {
		if _, err := ParseModinfo(bytes.NewReader(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestModuleName(t *testing.T) {
	for in, want := range map[string]string{"kernel/drivers/nvme/host/nvme-rdma.ko.xz": "nvme_rdma", "rdma_rxe.ko": "rdma_rxe",
		"nvme-core": "nvme_core", "/x/crc32_generic.ko.zst": "crc32_generic"} {
		if got := ModuleName(in); got != want {
			t.Errorf("ModuleName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClosure(t *testing.T) {
	deps := map[string][]string{
		"nvme_rdma": {"rdma_cm", "nvme_fabrics", "ib_core", "nvme_core"}, "rdma_cm": {"ib_core", "iw_cm", "ib_cm"},
		"ib_cm": {"ib_core"}, "iw_cm": {"ib_core"}, "ib_core": nil, "nvme_fabrics": {"nvme_core"}, "nvme_core": {"nvme_auth"},
		"nvme_auth": nil, "rdma_rxe": {"ib_uverbs", "ib_core", "ip6_udp_tunnel"}, "ib_uverbs": {"ib_core"}, "ip6_udp_tunnel": nil,
	}
	get := func(n string) ([]string, error) {
		d, ok := deps[n]
		if !ok {
			return nil, errors.New("no module " + n)
		}
		return d, nil
	}
	order, err := Closure([]string{"rdma_rxe", "nvme_rdma"}, get)
	if err != nil {
		t.Fatal(err)
	}
	pos := map[string]int{}
	for i, n := range order {
		if _, dup := pos[n]; dup {
			t.Errorf("%s twice in %v", n, order)
		}
		pos[n] = i
	}
	if len(pos) != len(deps) {
		t.Errorf("order %v misses modules of %v", order, deps)
	}
	for n, ds := range deps {
		for _, d := range ds {
			if pos[d] > pos[n] {
				t.Errorf("%s loads before its dependency %s: %v", n, d, order)
			}
		}
	}
	// A function of the input: the names' order does not matter.
	again, _ := Closure([]string{"nvme_rdma", "rdma_rxe"}, get)
	if !reflect.DeepEqual(order, again) {
		t.Errorf("order depends on the input's order: %v vs %v", order, again)
	}
	deps["ib_core"] = []string{"rdma_cm"}
	if _, err := Closure([]string{"nvme_rdma"}, get); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("cycle: %v", err)
	}
	deps["ib_core"] = []string{"missing_mod"}
	if _, err := Closure([]string{"ib_uverbs"}, get); err == nil || !strings.Contains(err.Error(), "missing_mod") || !strings.Contains(err.Error(), "needed by ib_core") {
		t.Errorf("missing: %v", err)
	}
}

func TestVermagic(t *testing.T) {
	k := "6.12.117+deb12-amd64 SMP preempt mod_unload modversions "
	if VermagicMismatch(k, "6.12.117+deb12-amd64 SMP preempt mod_unload modversions") != "" {
		t.Error("equal vermagic (trailing space) differs")
	}
	for _, m := range []string{"6.12.117 SMP preempt mod_unload modversions", "6.12.117+deb12-amd64 SMP mod_unload modversions", ""} {
		if VermagicMismatch(m, k) == "" {
			t.Errorf("%q matches %q", m, k)
		}
	}
}

type fakeConfig map[string]string

func (c fakeConfig) Value(s string) string {
	if v, ok := c[s]; ok {
		return v
	}
	return "n"
}

// fixtureTree writes kbuild directories of a made-up kernel.
func fixtureTree(t *testing.T) string {
	src := t.TempDir()
	files := map[string]string{
		"drivers/foo/host/Makefile": "ccflags-y += -I$(src)\n\nobj-$(CONFIG_FOO_CORE) += foo-core.o\nobj-$(CONFIG_FOO_NET) += foo-net.o\n" +
			"obj-$(CONFIG_FOO_SINGLE) += single.o\nobj-y += always.o\n\nfoo-core-y += core.o \\\n\tioctl.o\nfoo-core-$(CONFIG_FOO_EXTRA) += extra.o\nfoo-net-y := net.o # the transport\n",
		"drivers/foo/host/core.c": "", "drivers/foo/host/ioctl.c": "", "drivers/foo/host/extra.c": "", "drivers/foo/host/net.c": "",
		"drivers/foo/host/single.c": "", "drivers/foo/host/always.c": "", "drivers/foo/host/foo.h": "", "drivers/foo/host/stray.c": "",
		"drivers/bar/Kbuild": "obj-$(CONFIG_BAR) += bar.o\nbar-objs := a.o b.o\n", "drivers/bar/a.c": "",
		"drivers/builtin/Makefile": "obj-$(CONFIG_BI) += bi.o\n", "drivers/builtin/bi.c": "", "drivers/builtin/bi.h": "",
	}
	for p, body := range files {
		os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(src, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

var fixtureConfig = fakeConfig{"FOO_CORE": "m", "FOO_NET": "m", "FOO_SINGLE": "y", "BAR": "m", "BI": "y"}

func TestPlan(t *testing.T) {
	src := fixtureTree(t)
	mods, err := Plan(src, []string{"drivers/foo/host/ioctl.c", "drivers/foo/host/net.c", "drivers/bar/a.c", "Documentation/x.rst"}, fixtureConfig)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range mods {
		names = append(names, m.Dir+":"+m.Name+":"+m.Symbol)
	}
	want := []string{"drivers/bar:bar:BAR", "drivers/foo/host:foo-core:FOO_CORE", "drivers/foo/host:foo-net:FOO_NET"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("modules %v, want %v", names, want)
	}
	// A local header: every module of its directory that is =m; one that
	// is built in (single.o, always.o) refuses it.
	if _, err := Plan(src, []string{"drivers/foo/host/foo.h"}, fixtureConfig); err == nil || !strings.Contains(err.Error(), "single.o is built in (CONFIG_FOO_SINGLE)") {
		t.Errorf("header next to built-in code: %v", err)
	}
	cfg := fakeConfig{"FOO_CORE": "m", "FOO_NET": "m", "FOO_SINGLE": "m"}
	mk := "ccflags-y += -I$(src)\nobj-$(CONFIG_FOO_CORE) += foo-core.o\nobj-$(CONFIG_FOO_NET) += foo-net.o\nfoo-core-y += core.o\nfoo-net-y := net.o\n"
	os.WriteFile(filepath.Join(src, "drivers/foo/host/Makefile"), []byte(mk), 0o644)
	if mods, err := Plan(src, []string{"drivers/foo/host/foo.h"}, cfg); err != nil || len(mods) != 2 {
		t.Errorf("header: %v %v", mods, err)
	}
}

func TestPlanRefuses(t *testing.T) {
	src := fixtureTree(t)
	for _, c := range []struct {
		file string
		want []string
	}{
		{"drivers/foo/host/single.c", []string{"drivers/foo/host/single.c", "built into the distro kernel (CONFIG_FOO_SINGLE)", "--kernel-from source"}},
		{"drivers/builtin/bi.c", []string{"drivers/builtin/bi.c", "built into the distro kernel (CONFIG_BI)"}},
		{"drivers/foo/host/always.c", []string{"drivers/foo/host/always.c", "built into the distro kernel (obj-y)"}},
		{"drivers/foo/host/extra.c", []string{"drivers/foo/host/extra.c", "only with CONFIG_FOO_EXTRA"}},
		{"drivers/foo/host/stray.c", []string{"drivers/foo/host/stray.c", "builds no stray.o"}},
		{"drivers/foo/host/Makefile", []string{"drivers/foo/host/Makefile", "configuration"}},
		{"drivers/foo/Kconfig", []string{"drivers/foo/Kconfig"}},
		{"include/linux/foo.h", []string{"include/linux/foo.h", "shared header"}},
		{"drivers/none/x.c", []string{"drivers/none/x.c", "not a kbuild directory"}},
		{"drivers/builtin/bi.h", []string{"drivers/builtin/bi.h", "built in"}},
	} {
		_, err := Plan(src, []string{c.file}, fixtureConfig)
		var re *RefusedError
		if !errors.As(err, &re) || re.File != c.file || !errors.Is(err, errs.ErrInput) {
			t.Errorf("%s: error %v, want a refusal naming it", c.file, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", c.file, err, w)
			}
		}
	}
	// Not set at all.
	_, err := Plan(src, []string{"drivers/bar/a.c"}, fakeConfig{})
	if err == nil || !strings.Contains(err.Error(), "CONFIG_BAR is not set") {
		t.Errorf("unset symbol: %v", err)
	}
	// Several refusals: all named, one input error.
	_, err = Plan(src, []string{"drivers/foo/host/single.c", "drivers/builtin/bi.c", "drivers/bar/a.c"}, fixtureConfig)
	if err == nil || !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "single.c") || !strings.Contains(err.Error(), "bi.c") || !strings.Contains(err.Error(), "2 touched files") {
		t.Errorf("two refusals: %v", err)
	}
}

func TestKbuild(t *testing.T) {
	mk := ParseMakefile("# SPDX\nccflags-y += -I$(src)\nobj-$(CONFIG_A) += a.o $(extra-y)\nobj-$(CONFIG_B) += b.o sub/\nobj-y += c.o\n" +
		"extra-$(CONFIG_E) := e.o\n" +
		"a-y += x.o \\\n\ty.o\nb-$(CONFIG_T) += t.o\nCFLAGS_x.o := -I$(src)\n")
	if mk.Objects["a.o"] != "A" || mk.Objects["b.o"] != "B" || mk.Objects["c.o"] != "" || mk.Objects["e.o"] != "A" {
		t.Errorf("objects %v", mk.Objects)
	}
	if !reflect.DeepEqual(mk.Parts["a.o"], []Part{{"x.o", ""}, {"y.o", ""}}) || !reflect.DeepEqual(mk.Parts["b.o"], []Part{{"t.o", "T"}}) {
		t.Errorf("parts %v", mk.Parts)
	}
	if _, ok := mk.Parts["ccflags.o"]; ok {
		t.Errorf("flags taken for a composite: %v", mk.Parts)
	}
	kb := Kbuild(mk, []string{"a.o"}, "/work/drivers/a")
	for _, w := range []string{"ccflags-y += -I$(src)\n", "a-y += x.o  \ty.o\n", "CFLAGS_x.o := -I$(src)\n", "ccflags-y += -I/work/drivers/a\n", "obj-m += a.o\n"} {
		if !strings.Contains(kb, w) {
			t.Errorf("Kbuild lacks %q:\n%s", w, kb)
		}
	}
	for _, bad := range []string{"b.o sub/", "c.o", "CONFIG_A) +="} {
		if strings.Contains(kb, bad) {
			t.Errorf("Kbuild keeps %q:\n%s", bad, kb)
		}
	}
}

func TestRelocate(t *testing.T) {
	root := t.TempDir()
	hdr := filepath.Join(root, "usr/src/linux-headers-9.9-amd64")
	os.MkdirAll(hdr, 0o755)
	mk := filepath.Join(hdr, "Makefile")
	os.WriteFile(mk, []byte("include /usr/src/linux-headers-9.9-common/Makefile\n"), 0o644)
	for i := 0; i < 2; i++ { // idempotent
		if err := Relocate(root, hdr); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(mk)
		if want := "include " + root + "/usr/src/linux-headers-9.9-common/Makefile\n"; string(b) != want {
			t.Errorf("pass %d: %q, want %q", i, b, want)
		}
	}
	if err := Relocate(root, filepath.Join(root, "none")); err == nil {
		t.Error("no Makefile relocated")
	}
}

func lockKernel() *tree.Kernel {
	sum := strings.Repeat("a", 64)
	return &tree.Kernel{Name: "9.9", Debian: &debian.Source{Package: "linux-source-9.9", Version: "9.9.1-1", DebSHA256: sum,
		Binary: &debian.Binary{Version: "9.9.1-1", Release: "9.9.1-amd64", Image: &debian.Package{Package: "linux-image-9.9.1-amd64-unsigned", Arch: "amd64", SHA256: sum},
			Headers: []debian.Package{{Package: "linux-headers-9.9.1-amd64", Arch: "amd64", SHA256: sum}}}}}
}

func TestBinaryVersion(t *testing.T) {
	k := lockKernel()
	if b, err := Binary(k); err != nil || b.Release != "9.9.1-amd64" {
		t.Fatalf("%v %v", b, err)
	}
	k.Debian.Binary.Version = "9.9.2-1"
	_, err := Binary(k)
	if !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "9.9.2-1") || !strings.Contains(err.Error(), "9.9.1-1") {
		t.Errorf("mismatch: %v", err)
	}
	k.Debian.Binary = nil
	if _, err := Binary(k); !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "debian.binary") {
		t.Errorf("no binary: %v", err)
	}
	// The stage key refuses it too, before anything is fetched or built.
	k = lockKernel()
	k.Debian.Binary.Version = "9.9.2-1"
	if _, err := Key(Options{Kernel: k, Apply: &apply.Out{}}); !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "same version") {
		t.Errorf("key of a mismatched kernel: %v", err)
	}
	if _, err := Build(t.Context(), Options{Kernel: k, Apply: &apply.Out{}}); !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "same version") {
		t.Errorf("build of a mismatched kernel: %v", err)
	}
}

// TestModuleBuildPath: with ccache, make names the build folder by one
// fixed path under the cache, a link to the folder, held under the
// kernel's lock (a second build waits until the first is done); without
// ccache (--no-ccache, or none installed) the folder's own path.
func TestModuleBuildPath(t *testing.T) {
	c := &tree.Cache{Dir: t.TempDir()}
	k := &tree.Kernel{Name: "9.9"}
	src := t.TempDir()
	at, ccache, release, err := moduleBuildPath(t.Context(), &Options{Cache: c, Kernel: k, NoCcache: true}, src)
	if err != nil || at != src || ccache {
		t.Fatalf("--no-ccache: %q %v %v", at, ccache, err)
	}
	release()
	if _, err := exec.LookPath("ccache"); err != nil {
		t.Skip("ccache not installed")
	}
	at, ccache, release, err = moduleBuildPath(t.Context(), &Options{Cache: c, Kernel: k}, src)
	if err != nil || !ccache {
		t.Fatalf("with ccache: %q %v %v", at, ccache, err)
	}
	if want := filepath.Join(c.Dir, "build", "9.9", "distro-modules"); at != want {
		t.Errorf("the path is %q, want %q", at, want)
	}
	if target, err := os.Readlink(at); err != nil || target != src {
		t.Errorf("%s links to %q (%v), want %q", at, target, err, src)
	}
	// Held: another build of the kernel's modules waits for it.
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, _, r2, err := moduleBuildPath(ctx, &Options{Cache: c, Kernel: k}, t.TempDir()); err == nil {
		r2()
		t.Error("a second build took the path while the first held it")
	}
	release()
	if _, err := os.Lstat(at); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the link outlived its build: %v", err)
	}
	// A folder at the name (left by something else) is replaced.
	if err := os.MkdirAll(filepath.Join(at, "stale"), 0o755); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	at, _, release, err = moduleBuildPath(t.Context(), &Options{Cache: c, Kernel: k}, other)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if target, _ := os.Readlink(at); target != other {
		t.Errorf("after the first build, the path links to %q, want %q", target, other)
	}
}
