package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/fsutil"
)

// A make with nothing to do still costs a kernel build 9 s and 14 CPU-s
// (6.12, 2 idle cores: make reads every folder's Makefile and .cmd files
// and runs about 140 compiler probes). A build folder whose last make
// completed, and whose inputs are the same files as then, is proved up to
// date without make: the proof (upToDateFile, in the folder) names every
// entry of the source tree and of the build folder with its type, inode,
// size and modification time, as they were after that make, every file
// outside both that the folder's command records name (the host's headers
// of its host programs, the compiler's own), and what make was asked (its
// arguments, the environment kbuild reads, the compiler and linker). Make
// itself compares modification times only, so whatever it would redo
// changes one of these; a proof that differs in anything runs make as
// before. The proof is removed before make runs, and is not written when
// a source changed in the last moments before it was taken (racy: a
// second change within the file system's clock tick would keep the time),
// nor when kbuild would run other tools (CROSS_COMPILE, LLVM), read the
// environment over its Makefile (make -e), follow a link out of the trees
// or name a git commit in the release (a .git in the tree).

// upToDateFile is the proof's name in the build folder; patchctl's own
// files there (".patchctl-*") and the snapshots (variants/) are not
// make's and are left out of it.
const upToDateFile = ".patchctl-uptodate.json"

// upToDateVersion changes when what the proof covers changes.
const upToDateVersion = "4"

// racyWindow: a source changed this close before the proof was taken
// might change again with the same time; no proof is written then.
const racyWindow = 200 * time.Millisecond

type upToDate struct {
	Version string `json:"version"`
	Make    string `json:"make"`   // make's arguments, environment and tools
	Source  string `json:"source"` // the source tree's entries
	Folder  string `json:"folder"` // the build folder's entries
	// Outside are the files outside both trees that the folder's
	// command records name (the host's headers its host programs
	// include, the compiler's own), and OutsideStamp their stamp.
	Outside      []string `json:"outside"`
	OutsideStamp string   `json:"outside_stamp"`
}

// kbuildEnv matches the environment variables kbuild (or make) reads
// from the environment: its K*FLAGS and KBUILD_*/KCONFIG_* settings, the
// *FLAGS* variables, the architecture, the install paths, PATH (which
// compiler runs) and MAKEFLAGS.
var kbuildEnv = regexp.MustCompile(`^(K[A-Z0-9_]*|[A-Z0-9_]*FLAGS[A-Z0-9_]*|ARCH|SUBARCH|SRCARCH|LOCALVERSION|INSTALL_[A-Z0-9_]*|PATH|SOURCE_DATE_EPOCH)$`)

// otherTools are environment variables that make kbuild run other
// tools than gcc and ld (whose versions the proof holds) or read other
// makefiles: with one set, no proof.
var otherTools = []string{"CROSS_COMPILE", "LLVM", "LLVM_IAS", "MAKEFILES"}

// makeInputs is what make is given besides files: its arguments (the
// folder's targets and variables; not -j), the environment kbuild reads
// and the compiler and linker's versions. ok is false when the
// environment makes kbuild run other tools (otherTools) or lets it
// override the Makefile's variables (make -e).
func makeInputs(args, env []string) (inputs string, ok bool) {
	var vars []string
	ok = true
	// The environment make gets: env over patchctl's own, the later of
	// two settings of a name winning (as os/exec does).
	final := map[string]string{}
	for _, kv := range append(os.Environ(), env...) {
		name, val, _ := strings.Cut(kv, "=")
		final[name] = val
	}
	for name, val := range final {
		if slices.Contains(otherTools, name) && val != "" {
			ok = false
		}
		if !kbuildEnv.MatchString(name) {
			continue
		}
		if command.IsMakeflags(name) {
			val = command.CleanMakeflags(val)
			if environmentOverrides(val) {
				ok = false
			}
		}
		if name == "PATH" {
			val = firstOfEach(val)
		}
		if strings.TrimSpace(val) != "" { // empty is unset, to kbuild
			vars = append(vars, name+"="+val)
		}
	}
	slices.Sort(vars)
	args = slices.DeleteFunc(slices.Clone(args), func(a string) bool { return strings.HasPrefix(a, "-j") })
	parts := []string{"args", command.Quote(args), "env", strings.Join(vars, "\n"), "gcc", compilerVersion(), "ld", linkerVersion()}
	s := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(s[:]), ok
}

