package distro

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/debian"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/progress"
	"github.com/patchctl/patchctl/internal/stagecache"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
)

// LayoutModule is built in both variants for its DWARF (the kprobe
// evidence's offsets): drivers/nvme/host's nvme-rdma.
var LayoutModule = Module{Dir: "drivers/nvme/host", Name: "nvme-rdma", Symbol: "NVME_RDMA"}

// Transports are the ones whose modules a distro build puts in the boot
// set when the distro config has them.
var Transports = vocab.DefaultTransports()

// Options say what to build: the variant of the apply stage's output, on
// the pinned kernel's binary.
type Options struct {
	Cache   *tree.Cache
	Kernel  *tree.Kernel
	Apply   *apply.Out
	Variant string
	Jobs    int
	// NoCcache compiles without ccache even when it is installed.
	NoCcache bool
	Progress *progress.Reporter
}

func (o *Options) normalize() error {
	v, err := build.NormalizeVariant(o.Variant)
	if err != nil {
		return err
	}
	o.Variant = v
	if o.Apply == nil {
		return fmt.Errorf("distro build of %s: no apply stage output", o.Kernel.Name)
	}
	if o.Jobs <= 0 {
		o.Jobs = runtime.NumCPU()
	}
	return nil
}

// Key names what a distro build's output depends on: the source and the
// variant's state of the touched files, the binary packages, the compiler
// and patchctl's code.
func Key(o Options) (string, error) {
	if err := o.normalize(); err != nil {
		return "", err
	}
	b, err := Binary(o.Kernel)
	if err != nil {
		return "", err
	}
	return stagecache.NewKey("distro-build").Code().Add("kernel", o.Kernel.Key()).Add("binary", b.Key()).
		Add("variant", o.Variant).Add("state", o.Apply.State(o.Variant)).Add("compiler", compiler(context.Background())).Sum()
}

// compiler is the compiler Debian's headers name (CC in .kernelvariables).
const compilerName = "x86_64-linux-gnu-gcc-12"

func compiler(ctx context.Context) string {
	out, err := command.Command(compilerName, "--version").Output(ctx)
	if err != nil {
		return ""
	}
	return strings.SplitN(string(out), "\n", 2)[0]
}

// Touched is what the patched variant rebuilds from: the files the
// applied series changes (a patch that does not apply changes nothing).
func Touched(o *apply.Out, variant string) []string {
	if variant != vocab.Patched || o.Result == nil {
		return nil
	}
	return o.Result.Touched()
}

