package distro

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/debian"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/kconfig"
	"github.com/patchctl/patchctl/internal/tree"
)

// Install is Debian's binary kernel extracted into the cache.
type Install struct {
	Root    string // the packages' files, as under / on a Debian system
	Release string
	Kernel  *tree.Kernel
}

// Vmlinuz is the kernel image.
func (in *Install) Vmlinuz() string { return filepath.Join(in.Root, "boot", "vmlinuz-"+in.Release) }

// ConfigPath is the binary kernel's configuration.
func (in *Install) ConfigPath() string { return filepath.Join(in.Root, "boot", "config-"+in.Release) }

// ModulesDir holds the binary kernel's modules.
func (in *Install) ModulesDir() string {
	return filepath.Join(in.Root, "lib", "modules", in.Release, "kernel")
}

// Headers is the folder modules build against (make -C).
func (in *Install) Headers() string {
	return filepath.Join(in.Root, "usr", "src", "linux-headers-"+in.Release)
}

// Binary returns k's pinned binary kernel, refusing a kernel without one
// and one whose Debian version is not the source's: modules rebuilt from
// one source do not test another's binary kernel.
func Binary(k *tree.Kernel) (*debian.Binary, error) {
	if k.Debian == nil || k.Debian.Binary == nil {
		return nil, fmt.Errorf("kernel %s pins no Debian binary kernel (debian.binary in series/kernels.yaml), which --kernel-from distro needs: %w", k.Name, errs.ErrInput)
	}
	b := k.Debian.Binary
	if b.Version != k.Debian.Version {
		return nil, fmt.Errorf("kernel %s: the binary kernel is Debian version %s but the pinned source %s is %s: modules rebuilt from the source would not be the binary kernel's; pin both at the same version in series/kernels.yaml: %w",
			k.Name, b.Version, k.Debian.Package, k.Debian.Version, errs.ErrInput)
	}
	return b, nil
}

// Dir is where k's binary kernel is extracted.
func Dir(c *tree.Cache, k *tree.Kernel, b *debian.Binary) string {
	return filepath.Join(c.Dir, "distro", k.Name, fsutil.Hash([]byte(b.Key()))[:12])
}

// Prepare fetches and extracts k's binary kernel into the cache once (a
// prepared one is reused), relocating the headers to the extracted copy.
func Prepare(ctx context.Context, c *tree.Cache, k *tree.Kernel) (*Install, error) {
	b, err := Binary(k)
	if err != nil {
		return nil, err
	}
	dir := Dir(c, k, b)
	in := &Install{Root: filepath.Join(dir, "root"), Release: b.Release, Kernel: k}
	marker := filepath.Join(dir, "installed")
	if got, err := os.ReadFile(marker); err == nil && strings.TrimSpace(string(got)) == b.Key() {
		return in, nil
	}
	unlock, err := c.Lock(ctx, "distro-"+k.Name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if got, err := os.ReadFile(marker); err == nil && strings.TrimSpace(string(got)) == b.Key() {
		return in, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(dir, ".root.tmp-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for _, p := range b.Packages() {
		deb, err := c.Debian().FetchBinary(ctx, k.Name, k.Debian.Suite, p, b.Version)
		if err != nil {
			return nil, fmt.Errorf("distro kernel %s: %w", k.Name, err)
		}
		c.Progress.Start("extract " + p.Package)
		if err := (&command.Cmd{Name: "dpkg-deb", Args: []string{"-x", deb, tmp}}).Run(ctx); err != nil {
			return nil, fmt.Errorf("extracting %s: %w: %w", filepath.Base(deb), err, errs.ErrEnv)
		}
		c.Progress.Done("%s", filepath.Base(deb))
	}
	probe := &Install{Root: tmp, Release: b.Release}
	for _, p := range []string{probe.Vmlinuz(), probe.ConfigPath(), probe.ModulesDir(), filepath.Join(probe.Headers(), "Makefile")} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("the packages of %s hold no %s: check release in series/kernels.yaml (uname -r of the image): %w", k.Name, strings.TrimPrefix(p, tmp), errs.ErrInput)
		}
	}
	os.Remove(marker)
	if err := os.RemoveAll(in.Root); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, in.Root); err != nil {
		return nil, err
	}
	if err := Relocate(in.Root, in.Headers()); err != nil {
		return nil, err
	}
	if err := fsutil.WriteFile(marker, []byte(b.Key()+"\n"), 0o644); err != nil {
		return nil, err
	}
	return in, nil
}

var absInclude = regexp.MustCompile(`(?m)^(\s*-?include\s+)(/usr/(src|lib)/\S+)`)

// Relocate points the headers' Makefile, which includes the -common
// headers by an absolute /usr/src path, at the copy under root. The other
// links (scripts and tools into linux-kbuild) are relative and hold.
func Relocate(root, headers string) error {
	mk := filepath.Join(headers, "Makefile")
	b, err := os.ReadFile(mk)
	if err != nil {
		return fmt.Errorf("relocating the headers: %w", err)
	}
	out := absInclude.ReplaceAllStringFunc(string(b), func(s string) string {
		m := absInclude.FindStringSubmatch(s)
		if strings.HasPrefix(m[2], root+"/") {
			return s
		}
		return m[1] + filepath.Join(root, m[2])
	})
	return fsutil.WriteFile(mk, []byte(out), 0o644)
}

// Config is the binary kernel's configuration.
func (in *Install) Config() (*kconfig.Config, error) {
	cfg, err := kconfig.Load(in.ConfigPath())
	if err != nil {
		return nil, fmt.Errorf("reading the distro config: %w", err)
	}
	return cfg, nil
}

// Module returns the uncompressed copy of a distro module (decompressed
// once into the cache) and its modinfo.
func (in *Install) Module(ctx context.Context, ix Index, name string) (string, Modinfo, error) {
	src, ok := ix[name]
	if !ok {
		return "", nil, fmt.Errorf("the distro kernel %s has no module %s", in.Release, name)
	}
	dst := filepath.Join(filepath.Dir(in.Root), "ko", name+".ko")
	if mi, err := ReadModinfo(dst); err == nil {
		return dst, mi, nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", nil, err
	}
	if err := Decompress(ctx, src, dst); err != nil {
		return "", nil, err
	}
	mi, err := ReadModinfo(dst)
	return dst, mi, err
}
