package build

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/kconfig"
	"github.com/patchctl/patchctl/internal/progress"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/stagecache"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
	"github.com/patchctl/patchctl/qemu/harness"
)

// DefaultFragments are built when none are named. A fragment whose file
// has a "# patchctl-when-touched: PREFIX..." line is on only when a patch
// that applies on the kernel touches a path under one of the prefixes
// (compile-test: mlx5 is built only to compile a patch that changes it).
var DefaultFragments = []string{"base", "rdma-loopback", "compile-test"}

// whenTouched reads a fragment's "# patchctl-when-touched:" prefixes.
func whenTouched(b []byte) []string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "# patchctl-when-touched:"); ok {
			out = append(out, strings.Fields(v)...)
		}
	}
	return out
}

// Selection is the fragments a build uses, in order, with why each is on
// (and why each default one that is off is off).
type Selection struct {
	Names []string
	On    map[string]string
	Off   map[string]string
}

// SelectFragments decides the fragments of kernel k's builds: names when
// given (and kconfig/kernel-<k>.config when it exists), else the
// defaults, each conditional one only when a patch that applies on k
// (out) touches what it is for. Both variants get the same selection:
// the patched folder is seeded from the baseline's objects.
func SelectFragments(root string, k *tree.Kernel, out *apply.Out, names []string) (*Selection, error) {
	sel := &Selection{On: map[string]string{}, Off: map[string]string{}}
	if len(names) > 0 {
		for _, n := range names {
			sel.Names = append(sel.Names, n)
			sel.On[n] = "requested (--fragment)"
		}
	} else {
		applied := map[string]string{} // path -> source of a patch that applies and changes it
		if out != nil {
			for i, r := range out.Result.Results {
				if !series.IsApplied(r.Disposition) || i >= len(out.Plan.Patches) {
					continue
				}
				for _, f := range out.Plan.Patches[i].Files {
					for _, n := range []string{f.OldName, f.NewName} {
						if n != "" && applied[n] == "" {
							applied[n] = r.Source
						}
					}
				}
			}
		}
		for _, n := range DefaultFragments {
			if err := fsutil.ValidName(n); err != nil {
				return nil, fmt.Errorf("fragment: %v: %w", err, errs.ErrUsage)
			}
			b, err := os.ReadFile(filepath.Join(root, "kconfig", n+".config"))
			if err != nil {
				return nil, fmt.Errorf("default fragment %s: %w: %w", n, err, errs.ErrInput)
			}
			prefixes := whenTouched(b)
			if len(prefixes) == 0 {
				sel.Names = append(sel.Names, n)
				sel.On[n] = "default"
				continue
			}
			why := ""
			var paths []string
			for p := range applied {
				paths = append(paths, p)
			}
			sort.Strings(paths)
		find:
			for _, p := range paths {
				for _, pre := range prefixes {
					if strings.HasPrefix(p, pre) {
						why = fmt.Sprintf("%s applies on %s and changes %s", applied[p], k.Name, p)
						break find
					}
				}
			}
			if why == "" {
				sel.Off[n] = fmt.Sprintf("no patch that applies on %s changes %s", k.Name, strings.Join(prefixes, " "))
				continue
			}
			sel.Names = append(sel.Names, n)
			sel.On[n] = why
		}
	}
	kn := "kernel-" + k.SeriesName()
	if _, ok := sel.On[kn]; !ok {
		if _, err := os.Stat(filepath.Join(root, "kconfig", kn+".config")); err == nil {
			sel.Names = append(sel.Names, kn)
			sel.On[kn] = "kconfig/" + kn + ".config: what " + k.Name + "'s Kconfig needs beyond the shared fragments"
		}
	}
	return sel, nil
}

// Options say what to build: a build is a function of the work tree's
// state (the apply stage's output and a variant) and the configuration
// (the fragments).
type Options struct {
	Root      string // repository: kconfig/
	Cache     *tree.Cache
	Kernel    *tree.Kernel
	Apply     *apply.Out // the apply stage's output
	Variant   string
	Fragments []string
	Jobs      int
	NoCcache  bool // build without ccache even when it is installed
	// DMA is the DMA mode (vocab.DMAFaithful, "" too, or vocab.DMAPlain):
	// which harness patches (qemu/harness) the build applies after the
	// variant's state, on the build's work tree only.
	DMA      string
	Progress *progress.Reporter
	Runner   command.Runner // starts make, finds the host tools; nil: the real programs

	selection *Selection // normalize's choice of fragments
	// walkModules makes a modules-only build run `make modules` even
	// where module goals would do (tests compare the two).
	walkModules bool
}

// Metadata describes a build, in the shape tuxmake users know.
type Metadata struct {
	Kernel        string   `json:"kernel"`
	Source        string   `json:"source"`
	Variant       string   `json:"variant"`
	KernelRelease string   `json:"kernel_release"`
	ConfigHash    string   `json:"config_hash"`
	Fragments     []string `json:"fragments"`
	// FragmentsOn says why each fragment is on; FragmentsOff why each
	// default fragment that is not is off.
	FragmentsOn  map[string]string `json:"fragments_on"`
	FragmentsOff map[string]string `json:"fragments_off,omitempty"`
	Compiler     string            `json:"compiler"`
	Ccache       bool              `json:"ccache"`
	Jobs         int               `json:"jobs"`
	Duration     float64           `json:"duration_s"`
	// CcacheStats counts this build's compiles of source files that
	// ccache answered from its cache and those it compiled (nil: built
	// without ccache).
	CcacheStats *CcacheStats `json:"ccache_stats,omitempty"`
	// TargetDurations are the seconds each step took: config, kernel
	// (bzImage) and compile-test (tuxmake's targets); setup (the tree
	// verified and set, the sources synced) and snapshot (the image and
	// modules copied out), patchctl's own.
	TargetDurations map[string]float64 `json:"target_durations,omitempty"`
	UpToDate        bool               `json:"up_to_date"`                  // make had nothing to do
	Proved          bool               `json:"proved_up_to_date,omitempty"` // up to date without make: every input as after the last complete one (uptodate.go)
	Warnings        int                `json:"warnings"`
	Errors          int                `json:"errors"`
	Status          string             `json:"status"` // PASS or FAIL
	Applied         []string           `json:"applied,omitempty"`
	Verified        int                `json:"symbols_verified"`
	CompileTested   []string           `json:"compile_tested"`
	BuildDir        string             `json:"build_dir"` // objects (DWARF) of the last variant built
	VariantDir      string             `json:"variant_dir"`
	SourceDir       string             `json:"source_dir"`
	Log             string             `json:"log"`
	Artifacts       map[string]string  `json:"artifacts"`
	// SHA256 holds each artifact's hash as the build made it.
	SHA256 map[string]string `json:"sha256"`
	// State names the sources the build compiled (apply.Out.State).
	State string `json:"source_state"`
	// KernelFrom says where the kernel came from: "source" (built from
	// the pinned tree) or "distro" (Debian's binary kernel, with the
	// touched modules rebuilt; see internal/debian/distro).
	KernelFrom string `json:"kernel_from,omitempty"`
	// Modules are the module files the boot loads, in load order
	// (distro: the test's modules and their dependencies).
	Modules []string `json:"modules,omitempty"`
	// Rebuilt names the modules built from the work tree that replace
	// the distro kernel's (distro, patched); from source, the patched
	// build's modules that differ from the baseline's in code (stripped
	// .ko, the build ID left out: codeHash).
	Rebuilt []string `json:"rebuilt,omitempty"`
	// ModuleSHA256 is the hash of each module the image carries
	// (source builds; the files are Modules, in the snapshot).
	ModuleSHA256 map[string]string `json:"module_sha256,omitempty"`
	// ModulesOnly says that a patched build ran `make modules` only:
	// every file whose content changed since the folder's last build is
	// a C or assembly file of a module (modulesOnly), so vmlinux and
	// bzImage are the folder's as they were.
	ModulesOnly bool `json:"modules_only,omitempty"`
	// ModuleGoals says that the modules-only build named every module
	// of modules.order as a goal (`make a.ko b.ko ...`: kbuild descends
	// only into those modules' folders, then runs modpost and the final
	// link over all of them) instead of `make modules`, which walks every
	// folder of the tree (moduleGoals).
	ModuleGoals bool `json:"module_goals,omitempty"`
	// VmlinuxShared says whether a patched source build's bzImage is
	// the baseline's, byte for byte (the series touched modules only).
	VmlinuxShared *bool `json:"vmlinux_shared,omitempty"`
	// ID names the image (ImageID): boot --image and bench --image take
	// it. Key is the build's stage key (Key).
	ID  string `json:"image_id,omitempty"`
	Key string `json:"build_key,omitempty"`
	// Patches are the patches the build was given, each with its
	// disposition and the hash of its diff (PatchRecords).
	Patches []PatchRecord `json:"patches,omitempty"`
	// DMA is the build's DMA mode; Harness the harness patches applied
	// after the variant's state (qemu/harness), HarnessOff why a harness
	// of the mode is not (no variant fits the tree).
	DMA        string            `json:"dma,omitempty"`
	Harness    []harness.Applied `json:"harness,omitempty"`
	HarnessOff map[string]string `json:"harness_off,omitempty"`

	publishTo string // the snapshot's place, while VariantDir is written aside
}

