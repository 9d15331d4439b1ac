package build

import (
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/command/runtest"
	"github.com/patchctl/patchctl/internal/debian"
	"github.com/patchctl/patchctl/internal/kconfig"
	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
)

// outTouching is an apply output whose patches touch the given files,
// each with the given disposition.
func outTouching(disp map[string]string) *apply.Out {
	out := &apply.Out{Plan: &apply.Plan{}, Result: &apply.SeriesResult{}}
	for path, d := range disp {
		out.Plan.Patches = append(out.Plan.Patches, &mailpatch.Patch{Files: []*gitdiff.File{{OldName: path, NewName: path}}})
		out.Result.Results = append(out.Result.Results, &apply.Result{Source: "patches/x/" + filepath.Base(path) + ".txt", Disposition: d})
	}
	return out
}

// TestSelectFragments: the compile-test fragment is on only when a patch
// that applies on the kernel changes a path it is for, and the selection
// says why each fragment is on or off; a kernel fragment is added when
// the kernel has one; explicit fragments are taken as given.
func TestSelectFragments(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "kconfig"), 0o755)
	for n, body := range map[string]string{"base": "CONFIG_A=y\n", "rdma-loopback": "CONFIG_B=y\n",
		"compile-test": "# patchctl-when-touched: drivers/infiniband/hw/mlx5/ drivers/net/ethernet/mellanox/mlx5/\nCONFIG_MLX5_CORE=y\n",
		"kernel-9.1":   "CONFIG_MODULES=y\n"} {
		os.WriteFile(filepath.Join(root, "kconfig", n+".config"), []byte(body), 0o644)
	}
	k91, k99 := &tree.Kernel{Name: "9.1"}, &tree.Kernel{Name: "9.9"}
	cases := []struct {
		name   string
		k      *tree.Kernel
		out    *apply.Out
		names  []string
		want   string
		reason map[string]string // fragment -> part of its reason ("!" prefix: off)
	}{
		{"mlx5 patch does not apply", k99, outTouching(map[string]string{"drivers/nvme/host/rdma.c": "applies", "drivers/infiniband/hw/mlx5/qp.c": "already-upstream"}), nil,
			"base,rdma-loopback", map[string]string{"base": "default", "compile-test": "!no patch that applies on 9.9 changes drivers/infiniband/hw/mlx5/"}},
		{"mlx5 patch applies with fuzz", k99, outTouching(map[string]string{"drivers/infiniband/hw/mlx5/qp.c": "applies-with-fuzz"}), nil,
			"base,rdma-loopback,compile-test", map[string]string{"compile-test": "patches/x/qp.c.txt applies on 9.9 and changes drivers/infiniband/hw/mlx5/qp.c"}},
		{"mlx5 core path", k99, outTouching(map[string]string{"drivers/net/ethernet/mellanox/mlx5/core/en_main.c": "applies"}), nil,
			"base,rdma-loopback,compile-test", nil},
		{"a prefix is a folder, not a string prefix", k99, outTouching(map[string]string{"drivers/infiniband/hw/mlx5x/a.c": "applies"}), nil,
			"base,rdma-loopback", nil},
		{"kernel fragment", k91, outTouching(map[string]string{"drivers/nvme/host/rdma.c": "applies"}), nil,
			"base,rdma-loopback,kernel-9.1", map[string]string{"kernel-9.1": "kconfig/kernel-9.1.config"}},
		{"no apply output", k99, nil, nil, "base,rdma-loopback", nil},
		{"explicit", k91, nil, []string{"base", "compile-test"}, "base,compile-test,kernel-9.1", map[string]string{"compile-test": "requested"}},
	}
	for _, c := range cases {
		sel, err := SelectFragments(root, c.k, c.out, c.names)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := strings.Join(sel.Names, ","); got != c.want {
			t.Errorf("%s: fragments %s, want %s", c.name, got, c.want)
		}
		for _, n := range sel.Names {
			if sel.On[n] == "" {
				t.Errorf("%s: %s is on without a reason", c.name, n)
			}
		}
		for n, want := range c.reason {
			got := sel.On[n]
			if strings.HasPrefix(want, "!") {
				want, got = want[1:], sel.Off[n]
			}
			if !strings.Contains(got, want) {
				t.Errorf("%s: %s's reason %q, want %q", c.name, n, got, want)
			}
		}
	}
}

