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
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/fsutil"
)

// A make with nothing to do still costs a kernel build 9 s and 14 CPU-s
// (6.12, 2 idle cores: make reads every folder's Makefile and .cmd files
// and runs about 140 compiler probes). A build folder whose last make
// completed, and whose inputs are the same files as then, is proved up to
// date without make: the proof (upToDateFile, in the folder) names every
// entry of the source tree and of the build folder with its type, inode,
// size and modification time, as they were after that make, and what make
// was asked (its arguments, the environment kbuild reads, the compiler and
// linker). Make itself compares modification times only, so whatever it
// would redo changes one of these; a proof that differs in anything runs
// make as before. The proof is removed before make runs, and is not
// written when a file changed in the last moments before it was taken
// (racy: a second change within the file system's clock tick would keep
// the time).

// upToDateFile is the proof's name in the build folder; patchctl's own
// files there (".patchctl-*") and the snapshots (variants/) are not
// make's and are left out of it.
const upToDateFile = ".patchctl-uptodate.json"

// upToDateVersion changes when what the proof covers changes.
const upToDateVersion = "1"

// racyWindow: a file changed this close before the proof was taken might
// change again with the same time; no proof is written then.
const racyWindow = 200 * time.Millisecond

type upToDate struct {
	Version string `json:"version"`
	Make    string `json:"make"`   // make's arguments, environment and tools
	Source  string `json:"source"` // the source tree's entries
	Folder  string `json:"folder"` // the build folder's entries
}

// kbuildEnv matches the environment variables kbuild (or make) reads
// from the environment: its K*FLAGS and KBUILD_*/KCONFIG_* settings, the
// *FLAGS* variables, the architecture and cross compiler, LLVM, the
// install paths, PATH (which compiler runs) and MAKEFLAGS.
var kbuildEnv = regexp.MustCompile(`^(K[A-Z0-9_]*|[A-Z0-9_]*FLAGS[A-Z0-9_]*|ARCH|SUBARCH|SRCARCH|CROSS_COMPILE|LLVM[A-Z0-9_]*|LOCALVERSION|INSTALL_[A-Z0-9_]*|PATH|SOURCE_DATE_EPOCH)$`)

// jobserver is make's own bookkeeping in MAKEFLAGS (a new pipe or fifo
// each run), not an input.
var jobserver = regexp.MustCompile(`\s*--jobserver-(auth|fds)=\S+|\s+-j\d*`)

// makeInputs is what make is given besides files: its arguments (the
// folder's targets and variables), the environment kbuild reads and the
// compiler and linker's versions.
func makeInputs(ctx context.Context, args, env []string) string {
	var vars []string
	for _, kv := range append(os.Environ(), env...) {
		name, val, _ := strings.Cut(kv, "=")
		if !kbuildEnv.MatchString(name) {
			continue
		}
		if strings.HasSuffix(name, "MAKEFLAGS") || name == "MFLAGS" {
			val = jobserver.ReplaceAllString(val, "")
		}
		vars = append(vars, name+"="+val)
	}
	slices.Sort(vars)
	parts := []string{"args", command.Quote(args), "env", strings.Join(vars, "\n"), "gcc", compilerVersion(), "ld", linkerVersion(ctx)}
	s := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(s[:])
}

// linkerVersion is ld's first line of --version, once per process.
var linkerVersion = func() func(context.Context) string {
	var once sync.Once
	var v string
	return func(ctx context.Context) string {
		once.Do(func() {
			out, err := command.Command("ld", "--version").Output(ctx)
			if err == nil {
				v, _, _ = strings.Cut(string(out), "\n")
			}
		})
		return v
	}
}()

// folderEntry leaves out what is patchctl's in a build folder: its
// records and the snapshots.
func folderEntry(rel string) bool {
	top, _, _ := strings.Cut(rel, "/")
	return top != "variants" && !strings.HasPrefix(top, ".patchctl-")
}

// sourceEntry leaves out the work tree's record of its state (.patchctl,
// rewritten by each checkout) and a git repository's own folder (a local
// tree's: git rewrites its index on a status): make reads neither.
func sourceEntry(rel string) bool {
	top, _, _ := strings.Cut(rel, "/")
	return top != ".git" && top != ".patchctl"
}