// firstOfEach is a PATH without the later repeats of a folder, which
// name no other program: a lookup stops at the first. `go test` puts
// GOROOT/bin first for its test binaries, where .ci/run already has it,
// so a test's make and the command line's have the same inputs.
func firstOfEach(path string) string {
	var dirs []string
	for _, d := range strings.Split(path, ":") {
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return strings.Join(dirs, ":")
}

// environmentOverrides says whether MAKEFLAGS holds make's -e (its first
// word is the single-letter flags, without a dash).
func environmentOverrides(makeflags string) bool {
	for i, f := range strings.Fields(makeflags) {
		if f == "--" {
			break
		}
		if f == "-e" || f == "--environment-overrides" || i == 0 && !strings.HasPrefix(f, "-") && !strings.Contains(f, "=") && strings.Contains(f, "e") {
			return true
		}
	}
	return false
}

// linkerVersion is ld's first line of --version, once per process (as
// compilerVersion is gcc's).
var linkerVersion = sync.OnceValue(func() string {
	out, err := command.Command("ld", "--version").Output(context.Background())
	if err != nil {
		return ""
	}
	v, _, _ := strings.Cut(string(out), "\n")
	return v
})

// folderEntry leaves out what is patchctl's in a build folder: its
// records (and their files being written, fsutil's "."+name+".tmp-*":
// the proof is written beside the record) and the snapshots.
func folderEntry(rel string) bool {
	top, _, _ := strings.Cut(rel, "/")
	return top != "variants" && !strings.HasPrefix(top, ".patchctl-") && !strings.HasPrefix(top, "..patchctl-")
}

// sourceEntry leaves out the work tree's record of its state (.patchctl,
// rewritten by each checkout): make does not read it.
func sourceEntry(rel string) bool {
	top, _, _ := strings.Cut(rel, "/")
	return top != ".patchctl"
}

// stamp is what treeStamp found.
type stamp struct {
	digest string
	// racy: a file changed within racyWindow before the stamp.
	racy bool
	// unprovable says why no proof can stand for the tree ("" when one
	// can): a symbolic link out of it, a .git that scripts/setlocalversion
	// would consult.
	unprovable string
	// outside are the paths outside roots that command records (*.cmd,
	// *.d) name, when asked for.
	outside []string
}

// treeStamp digests every entry under dir that keep accepts: its path,
// type, inode, size and modification time (a symbolic link's target and
// what it points at; a folder's path and type only, its entries being
// listed). The files of byContent (the harness's: written in for each
// build, with the pristine file's time or, where the content changed
// since the folder's last build, now; taken out after it) are digested
// by content instead of inode and time: the objects were made from that
// content, and a make that recompiled it for a newer time would make
// the same ones. roots are the trees the proof
// covers; records says to collect the paths outside them that command
// records name. Folders are listed in parallel (fsutil.ListFolders), each
// entry stat'ed relative to its open folder (6.12's 92,000 entries:
// BenchmarkProofStamp).
func treeStamp(dir string, keep func(rel string) bool, byContent map[string]bool, roots []string, records bool, since time.Time) (stamp, error) {
	type listing struct {
		rel, unprovable string
		lines, outside  []string
		racy            bool
		err             error
	}
	var (
		mu       sync.Mutex
		listings []*listing
	)
	limit := since.Add(-racyWindow).UnixNano()
	fsutil.ListFolders(dir, []string{"."}, nil, func(rel string, fd int, names []string, err error) (subs []string) {
		l := &listing{rel: rel}
		l.err = func() error {
			if err != nil {
				return err
			}
			full := filepath.Join(dir, filepath.FromSlash(rel))
			for _, name := range names {
				r := name
				if rel != "." {
					r = rel + "/" + name
				}
				if !keep(r) {
					continue
				}
				if r == ".git" {
					l.unprovable = "a .git (the kernel release names its commit)"
				}
				var st unix.Stat_t
				if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
					return fmt.Errorf("%s: %w", r, err)
				}
				if st.Mode&unix.S_IFMT == unix.S_IFDIR {
					l.lines = append(l.lines, r+"\x00d")
					subs = append(subs, r)
					continue
				}
				mtime := st.Mtim.Nano()
				line := fmt.Sprintf("%s\x00%o\x00%d\x00%d\x00%d", r, st.Mode, st.Ino, st.Size, mtime)
				p := filepath.Join(full, name)
				switch {
				case st.Mode&unix.S_IFMT == unix.S_IFLNK:
					target, err := os.Readlink(p)
					if err != nil {
						return err
					}
					abs := target
					if !filepath.IsAbs(abs) {
						abs = filepath.Join(full, target)
					}
					if !under(abs, roots) {
						l.unprovable = "a symbolic link out of the tree (" + r + ")"
					}
					line += "\x00" + target + "\x00" + statLine(p)
				case byContent[r] && st.Mode&unix.S_IFMT == unix.S_IFREG:
					h, err := fsutil.HashFile(p)
					if err != nil {
						return err
					}
					// Not its time: the writer gives it the pristine
					// file's, or now where the content changed since the
					// folder's last build; the content is what decides.
					line = fmt.Sprintf("%s\x00%o\x00%s\x00%d", r, st.Mode, h, st.Size)
					mtime = 0 // never racy: a later change shows in the content
				case records && (strings.HasSuffix(name, ".cmd") || strings.HasSuffix(name, ".d")):
					b, err := os.ReadFile(p)
					if err != nil {
						return err
					}
					l.outside = append(l.outside, outsidePaths(b, roots)...)
				}
				if mtime > limit {
					l.racy = true
				}
				l.lines = append(l.lines, line)
			}
			return nil
		}()
		mu.Lock()
		listings = append(listings, l)
		mu.Unlock()
		if l.err != nil {
			return nil // the stamp fails: nothing more to list
		}
		return subs
	})
	slices.SortFunc(listings, func(a, b *listing) int { return strings.Compare(a.rel, b.rel) })
	var st stamp
	h := sha256.New()
	seen := map[string]bool{}
	for _, l := range listings {
		if l.err != nil {
			return stamp{}, fmt.Errorf("listing %s: %w", filepath.Join(dir, l.rel), l.err)
		}
		st.racy = st.racy || l.racy
		if st.unprovable == "" {
			st.unprovable = l.unprovable
		}
		h.Write([]byte(l.rel + "/\n"))
		for _, line := range l.lines {
			h.Write([]byte(line))
			h.Write([]byte{'\n'})
		}
		for _, p := range l.outside {
			if !seen[p] {
				seen[p] = true
				st.outside = append(st.outside, p)
			}
		}
	}
	slices.Sort(st.outside)
	st.digest = hex.EncodeToString(h.Sum(nil))
	return st, nil
}