// configState is what a build folder records about its configuration.
type configState struct {
	Hash      string            `json:"hash"`
	Fragments []string          `json:"fragments"`
	Requested map[string]string `json:"requested"`
}

// ConfigError is a configuration whose requested symbols did not land.
type ConfigError struct {
	Misses []kconfig.Miss
}

func (e *ConfigError) Error() string {
	var s []string
	for _, m := range e.Misses {
		s = append(s, m.String())
	}
	return fmt.Sprintf("%d requested symbols did not land after olddefconfig:\n  %s", len(e.Misses), strings.Join(s, "\n  "))
}

func (e *ConfigError) Unwrap() error { return errs.ErrInput }

// CompileError is a build that failed, with the first error lines.
type CompileError struct {
	First []string
	Log   string
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("build failed:\n  %s\n(full log: %s)", strings.Join(e.First, "\n  "), e.Log)
}

func (e *CompileError) Unwrap() error { return errs.ErrFindings }

// Dir is the build folder of a kernel and configuration: the baseline's
// objects and every variant's snapshots (variants/). The patched variant
// compiles beside it (ObjDir). The source path never changes; kbuild
// records object paths relative to the folder, and the tools built along
// (objtool) their absolute output path, which seedVariant rewrites in the
// copy.
func Dir(c *tree.Cache, k *tree.Kernel, hash string) string {
	return filepath.Join(c.Dir, "build", k.Name, hash[:12])
}

// ObjDir is where variant compiles: the baseline in dir itself (built
// from the pristine state only, never from a patched one), the patched
// variant in a folder beside it, seeded from the baseline's objects
// (seedVariant). Switching variants, trying another series or reverting
// an edit then never recompiles the baseline, and each patched build
// redoes only what changed since the patched folder's last build.
func ObjDir(dir, variant string) string {
	if variant == vocab.Patched {
		return dir + ".patched"
	}
	return dir
}

// seedVariant makes obj, when absent, a copy of the baseline folder's
// objects (times kept, reflinked where the file system can, the
// snapshots in variants/ left out), so the patched build starts
// incremental from the baseline. The baseline seeds only when its last
// build completed; else obj starts empty (a cold build). A folder of
// another kernel source (re-pinned) is dropped first.
func seedVariant(ctx context.Context, dir, obj, key string, p *progress.Reporter) error {
	if b, err := os.ReadFile(filepath.Join(obj, ".patchctl-kernel")); err == nil && strings.TrimSpace(string(b)) != key {
		p.Note("the kernel source of %s changed (re-pinned): starting the build folder afresh", obj)
		if err := os.RemoveAll(obj); err != nil {
			return fmt.Errorf("emptying the build folder of an old kernel source: %w", err)
		}
	}
	if _, err := os.Lstat(obj); err == nil {
		return nil
	}
	if !completeBuild(dir) {
		return nil // no complete baseline build to start from
	}
	return copyFolder(ctx, dir, obj, "seed "+filepath.Base(obj)+" from the baseline's objects", nil, p)
}

// seedConfig makes dir, the baseline folder of a configuration not built
// before, when absent, a copy of the folder of another configuration of
// the same kernel source whose last build completed: the one whose
// fragments are nearest (the same names first: a fragment's content
// changed), then the latest built. Make then redoes only what the change
// of configuration reaches: kbuild records which CONFIG_ symbols each
// object read (fixdep), and the build's syncconfig marks those whose
// value changed against the copied include/config/auto.conf; a changed
// compiler flag is a changed command. A new fragment set, or a new
// version of a default fragment, then costs the objects it changes, not
// a cold build. No such folder: dir starts empty.
func seedConfig(ctx context.Context, dir, key string, names []string, p *progress.Reporter) error {
	if _, err := os.Lstat(dir); err == nil {
		return nil
	}
	from := nearestConfig(filepath.Dir(dir), key, names)
	if from == "" {
		return nil
	}
	return copyFolder(ctx, from, dir, "seed "+filepath.Base(dir)+" from the objects of configuration "+filepath.Base(from), linkProduct, p)
}

// linkProduct says whether a file of a build folder is a module's link
// product: the .ko, its .mod.o and the objects common to every module
// (.module-common.o, from 6.11), which the other configuration's
// folder compiled there. kbuild would keep them (nothing it tracks
// changed), but their DWARF names the folder that compiled them, so a
// module relinked later from a .mod.o compiled here (or given back by
// ccache for this configuration) would differ from one kept from the
// copy: left out, the first build links every module in this folder,
// and a folder's modules never depend on which folder it was seeded from.
func linkProduct(name string) bool {
	return strings.HasSuffix(name, ".ko") || strings.HasSuffix(name, ".mod.o") || name == ".module-common.o"
}

// nearestConfig is the completed build folder of kernel source key under
// parent whose fragment names differ least from names (then the latest
// completed), or "".
func nearestConfig(parent, key string, names []string) string {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return ""
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	best, bestDiff := "", 0
	var bestTime time.Time
	for _, e := range ents {
		if !e.IsDir() || !isFolderName(e.Name()) {
			continue
		}
		d := filepath.Join(parent, e.Name())
		if b, err := os.ReadFile(filepath.Join(d, ".patchctl-kernel")); err != nil || strings.TrimSpace(string(b)) != key || !completeBuild(d) {
			continue
		}
		var st configState
		b, err := os.ReadFile(filepath.Join(d, ".patchctl-config.json"))
		if err != nil || json.Unmarshal(b, &st) != nil {
			continue
		}
		diff := len(names)
		for _, n := range st.Fragments {
			if want[n] {
				diff--
			} else {
				diff++
			}
		}
		fi, err := os.Stat(sourcesPath(d))
		if err != nil {
			continue
		}
		if best == "" || diff < bestDiff || diff == bestDiff && fi.ModTime().After(bestTime) {
			best, bestDiff, bestTime = d, diff, fi.ModTime()
		}
	}
	return best
}

// isFolderName says whether name is a configuration's build folder
// (Dir: 12 hex digits), not a variant's folder, a copy under way or
// another tool's.
func isFolderName(name string) bool {
	if len(name) != 12 {
		return false
	}
	for _, c := range name {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// completeBuild says whether the last build in dir completed (its
// sources record says so) and left a configuration.
func completeBuild(dir string) bool {
	var rec sources
	b, err := os.ReadFile(sourcesPath(dir))
	if err != nil || json.Unmarshal(b, &rec) != nil || !rec.Complete {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, ".config"))
	return err == nil
}

// copyFolder copies the build folder from (its snapshots in variants/
// left out, and the files drop names when drop is set) to to, which must
// be absent: into a temporary folder beside it, whose command records are
// then relocated, renamed into place whole, so an interrupted copy leaves
// no folder behind.
func copyFolder(ctx context.Context, from, to, what string, drop func(name string) bool, p *progress.Reporter) error {
	return copyFolderWith(ctx, from, to, what, copySpec{drop: drop, moves: folderMoves(from, to)}, p)
}

// folderMoves are the rewrites of a build folder's records when it is
// copied from from to to, a folder beside it: its absolute path, and the
// relative one objtool's build records for the headers it installs into
// the folder (../../../H/tools/objtool/libsubcmd/include/..., from the
// work tree's tools/objtool), which would otherwise name the folder the
// copy came from.
func folderMoves(from, to string) [][2]string {
	moves := [][2]string{{from, to}}
	if a, b := filepath.Base(from), filepath.Base(to); a != b && filepath.Dir(from) == filepath.Dir(to) {
		moves = append(moves, [2]string{"../" + a + "/", "../" + b + "/"})
	}
	return moves
}

// copySpec says what copyFolderWith does besides copying: the files to
// leave out (drop), the paths to rewrite in the command records (moves:
// old, new), and a last step on the copy before it is renamed into place
// (fix), which may decline the copy (errNoSeed: nothing is made).
type copySpec struct {
	drop  func(name string) bool
	moves [][2]string
	fix   func(tmp string) error
}

// errNoSeed is a copy's fix declining it: the folder is not made.
var errNoSeed = errors.New("not seeded")

// copyFolderWith is copyFolder with a copySpec.
func copyFolderWith(ctx context.Context, from, to, what string, spec copySpec, p *progress.Reporter) error {
	ents, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	// Leftovers of an interrupted copy.
	old, _ := filepath.Glob(to + ".tmp-*")
	for _, o := range old {
		os.RemoveAll(o)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(to), filepath.Base(to)+".tmp-")
	if err != nil {
		return err
	}
	args := []string{"-a", "--reflink=auto"}
	for _, e := range ents {
		if e.Name() == "variants" {
			continue
		}
		args = append(args, filepath.Join(from, e.Name()))
	}
	args = append(args, tmp)
	p.Start(what)
	if err := command.Command("cp", args...).Run(ctx); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("copying the build folder %s to %s (is the disk full?): %w", from, to, err)
	}
	n, err := relocate(tmp, spec.moves, spec.drop)
	if err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if spec.fix != nil {
		if err := spec.fix(tmp); err != nil {
			os.RemoveAll(tmp)
			if errors.Is(err, errNoSeed) {
				p.Done("%v", err)
				return nil
			}
			return err
		}
	}
	if err := os.Rename(tmp, to); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("seeding %s: %w", to, err)
	}
	p.Done("%d command records relocated", n)
	return nil
}