// TestFragmentsVerifyOnEveryKernel configures every pinned kernel with
// the fragments its builds use (tinyconfig, merge, olddefconfig) and
// verifies each requested symbol, without building: the Kconfig names
// that differ between 5.10 and 7.3 are caught here in about a minute per
// kernel.
func TestFragmentsVerifyOnEveryKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: configures real kernels")
	}
	if err := CheckHostTools(); err != nil {
		testenv.Unavailable(t, err.Error())
	}
	root := testenv.RepoRoot(t)
	lock, err := tree.LoadLock(filepath.Join(root, "series", "kernels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range lock.Names() {
		t.Run(n, func(t *testing.T) {
			final, st, names := configureReal(t, root, n, nil)
			// configure's two Kconfig passes make what the kernel's own
			// tinyconfig, the merge and olddefconfig make in three.
			_, pristine := testenv.KernelIfTested(t, n)
			mk, _ := os.ReadFile(filepath.Join(pristine, "scripts", "kconfig", "Makefile"))
			if _, ok := tinyRecipe(string(mk)); !ok {
				t.Logf("%s: tinyconfig's rules are not the known ones: configure runs make tinyconfig", n)
			} else if ref := referenceConfig(t, root, pristine, names); !maps.Equal(ref.Values, final.Values) {
				for s, v := range ref.Values {
					if final.Values[s] != v {
						t.Errorf("%s: CONFIG_%s=%q, the kernel's tinyconfig flow makes %q", n, s, final.Values[s], v)
					}
				}
				for s, v := range final.Values {
					if _, ok := ref.Values[s]; !ok {
						t.Errorf("%s: CONFIG_%s=%q, which the kernel's tinyconfig flow does not set", n, s, v)
					}
				}
			}
			// The code under test as modules, the rest built in.
			want := map[string]string{"RDMA_RXE": "m", "RDMA_SIW": "m", "NVME_RDMA": "m", "NVME_TARGET_RDMA": "m", "MODULES": "y",
				"INFINIBAND": "y", "NVME_TARGET": "y", "CRYPTO_CRC32": "y", "CRYPTO_CRC32C": "y", "KPROBE_EVENTS": "y",
				// DWARF comes from CFLAGS_MODULE=-g, for module objects only.
				"DEBUG_INFO": "n", "IPV6": "n", "INPUT": "n"}
			for s, v := range want {
				if final.Value(s) != v {
					t.Errorf("%s: CONFIG_%s=%s, want %s", n, s, final.Value(s), v)
				}
			}
			t.Logf("%s: %d requested symbols verified with %v", n, len(st.Requested), names)
		})
	}
}