// inode is a file's inode number ("" where the system has none).
func inode(fi fs.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprint(st.Ino)
	}
	return ""
}

// statLine is what p points at (followed): type, inode, size and time,
// or "missing".
func statLine(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return "missing"
	}
	return fmt.Sprintf("%v\x00%s\x00%d\x00%d", fi.Mode(), inode(fi), fi.Size(), fi.ModTime().UnixNano())
}

// under says whether p is in one of roots (lexically).
func under(p string, roots []string) bool {
	p = filepath.Clean(p)
	for _, r := range roots {
		r = filepath.Clean(r)
		if p == r || strings.HasPrefix(p, r+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// outsidePaths are the absolute paths outside roots that a command
// record names: its dependencies (the host's headers, the compiler's own)
// and what its command line names.
func outsidePaths(b []byte, roots []string) []string {
	var out []string
	for _, f := range strings.Fields(string(b)) {
		f = strings.Trim(f, "'\"():;,\\")
		if !strings.HasPrefix(f, "/") || strings.Contains(f, "$") || under(f, roots) {
			continue
		}
		out = append(out, filepath.Clean(f))
	}
	return out
}

// outsideStamp digests what statLine says of each path.
func outsideStamp(paths []string) string {
	h := sha256.New()
	for _, p := range paths {
		fmt.Fprintf(h, "%s\x00%s\n", p, statLine(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// provedUpToDate says whether obj's proof stands: written after a
// complete make with the same inputs, and every entry of src and obj,
// and every file outside them its command records name, as it was then.
func provedUpToDate(src, obj, inputs string, byContent map[string]bool) bool {
	b, err := os.ReadFile(filepath.Join(obj, upToDateFile))
	if err != nil {
		return false
	}
	var p upToDate
	if json.Unmarshal(b, &p) != nil || p.Version != upToDateVersion || p.Make != inputs {
		return false
	}
	if outsideStamp(p.Outside) != p.OutsideStamp {
		return false
	}
	roots, now := []string{src, obj}, time.Now()
	folder, err := treeStamp(obj, folderEntry, nil, roots, false, now)
	if err != nil || folder.digest != p.Folder || folder.unprovable != "" {
		return false
	}
	source, err := treeStamp(src, sourceEntry, byContent, roots, false, now)
	return err == nil && source.digest == p.Source && source.unprovable == ""
}

// forgetUpToDate removes obj's proof: make is about to change the folder.
func forgetUpToDate(obj string) error {
	if err := os.Remove(filepath.Join(obj, upToDateFile)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("removing the build folder's up-to-date record: %w", err)
	}
	return nil
}

// besideMakeDelay is how long after make starts the work tree is
// stamped beside it (sourceBeside): past racyWindow, so the files the
// build itself wrote just before make (a checkout, an edited source) are
// not racy.
const besideMakeDelay = racyWindow + 50*time.Millisecond

// sourceStamp is the work tree's stamp for the proof, taken beside make
// (sourceBeside): make reads the work tree and writes only the build
// folder, and the work tree's lock is held throughout, so the work
// tree's entries while make runs are its entries after it, and make
// (one compile after an edit: one core) leaves the other core to the
// listing, which otherwise follows make on the verdict's path (6.12:
// 92,000 entries, about 0.35 s). Only the folder is stamped after make.
type sourceStamp struct {
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	st       stamp
	ok       bool
}

// sourceBeside starts stamping src after besideMakeDelay, unless stopped
// first.
func sourceBeside(src, obj string, byContent map[string]bool) *sourceStamp {
	s := &sourceStamp{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		select {
		case <-time.After(besideMakeDelay):
		case <-s.stop:
			return
		}
		st, err := treeStamp(src, sourceEntry, byContent, []string{src, obj}, false, time.Now())
		// Racy (a file written within racyWindow before the listing
		// read it) is stamped again after make, as without this.
		s.st, s.ok = st, err == nil && !st.racy
	}()
	return s
}

// result stops the stamp if it has not started and waits for it; ok is
// false when none can stand (make ended first, an error, racy). Called
// once make has ended, and again (deferred) on every way out of the
// build: nothing reads the work tree once the build lets it go.
func (s *sourceStamp) result() (stamp, bool) {
	if s == nil {
		return stamp{}, false
	}
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.done
	return s.st, s.ok
}

// recordUpToDate writes obj's proof after a complete make; none when a
// source changed too recently to be told apart from a later change, or
// when the trees cannot be proved (a link out of them, a .git). The
// build folder is written by make and patchctl only, under the work
// tree's lock: its entries are never racy. beside is the work tree's
// stamp taken while make ran (nil: none), used when it stands.
func recordUpToDate(src, obj, inputs string, byContent map[string]bool, beside *sourceStamp) error {
	roots, now := []string{src, obj}, time.Now()
	source, ok := beside.result()
	folder, err := treeStamp(obj, folderEntry, nil, roots, true, now)
	if err != nil {
		return err
	}
	if !ok {
		if source, err = treeStamp(src, sourceEntry, byContent, roots, false, now); err != nil {
			return err
		}
	}
	if source.racy || folder.unprovable != "" || source.unprovable != "" {
		return forgetUpToDate(obj)
	}
	return fsutil.WriteJSON(filepath.Join(obj, upToDateFile), upToDate{Version: upToDateVersion, Make: inputs, Source: source.digest,
		Folder: folder.digest, Outside: folder.outside, OutsideStamp: outsideStamp(folder.outside)})
}