// Build makes the variant's kernel: Debian's image and modules, and for
// patched the touched modules rebuilt; it always builds LayoutModule for
// its DWARF. The metadata has the shape of a source build's.
func Build(ctx context.Context, o Options) (*build.Metadata, error) {
	start := time.Now()
	if err := o.normalize(); err != nil {
		return nil, err
	}
	b, err := Binary(o.Kernel)
	if err != nil {
		return nil, err
	}
	if _, err := command.LookPath(compilerName); err != nil {
		return nil, fmt.Errorf("%s not found: Debian's headers build with it (apt-get install gcc-12): %w", compilerName, errs.ErrEnv)
	}
	pristine, err := o.Cache.Prepare(ctx, o.Kernel)
	if err != nil {
		return nil, err
	}
	in, err := Prepare(ctx, o.Cache, o.Kernel)
	if err != nil {
		return nil, err
	}
	cfg, err := in.Config()
	if err != nil {
		return nil, err
	}
	touched := Touched(o.Apply, o.Variant)
	mods, err := Plan(pristine, touched, cfg)
	if err != nil {
		return nil, fmt.Errorf("the patched %s cannot be tested as modules of Debian's %s: %w", o.Kernel.Name, b.Release, err)
	}
	// The snapshot is written aside and published whole (build.Publish):
	// an image another process named is never rewritten.
	cc := compiler(ctx)
	final := build.StateDir(ImageFolder(o.Cache, o.Kernel, b, cc), o.Variant, o.Apply.State(o.Variant))
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return nil, err
	}
	vdir, err := os.MkdirTemp(filepath.Dir(final), "."+filepath.Base(final)+".tmp-")
	if err != nil {
		return nil, err
	}
	md := &build.Metadata{Kernel: o.Kernel.Name, Variant: o.Variant, Source: o.Kernel.Key(), KernelFrom: vocab.FromDistro,
		KernelRelease: b.Release, Jobs: o.Jobs, Artifacts: map[string]string{}, SHA256: map[string]string{},
		State: o.Apply.State(o.Variant), Compiler: cc, VariantDir: vdir, Log: filepath.Join(vdir, "build.log"),
		ID: build.ImageID(o.Cache.Dir, final), Patches: build.PatchRecords(o.Apply, o.Variant)}
	if o.Variant == vocab.Patched {
		md.Applied = o.Apply.Applied()
	}
	if md.Key, err = Key(o); err != nil {
		os.RemoveAll(vdir)
		return nil, err
	}
	defer os.RemoveAll(vdir) // published by now, or not to be kept
	src := filepath.Join(vdir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return nil, err
	}
	md.BuildDir = src
	logf, err := os.Create(md.Log)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	all := append(append([]Module(nil), mods...), LayoutModule)
	built, err := buildModules(ctx, &o, in, pristine, all, src, logf, md)
	if err != nil {
		return finish(md, final, start, err)
	}
	// The kernel's vermagic, from its own module of the same name; a
	// rebuilt module must carry it or the kernel refuses to load it.
	ix, err := IndexModules(in.ModulesDir())
	if err != nil {
		return finish(md, final, start, err)
	}
	replace := map[string]string{}
	for _, m := range mods {
		name := ModuleName(m.Name)
		p := built[name]
		mi, err := ReadModinfo(p)
		if err != nil {
			return finish(md, final, start, err)
		}
		_, dmi, err := in.Module(ctx, ix, name)
		if err != nil {
			return finish(md, final, start, fmt.Errorf("%w: a rebuilt module must replace one of the distro kernel's", err))
		}
		if why := VermagicMismatch(mi.Get("vermagic"), dmi.Get("vermagic")); why != "" {
			return finish(md, final, start, fmt.Errorf("rebuilt %s would not load: %s: %w", name, why, errs.ErrEnv))
		}
		dst := filepath.Join(vdir, "modules", name+".ko")
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return finish(md, final, start, err)
		}
		if err := fsutil.CopyFile(p, dst); err != nil {
			return finish(md, final, start, err)
		}
		replace[name] = dst
		md.Rebuilt = append(md.Rebuilt, name)
		if md.SHA256["modules/"+name+".ko"], err = fsutil.HashFile(dst); err != nil {
			return finish(md, final, start, err)
		}
	}
	md.Modules, err = BootModules(ctx, in, ix, cfg, replace)
	if err != nil {
		return finish(md, final, start, err)
	}
	if err := fsutil.CopyFile(in.ConfigPath(), filepath.Join(src, ".config")); err != nil {
		return finish(md, final, start, err)
	}
	md.Artifacts["bzImage"], md.Artifacts["config"] = in.Vmlinuz(), filepath.Join(src, ".config")
	for n, p := range md.Artifacts {
		if md.SHA256[n], err = fsutil.HashFile(p); err != nil {
			return finish(md, final, start, err)
		}
	}
	md.ConfigHash = md.SHA256["config"]
	return finish(md, final, start, nil)
}

// ImageFolder is where the images of k's Debian binary kernel b are
// published: the cache's build folder, under a name that says the
// kernel release and hashes the pinned packages (image, headers, kbuild)
// and the compiler the modules are rebuilt with. An image id
// (build.ImageID) is then KERNEL/distro-RELEASE-HASH/VARIANT-STATE, the
// state naming the sources the rebuilt modules were compiled from.
func ImageFolder(c *tree.Cache, k *tree.Kernel, b *debian.Binary, compiler string) string {
	h := fsutil.Hash([]byte(b.Key() + "\ncompiler " + compiler))
	return filepath.Join(c.Dir, "build", k.Name, "distro-"+b.Release+"-"+h[:12])
}

// ImageFolderOf is ImageFolder with the compiler found on this machine.
func ImageFolderOf(ctx context.Context, c *tree.Cache, k *tree.Kernel) (string, error) {
	b, err := Binary(k)
	if err != nil {
		return "", err
	}
	return ImageFolder(c, k, b, compiler(ctx)), nil
}