// relocate rewrites, in the command records of the folder copied into
// tmp, each move's old path to its new one (the folder it was copied
// from to its new place; for a copy from another kernel source, that
// source's work tree to this one's), keeping each file's time. Two
// moves' paths are never one within the other. kbuild records paths relative to the
// build folder, but tools built along (objtool, its libsubcmd) record
// their output's absolute path: a record naming another folder is a
// changed command, objtool is rebuilt, and every object that depends on
// it recompiles. Files drop names (when set) are removed from the copy.
func relocate(tmp string, moves [][2]string, drop func(name string) bool) (int, error) {
	n := 0
	err := filepath.WalkDir(tmp, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if drop != nil && d.Type().IsRegular() && drop(name) {
			return os.Remove(path)
		}
		if d.IsDir() || !d.Type().IsRegular() || !(strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".cmd") || strings.HasSuffix(name, ".d")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		nb := b
		for _, m := range moves {
			if m[0] != m[1] {
				nb = bytes.ReplaceAll(nb, []byte(m[0]), []byte(m[1]))
			}
		}
		if bytes.Equal(nb, b) {
			return nil
		}
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		if err := os.WriteFile(path, nb, st.Mode().Perm()); err != nil {
			return err
		}
		n++
		return os.Chtimes(path, st.ModTime(), st.ModTime())
	})
	if err != nil {
		return n, fmt.Errorf("relocating the command records of the copied build folder %s: %w", tmp, err)
	}
	return n, nil
}

// VariantDir is the variant's latest snapshot of the artifacts and
// metadata: a link to the snapshot of the source state it was built from.
func VariantDir(dir, variant string) string { return filepath.Join(dir, "variants", variant) }

// StateDir holds the snapshot of a variant built from one source state
// (apply.Out.State): builds of other series or of the other variant
// never overwrite it, so what a build recorded stays what it made.
func StateDir(dir, variant, state string) string {
	return filepath.Join(dir, "variants", variant+"-"+state[:min(12, len(state))])
}

// LinkLatest points VariantDir(dir, variant) at stateDir, atomically.
func LinkLatest(dir, variant, stateDir string) error {
	link := VariantDir(dir, variant)
	tmp := link + ".tmp-link"
	os.Remove(tmp)
	if err := os.Symlink(filepath.Base(stateDir), tmp); err != nil {
		return fmt.Errorf("linking the latest %s build: %w", variant, err)
	}
	if st, err := os.Lstat(link); err == nil && st.IsDir() {
		os.RemoveAll(link) // a folder of the former layout
	}
	if err := os.Rename(tmp, link); err != nil {
		return fmt.Errorf("linking the latest %s build: %w", variant, err)
	}
	return nil
}

// Locate returns the build folder that Build would use, without building
// (a variant's artifacts are in VariantDir of it).
// out is the apply stage's output: which patches apply decides the
// conditional fragments.
func Locate(root string, c *tree.Cache, k *tree.Kernel, out *apply.Out, names []string) (string, error) {
	sel, err := SelectFragments(root, k, out, names)
	if err != nil {
		return "", err
	}
	_, hash, err := fragments(root, sel.Names)
	if err != nil {
		return "", err
	}
	return Dir(c, k, hash), nil
}

// fragments reads the named fragments from root/kconfig.
func fragments(root string, names []string) ([]*kconfig.Config, string, error) {
	h := sha256.New()
	var out []*kconfig.Config
	for _, n := range names {
		if err := fsutil.ValidName(n); err != nil {
			return nil, "", fmt.Errorf("fragment: %v: %w", err, errs.ErrUsage)
		}
		p := filepath.Join(root, "kconfig", n+".config")
		b, err := os.ReadFile(p)
		if err != nil {
			known, _ := filepath.Glob(filepath.Join(root, "kconfig", "*.config"))
			for i := range known {
				known[i] = strings.TrimSuffix(filepath.Base(known[i]), ".config")
			}
			return nil, "", fmt.Errorf("no fragment %q (kconfig/%s.config); fragments: %s: %w", n, n, strings.Join(known, ", "), errs.ErrInput)
		}
		c, err := kconfig.Parse("kconfig/"+n+".config", strings.NewReader(string(b)))
		if err != nil {
			return nil, "", err
		}
		fmt.Fprintf(h, "%s\n%d\n%s", n, len(b), b)
		out = append(out, c)
	}
	return out, hex.EncodeToString(h.Sum(nil)), nil
}

// NormalizeVariant is v checked, Patched when empty: a usage error
// unless baseline or patched.
func NormalizeVariant(v string) (string, error) {
	if v == "" {
		return vocab.Patched, nil
	}
	if v != vocab.Baseline && v != vocab.Patched {
		return "", fmt.Errorf("variant %q: want baseline or patched: %w", v, errs.ErrUsage)
	}
	return v, nil
}

// normalize fills in the defaults and checks the options.
func (o *Options) normalize() error {
	if o.Jobs != 0 {
		if err := CheckJobs(o.Jobs); err != nil {
			return err
		}
	}
	v, err := NormalizeVariant(o.Variant)
	if err != nil {
		return err
	}
	o.Variant = v
	if o.DMA, err = vocab.ParseDMA(o.DMA); err != nil {
		return err
	}
	if o.Apply == nil {
		return fmt.Errorf("build of %s: no apply stage output", o.Kernel.Name)
	}
	sel, err := SelectFragments(o.Root, o.Kernel, o.Apply, o.Fragments)
	if err != nil {
		return err
	}
	o.Fragments, o.selection = sel.Names, sel
	if o.Jobs == 0 {
		o.Jobs = min(runtime.NumCPU(), MaxJobs)
	}
	return nil
}

// Key names everything a build's output depends on: the sources (the
// pristine tree and the variant's state of the touched files), the
// harness patches of the DMA mode (State), the fragments' content, the
// compiler, make's variables (makeFlags), and patchctl's own code.
func Key(o Options) (string, error) {
	if err := o.normalize(); err != nil {
		return "", err
	}
	_, hash, err := fragments(o.Root, o.Fragments)
	if err != nil {
		return "", err
	}
	state, err := State(o.Apply, o.Variant, o.DMA)
	if err != nil {
		return "", err
	}
	return stagecache.NewKey("build").Code().Add("kernel", o.Kernel.Key()).Add("variant", o.Variant).
		Add("state", state).Add("config", hash).Add("compiler", compilerVersion()).
		Add("make", strings.Join(makeFlags, " ")).Sum()
}

