package build

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/kconfig"
)

// The code under test is built as modules where the fragments say =m
// (kconfig/rdma-loopback.config): an edit of rxe, siw, nvme-rdma or
// nvmet-rdma recompiles its objects and relinks its .ko, not vmlinux.
// The image carries the modules the boot test loads (the test's and what
// they depend on, in load order) under modules/ in its snapshot, each
// hashed in the record; the guest agent loads them before the tests and
// their kprobes, as for a distro kernel.

// testModules are the modules the boot test needs when the
// configuration builds them as modules: every transport's provider, the
// NVMe-oF host and target, and what a kernel with modules must load by
// hand (guestconf.ModuleConfig).
func testModules(cfg *kconfig.Config) []string {
	var transports []string
	for t := range guestconf.TransportConfig {
		transports = append(transports, t)
	}
	sort.Strings(transports)
	var out []string
	seen := map[string]bool{}
	for _, s := range guestconf.ModuleConfig(transports) {
		n := guestconf.ConfigModules[s]
		if n == "" || seen[n] || cfg.Value(s) != "m" {
			continue
		}
		seen[n] = true
		out = append(out, n)
	}
	return out
}

// modName is the kernel's name of a module file: nvme-rdma.ko -> nvme_rdma.
func modName(path string) string {
	return strings.ReplaceAll(strings.TrimSuffix(filepath.Base(path), ".ko"), "-", "_")
}

// builtModules maps each module that modules.order lists in the build
// folder dir to its .ko file.
func builtModules(dir string) (map[string]string, error) {
	f, err := os.Open(filepath.Join(dir, "modules.order"))
	if err != nil {
		return nil, fmt.Errorf("the build's module list: %w", err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" {
			continue
		}
		// 6.2 and later list objects (.o), earlier kernels modules (.ko).
		l = strings.TrimPrefix(strings.TrimSuffix(strings.TrimSuffix(l, ".o"), ".ko"), "kernel/")
		ko := filepath.Join(dir, l+".ko")
		out[modName(ko)] = ko
	}
	return out, sc.Err()
}

// moduleDepends reads the depends= field of a module's .modinfo section.
func moduleDepends(ko string) ([]string, error) {
	f, err := elf.Open(ko)
	if err != nil {
		return nil, fmt.Errorf("reading module %s: %w", ko, err)
	}
	defer f.Close()
	sec := f.Section(".modinfo")
	if sec == nil {
		return nil, fmt.Errorf("module %s has no .modinfo section", ko)
	}
	b, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("reading module %s: %w", ko, err)
	}
	for _, kv := range strings.Split(string(b), "\x00") {
		if v, ok := strings.CutPrefix(kv, "depends="); ok {
			var deps []string
			for _, d := range strings.Split(v, ",") {
				if d = strings.TrimSpace(d); d != "" {
					deps = append(deps, strings.ReplaceAll(d, "-", "_"))
				}
			}
			return deps, nil
		}
	}
	return nil, nil
}