// finish records the build and publishes its snapshot (md.VariantDir, a
// staging folder) as the image at final, once: a passing image of the
// same state already there is kept (its record returned), a failed one
// replaced. The record's paths name the published place.
func finish(md *build.Metadata, final string, start time.Time, err error) (*build.Metadata, error) {
	md.Duration = time.Since(start).Seconds()
	md.Status = vocab.Pass
	if err != nil {
		md.Status = vocab.Fail
	}
	staging := md.VariantDir
	rebase(md, staging, final)
	if werr := fsutil.WriteJSON(filepath.Join(staging, "metadata.json"), md); werr != nil {
		return md, errors.Join(err, werr)
	}
	got, perr := build.Publish(staging, final)
	if perr != nil {
		return md, errors.Join(err, perr)
	}
	var ce *build.CompileError
	if errors.As(err, &ce) && strings.HasPrefix(ce.Log, staging) {
		ce.Log = final + strings.TrimPrefix(ce.Log, staging)
	}
	if err != nil {
		return md, err
	}
	// variants/<variant>: the latest build, for people browsing the
	// cache; boot and bench never follow it.
	if lerr := build.LinkLatest(filepath.Dir(filepath.Dir(final)), md.Variant, got); lerr != nil {
		return md, lerr
	}
	// Another build of the same state published first: its record, the
	// image others may have named, stands.
	if kept := build.KeptRecord(got, md); kept != nil {
		return kept, nil
	}
	return md, nil
}

// rebase rewrites the record's paths under from to be under to.
func rebase(md *build.Metadata, from, to string) {
	re := func(p string) string {
		if p == from || strings.HasPrefix(p, from+string(filepath.Separator)) {
			return to + strings.TrimPrefix(p, from)
		}
		return p
	}
	md.VariantDir, md.Log, md.BuildDir = re(md.VariantDir), re(md.Log), re(md.BuildDir)
	for k, v := range md.Artifacts {
		md.Artifacts[k] = re(v)
	}
	for i, m := range md.Modules {
		md.Modules[i] = re(m)
	}
}