// Build configures (when the configuration changed) and builds. The
// kernel's work lock is held from setting the work tree's state through
// make to the snapshot of the artifacts: no other process can change the
// sources under the build.
func Build(ctx context.Context, o Options) (*Metadata, error) {
	start := time.Now()
	if err := o.normalize(); err != nil {
		return nil, err
	}
	if err := checkHostTools(o.Runner); err != nil {
		return nil, err
	}
	// kbuild refuses these ("source directory cannot contain spaces or
	// colons"), late and in its own words: say it first, and how to fix.
	if strings.ContainsAny(o.Cache.Dir, " :") {
		return nil, fmt.Errorf("the cache folder %q holds a space or a colon, which the kernel build refuses in its source and output paths: use --cache or PATCHCTL_CACHE with a path without them: %w", o.Cache.Dir, errs.ErrInput)
	}
	frags, hash, err := fragments(o.Root, o.Fragments)
	if err != nil {
		return nil, err
	}
	pristine, err := o.Cache.Prepare(ctx, o.Kernel)
	if err != nil {
		return nil, err
	}
	// The build reads the whole tree: every file must be there, at its
	// size, and the touched ones with their content.
	if err := o.Cache.Verify(o.Kernel, []string{"."}, o.Apply.Touched()); err != nil {
		return nil, err
	}
	state, err := State(o.Apply, o.Variant, o.DMA)
	if err != nil {
		return nil, err
	}
	plan, err := harnessPlan(&o, pristine)
	if err != nil {
		return nil, err
	}
	wt, release, err := o.Cache.HoldWorkTree(ctx, o.Kernel)
	if err != nil {
		return nil, err
	}
	defer release()
	md := &Metadata{Kernel: o.Kernel.Name, Variant: o.Variant, ConfigHash: hash, KernelFrom: vocab.FromSource, Fragments: o.Fragments, Jobs: o.Jobs,
		FragmentsOn: o.selection.On, FragmentsOff: o.selection.Off, Source: o.Kernel.Key(), Artifacts: map[string]string{}, SHA256: map[string]string{}, State: state,
		DMA: o.DMA, Harness: plan.Applied}
	if len(plan.Off) > 0 {
		md.HarnessOff = plan.Off
	}
	for h, why := range plan.Off {
		o.Progress.Note("%s %s: harness %s not applied: %s", o.Kernel.Name, o.Variant, h, why)
	}
	if err := checkoutHarness(wt, &o, plan); err != nil {
		return nil, err
	}
	if len(plan.Files) > 0 {
		// The work tree others see holds the variant's state only: the
		// harness comes off when the build ends, however it ends.
		defer func() {
			if err := apply.Checkout(wt, o.Apply, o.Variant); err != nil {
				o.Progress.Note("taking the harness out of the %s work tree: %v (the next stage that sets the work tree does it)", o.Kernel.Name, err)
			}
		}()
	}
	if o.Variant == vocab.Patched {
		md.Applied = o.Apply.Applied()
	}
	md.SourceDir = wt.Dir
	dir := Dir(o.Cache, o.Kernel, hash)
	if err := dropOtherSource(dir, o.Kernel.Key(), o.Progress); err != nil {
		return nil, err
	}
	if err := seedConfig(ctx, dir, o.Kernel.Key(), o.selection.Names, o.Progress); err != nil {
		return nil, err
	}
	if err := seedLocal(ctx, o.Cache, o.Kernel, wt, dir, o.Progress); err != nil {
		return nil, err
	}
	if err := claimFolder(dir, o.Kernel.Key(), o.Progress); err != nil {
		return nil, err
	}
	// Each variant compiles in its own folder (ObjDir): the baseline's
	// only ever holds the pristine state; the patched one starts as a
	// copy of the baseline's objects and stays incremental from there.
	obj := ObjDir(dir, o.Variant)
	if o.Variant == vocab.Patched {
		if err := seedVariant(ctx, dir, obj, o.Kernel.Key(), o.Progress); err != nil {
			return nil, err
		}
		if err := claimFolder(obj, o.Kernel.Key(), o.Progress); err != nil {
			return nil, err
		}
	}
	// The snapshot is written aside and published whole at the end
	// (publish): a snapshot another process named is never rewritten.
	final := StateDir(dir, o.Variant, md.State)
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return nil, err
	}
	staging, err := os.MkdirTemp(filepath.Dir(final), "."+filepath.Base(final)+".tmp-")
	if err != nil {
		return nil, err
	}
	md.BuildDir, md.VariantDir = obj, staging
	md.Log = filepath.Join(md.VariantDir, "build.log")
	md.ID, md.Patches = ImageID(o.Cache.Dir, final), PatchRecords(o.Apply, o.Variant)
	if md.Key, err = Key(o); err != nil {
		os.RemoveAll(staging)
		return nil, err
	}
	md.publishTo = final
	st0, err := wt.State()
	if err != nil {
		return nil, err
	}
	touched := o.Apply.Touched()
	paths := append(append(append([]string{}, touched...), st0.Touched...), plan.Paths()...)
	if o.Variant == vocab.Baseline {
		// Files the patched folder freshened back to their pristine
		// content are newer than the baseline's objects: the pristine
		// files again, so the baseline compiles nothing of them.
		if err := relinkPristine(wt, append(paths, recordedPaths(ObjDir(dir, vocab.Patched))...)); err != nil {
			return nil, err
		}
	}
	synced := paths
	if o.Variant == vocab.Baseline {
		// The baseline compiles the pristine state and the harness only:
		// what its record does not name was compiled from pristine
		// content, so it needs naming only for the harness and what an
		// older build of the folder compiled otherwise (a folder both
		// variants once shared).
		synced = plan.Paths()
	}
	rec, err := syncSources(wt.Dir, wt.Pristine, obj, synced, plan.Paths())
	if err != nil {
		return nil, err
	}
	m := &maker{src: wt.Dir, dir: obj, jobs: o.Jobs, progress: o.Progress, runner: o.Runner}
	m.ccache, m.cacheDir = !o.NoCcache, o.Cache.Dir
	if _, err := command.Or(o.Runner).LookPath("ccache"); err != nil {
		m.ccache = false
	}
	md.Ccache = m.ccache
	md.TargetDurations = map[string]float64{"setup": time.Since(start).Seconds()}
	step := time.Now()
	st, err := configure(ctx, m, pristine, frags, hash, o.Fragments)
	if err != nil {
		return nil, err
	}
	md.TargetDurations["config"] = time.Since(step).Seconds()
	md.Verified = len(st.Requested)

	logf, err := os.Create(md.Log)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	m.log = logf
	o.Progress.Start(fmt.Sprintf("build %s %s", o.Kernel.Name, o.Variant))
	step = time.Now()
	kcfg, err := kconfig.Load(filepath.Join(obj, ".config"))
	if err != nil {
		return finish(md, start, fmt.Errorf("reading the build's configuration: %w", err))
	}
	kernelTargets := []string{"bzImage"}
	var members map[string]bool
	var goals *moduleGoalSet
	if kcfg.Value("MODULES") == "y" {
		kernelTargets = append(kernelTargets, "modules")
		if o.Variant == vocab.Patched {
			if members = modulesOnly(obj, rec); members != nil {
				kernelTargets = []string{"modules"}
				md.ModulesOnly = true
				if goals = moduleGoals(wt.Dir, obj, kcfg); goals != nil && !o.walkModules {
					kernelTargets = goals.targets
					md.ModuleGoals = true
					m.notWork = map[string]bool{"MODPOST": true}
				}
			}
		}
	}
	if m.ccache {
		m.statsLog = filepath.Join(md.VariantDir, "ccache.log")
	}
	// Compile-test every C file the patches that apply change, whether
	// or not the boot config needs it (the conditional fragments turn on
	// what those objects need).
	targets := compileTargets(wt.Dir, o.Apply.Result.Touched())
	// Objects of modules were compiled by the modules-only make.
	pending := slices.DeleteFunc(slices.Clone(targets), func(t string) bool { return members[t] })
	// Nothing changed since the folder's last complete make: no make
	// (uptodate.go). A source whose content changed since then needs
	// make anyway.
	inputs, provable := makeInputs(append(append(m.args(kernelTargets...), "compile-test:"), pending...), m.env())
	byContent := map[string]bool{}
	for _, p := range plan.Paths() {
		byContent[p] = true
	}
	if provable && len(rec.changed) == 0 && provedUpToDate(wt.Dir, obj, inputs, byContent) {
		md.Proved = true
		pending = nil
	} else if err := forgetUpToDate(obj); err != nil {
		return finish(md, start, err)
	}
	var res makeResult
	var beside *sourceStamp
	if !md.Proved {
		if provable {
			beside = sourceBeside(wt.Dir, obj, byContent)
			defer beside.result()
		}
		res, err = m.make(ctx, kernelTargets...)
	}
	m.notWork = nil
	if md.ModuleGoals && !md.Proved {
		// kbuild wrote modules.order with the goals (sorted) and removed
		// it; the folder's list is the same modules in the tree's order.
		if rerr := goals.restore(); rerr != nil && err == nil {
			err = rerr
		}
	}
	md.TargetDurations["kernel"] = time.Since(step).Seconds()
	md.Warnings, md.Errors = res.warnings, res.errors
	if err != nil {
		return finish(md, start, err)
	}
	work := res.work
	if len(pending) > 0 {
		step = time.Now()
		res, err := m.make(ctx, pending...)
		md.TargetDurations["compile-test"] = time.Since(step).Seconds()
		md.Warnings += res.warnings
		md.Errors += res.errors
		work += res.work
		if err != nil {
			return finish(md, start, err)
		}
	}
	if len(targets) > 0 {
		md.CompileTested = targets
	}
	md.UpToDate = work == 0
	// The proof is written beside the snapshot, which reads the folder
	// and writes only the variant's snapshot and patchctl's own records
	// (neither in the proof), and is waited for on every way out, before
	// the work tree is let go or the harness taken out of it. Make has
	// completed, so the proof stands even if the snapshot then fails (the
	// build fails; the next one finds the folder up to date, or, with the
	// sources record left incomplete, freshens the recorded sources and
	// runs make).
	proved := make(chan struct{})
	if provable && !md.Proved {
		go func() {
			defer close(proved)
			// Without a proof the next build runs make, as before: a
			// folder that cannot be listed is not an error of this
			// build (and a proof that cannot be removed was removed
			// before make).
			if err := recordUpToDate(wt.Dir, obj, inputs, byContent, beside); err != nil {
				_ = forgetUpToDate(obj)
			}
		}()
		defer func() { <-proved }()
	} else {
		close(proved)
	}
	if m.statsLog != "" {
		// Counted into the record; the log itself is not part of the
		// image.
		md.CcacheStats = ReadCcacheLog(m.statsLog)
		os.Remove(m.statsLog)
	}
	if b, err := os.ReadFile(filepath.Join(obj, "include", "config", "kernel.release")); err == nil {
		md.KernelRelease = strings.TrimSpace(string(b))
	}
	md.Compiler = compilerVersion()
	step = time.Now()
	// Snapshot the variant's artifacts: the folder's own are the next
	// variant's once it builds.
	for name, rel := range map[string]string{"bzImage": "arch/x86/boot/bzImage", "System.map": "System.map", "config": ".config"} {
		dst := filepath.Join(md.VariantDir, filepath.Base(rel))
		if err := fsutil.CopyFile(filepath.Join(obj, rel), dst); err != nil {
			if name == "bzImage" {
				return finish(md, start, fmt.Errorf("snapshot of %s: %w", name, err))
			}
			continue
		}
		sum, err := fsutil.HashFile(dst)
		if err != nil {
			return finish(md, start, err)
		}
		md.Artifacts[name], md.SHA256[name] = dst, sum
	}
	if _, err := os.Stat(filepath.Join(obj, "vmlinux")); err == nil {
		md.Artifacts["vmlinux"] = filepath.Join(obj, "vmlinux")
	}
	base := ""
	if o.Variant == vocab.Patched {
		base = dir
		if h, err := fsutil.HashFile(filepath.Join(dir, "arch/x86/boot/bzImage")); err == nil {
			shared := h == md.SHA256["bzImage"]
			md.VmlinuxShared = &shared
		}
	}
	if kcfg.Value("MODULES") == "y" {
		if err := snapshotModules(ctx, obj, base, kcfg, md); err != nil {
			return finish(md, start, err)
		}
	}
	rec.Complete = true
	if err := writeRecord(obj, rec); err != nil {
		return finish(md, start, err)
	}
	<-proved
	if md.UpToDate {
		o.Progress.Done("up to date")
	} else {
		o.Progress.Done("%s built (%d objects)", md.KernelRelease, work)
	}
	md.TargetDurations["snapshot"] = time.Since(step).Seconds()
	return finish(md, start, nil)
}

