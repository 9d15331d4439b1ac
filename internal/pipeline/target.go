package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/bench"
	"github.com/patchctl/patchctl/internal/boot"
	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/debian/distro"
	"github.com/patchctl/patchctl/internal/defects"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/progress"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
)

// LoadLock reads the repository's series/kernels.yaml.
func LoadLock(root string) (*tree.Lock, error) {
	return tree.LoadLock(filepath.Join(root, "series", "kernels.yaml"))
}

// OpenCache opens the cache: dir, else $PATCHCTL_CACHE or
// ~/.cache/patchctl, made absolute here once, made private when new and
// refused when another user owns it or others may write it
// (tree.OpenCache). Its progress goes to w; offline refuses every
// download.
func OpenCache(dir string, offline bool, w io.Writer) (*tree.Cache, error) {
	dir, err := tree.CacheDir(dir)
	if err != nil {
		return nil, err
	}
	if err := tree.OpenCache(dir); err != nil {
		return nil, err
	}
	return &tree.Cache{Dir: dir, Progress: progress.New(w), Offline: offline}, nil
}

// Workspace is where the verbs work: the repository, its lock and the
// cache (opened only when a step needs it, so that an unknown kernel is
// named before the cache is looked at).
type Workspace struct {
	Root     string
	Lock     *tree.Lock
	CacheDir string // --cache ("": $PATCHCTL_CACHE or ~/.cache/patchctl)
	Offline  bool
	Progress io.Writer // where the cache's progress goes
}

// Cache opens the workspace's cache; quiet discards its progress.
func (w *Workspace) Cache(quiet bool) (*tree.Cache, error) {
	to := w.Progress
	if quiet || to == nil {
		to = io.Discard
	}
	return OpenCache(w.CacheDir, w.Offline, to)
}

// Target is a kernel with what the stages need around it.
type Target struct {
	Root   string
	Lock   *tree.Lock
	Kernel *tree.Kernel
	Cache  *tree.Cache
	// DMA is the DMA mode of the images Image resolves for source builds
	// (vocab.DMAFaithful, "" too, or vocab.DMAPlain: --dma).
	DMA string
}

// Target resolves a kernel name ("" is the lock's default), or, when
// treeDir is set, a local tree as the pristine tree (kernel, or its
// Makefile's version, names the manifest).
func (w *Workspace) Target(ctx context.Context, kernel, treeDir string) (*Target, error) {
	var k *tree.Kernel
	var err error
	if treeDir != "" {
		var ks []string
		if kernel != "" {
			ks = []string{kernel}
		}
		k, err = w.LocalKernel(ctx, treeDir, ks)
	} else {
		k, err = w.Lock.Find(kernel)
	}
	if err != nil {
		return nil, err
	}
	cache, err := w.Cache(false)
	if err != nil {
		return nil, err
	}
	return &Target{Root: w.Root, Lock: w.Lock, Kernel: k, Cache: cache}, nil
}

// LocalKernel makes the kernel of a local tree (--tree). At most one
// kernel may go with it: the manifest and fragment to use; without one,
// the manifest of the Makefile's VERSION.PATCHLEVEL when series/ has it.
func (w *Workspace) LocalKernel(ctx context.Context, dir string, kernels []string) (*tree.Kernel, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if len(kernels) > 1 {
		return nil, fmt.Errorf("--tree takes at most one --kernel (the manifest to check the tree against), got %d: %w", len(kernels), errs.ErrUsage)
	}
	series := ""
	if len(kernels) == 1 {
		if _, err := w.Lock.Find(kernels[0]); err != nil {
			return nil, err
		}
		series = kernels[0]
	}
	cache, err := w.Cache(true)
	if err != nil {
		return nil, err
	}
	return cache.Local(ctx, dir, series, func(name string) bool {
		_, err := os.Stat(filepath.Join(w.Root, "series", name, "manifest.yaml"))
		return err == nil
	})
}