// referenceConfig is the .config of the kernel's own flow: make
// tinyconfig, the fragments merged (later wins), make olddefconfig.
func referenceConfig(t *testing.T, root, pristine string, names []string) *kconfig.Config {
	t.Helper()
	frags, _, err := fragments(root, names)
	if err != nil {
		t.Fatal(err)
	}
	m := &maker{src: pristine, dir: t.TempDir(), jobs: runtime.NumCPU(), log: io.Discard}
	if _, err := m.make(context.Background(), "tinyconfig"); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(m.dir, ".config")
	base, err := kconfig.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	merged, _ := kconfig.Merge(base, frags...)
	var b strings.Builder
	if err := merged.Write(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.make(context.Background(), "olddefconfig"); err != nil {
		t.Fatal(err)
	}
	ref, err := kconfig.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// TestTinyRecipe: configure takes tinyconfig's two steps apart only for
// the rules it knows (5.10 to 7.3); any other recipe, fragment
// rule or fragment lookup leaves make tinyconfig to the kernel.
func TestTinyRecipe(t *testing.T) {
	known := "PHONY += tinyconfig\ntinyconfig:\n" +
		"\t$(Q)KCONFIG_ALLCONFIG=kernel/configs/tiny-base.config $(MAKE) -f $(srctree)/Makefile allnoconfig\n" +
		"\t$(Q)$(MAKE) -f $(srctree)/Makefile tiny.config\n\n" +
		"configfiles = $(wildcard $(srctree)/kernel/configs/$(1) $(srctree)/arch/$(SRCARCH)/configs/$(1))\n" +
		"all-config-fragments = $(call configfiles,*.config)\n" +
		"config-fragments = $(call configfiles,$@)\n\n" +
		"cmd_merge_fragments = $(srctree)/scripts/kconfig/merge_config.sh -m $(KCONFIG_CONFIG) $(config-fragments)\n\n" +
		"%.config: $(obj)/conf\n" +
		"\t$(if $(config-fragments),, $(error $@ fragment does not exists on this architecture))\n" +
		"\t$(call cmd,merge_fragments)\n" +
		"\t$(Q)$(MAKE) -f $(srctree)/Makefile olddefconfig\n\n"
	old := "configfiles=$(wildcard $(srctree)/kernel/configs/$@ $(srctree)/arch/$(SRCARCH)/configs/$@)\n\n" +
		"%.config: $(obj)/conf\n" +
		"\t$(if $(call configfiles),, $(error No configuration exists for this target on this architecture))\n" +
		"\t$(Q)$(CONFIG_SHELL) $(srctree)/scripts/kconfig/merge_config.sh -m .config $(configfiles)\n" +
		"\t$(Q)$(MAKE) -f $(srctree)/Makefile olddefconfig\n\n" +
		"PHONY += tinyconfig\ntinyconfig:\n" +
		"\t$(Q)$(MAKE) -f $(srctree)/Makefile allnoconfig tiny.config\n\n"
	if base, ok := tinyRecipe(known); !ok || base != "kernel/configs/tiny-base.config" {
		t.Fatalf("the rules of 6.1 to 7.3: %q %v", base, ok)
	}
	if base, ok := tinyRecipe(old); !ok || base != "" {
		t.Fatalf("the rules of 5.10: %q %v", base, ok)
	}
	// 6.1: 6.2's tinyconfig, 5.10's fragment rule.
	tiny6 := "\t$(Q)KCONFIG_ALLCONFIG=kernel/configs/tiny-base.config $(MAKE) -f $(srctree)/Makefile allnoconfig\n\t$(Q)$(MAKE) -f $(srctree)/Makefile tiny.config"
	tiny5 := "\t$(Q)$(MAKE) -f $(srctree)/Makefile allnoconfig tiny.config"
	if base, ok := tinyRecipe(strings.Replace(old, tiny5, tiny6, 1)); !ok || base != "kernel/configs/tiny-base.config" {
		t.Fatalf("the rules of 6.1: %q %v", base, ok)
	}
	if base, ok := tinyRecipe(strings.Replace(known, tiny6, tiny5, 1)); !ok || base != "" {
		t.Fatalf("5.10's tinyconfig with 6.2's fragment rule: %q %v", base, ok)
	}
	for name, c := range map[string]struct{ mk, from, to string }{
		"another base":                     {known, "tiny-base.config", "tiny-base2.config"},
		"a third step":                     {known, "Makefile tiny.config\n", "Makefile tiny.config\n\t$(Q)$(MAKE) -f $(srctree)/Makefile kvm_guest.config\n"},
		"5.10: a third step":               {old, "allnoconfig tiny.config\n", "allnoconfig tiny.config\n\t$(Q)$(MAKE) -f $(srctree)/Makefile kvm_guest.config\n"},
		"fragments merged otherwise":       {known, "merge_config.sh -m", "merge_config.sh -m -r"},
		"5.10: fragments merged otherwise": {old, "merge_config.sh -m", "merge_config.sh -m -r"},
		"no olddefconfig after":            {known, "\t$(Q)$(MAKE) -f $(srctree)/Makefile olddefconfig\n", "\t$(Q)$(MAKE) -f $(srctree)/Makefile alldefconfig\n"},
		"5.10: no olddefconfig after":      {old, "\t$(Q)$(MAKE) -f $(srctree)/Makefile olddefconfig\n", "\t$(Q)$(MAKE) -f $(srctree)/Makefile alldefconfig\n"},
		"fragments found elsewhere":        {known, "$(srctree)/arch/$(SRCARCH)/configs/$(1))", "$(srctree)/arch/$(SRCARCH)/configs/$(1) $(srctree)/configs/$(1))"},
		"5.10: fragments found elsewhere":  {old, "$(srctree)/arch/$(SRCARCH)/configs/$@)", "$(srctree)/arch/$(SRCARCH)/configs/$@ $(srctree)/configs/$@)"},
		"other fragments named":            {known, "config-fragments = $(call configfiles,$@)", "config-fragments = $(call configfiles,$@ extra.config)"},
		"no tinyconfig":                    {known, "tinyconfig:", "tinyconfig-old:"},
	} {
		mk := strings.Replace(c.mk, c.from, c.to, 1)
		if mk == c.mk {
			t.Fatalf("%s: the edit changed nothing", name)
		}
		if _, ok := tinyRecipe(mk); ok {
			t.Errorf("%s: taken for known rules", name)
		}
	}
}

// configureReal configures the pinned kernel n's pristine tree in a
// scratch folder with the fragments names selects (nil: the defaults for
// the series of record) and returns the final .config; a requested
// symbol that did not land fails the test, naming why.
func configureReal(t *testing.T, root, n string, names []string) (*kconfig.Config, *configState, []string) {
	t.Helper()
	k, pristine := testenv.KernelIfTested(t, n)
	out, err := apply.Run(context.Background(), apply.In{Root: root, Kernel: k, Pristine: pristine})
	if err != nil {
		t.Fatal(err)
	}
	sel, err := SelectFragments(root, k, out, names)
	if err != nil {
		t.Fatal(err)
	}
	frags, hash, err := fragments(root, sel.Names)
	if err != nil {
		t.Fatal(err)
	}
	m := &maker{src: pristine, dir: t.TempDir(), jobs: runtime.NumCPU(), progress: nil}
	st, err := configure(context.Background(), m, pristine, frags, hash, sel.Names)
	var ce *ConfigError
	if errors.As(err, &ce) {
		t.Fatalf("%s with %v: %v", n, sel.Names, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	final, err := kconfig.Load(filepath.Join(m.dir, ".config"))
	if err != nil {
		t.Fatal(err)
	}
	autoConfIsFinal(t, m, final)
	return final, st, sel.Names
}

// autoConfIsFinal: after configure, include/config/auto.conf is the
// final .config's (every symbol set, the same values, none more), and the
// build's make takes it as up to date: no third Kconfig pass (syncconfig,
// which would rewrite it).
func autoConfIsFinal(t *testing.T, m *maker, final *kconfig.Config) {
	t.Helper()
	path := filepath.Join(m.dir, "include", "config", "auto.conf")
	auto, err := kconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	// auto.conf writes strings without quotes from 5.18 on.
	unquote := func(v string) string {
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			return strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(v[1 : len(v)-1])
		}
		return v
	}
	set := map[string]string{}
	for s, v := range final.Values {
		if v != "n" {
			set[s] = unquote(v)
		}
	}
	got := map[string]string{}
	for s, v := range auto.Values {
		got[s] = unquote(v)
	}
	if !maps.Equal(set, got) {
		n := 0
		for s, v := range set {
			if got[s] != v && n < 5 {
				t.Errorf("auto.conf has CONFIG_%s=%q, the final .config %q", s, got[s], v)
				n++
			}
		}
		t.Errorf("auto.conf (%d symbols) is not the final .config's (%d set): the build's make would run syncconfig again", len(got), len(set))
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.make(context.Background(), "include/config/auto.conf"); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(path); err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("make include/config/auto.conf rewrote it (%v, was %v; %v): a third Kconfig pass", after.ModTime(), before.ModTime(), err)
	}
}

// TestDebugFragmentLands: the debug fragment on top of the default ones
// verifies (every requested symbol as asked) on the kernels it is meant
// for: KASAN, lockdep, KFENCE and UBSAN really in the .config. tinyconfig
// turns on SLUB_TINY, on which KASAN depends being off: a fragment that
// asked for KASAN without turning it off got KASAN=n (found by running
// try --fragment debug).
func TestDebugFragmentLands(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: configures real kernels")
	}
	if err := CheckHostTools(); err != nil {
		testenv.Unavailable(t, err.Error())
	}
	root := testenv.RepoRoot(t)
	// 6.12 itself: these kernels' own fragments
	for _, n := range []string{"6.12", "7.3"} {
		t.Run(n, func(t *testing.T) {
			final, _, _ := configureReal(t, root, n, []string{"base", "rdma-loopback", "debug"})
			for _, s := range []string{"KASAN", "KASAN_GENERIC", "PROVE_LOCKING", "KFENCE", "UBSAN_BOUNDS"} {
				if final.Value(s) != "y" {
					t.Errorf("%s: CONFIG_%s=%s", n, s, final.Value(s))
				}
			}
		})
	}
}

// TestClaimFolderAfterRepin: a build folder of one kernel source keeps its
// objects; after a re-pin (another source key) it starts empty, so no
// object of the old tree is linked into the new kernel.
func TestClaimFolderAfterRepin(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "b")
	os.MkdirAll(dir, 0o755)
	obj := filepath.Join(dir, "old.o")
	os.WriteFile(obj, []byte("x"), 0o644)
	if err := claimFolder(dir, "debian linux-source-9.9=1", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(obj); err != nil {
		t.Fatal("a folder without a record lost its objects")
	}
	if err := claimFolder(dir, "debian linux-source-9.9=1", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(obj); err != nil {
		t.Fatal("the same source lost its objects")
	}
	if err := claimFolder(dir, "debian linux-source-9.9=2", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(obj); err == nil {
		t.Fatal("an object of the old source survived the re-pin")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".patchctl-kernel")); strings.TrimSpace(string(b)) != "debian linux-source-9.9=2" {
		t.Errorf("record %q", b)
	}
}

// TestRepinChangesBuildKey: a re-pin (new version and sums) changes the
// build stage's key for both variants, so no cached build is reused.
func TestRepinChangesBuildKey(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "kconfig"), 0o755)
	for _, n := range DefaultFragments {
		os.WriteFile(filepath.Join(root, "kconfig", n+".config"), []byte("CONFIG_A=y\n"), 0o644)
	}
	pin := func(v, sum string) *tree.Kernel {
		return &tree.Kernel{Name: "9.9", Debian: &debian.Source{Package: "linux-source-9.9", Suite: "experimental", Version: v,
			DebSHA256: strings.Repeat(sum, 64), Tarball: "usr/src/linux-source-9.9.tar.xz", TarballSHA256: strings.Repeat(sum, 64)}}
	}
	key := func(k *tree.Kernel, variant string) string {
		out := outTouching(map[string]string{"drivers/nvme/host/rdma.c": "applies"})
		out.Kernel = k
		out.Result.Files = map[string][]byte{"drivers/nvme/host/rdma.c": []byte("int y;\n")}
		key, err := Key(Options{Root: root, Kernel: k, Apply: out, Variant: variant})
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	for _, v := range []string{vocab.Baseline, vocab.Patched} {
		a, b := key(pin("9.9~rc1-1~exp1", "a"), v), key(pin("9.9~rc2-1~exp1", "b"), v)
		if a == b {
			t.Errorf("%s: the build key did not change with the pin", v)
		}
		if a != key(pin("9.9~rc1-1~exp1", "a"), v) {
			t.Errorf("%s: the build key is not a function of its inputs", v)
		}
	}
}

// TestConfigureLeavesNoStaleAutoConf, with a make that behaves as
// Kconfig does (each pass writes .config, and include/config/auto.conf
// from it only when auto.conf is missing), through the tree whose
// tinyconfig rules are not the known ones (make tinyconfig, then
// olddefconfig): in a new folder auto.conf ends as the final .config's,
// so the build's make runs no syncconfig; in a folder that had one, it
// is left for the build's syncconfig, which marks what changed.
func TestConfigureLeavesNoStaleAutoConf(t *testing.T) {
	for _, had := range []bool{false, true} {
		src, dir := t.TempDir(), t.TempDir()
		autoConf := filepath.Join(dir, "include", "config", "auto.conf")
		if had {
			os.MkdirAll(filepath.Dir(autoConf), 0o755)
			os.WriteFile(autoConf, []byte("CONFIG_OLD=y\n"), 0o644)
		}
		// pass writes .config (from it, the fragment merged in, when
		// final) and auto.conf when missing.
		pass := func(config string) error {
			if err := os.WriteFile(filepath.Join(dir, ".config"), []byte(config), 0o644); err != nil {
				return err
			}
			if _, err := os.Stat(autoConf); err == nil {
				return nil
			}
			os.MkdirAll(filepath.Dir(autoConf), 0o755)
			var set []string
			for _, l := range strings.Split(config, "\n") {
				if strings.HasPrefix(l, "CONFIG_") {
					set = append(set, l)
				}
			}
			return os.WriteFile(autoConf, []byte(strings.Join(set, "\n")+"\n"), 0o644)
		}
		stub := runtest.Stub(t)
		stub.RegisterFunc(`^make -C .* tinyconfig$`, func(*command.Cmd) error {
			return pass("CONFIG_A=y\n# CONFIG_B is not set\n")
		})
		stub.RegisterFunc(`^make -C .* olddefconfig$`, func(*command.Cmd) error {
			b, err := os.ReadFile(filepath.Join(dir, ".config"))
			if err != nil {
				return err
			}
			return pass(string(b))
		})
		m := &maker{src: src, dir: dir, jobs: 1, runner: stub}
		frag, _ := kconfig.Parse("frag", strings.NewReader("CONFIG_B=y\n"))
		if _, err := configure(context.Background(), m, src, []*kconfig.Config{frag}, "h", []string{"frag"}); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(autoConf)
		if err != nil {
			t.Fatal(err)
		}
		want := "CONFIG_A=y\nCONFIG_B=y\n"
		if had {
			want = "CONFIG_OLD=y\n"
		}
		if string(got) != want {
			t.Errorf("a folder that had an auto.conf %v: auto.conf after configure %q, want %q", had, got, want)
		}
	}
}