// loadOrder is roots and every module they depend on, each after its
// dependencies.
func loadOrder(roots []string, built map[string]string) ([]string, error) {
	var out []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(n string, from []string) error
	visit = func(n string, from []string) error {
		switch state[n] {
		case 2:
			return nil
		case 1:
			return fmt.Errorf("module dependency cycle: %s -> %s", strings.Join(from, " -> "), n)
		}
		ko, ok := built[n]
		if !ok {
			if len(from) == 0 {
				return fmt.Errorf("the configuration builds %s as a module but the build made no %s.ko (see modules.order)", n, n)
			}
			return fmt.Errorf("module %s needs %s, which the build did not make", from[len(from)-1], n)
		}
		state[n] = 1
		deps, err := moduleDepends(ko)
		if err != nil {
			return err
		}
		for _, d := range deps {
			if err := visit(d, append(from, n)); err != nil {
				return err
			}
		}
		state[n] = 2
		out = append(out, ko)
		return nil
	}
	for _, r := range roots {
		if err := visit(r, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// snapshotModules copies the boot test's modules from the build folder
// obj into the snapshot (modules/, debug info stripped: the host reads
// layouts from the build folder's objects), records them in md in load
// order with their hashes, and names the ones whose .ko differs from the
// baseline folder's (base; "" when obj is the baseline's).
func snapshotModules(ctx context.Context, obj, base string, cfg *kconfig.Config, md *Metadata) error {
	roots := testModules(cfg)
	if len(roots) == 0 {
		return nil
	}
	built, err := builtModules(obj)
	if err != nil {
		return err
	}
	order, err := loadOrder(roots, built)
	if err != nil {
		return err
	}
	dir := filepath.Join(md.VariantDir, "modules")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Each module is stripped into the image (and, for patched, the
	// baseline's again to compare by code) by a strip of its own, one
	// per core at a time (two at least), the results kept in load order.
	out := make([]moduleCopy, len(order))
	sem := make(chan struct{}, max(2, runtime.NumCPU()))
	var wg sync.WaitGroup
	for i, ko := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = copyModule(ctx, obj, base, dir, ko)
		}()
	}
	wg.Wait()
	md.ModuleSHA256 = map[string]string{}
	for i, ko := range order {
		c := out[i]
		if c.err != nil {
			return c.err
		}
		name := modName(ko)
		md.Modules = append(md.Modules, c.dst)
		md.ModuleSHA256[name] = c.sum
		if c.rebuilt {
			md.Rebuilt = append(md.Rebuilt, name)
		}
	}
	return nil
}

// moduleCopy is a module's copy in the image: its path, its sha256 and
// whether its code differs from the baseline's.
type moduleCopy struct {
	dst, sum string
	rebuilt  bool
	err      error
}

// copyModule strips the module ko of the folder obj into dir (the
// image's copy) and hashes it; with base (the baseline's folder, for a
// patched build) it says whether the module's code differs from the
// baseline's.
func copyModule(ctx context.Context, obj, base, dir, ko string) (c moduleCopy) {
	c.dst = filepath.Join(dir, filepath.Base(ko))
	if err := command.Command("strip", "--strip-debug", "-o", c.dst, ko).Run(ctx); err != nil {
		c.err = fmt.Errorf("copying module %s into the image: %w", ko, err)
		return c
	}
	if c.sum, c.err = fsutil.HashFile(c.dst); c.err != nil || base == "" {
		return c
	}
	rel, err := filepath.Rel(obj, ko)
	if err != nil {
		c.err = err
		return c
	}
	// Compared by code: stripped, and without the build ID (one that
	// cannot be read counts as rebuilt).
	now, nerr := codeHashFile(c.dst)
	was, werr := strippedCodeHash(ctx, filepath.Join(base, rel), dir)
	c.rebuilt = nerr != nil || werr != nil || was != now
	return c
}

// strippedCodeHash is codeHash of ko without its debug info (strip
// --strip-debug, as the image's copies are made).
func strippedCodeHash(ctx context.Context, ko, tmpDir string) (string, error) {
	f, err := os.CreateTemp(tmpDir, ".strip-*")
	if err != nil {
		return "", err
	}
	f.Close()
	defer os.Remove(f.Name())
	if err := command.Command("strip", "--strip-debug", "-o", f.Name(), ko).Run(ctx); err != nil {
		return "", err
	}
	return codeHashFile(f.Name())
}

// codeHashFile is codeHash of the file at path.
func codeHashFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return codeHash(b)
}

// codeHash is the sha256 of a module stripped of its debug info, with
// its build ID zeroed: what the module is, whatever folder compiled it.
// The debug info a module is linked with names the folder its objects
// were compiled in, and the linker's build ID is a hash over it, so the
// same source compiled again in the patched folder (after a series that
// changed it and was taken back) links a module that differs from the
// baseline's in the build ID alone: not a rebuilt module.
func codeHash(b []byte) (string, error) {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return "", fmt.Errorf("reading a module: %w", err)
	}
	defer f.Close()
	c := bytes.Clone(b)
	if s := f.Section(".note.gnu.build-id"); s != nil && s.Type != elf.SHT_NOBITS {
		if end := s.Offset + s.Size; s.Offset <= end && end <= uint64(len(c)) {
			clear(c[s.Offset:end])
		}
	}
	return fsutil.Hash(c), nil
}

// modulesOnly returns the objects of the modules built in the folder dir
// when a patched build there may run `make modules` alone, nil when it
// must build bzImage too: the folder's source record knows what it
// compiled (rec.unknown false), each path whose content changed since is
// a C or assembly file whose object is part of a module (the modules'
// .mod files, as modules.order lists them), and the folder holds a
// complete image of its last build with the configuration it has now
// (bzImage newer than .config and include/config/auto.conf; vmlinux.o,
// which modpost reads). Built-in code then did not change: vmlinux and
// bzImage are up to date, and make's walk of every built-in object (most
// of a no-op build) is skipped. Without CONFIG_MODVERSIONS or
// DEBUG_INFO_BTF_MODULES (which make kbuild build vmlinux for modules
// anyway), `make modules` compiles module objects only, on every pinned
// kernel (KBUILD_BUILTIN is empty for that goal alone).
func modulesOnly(dir string, rec *sources) map[string]bool {
	if rec == nil || rec.unknown {
		return nil
	}
	img, err := os.Stat(filepath.Join(dir, "arch/x86/boot/bzImage"))
	if err != nil {
		return nil
	}
	for _, f := range []string{".config", "include/config/auto.conf", "vmlinux.o"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil || f != "vmlinux.o" && st.ModTime().After(img.ModTime()) {
			return nil
		}
	}
	members, err := moduleMembers(dir)
	if err != nil {
		return nil
	}
	for _, p := range rec.changed {
		ext := filepath.Ext(p)
		if ext != ".c" && ext != ".S" || !members[strings.TrimSuffix(p, ext)+".o"] {
			return nil
		}
	}
	return members
}