// claimFolder ties a build folder to the kernel source it compiles: a
// folder made from another source (the kernel was re-pinned: a new
// upload, new files whose times make cannot be trusted to compare) is
// emptied, so nothing of the old tree survives into the new build. A
// folder that records no source (made before the record existed) is
// claimed as it is.
func claimFolder(dir, key string, p *progress.Reporter) error {
	if err := dropOtherSource(dir, key, p); err != nil {
		return err
	}
	rec := filepath.Join(dir, ".patchctl-kernel")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if b, err := os.ReadFile(rec); err == nil && string(b) == key+"\n" {
		return nil // a folder whose files a build leaves untouched keeps them so
	}
	return os.WriteFile(rec, []byte(key+"\n"), 0o644)
}

// dropOtherSource removes dir when it holds the build of another kernel
// source than key (re-pinned, or a local tree whose content changed), so
// that it is seeded or built afresh.
func dropOtherSource(dir, key string, p *progress.Reporter) error {
	b, err := os.ReadFile(filepath.Join(dir, ".patchctl-kernel"))
	if err != nil || strings.TrimSpace(string(b)) == key {
		return nil
	}
	p.Note("the kernel source of %s changed (re-pinned, or the local tree's content): starting the build folder afresh", dir)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("emptying the build folder of an old kernel source: %w", err)
	}
	return nil
}

func finish(md *Metadata, start time.Time, err error) (*Metadata, error) {
	md.Duration = time.Since(start).Seconds()
	md.Status = vocab.Pass
	if err != nil {
		md.Status = vocab.Fail
	}
	staging, final := md.VariantDir, md.publishTo
	if final == "" {
		if werr := fsutil.WriteJSON(filepath.Join(md.VariantDir, "metadata.json"), md); werr != nil && err == nil {
			err = werr
		}
		return md, err
	}
	// The record names the snapshot's own place.
	md.rebase(staging, final)
	if werr := fsutil.WriteJSON(filepath.Join(staging, "metadata.json"), md); werr != nil {
		os.RemoveAll(staging)
		return md, errors.Join(err, werr)
	}
	got, perr := publish(staging, final)
	if perr != nil {
		os.RemoveAll(staging)
		return md, errors.Join(err, perr)
	}
	md.publishTo = ""
	if err == nil {
		// variants/<variant>: the latest build of the folder, for people
		// browsing the cache; boot and bench never follow it.
		if lerr := LinkLatest(filepath.Dir(filepath.Dir(final)), md.Variant, got); lerr != nil {
			return md, lerr
		}
		// Another build of the same state published first: its record,
		// the image others may have named, stands.
		if kept := KeptRecord(got, md); kept != nil {
			return kept, nil
		}
	}
	var ce *CompileError
	if errors.As(err, &ce) && strings.HasPrefix(ce.Log, staging) {
		ce.Log = final + strings.TrimPrefix(ce.Log, staging)
	}
	return md, err
}

// KeptRecord is the record of the image published at got when it is not
// the one md describes (another build of the same state published first,
// and its files stand), nil when md describes it: every file the record
// hashes is compared, not only the kernel. A module compiled again from
// the same source in another folder differs in its build ID (the debug
// info it was linked with names the folder), so a record of this build's
// modules would name files the snapshot does not hold, and "rebuilt"
// modules the image's were not. The distro path publishes the same way.
func KeptRecord(got string, md *Metadata) *Metadata {
	kept, err := LoadImage(got)
	if err != nil || maps.Equal(kept.SHA256, md.SHA256) && maps.Equal(kept.ModuleSHA256, md.ModuleSHA256) {
		return nil
	}
	kept.Duration, kept.UpToDate, kept.Warnings = md.Duration, md.UpToDate, md.Warnings
	return kept
}

// rebase rewrites the record's paths under from to be under to.
func (md *Metadata) rebase(from, to string) {
	re := func(p string) string {
		if p == from || strings.HasPrefix(p, from+string(filepath.Separator)) {
			return to + strings.TrimPrefix(p, from)
		}
		return p
	}
	md.VariantDir, md.Log = re(md.VariantDir), re(md.Log)
	for k, v := range md.Artifacts {
		md.Artifacts[k] = re(v)
	}
	for i, m := range md.Modules {
		md.Modules[i] = re(m)
	}
}