// BootModules lists the modules the boot test loads, in order: for each
// symbol the test needs that the distro config builds as a module, its
// module and their dependencies, with the rebuilt ones in place of the
// distro's. A transport the config lacks is left out (boot reports it as
// not available).
func BootModules(ctx context.Context, in *Install, ix Index, cfg Config, replace map[string]string) ([]string, error) {
	var want []string
	seen := map[string]bool{}
	for _, sym := range guestconf.ModuleConfig(Transports) {
		if cfg.Value(sym) != "m" {
			continue
		}
		n, ok := guestconf.ConfigModules[sym]
		if !ok {
			return nil, fmt.Errorf("CONFIG_%s is a module in the distro config and patchctl does not know its module name (guestconf.ConfigModules)", sym)
		}
		if !seen[n] {
			seen[n] = true
			want = append(want, n)
		}
	}
	paths := map[string]string{}
	order, err := Closure(want, func(n string) ([]string, error) {
		if p, ok := replace[n]; ok {
			mi, err := ReadModinfo(p)
			if err != nil {
				return nil, err
			}
			paths[n] = p
			return mi.Depends(), nil
		}
		p, mi, err := in.Module(ctx, ix, n)
		if err != nil {
			return nil, err
		}
		paths[n] = p
		return mi.Depends(), nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(order))
	for i, n := range order {
		out[i] = paths[n]
	}
	return out, nil
}

// buildModules copies each module directory of the variant's tree into
// src, writes its Kbuild and builds it against the headers. Patched, the
// tree is the work tree, under the kernel's work lock from apply.Checkout
// to the end of make; baseline, it is the pristine tree (read only: the
// copies are built), and no lock is needed. It returns the built modules
// by name.
func buildModules(ctx context.Context, o *Options, in *Install, pristine string, mods []Module, src string, logf io.Writer, md *build.Metadata) (map[string]string, error) {
	srcTree := pristine
	if o.Variant == vocab.Patched {
		wt, release, err := o.Cache.HoldWorkTree(ctx, o.Kernel)
		if err != nil {
			return nil, err
		}
		defer release()
		if err := apply.Checkout(wt, o.Apply, o.Variant); err != nil {
			return nil, err
		}
		srcTree = wt.Dir
	} else if err := o.Cache.Verify(o.Kernel, dirsOf(mods), nil); err != nil {
		return nil, err
	}
	md.SourceDir = srcTree
	at, ccache, release, err := moduleBuildPath(ctx, o, src)
	if err != nil {
		return nil, err
	}
	defer release()
	var env []string // ccache's settings: make's environment
	if ccache {
		statsLog := filepath.Join(src, ".ccache-stats.log")
		defer func() {
			md.CcacheStats = build.ReadCcacheLog(statsLog)
			os.Remove(statsLog)
		}()
		env = append(build.CcacheEnv(o.Cache.Dir), "CCACHE_STATSLOG="+statsLog)
	}
	byDir := map[string][]string{}
	for _, m := range mods {
		obj := m.Name + ".o"
		dup := false
		for _, x := range byDir[m.Dir] {
			dup = dup || x == obj
		}
		if !dup {
			byDir[m.Dir] = append(byDir[m.Dir], obj)
		}
	}
	built := map[string]string{}
	for _, dir := range sortedKeys(byDir) {
		objs := byDir[dir]
		sort.Strings(objs)
		mk, err := readMakefile(srcTree, dir)
		if err != nil {
			return nil, err
		}
		out := filepath.Join(src, dir)
		if err := copySources(filepath.Join(srcTree, dir), out); err != nil {
			return nil, err
		}
		if err := fsutil.WriteFile(filepath.Join(out, "Kbuild"), []byte(Kbuild(mk, objs, filepath.Join(srcTree, dir))), 0o644); err != nil {
			return nil, err
		}
		o.Progress.Start(fmt.Sprintf("build %s %s modules %s", o.Kernel.Name, o.Variant, strings.Join(objs, " ")))
		n, err := kmake(ctx, in, filepath.Join(at, dir), o.Jobs, env, logf)
		if err != nil {
			return nil, err
		}
		md.Warnings += n
		for _, obj := range objs {
			ko := filepath.Join(out, strings.TrimSuffix(obj, ".o")+".ko")
			if _, err := os.Stat(ko); err != nil {
				return nil, fmt.Errorf("make built no %s: %w", ko, errs.ErrFindings)
			}
			built[ModuleName(ko)] = ko
		}
		for _, p := range Touched(o.Apply, o.Variant) {
			if filepath.Dir(p) == dir && strings.HasSuffix(p, ".c") {
				md.CompileTested = append(md.CompileTested, strings.TrimSuffix(p, ".c")+".o")
			}
		}
		o.Progress.Done("%d modules", len(objs))
	}
	return built, nil
}

func dirsOf(mods []Module) []string {
	var out []string
	for _, m := range mods {
		out = append(out, m.Dir)
	}
	return out
}

// copySources copies a directory's files (not its subfolders, not its
// Makefile or Kbuild: a generated Kbuild replaces them).
func copySources(from, to string) error {
	ents, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() && e.Type()&os.ModeSymlink == 0 || e.Name() == "Makefile" || e.Name() == "Kbuild" {
			continue
		}
		if st, err := os.Stat(filepath.Join(from, e.Name())); err != nil || !st.Mode().IsRegular() {
			continue
		}
		if err := fsutil.CopyFile(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// moduleBuildPath gives the path the modules' make names the build folder
// src by, and whether ccache compiles: a fixed path under the cache
// (build/K/distro-modules), a symbolic link to src, held under the
// kernel's distro-modules lock until release, which removes it. Kbuild
// names an external module's sources and objects by the M= path, as
// given (6.12's top Makefile: KBUILD_EXTMOD := $(M), no realpath), so
// every build of the same module sources compiles the same command
// lines, and ccache (CcacheEnv: paths under the cache hashed relative to
// the compiler's directory, Debian's headers there too) gives back what
// an earlier build, in another temporary folder, compiled. src under a
// fresh temporary name would miss every time.
func moduleBuildPath(ctx context.Context, o *Options, src string) (at string, ccache bool, release func(), err error) {
	release = func() {}
	if o.NoCcache || o.Cache == nil || o.Cache.Dir == "" {
		return src, false, release, nil
	}
	if _, err := command.LookPath("ccache"); err != nil {
		return src, false, release, nil
	}
	abs, err := filepath.Abs(src)
	if err != nil {
		return "", false, nil, err
	}
	release, err = o.Cache.Lock(ctx, "distro-modules-"+o.Kernel.Name)
	if err != nil {
		return "", false, nil, err
	}
	link := filepath.Join(o.Cache.Dir, "build", o.Kernel.Name, "distro-modules")
	tmp := link + ".new"
	os.Remove(tmp)
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		release()
		return "", false, nil, err
	}
	if err := os.Symlink(abs, tmp); err != nil {
		release()
		return "", false, nil, fmt.Errorf("the modules' build path: %w", err)
	}
	if fi, err := os.Lstat(link); err == nil && fi.Mode()&os.ModeSymlink == 0 {
		// Not a link (something else took the name): the name is
		// patchctl's, under its lock; a rename cannot replace a folder.
		if err := os.RemoveAll(link); err != nil {
			os.Remove(tmp)
			release()
			return "", false, nil, fmt.Errorf("the modules' build path: %w", err)
		}
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		release()
		return "", false, nil, fmt.Errorf("the modules' build path: %w", err)
	}
	unlock := release
	release = func() {
		os.Remove(link) // the folder it names goes with its build
		unlock()
	}
	return link, true, release, nil
}

// kmake runs make -C <headers> M=<dir> modules, with ccache when env has
// its settings; it returns the warnings.
func kmake(ctx context.Context, in *Install, dir string, jobs int, env []string, logf io.Writer) (int, error) {
	args := []string{"-C", in.Headers(), "M=" + dir, fmt.Sprintf("-j%d", jobs), "KBUILD_BUILD_USER=patchctl", "KBUILD_BUILD_HOST=patchctl", "modules"}
	if len(env) > 0 {
		args = append(args, "CC=ccache "+compilerName)
	}
	if _, err := command.LookPath("pahole"); err != nil {
		// No BTF for the rebuilt modules: they load without it.
		args = append(args, "CONFIG_DEBUG_INFO_BTF_MODULES=")
	}
	pr, pw := io.Pipe()
	cmd := &command.Cmd{Name: "make", Args: args, Stdout: pw, Env: env}
	proc, err := cmd.Start(ctx)
	if err != nil {
		return 0, err
	}
	warnings := 0
	var first []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			l := sc.Text()
			fmt.Fprintln(logf, l)
			if strings.Contains(l, "warning:") {
				warnings++
			}
			if (strings.Contains(l, "error:") || strings.HasPrefix(l, "make") && strings.Contains(l, "Error ")) && len(first) < 6 {
				first = append(first, l)
			}
		}
		io.Copy(io.Discard, pr)
	}()
	err = proc.Wait()
	pw.Close()
	<-done
	if err != nil {
		if ctx.Err() != nil {
			return warnings, fmt.Errorf("module build interrupted: %w: %w", ctx.Err(), errs.ErrEnv)
		}
		var re *command.Error
		if errors.As(err, &re) {
			if len(first) == 0 {
				first = []string{"make: " + err.Error()}
			}
			return warnings, &build.CompileError{First: first, Log: logName(logf)}
		}
		return warnings, err
	}
	return warnings, nil
}

func logName(w io.Writer) string {
	if f, ok := w.(*os.File); ok {
		return f.Name()
	}
	return "(not kept)"
}

// Built reads the metadata of the variant's last distro build of k.
func Built(c *tree.Cache, k *tree.Kernel, variant string) (*build.Metadata, error) {
	b, err := Binary(k)
	if err != nil {
		return nil, err
	}
	p := filepath.Join(build.VariantDir(ImageFolder(c, k, b, compiler(context.Background())), variant), "metadata.json")
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("no distro build of %s %s (%v): run patchctl build --kernel-from distro --kernel %s --variant %s first: %w", k.Name, variant, err, k.Name, variant, errs.ErrInput)
	}
	var md build.Metadata
	if err := json.Unmarshal(data, &md); err != nil || md.Status != vocab.Pass {
		return nil, fmt.Errorf("%s: the last distro build of %s %s did not pass: build it again: %w", p, k.Name, variant, errs.ErrInput)
	}
	return &md, nil
}