// ImageKernel is the kernel an --image names (ref), when no kernel and
// no local tree are given; else kernel.
func (w *Workspace) ImageKernel(kernel, treeDir, ref, variant string) string {
	if ref == "" || kernel != "" || treeDir != "" {
		return kernel
	}
	cache, err := w.Cache(false)
	if err != nil {
		return kernel
	}
	if md, err := build.ResolveImage(cache.Dir, ref, "", variant); err == nil {
		return md.Kernel
	}
	return kernel
}

// Applied prepares the pristine tree and runs the apply stage on it (the
// manifest's series, or one series, in memory).
func (t *Target) Applied(ctx context.Context, seriesName string) (*apply.Out, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	pristine, err := t.Cache.Prepare(ctx, t.Kernel)
	if err != nil {
		return nil, err
	}
	return apply.Run(ctx, apply.In{Root: t.Root, Kernel: t.Kernel, Pristine: pristine, Series: seriesName, Cache: t.Cache})
}

// WriteWorkTree writes the apply stage's output out (Applied) into the
// kernel's work tree, all or nothing, under the kernel's work lock, and
// returns the work tree's folder.
func (t *Target) WriteWorkTree(ctx context.Context, out *apply.Out) (string, error) {
	wt, release, err := t.Cache.HoldWorkTree(ctx, t.Kernel)
	if err != nil {
		return "", err
	}
	defer release()
	if err := apply.Checkout(wt, out, vocab.Patched); err != nil {
		return "", err
	}
	return wt.Dir, nil
}

// Image is the image a boot or bench uses, verified.
type Image struct {
	Metadata *build.Metadata
	// OfRecord: the image is the series of record's build of the
	// variant, so the manifest's inline expectations judge it.
	OfRecord bool
}

// Image resolves the image of variant that a boot or bench uses: ref
// (--image) when given, else the build of the series of record (its
// snapshot, by the source state the manifest's series makes, never the
// latest build of the cache, which any process may have made). The image
// is verified against its record (sha256). buildCmd is the command that
// makes the missing image, for the error that says so.
func (t *Target) Image(ctx context.Context, ref, variant, from string, fragments []string, buildCmd string) (*Image, error) {
	applied, err := t.Applied(ctx, "")
	if err != nil {
		return nil, err
	}
	state := applied.State(variant)
	if from != vocab.FromDistro {
		// A source build's snapshot is named by its state with the
		// harness of the DMA mode (the distro path carries none).
		if state, err = build.State(applied, variant, t.DMA); err != nil {
			return nil, err
		}
	}
	if ref != "" {
		md, err := build.ResolveImage(t.Cache.Dir, ref, t.Kernel.Name, variant)
		if err != nil {
			return nil, err
		}
		if md.Variant != variant {
			return nil, fmt.Errorf("--image %s is a %s image, not %s: pass --variant %s or another image: %w", ref, md.Variant, variant, md.Variant, errs.ErrUsage)
		}
		if md.Kernel != t.Kernel.Name {
			return nil, fmt.Errorf("--image %s is an image of %s, not %s: pass --kernel %s: %w", ref, md.Kernel, t.Kernel.Name, md.Kernel, errs.ErrUsage)
		}
		want := applied.State(variant)
		if md.KernelFrom != vocab.FromDistro {
			if want, err = build.State(applied, variant, md.DMA); err != nil {
				return nil, err
			}
		}
		return &Image{Metadata: md, OfRecord: md.State == want}, nil
	}
	var dir string
	if from == vocab.FromDistro {
		folder, err := distro.ImageFolderOf(ctx, t.Cache, t.Kernel)
		if err != nil {
			return nil, err
		}
		dir = build.StateDir(folder, variant, state)
		buildCmd += " --kernel-from distro"
	} else {
		bd, err := build.Locate(t.Root, t.Cache, t.Kernel, applied, fragments)
		if err != nil {
			return nil, err
		}
		dir = build.StateDir(bd, variant, state)
	}
	if _, err := os.Stat(filepath.Join(dir, "metadata.json")); err != nil {
		return nil, fmt.Errorf("the series of record's %s %s kernel is not built yet (no image %s): run `%s` first, or name another image with --image: %w",
			t.Kernel.Name, variant, build.ImageID(t.Cache.Dir, dir), buildCmd, errs.ErrInput)
	}
	md, err := build.LoadImage(dir)
	if err != nil {
		return nil, fmt.Errorf("the series of record's %s %s image: %w (rebuild it: `%s`)", t.Kernel.Name, variant, err, buildCmd)
	}
	if md.ID == "" {
		md.ID = build.ImageID(t.Cache.Dir, dir)
	}
	return &Image{Metadata: md, OfRecord: true}, nil
}