// sources is what a build folder records of the files its objects were
// compiled from: each path that ever differed from pristine in a build
// of this folder, with the hash of its content then.
type sources struct {
	// Complete is false while a build runs: after a kill, nothing is
	// known of what make left, and every recorded file is redone.
	Complete bool              `json:"complete"`
	Files    map[string]string `json:"files"` // path -> sha256 ("" absent)

	// What syncSources found, not recorded: the paths whose content
	// differs from what the folder's objects were compiled from, and
	// whether that is unknown (a new folder, or a build that was
	// interrupted: then anything may need compiling).
	changed []string
	unknown bool
}

func sourcesPath(dir string) string { return filepath.Join(dir, ".patchctl-sources.json") }

// writeRecord writes rec, unless the folder holds the same record.
func writeRecord(dir string, rec *sources) error {
	if b, err := os.ReadFile(sourcesPath(dir)); err == nil {
		var old sources
		if json.Unmarshal(b, &old) == nil && old.Complete == rec.Complete && sameFiles(old.Files, rec.Files) {
			return nil
		}
	}
	return fsutil.WriteJSON(sourcesPath(dir), rec)
}

func sameFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for p, h := range a {
		if g, ok := b[p]; !ok || g != h {
			return false
		}
	}
	return true
}

// recordedPaths are the paths dir's source record names (none when it
// has no record).
func recordedPaths(dir string) []string {
	var rec sources
	b, err := os.ReadFile(sourcesPath(dir))
	if err != nil || json.Unmarshal(b, &rec) != nil {
		return nil
	}
	var out []string
	for p := range rec.Files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// relinkPristine makes each of paths whose content in the work tree is
// its pristine content the pristine file again (a link, with the
// pristine time): a copy freshened for the patched folder's make would
// look newer than the baseline's objects.
func relinkPristine(wt *tree.WorkTree, paths []string) error {
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] || p == "" {
			continue
		}
		seen[p] = true
		cur, src := filepath.Join(wt.Dir, filepath.FromSlash(p)), filepath.Join(wt.Pristine, filepath.FromSlash(p))
		cst, err := os.Lstat(cur)
		if err != nil || !cst.Mode().IsRegular() {
			continue
		}
		pst, err := os.Lstat(src)
		if err != nil || !pst.Mode().IsRegular() || os.SameFile(cst, pst) || cst.Size() != pst.Size() {
			continue
		}
		a, err := os.ReadFile(cur)
		if err != nil {
			return fmt.Errorf("reading %s of the work tree: %w", p, err)
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("reading the pristine %s: %w", p, err)
		}
		if string(a) != string(b) {
			continue
		}
		tmp := cur + ".patchctl-tmp"
		os.Remove(tmp)
		if err := os.Link(src, tmp); err != nil {
			return fmt.Errorf("restoring the pristine %s in the work tree: %w", p, err)
		}
		if err := os.Rename(tmp, cur); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("restoring the pristine %s in the work tree: %w", p, err)
		}
	}
	return nil
}

// syncSources makes make see every change of content since the folder's
// last build: make compares times, and a reset to pristine brings back
// files older than the objects built from a series. Each recorded or
// named file whose content differs from the record gets a new inode and
// time, so make recompiles exactly those. The record, marked incomplete,
// is written before make runs. The result names the paths whose content
// differs from what the folder compiled (changed): recorded ones whose
// content changed, and unrecorded ones that differ from pristine.
//
// strict are paths written with an old time (the harness's, see
// checkoutHarness): for them only the record decides, and one the
// record does not know is freshened when it differs from pristine.
func syncSources(src, pristine, dir string, paths, strict []string) (*sources, error) {
	var old sources
	b, err := os.ReadFile(sourcesPath(dir))
	fresh := errors.Is(err, fs.ErrNotExist)
	if err == nil {
		if jerr := json.Unmarshal(b, &old); jerr != nil {
			old = sources{}
		}
	} else if !fresh {
		return nil, fmt.Errorf("reading the build's source record: %w", err)
	}
	all, isStrict := map[string]bool{}, map[string]bool{}
	for _, p := range paths {
		all[p] = true
	}
	for _, p := range strict {
		all[p], isStrict[p] = true, true
	}
	for p := range old.Files {
		all[p] = true
	}
	cur := &sources{Files: map[string]string{}, unknown: fresh || !old.Complete}
	for p := range all {
		b, err := os.ReadFile(filepath.Join(src, p))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			cur.Files[p] = ""
		case err != nil:
			return nil, err
		default:
			cur.Files[p] = fsutil.Hash(b)
		}
		// A path the record does not know was never compiled from
		// anything but its pristine content here: when it differs now,
		// it was written after those objects, and make sees it.
		was, known := old.Files[p]
		if known && was != cur.Files[p] || !known && !samePristine(pristine, p, cur.Files[p]) {
			// An unknown path was compiled here from its pristine
			// content (a series names it; a patch that does not apply
			// leaves it as it was).
			cur.changed = append(cur.changed, p)
		}
		if fresh || cur.Files[p] == "" || old.Complete && (!known && !isStrict[p] || known && was == cur.Files[p]) {
			continue
		}
		if err := freshen(src, p); err != nil {
			return nil, err
		}
	}
	sort.Strings(cur.changed)
	if old.Complete && sameFiles(old.Files, cur.Files) {
		// Nothing compiled here changes content: make's own times say
		// what to redo even if it is killed, and the record stands as
		// it is (the folder is left untouched by a build with nothing
		// to do).
		return cur, nil
	}
	pending := &sources{Files: map[string]string{}}
	for p, h := range cur.Files {
		pending.Files[p] = h
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := writeRecord(dir, pending); err != nil {
		return nil, err
	}
	return cur, nil
}

// samePristine says whether the pristine tree's p has the content hash h
// ("" absent); false when there is no pristine tree to ask.
func samePristine(pristine, p, h string) bool {
	if pristine == "" {
		return false
	}
	b, err := os.ReadFile(filepath.Join(pristine, p))
	if errors.Is(err, fs.ErrNotExist) {
		return h == ""
	}
	return err == nil && fsutil.Hash(b) == h
}

// freshen replaces a file by a copy of itself: a new inode (never a link
// into the pristine tree) with the time of now.
func freshen(src, p string) error {
	full := filepath.Join(src, p)
	st, err := os.Stat(full)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(full)
	if err != nil {
		return err
	}
	return fsutil.WriteFile(full, b, st.Mode().Perm())
}

// configure makes the folder's .config when the fragments changed:
// tinyconfig, merge, olddefconfig, verify.
func configure(ctx context.Context, m *maker, pristine string, frags []*kconfig.Config, hash string, names []string) (*configState, error) {
	statePath := filepath.Join(m.dir, ".patchctl-config.json")
	var st configState
	if b, err := os.ReadFile(statePath); err == nil && json.Unmarshal(b, &st) == nil && st.Hash == hash {
		if _, err := os.Stat(filepath.Join(m.dir, ".config")); err == nil {
			return &st, nil
		}
	}
	m.progress.Start("configure " + filepath.Base(m.dir))
	m.log = io.Discard
	// Kconfig writes include/config/auto.conf (with auto.conf.cmd and
	// autoconf.h) at the end of a pass when it is missing. In a new
	// folder the first pass (allnoconfig) made it and olddefconfig left
	// it, older than the .config it wrote, so the build's first make ran
	// a third Kconfig pass (syncconfig: 11 s of a fresh make run, 6.12,
	// 2026-12-06). Removed after the first pass, it is written by the last
	// one, from the final .config, as syncconfig writes it
	// (TestFragmentsVerifyOnEveryKernel). A folder configured before keeps
	// its own: the build's syncconfig then marks only the symbols that
	// changed for kbuild's dependencies.
	autoConf := filepath.Join(m.dir, "include", "config", "auto.conf")
	_, err := os.Stat(autoConf)
	newFolder := errors.Is(err, fs.ErrNotExist)
	tiny, err := tinyconfig(ctx, m)
	if err != nil {
		return nil, err
	}
	if newFolder {
		if err := os.Remove(autoConf); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("configure: %w", err)
		}
	}
	base, err := kconfig.Load(filepath.Join(m.dir, ".config"))
	if err != nil {
		return nil, err
	}
	merged, _ := kconfig.Merge(base, append(tiny, frags...)...)
	f, err := os.Create(filepath.Join(m.dir, ".config"))
	if err != nil {
		return nil, err
	}
	if err := merged.Write(f); err != nil {
		f.Close()
		return nil, err
	}
	f.Close()
	if _, err := m.make(ctx, "olddefconfig"); err != nil {
		return nil, fmt.Errorf("make olddefconfig: %w", err)
	}
	final, err := kconfig.Load(filepath.Join(m.dir, ".config"))
	if err != nil {
		return nil, err
	}
	req := kconfig.Requested(frags...)
	if miss := kconfig.Verify(req, final, nil); len(miss) > 0 {
		db, err := kconfig.LoadDB(pristine, "x86")
		if err == nil {
			miss = kconfig.Verify(req, final, db)
		}
		os.Remove(statePath)
		return nil, &ConfigError{Misses: miss}
	}
	st = configState{Hash: hash, Fragments: names, Requested: req}
	if err := fsutil.WriteJSON(statePath, st); err != nil {
		return nil, err
	}
	m.progress.Done("%d requested symbols verified", len(req))
	return &st, nil
}