// treeStamp digests every entry under dir that keep accepts: its path,
// type, inode, size and modification time (a symbolic link's target; a
// folder's path and type only, its entries being listed). The files of
// byContent (the harness's: written in for each build, with the pristine
// file's time, and taken out after it) are digested by content instead
// of inode. racy says a file was modified within racyWindow of since.
func treeStamp(dir string, keep func(rel string) bool, byContent map[string]bool, since time.Time) (digest string, racy bool, err error) {
	top, err := os.ReadDir(dir)
	if err != nil {
		return "", false, err
	}
	type result struct {
		lines []string
		racy  bool
		err   error
	}
	results := make([]result, len(top))
	sem := make(chan struct{}, max(2, runtime.NumCPU()))
	var wg sync.WaitGroup
	limit := since.Add(-racyWindow).UnixNano()
	for i, e := range top {
		if !keep(e.Name()) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r := &results[i]
			r.err = filepath.WalkDir(filepath.Join(dir, e.Name()), func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				rel, err := filepath.Rel(dir, p)
				if err != nil {
					return err
				}
				rel = filepath.ToSlash(rel)
				if !keep(rel) {
					if d.IsDir() {
						return filepath.SkipDir
					}
					return nil
				}
				if d.IsDir() {
					r.lines = append(r.lines, rel+"\x00d")
					return nil
				}
				fi, err := d.Info()
				if err != nil {
					return err
				}
				var ino uint64
				if st, ok := fi.Sys().(*syscall.Stat_t); ok {
					ino = st.Ino
				}
				line := fmt.Sprintf("%s\x00%v\x00%d\x00%d\x00%d", rel, fi.Mode(), ino, fi.Size(), fi.ModTime().UnixNano())
				if byContent[rel] && fi.Mode().IsRegular() {
					h, err := fsutil.HashFile(p)
					if err != nil {
						return err
					}
					line = fmt.Sprintf("%s\x00%v\x00%s\x00%d\x00%d", rel, fi.Mode(), h, fi.Size(), fi.ModTime().UnixNano())
				}
				if fi.Mode()&fs.ModeSymlink != 0 {
					target, err := os.Readlink(p)
					if err != nil {
						return err
					}
					line += "\x00" + target
				}
				if fi.ModTime().UnixNano() > limit {
					r.racy = true
				}
				r.lines = append(r.lines, line)
				return nil
			})
		}()
	}
	wg.Wait()
	h := sha256.New()
	for i, r := range results {
		if r.err != nil {
			return "", false, fmt.Errorf("listing %s: %w", filepath.Join(dir, top[i].Name()), r.err)
		}
		racy = racy || r.racy
		for _, l := range r.lines {
			h.Write([]byte(l))
			h.Write([]byte{'\n'})
		}
	}
	return hex.EncodeToString(h.Sum(nil)), racy, nil
}

// provedUpToDate says whether obj's proof stands: written after a
// complete make with the same inputs, and every entry of src and obj as
// it was then.
func provedUpToDate(src, obj, inputs string, byContent map[string]bool) bool {
	b, err := os.ReadFile(filepath.Join(obj, upToDateFile))
	if err != nil {
		return false
	}
	var p upToDate
	if json.Unmarshal(b, &p) != nil || p.Version != upToDateVersion || p.Make != inputs {
		return false
	}
	now := time.Now()
	folder, _, err := treeStamp(obj, folderEntry, nil, now)
	if err != nil || folder != p.Folder {
		return false
	}
	source, _, err := treeStamp(src, sourceEntry, byContent, now)
	return err == nil && source == p.Source
}

// forgetUpToDate removes obj's proof: make is about to change the folder.
func forgetUpToDate(obj string) error {
	if err := os.Remove(filepath.Join(obj, upToDateFile)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("removing the build folder's up-to-date record: %w", err)
	}
	return nil
}

// recordUpToDate writes obj's proof after a complete make; none when an
// entry changed too recently to be told apart from a later change.
func recordUpToDate(src, obj, inputs string, byContent map[string]bool) error {
	now := time.Now()
	folder, racy, err := treeStamp(obj, folderEntry, nil, now)
	if err != nil {
		return err
	}
	source, racySrc, err := treeStamp(src, sourceEntry, byContent, now)
	if err != nil {
		return err
	}
	if racy || racySrc {
		return forgetUpToDate(obj)
	}
	return fsutil.WriteJSON(filepath.Join(obj, upToDateFile), upToDate{Version: upToDateVersion, Make: inputs, Source: source, Folder: folder})
}