// BuildOptions say how Build makes a kernel of a target.
type BuildOptions struct {
	Variant   string
	From      string // vocab.FromSource or vocab.FromDistro
	Fragments []string
	Jobs      int
	NoCcache  bool
	DMA       string // vocab.DMAFaithful ("" too) or vocab.DMAPlain
}

// Build builds the variant of the apply stage's output out (Applied):
// from the pinned tree (internal/build), or Debian's binary kernel with
// the touched modules rebuilt (internal/debian/distro). The metadata may come
// with an error (a compile error's record).
func (t *Target) Build(ctx context.Context, out *apply.Out, o BuildOptions) (*build.Metadata, error) {
	if o.From == vocab.FromDistro {
		return distro.Build(ctx, distro.Options{Cache: t.Cache, Kernel: t.Kernel, Apply: out, Variant: o.Variant, Jobs: o.Jobs, NoCcache: o.NoCcache, Progress: t.Cache.Progress})
	}
	return build.Build(ctx, build.Options{Root: t.Root, Cache: t.Cache, Kernel: t.Kernel, Apply: out, Variant: o.Variant,
		Fragments: o.Fragments, Jobs: o.Jobs, NoCcache: o.NoCcache, DMA: o.DMA, Progress: t.Cache.Progress})
}

// CheckJobs checks a --jobs value (build.CheckJobs).
func CheckJobs(n int) error { return build.CheckJobs(n) }

// MaxJobs is the most parallel jobs a build takes.
const MaxJobs = build.MaxJobs

// DefaultFragments are the kconfig/ fragments a build uses when none are
// named.
func DefaultFragments() []string { return build.DefaultFragments }

// Describe says on w which image a boot uses (build.Describe).
func Describe(w io.Writer, md *build.Metadata) { build.Describe(w, md) }

// KillAll kills the process group of every program the stages started
// that still runs (run.KillAll): the CLI defers it, so that no child
// outlives patchctl.
func KillAll() { command.KillAll() }

// Quote is a command line as a shell reads it back.
func Quote(args []string) string { return command.Quote(args) }

// Manifest reads the target's manifest (series/<kernel>/manifest.yaml).
func (t *Target) Manifest() (*series.Manifest, error) {
	return series.Load(series.ManifestPath(t.Root, t.Kernel.Name))
}

// BootOptions say how PrepareBoot boots an image.
type BootOptions struct {
	Variant                  string
	OutDir                   string
	Transports               []string
	Cmdline                  string
	BootTimeout, TestTimeout time.Duration
	Accel                    string // "" for auto
	// Shell and Keep make the boot interactive, on Stdin and Console.
	Shell, Keep  bool
	Stdin        io.Reader
	Console      io.Writer
	BuildCommand string // the build that makes the image, for errors
	Reproduce    string // a reproducer after the tests (vocab.ReproIncapsule)
}