// moduleMembers are the objects (paths relative to the build folder) of
// every module modules.order lists in dir, read from each module's .mod
// file: one object a line from 5.13 on, the objects on the first line
// and the undefined symbols on the second before (no symbol ends in .o).
func moduleMembers(dir string) (map[string]bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, "modules.order"))
	if err != nil {
		return nil, fmt.Errorf("the build's module list: %w", err)
	}
	members := map[string]bool{}
	for _, line := range strings.Fields(string(b)) {
		m := strings.TrimPrefix(line, "kernel/")
		m = strings.TrimSuffix(strings.TrimSuffix(m, ".ko"), ".o")
		mod, err := os.ReadFile(filepath.Join(dir, m+".mod"))
		if err != nil {
			return nil, fmt.Errorf("the objects of module %s: %w", m, err)
		}
		for _, o := range strings.Fields(string(mod)) {
			if strings.HasSuffix(o, ".o") {
				members[o] = true
			}
		}
	}
	return members, nil
}

// moduleGoalSet is a modules-only build's make goals, every module of
// the folder's modules.order as a .ko, and the list itself, which
// kbuild replaces for such a build and restore puts back.
type moduleGoalSet struct {
	targets []string
	order   string // modules.order's path
	content []byte
}

// moduleGoals returns the goals that build exactly what `make modules`
// builds in the folder dir when only module sources changed, nil when
// `make modules` must run. `make a.ko b.ko` (kbuild's single targets,
// the top Makefile's single_modules rule) compiles the goals' objects,
// descending only into their folders, then runs modpost over the goals
// and vmlinux.o and the final link of each (scripts/Makefile.modpost,
// scripts/Makefile.modfinal), as `make modules` does over modules.order
// after a walk of every folder of the tree (most of a build with one
// changed file). With every module of modules.order a goal, modpost
// sees the same modules and exports, so each .ko is the same, byte for
// byte (TestModuleGoalsMakeWhatMakeModulesMakes); Module.symvers holds
// the same lines in the goals' order. It needs:
//   - a top Makefile whose single_modules rule runs both modpost and
//     the final link (6.1 through 7.3; 5.10's single_modpost stops
//     after modpost, and its modules.order names kernel/...),
//   - no CONFIG_MODVERSIONS or DEBUG_INFO_BTF_MODULES (they make kbuild
//     read built-in objects or vmlinux for modules),
//   - a modules.order that lists modules by path (.o or .ko).
func moduleGoals(src, dir string, cfg *kconfig.Config) *moduleGoalSet {
	if cfg.Value("MODVERSIONS") == "y" || cfg.Value("DEBUG_INFO_BTF_MODULES") == "y" {
		return nil
	}
	mk, err := os.ReadFile(filepath.Join(src, "Makefile"))
	if err != nil || !singleModulesLinks(string(mk)) {
		return nil
	}
	order := filepath.Join(dir, "modules.order")
	b, err := os.ReadFile(order)
	if err != nil {
		return nil
	}
	g := &moduleGoalSet{order: order, content: b}
	for _, l := range strings.Fields(string(b)) {
		if strings.HasPrefix(l, "kernel/") || strings.HasPrefix(l, "/") || strings.Contains(l, "..") {
			return nil
		}
		switch {
		case strings.HasSuffix(l, ".ko"):
			g.targets = append(g.targets, l)
		case strings.HasSuffix(l, ".o"):
			g.targets = append(g.targets, strings.TrimSuffix(l, ".o")+".ko")
		default:
			return nil
		}
	}
	if len(g.targets) == 0 {
		return nil
	}
	return g
}

// singleModulesLinks says whether a kernel's top Makefile has the rule
// single_modules whose recipe runs modpost and then the modules' final
// link (its lines up to the next blank line).
func singleModulesLinks(makefile string) bool {
	_, rule, ok := strings.Cut("\n"+makefile, "\nsingle_modules:")
	if !ok {
		return false
	}
	if i := strings.Index(rule, "\n\n"); i >= 0 {
		rule = rule[:i]
	}
	modpost := strings.Index(rule, "scripts/Makefile.modpost")
	final := strings.Index(rule, "scripts/Makefile.modfinal")
	return modpost >= 0 && final > modpost
}

// restore writes the folder's modules.order back as it was before the
// build (kbuild's single_modules wrote the goals into it and removed
// it); its time is the restore's, as a walk that regenerates it gives.
func (g *moduleGoalSet) restore() error {
	if err := fsutil.WriteFile(g.order, g.content, 0o644); err != nil {
		return fmt.Errorf("restoring the build's module list: %w", err)
	}
	return nil
}
