package build

import (
	"bufio"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/kconfig"
	"github.com/patchctl/patchctl/internal/run"
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
	md.ModuleSHA256 = map[string]string{}
	for _, ko := range order {
		dst := filepath.Join(dir, filepath.Base(ko))
		if err := run.Command("strip", "--strip-debug", "-o", dst, ko).Run(ctx); err != nil {
			return fmt.Errorf("copying module %s into the image: %w", ko, err)
		}
		sum, err := fsutil.HashFile(dst)
		if err != nil {
			return err
		}
		name := modName(ko)
		md.Modules = append(md.Modules, dst)
		md.ModuleSHA256[name] = sum
		if base == "" {
			continue
		}
		rel, err := filepath.Rel(obj, ko)
		if err != nil {
			return err
		}
		// Compared stripped: the debug info names the folder it was
		// compiled in.
		if was, err := strippedHash(ctx, filepath.Join(base, rel), dir); err != nil || was != sum {
			md.Rebuilt = append(md.Rebuilt, name)
		}
	}
	return nil
}

// strippedHash is the sha256 of ko without its debug info.
func strippedHash(ctx context.Context, ko, tmpDir string) (string, error) {
	f, err := os.CreateTemp(tmpDir, ".strip-*")
	if err != nil {
		return "", err
	}
	f.Close()
	defer os.Remove(f.Name())
	if err := run.Command("strip", "--strip-debug", "-o", f.Name(), ko).Run(ctx); err != nil {
		return "", err
	}
	return fsutil.HashFile(f.Name())
}