// PrepareBoot readies the boot of img with the manifest m's boot
// settings: its inline expectations judge the image only when it is the
// series of record's build; any other image's evidence is reported.
func (t *Target) PrepareBoot(ctx context.Context, m *series.Manifest, img *Image, o BootOptions) (*boot.Prepared, error) {
	md := img.Metadata
	expect := m.Boot.Expect(o.Variant)
	if !img.OfRecord {
		// The manifest's expectations are about its own series.
		expect = guestconf.ExpectReport
	}
	bo := boot.Options{Root: t.Root, AgentCache: AgentCache(t.Cache), Kernel: t.Kernel.Name, Variant: o.Variant,
		BzImage: md.Artifacts["bzImage"], BzImageSHA256: md.SHA256["bzImage"], BuildDir: md.BuildDir, Modules: md.Modules, OutDir: o.OutDir, Transports: o.Transports,
		InlineDataSize: m.Boot.InlineDataSize, ExpectInline: expect,
		Cmdline: o.Cmdline, BootTimeout: o.BootTimeout, TestTimeout: o.TestTimeout, Accel: o.Accel, Progress: t.Cache.Progress,
		Shell: o.Shell, Keep: o.Keep, BuildCommand: o.BuildCommand, Harness: HarnessNames(md), Reproduce: o.Reproduce}
	known, err := t.KnownReports()
	if err != nil {
		return nil, err
	}
	bo.Known = guestKnown(known)
	if bo.Interactive() {
		bo.Stdin, bo.Console = o.Stdin, o.Console
	}
	return boot.Prepare(ctx, bo)
}

// BenchBootOptions say which images BenchBoots readies, and how.
type BenchBootOptions struct {
	// Images are the --image references per variant ("" is the series
	// of record's build).
	Images    map[string]string
	Fragments []string
	Accel     string // "" for auto
	OutDir    string // the bench's folder: the pinned images go under kernels/
	Log       io.Writer
	// BuildCommand is the build that makes a variant's missing image.
	BuildCommand func(variant string) string
}

// BenchBoots readies the boots of both variants of a bench in o: each
// variant's image resolved (Image), described on o.Log, and pinned as a
// private copy checked against its build's record, so that every boot
// of the bench boots the same image.
func (t *Target) BenchBoots(ctx context.Context, o *bench.Options, b BenchBootOptions) error {
	for _, v := range []struct {
		name string
		o    *boot.Options
	}{{vocab.Baseline, &o.Baseline}, {vocab.Patched, &o.Patched}} {
		buildCmd := b.BuildCommand(v.name)
		img, err := t.Image(ctx, b.Images[v.name], v.name, vocab.FromSource, b.Fragments, buildCmd)
		if err != nil {
			return fmt.Errorf("bench %s %s: %w", t.Kernel.Name, v.name, err)
		}
		build.Describe(b.Log, img.Metadata)
		pinned := filepath.Join(b.OutDir, "kernels", v.name+"-bzImage")
		sum, err := bench.PinImage(img.Metadata.VariantDir, pinned)
		if err != nil {
			return fmt.Errorf("bench %s %s: %w", t.Kernel.Name, v.name, err)
		}
		*v.o = boot.Options{Root: t.Root, AgentCache: AgentCache(t.Cache), Kernel: t.Kernel.Name, Variant: v.name, BzImage: pinned, BzImageSHA256: sum, BuildDir: img.Metadata.BuildDir, Modules: img.Metadata.Modules,
			Accel: b.Accel, Progress: t.Cache.Progress, BuildCommand: buildCmd, Harness: HarnessNames(img.Metadata)}
	}
	return nil
}

// BuildFolder is the build folder of the default configuration for the
// apply stage's output out (build.Locate): where the check stage finds
// vmlinux for the DWARF layouts.
func (t *Target) BuildFolder(out *apply.Out) (string, error) {
	return build.Locate(t.Root, t.Cache, t.Kernel, out, nil)
}

// KnownReports are the known kernel reports (series/known-reports.yaml)
// of the target kernel's version; none when its tree has no version yet.
func (t *Target) KnownReports() ([]defects.Report, error) {
	tb, err := defects.LoadReports(defects.ReportsPath(t.Root))
	if err != nil {
		return nil, err
	}
	v, err := defects.TreeVersion(t.Cache.PristineDir(t.Kernel))
	if err != nil {
		return nil, nil
	}
	return tb.Match(v), nil
}