// tinyconfig starts the folder's .config as `make tinyconfig` does and
// returns the fragments left for the caller to merge, before its own,
// ahead of its one olddefconfig. Where the tree's tinyconfig is
// allnoconfig (from kernel/configs/tiny-base.config from 6.1 on), then
// the tiny.config fragments merged and olddefconfig (tinyRecipe: the
// rules of 5.10 to 7.3), only the allnoconfig runs here: tinyconfig's
// own olddefconfig would be a third Kconfig pass, each repeating
// Kconfig's compiler probes (about 90 gcc runs, 5-6 s on 2 cores). A
// tree whose rules read otherwise gets `make tinyconfig` and no
// fragments. TestFragmentsVerifyOnEveryKernel compares the two ways on
// every kernel it configures.
func tinyconfig(ctx context.Context, m *maker) ([]*kconfig.Config, error) {
	mk, err := os.ReadFile(filepath.Join(m.src, "scripts", "kconfig", "Makefile"))
	base, ok := tinyRecipe(string(mk))
	if err != nil || !ok {
		if _, err := m.make(ctx, "tinyconfig"); err != nil {
			return nil, fmt.Errorf("make tinyconfig: %w", err)
		}
		return nil, nil
	}
	var frags []*kconfig.Config
	for _, p := range []string{"kernel/configs/tiny.config", "arch/x86/configs/tiny.config"} {
		c, err := kconfig.Load(filepath.Join(m.src, p))
		if errors.Is(err, fs.ErrNotExist) {
			continue // the rule's $(wildcard ...)
		}
		if err != nil {
			return nil, err
		}
		frags = append(frags, c)
	}
	if len(frags) == 0 {
		return nil, fmt.Errorf("make tinyconfig: no tiny.config fragment in %s: %w", m.src, errs.ErrInput)
	}
	am := *m
	if base != "" {
		// The recipe's relative name is kconfig's to resolve (objtree,
		// then srctree); the absolute one is the same file, or none.
		base = filepath.Join(m.src, base)
		if _, err := os.Stat(base); err != nil {
			return nil, fmt.Errorf("make tinyconfig: %w: %w", err, errs.ErrInput)
		}
		am.extraEnv = []string{"KCONFIG_ALLCONFIG=" + base}
	}
	if _, err := am.make(ctx, "allnoconfig"); err != nil {
		return nil, fmt.Errorf("make allnoconfig (tinyconfig's start): %w", err)
	}
	return frags, nil
}

// tinyRecipes are the tinyconfig recipes tinyconfig() takes apart,
// exactly as the kernels have them, with the KCONFIG_ALLCONFIG their
// allnoconfig reads: 6.1 to 7.3, then 5.10.
var tinyRecipes = []struct{ base, recipe string }{
	{"kernel/configs/tiny-base.config", `
	$(Q)KCONFIG_ALLCONFIG=kernel/configs/tiny-base.config $(MAKE) -f $(srctree)/Makefile allnoconfig
	$(Q)$(MAKE) -f $(srctree)/Makefile tiny.config`},
	{"", `
	$(Q)$(MAKE) -f $(srctree)/Makefile allnoconfig tiny.config`},
}

// fragmentRules are the %.config rules (the fragments of that name in
// kernel/configs and arch/$(SRCARCH)/configs merged into .config, then
// olddefconfig), each with the lines that say where it finds them: 6.2
// to 7.3, then 5.10 and 6.1.
var fragmentRules = []struct {
	rule string
	also []string
}{{` $(obj)/conf
	$(if $(config-fragments),, $(error $@ fragment does not exists on this architecture))
	$(call cmd,merge_fragments)
	$(Q)$(MAKE) -f $(srctree)/Makefile olddefconfig`, []string{
	"\nconfigfiles = $(wildcard $(srctree)/kernel/configs/$(1) $(srctree)/arch/$(SRCARCH)/configs/$(1))\n",
	"\nconfig-fragments = $(call configfiles,$@)\n",
	"\ncmd_merge_fragments = $(srctree)/scripts/kconfig/merge_config.sh -m $(KCONFIG_CONFIG) $(config-fragments)\n"},
}, {` $(obj)/conf
	$(if $(call configfiles),, $(error No configuration exists for this target on this architecture))
	$(Q)$(CONFIG_SHELL) $(srctree)/scripts/kconfig/merge_config.sh -m .config $(configfiles)
	$(Q)$(MAKE) -f $(srctree)/Makefile olddefconfig`, []string{
	"\nconfigfiles=$(wildcard $(srctree)/kernel/configs/$@ $(srctree)/arch/$(SRCARCH)/configs/$@)\n"},
}}

// tinyRecipe says whether a scripts/kconfig/Makefile's tinyconfig is one
// of tinyRecipes and its %.config rule one of fragmentRules, and the
// KCONFIG_ALLCONFIG its allnoconfig reads ("" for none).
func tinyRecipe(mk string) (base string, ok bool) {
	mk = "\n" + mk
	rule := func(target string) string {
		_, r, ok := strings.Cut(mk, "\n"+target+":")
		if !ok {
			return ""
		}
		if i := strings.Index(r, "\n\n"); i >= 0 {
			r = r[:i]
		}
		return r
	}
	tiny, fragment := rule("tinyconfig"), rule("%.config")
	for _, f := range fragmentRules {
		if fragment != f.rule {
			continue
		}
		for _, a := range f.also {
			if !strings.Contains(mk, a) {
				return "", false
			}
		}
		for _, r := range tinyRecipes {
			if tiny == r.recipe {
				return r.base, true
			}
		}
	}
	return "", false
}

// compileTargets lists the objects of touched C files present in the tree.
func compileTargets(src string, touched []string) []string {
	var out []string
	for _, p := range touched {
		if !strings.HasSuffix(p, ".c") {
			continue
		}
		if _, err := os.Stat(filepath.Join(src, p)); err != nil {
			continue
		}
		out = append(out, strings.TrimSuffix(p, ".c")+".o")
	}
	return out
}

// compilerVersion is gcc's first line of --version, once per process.
var compilerVersion = sync.OnceValue(func() string {
	out, err := command.Command("gcc", "--version").Output(context.Background())
	if err != nil {
		return ""
	}
	return strings.SplitN(string(out), "\n", 2)[0]
})

// CcacheEnv makes ccache's results shared between build folders and
// caches: paths under patchctl's cache are hashed relative to the
// compiler's directory (base_dir), and that directory itself is not
// hashed (hash_dir off; with -g it otherwise is, for the objects'
// DW_AT_comp_dir, which then may name the folder that filled the cache).
// Kbuild compiles in the build folder and names the sources by absolute
// path: both variants' folders (build/K/H, build/K/H.patched) and the
// same kernel in another cache (a CI job's PATCHCTL_CACHE) sit at the
// same place relative to their work tree (../../../work/K), so their
// compiles hit each other's results. A tree of another name (a user's
// --tree) still misses: only a build folder that is a direct
// subdirectory of its source tree makes kbuild name sources "../"
// (srctree ..), on every pinned kernel, independent of the tree's path
// (docs/build.md).
//
// Depend mode: ccache keys a compile by its command line, its source and
// the headers the compiler's own dependency file (kbuild's -Wp,-MMD)
// lists, and never runs the preprocessor a second time. In its default
// mode every miss preprocesses the file once more to hash it, which made
// a cold kernel build half as expensive again (measured on 6.12's
// net/core, net/ipv4 and kernel/: 340 CPU-s against 233 without ccache,
// and 229 in depend mode); hits are direct either way.
func CcacheEnv(cacheDir string) []string {
	env := []string{"CCACHE_NOHASHDIR=true", "CCACHE_DEPEND=true"}
	if abs, err := filepath.Abs(cacheDir); err == nil && abs != "/" {
		env = append(env, "CCACHE_BASEDIR="+abs)
	}
	return env
}

// makeFlags are the variables every make of a kernel build gets, part of
// the build key. CFLAGS_MODULE (kbuild's "additional options for
// modules", in the top Makefile and scripts/Makefile.lib of 5.10 through
// 7.3) gives module objects, and only them, DWARF: the configuration has
// no CONFIG_DEBUG_INFO (DWARF for all of vmlinux: 115 MB on 6.12), while
// what reads DWARF reads module objects (the boot's
// ib_send_wr layout from rxe_verbs.o, siw_verbs.o or nvme/host/rdma.o;
// sizeof(struct nvme_command) for the checks). A change of these
// variables changes every module object's kbuild command, so kbuild
// recompiles them (their .cmd records the command line).
var makeFlags = []string{"CFLAGS_MODULE=-g"}

// maker runs make in the source tree with O=dir.
type maker struct {
	src, dir string
	jobs     int
	ccache   bool
	cacheDir string // patchctl's cache: ccache's base_dir
	// statsLog is where ccache appends what each compile of this make
	// was (a hit, a miss), when set (ReadCcacheLog).
	statsLog string
	log      io.Writer
	progress *progress.Reporter
	runner   command.Runner
	// notWork are further quiet-mode steps of this make that are not
	// work: modpost, which a build with module goals always reruns (it
	// rewrites modules.order), writing the same .mod.c files.
	notWork map[string]bool
	// extraEnv is what the environment of a copy of the maker adds
	// (tinyconfig's KCONFIG_ALLCONFIG for its allnoconfig).
	extraEnv []string
}

type makeResult struct {
	work, warnings, errors int
	firstErrors            []string
}

// diagnostics keeps what a reader needs of a failed build's output: the
// compiler's context lines before the first error (In function ...,
// In file included from ...), the error with its source excerpt and the
// notes that follow it (note: declared here, ...), then the next errors
// with theirs, up to maxDiagnostic lines; make's own Error lines too.
type diagnostics struct {
	lines   []string
	pending []string // context lines not yet followed by an error
	open    bool     // the last kept line was an error or its continuation
}

const maxDiagnostic = 40

var (
	// gcc's context before a diagnostic.
	contextLine = regexp.MustCompile(`^(In file included from |\s+from \S+:\d+|\S+: (In|At) )`)
	// What continues a diagnostic: a located note, the source excerpt
	// and its caret line ("   12 |   v.y = 1;", "      |    ^").
	noteLine    = regexp.MustCompile(`^\S+?:\d+:(\d+:)? note: `)
	excerptLine = regexp.MustCompile(`^\s+(\d+\s+)?\|`)
)

func (d *diagnostics) add(line string, isError bool) {
	room := func(n int) bool { return len(d.lines)+n <= maxDiagnostic }
	switch {
	case isError:
		if room(len(d.pending) + 1) {
			d.lines = append(append(d.lines, d.pending...), line)
			d.open = true
		} else {
			d.open = false
		}
		d.pending = nil
	case contextLine.MatchString(line):
		d.open = false
		if len(d.pending) < 8 {
			d.pending = append(d.pending, line)
		}
	case d.open && (noteLine.MatchString(line) || excerptLine.MatchString(line)):
		if room(1) {
			d.lines = append(d.lines, line)
		}
	default:
		d.open, d.pending = false, nil
	}
}

// sourceTimestamp is the time of the tree's top Makefile, as date(1)
// prints it in UTC: the same for every build of the tree.
func sourceTimestamp(src string) string {
	t := time.Unix(0, 0)
	if st, err := os.Stat(filepath.Join(src, "Makefile")); err == nil {
		t = st.ModTime()
	}
	return t.UTC().Format(time.UnixDate)
}

// alwaysRun are the quiet-mode steps kbuild prints on every run, even when
// nothing is rebuilt: they are not work.
var alwaysRun = map[string]bool{"GEN": true, "DESCEND": true, "CALL": true, "INSTALL": true, "SYNC": true, "CHK": true}

var (
	quietLine = regexp.MustCompile(`^\s+([A-Z0-9_]+)\s+(\S+)`) // "  CC      kernel/fork.o"
	errorLine = regexp.MustCompile(`^(\S+?):(\d+):(\d+:)? (fatal )?error: `)
)

// args are make's arguments for targets.
func (m *maker) args(targets ...string) []string {
	// The image is a function of the sources and the configuration:
	// kbuild's build number and timestamp (uname -v) are fixed, the
	// timestamp the source's own (its top Makefile's time), so a relink
	// of the same state makes the same bytes and a snapshot rewritten by
	// another process's build of that state stays what was recorded.
	args := []string{"-C", m.src, "O=" + m.dir, fmt.Sprintf("-j%d", m.jobs),
		"KBUILD_BUILD_USER=patchctl", "KBUILD_BUILD_HOST=patchctl", "KBUILD_BUILD_VERSION=1",
		"KBUILD_BUILD_TIMESTAMP=" + sourceTimestamp(m.src)}
	args = append(args, makeFlags...)
	if m.ccache {
		args = append(args, "CC=ccache gcc", "HOSTCC=ccache gcc")
	}
	return append(args, targets...)
}

// env is what make's environment adds to patchctl's (ccache's settings;
// internal/command cleans an inherited MAKEFLAGS for every child).
func (m *maker) env() []string {
	if m.ccache {
		return CcacheEnv(m.cacheDir)
	}
	return nil
}

func (m *maker) make(ctx context.Context, targets ...string) (makeResult, error) {
	var res makeResult
	pr, pw := io.Pipe()
	cmd := &command.Cmd{Name: "make", Args: m.args(targets...), Stdout: pw, Runner: m.runner, Env: append(m.env(), m.extraEnv...)}
	if m.ccache && m.statsLog != "" {
		cmd.Env = append(cmd.Env, "CCACHE_STATSLOG="+m.statsLog)
	}
	proc, err := cmd.Start(ctx)
	if err != nil {
		return res, err
	}
	done := make(chan struct{})
	var diag diagnostics
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if m.log != nil {
				fmt.Fprintln(m.log, line)
			}
			if q := quietLine.FindStringSubmatch(line); q != nil && !alwaysRun[q[1]] && !m.notWork[q[1]] {
				res.work++
				m.progress.Update("%s %s", q[1], q[2])
			}
			if strings.Contains(line, "warning:") {
				res.warnings++
			}
			isError := errorLine.MatchString(line) || strings.HasPrefix(line, "make") && strings.Contains(line, "Error ")
			if isError {
				res.errors++
			}
			diag.add(line, isError)
		}
		res.firstErrors = diag.lines
		io.Copy(io.Discard, pr)
	}()
	err = proc.Wait()
	pw.Close()
	<-done
	if err != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("build interrupted; %s is kept and the next build goes on from it: %w: %w", m.dir, ctx.Err(), errs.ErrEnv)
		}
		var re *command.Error
		if errors.As(err, &re) {
			first := res.firstErrors
			if len(first) == 0 {
				first = []string{"make " + strings.Join(targets, " ") + ": " + err.Error()}
			}
			return res, &CompileError{First: first, Log: logName(m.log)}
		}
		return res, err
	}
	return res, nil
}

func logName(w io.Writer) string {
	if f, ok := w.(*os.File); ok {
		return f.Name()
	}
	return "(not kept)"
}

// CcacheStats counts a build's compiles of source files: those ccache
// answered from its cache, those it compiled.
type CcacheStats struct {
	Hits   int `json:"hits"`
	Misses int `json:"misses"`
}

// ReadCcacheLog counts ccache's stats log (stats_log: for each call a
// "# <input>" line, then the counters it bumped): hits and misses of
// compiles of files, not kbuild's probes (input /dev/null or stdin).
// No log: ccache was not called (no counts); nil when it cannot be read.
func ReadCcacheLog(path string) *CcacheStats {
	st := &CcacheStats{}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st
	}
	if err != nil {
		return nil
	}
	probe := true
	for _, l := range strings.Split(string(b), "\n") {
		if in, ok := strings.CutPrefix(l, "# "); ok {
			probe = in == "/dev/null" || in == "-" || in == ""
			continue
		}
		if probe {
			continue
		}
		switch l {
		case "direct_cache_hit", "preprocessed_cache_hit":
			st.Hits++
		case "cache_miss":
			st.Misses++
		}
	}
	return st
}
