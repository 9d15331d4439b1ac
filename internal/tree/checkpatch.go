package tree

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
)

// A checkpatch kit is the part of a pinned kernel's tree that
// scripts/checkpatch.pl reads, as patchctl runs it (in the tree's top
// folder, without --strict, --codespell or --git; a Debian tree has no
// .git, so the checks that ask git never run), extracted from the pinned
// package without the other 100,000 files:
//
//   - every top-level file (COPYING, CREDITS, Kbuild, MAINTAINERS,
//     Makefile, README, .mailmap, ...: the tree test, get_maintainer.pl)
//     and every top-level folder (empty: the tree test, the -p0 test);
//   - scripts/checkpatch.pl with the word lists beside it, and
//     scripts/get_maintainer.pl (the obsolete-maintainer test);
//   - include/ (<asm/x.h> where <linux/x.h> includes it; CamelCase's
//     seeds under --strict);
//   - Documentation/devicetree/bindings/ (undocumented DT compatibles).
//
// The other tests only ask whether a file exists (get_maintainer.pl -f on
// each patched file, an absolute path in the changelog): the kit keeps
// the list of the tree's files beside it (<kit>.files), and StubNamed
// puts an empty file in the kit for each listed path a patch names before
// checkpatch reads it. The kit is checked by the pin's tarball sha256 as
// the whole tree is, and cached under checkpatch/<kernel> with the pin's
// key.
var checkpatchFiles = map[string]bool{
	"scripts/checkpatch.pl":                  true,
	"scripts/spelling.txt":                   true,
	"scripts/const_structs.checkpatch":       true,
	"scripts/get_maintainer.pl":              true,
	"Documentation/dev-tools/checkpatch.rst": true,
}

var checkpatchDirs = []string{"include/", "Documentation/devicetree/bindings/"}

// wantForCheckpatch says whether the tree's file rel goes into the kit
// with its content.
func wantForCheckpatch(rel string) bool {
	if !strings.Contains(rel, "/") || checkpatchFiles[rel] {
		return true
	}
	for _, d := range checkpatchDirs {
		if strings.HasPrefix(rel, d) {
			return true
		}
	}
	return false
}

// CheckpatchKitDir is where kernel k's checkpatch kit lives.
func (c *Cache) CheckpatchKitDir(k *Kernel) string {
	return filepath.Join(c.Dir, "checkpatch", k.Name)
}

// kitIndex is the list of the tree's files beside kit dir.
func kitIndex(dir string) string { return dir + ".files" }

// CheckpatchFiles is a folder holding k's scripts/checkpatch.pl and what
// it reads: k's pristine tree when it is prepared, else k's checkpatch
// kit (see above), extracted from the pinned package when missing. A
// kernel from git has no kit: its tree is prepared.
func (c *Cache) CheckpatchFiles(ctx context.Context, k *Kernel) (string, error) {
	if c.Prepared(k) || k.Debian == nil {
		return c.Prepare(ctx, k)
	}
	dir := c.CheckpatchKitDir(k)
	marker := dir + ".prepared"
	if kitReady(dir, marker, k) {
		return dir, nil
	}
	unlock, err := c.Lock(ctx, "checkpatch-"+k.Name)
	if err != nil {
		return "", fmt.Errorf("extracting %s's checkpatch files: %w", k.Name, err)
	}
	defer unlock()
	if kitReady(dir, marker, k) { // another process made it while we waited
		return dir, nil
	}
	// What an interrupted extraction left: under the lock, nobody uses it.
	stale, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "."+k.Name+".tmp-*"))
	for _, p := range stale {
		os.RemoveAll(p)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("extracting %s's checkpatch files: %w", k.Name, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+k.Name+".tmp-")
	if err != nil {
		return "", fmt.Errorf("extracting %s's checkpatch files: %w", k.Name, err)
	}
	defer os.RemoveAll(tmp)
	top := filepath.Join(tmp, "kit")
	if err := os.Mkdir(top, 0o755); err != nil {
		return "", err
	}
	all, err := c.Debian().ExtractMembers(ctx, k.Name, k.Debian, top, wantForCheckpatch)
	if err != nil {
		return "", fmt.Errorf("extracting %s's checkpatch files (checkpatch: in series/kernels.yaml): %w", k.Name, err)
	}
	for _, rel := range all {
		if first, _, ok := strings.Cut(rel, "/"); ok {
			if err := os.MkdirAll(filepath.Join(top, first), 0o755); err != nil {
				return "", err
			}
		}
	}
	if _, err := os.Stat(filepath.Join(top, "scripts", "checkpatch.pl")); err != nil {
		return "", fmt.Errorf("%s's package holds no scripts/checkpatch.pl: name another kernel in checkpatch: in series/kernels.yaml: %w", k.Name, errs.ErrInput)
	}
	os.Remove(marker)
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("extracting %s's checkpatch files: removing the old kit: %w", k.Name, err)
	}
	if err := fsutil.WriteFile(kitIndex(dir), []byte(strings.Join(all, "\n")+"\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(top, dir); err != nil {
		return "", fmt.Errorf("extracting %s's checkpatch files: %w", k.Name, err)
	}
	if err := fsutil.WriteFile(marker, []byte(k.Key()+"\n"), 0o644); err != nil {
		return "", err
	}
	return dir, nil
}

func kitReady(dir, marker string, k *Kernel) bool {
	b, err := os.ReadFile(marker)
	if err != nil || strings.TrimSpace(string(b)) != k.Key() {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, "scripts", "checkpatch.pl"))
	return err == nil
}

// lineNumbers is what checkpatch strips from a path in a changelog
// (file.c:12: or file.c:12:3).
var lineNumbers = regexp.MustCompile(`(:\d+)+:?$`)

// StubNamed makes kit dir answer checkpatch's existence tests as the whole
// tree would for the patches: every path of the tree's file list that a
// patch names (a file it changes, a path in its changelog: every suffix of
// a slash-separated word after a slash) gets an empty file in the kit,
// unless the kit has it already. A folder that is no kit (a whole tree,
// no <dir>.files beside it) is left alone. Empty files stand only for
// files the tree has, so a stub never answers what the tree would not.
func StubNamed(dir string, patches []string) error {
	if dir == "" {
		return nil
	}
	b, err := os.ReadFile(kitIndex(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the checkpatch kit's file list: %w", err)
	}
	named := map[string]bool{}
	for _, p := range patches {
		if err := namedPaths(p, named); err != nil {
			return err
		}
	}
	if len(named) == 0 {
		return nil
	}
	for _, rel := range strings.Split(string(b), "\n") {
		if rel == "" || !named[rel] {
			continue
		}
		dst := filepath.Join(dir, rel)
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("checkpatch kit %s: %w", dir, err)
		}
		f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("checkpatch kit %s: %w", dir, err)
		}
		if f != nil {
			f.Close()
		}
	}
	return nil
}

// namedPaths adds to named every candidate path in patch p.
func namedPaths(p string, named map[string]bool) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("reading patch %s: %w", p, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "/") {
			continue
		}
		for _, w := range strings.Fields(line) {
			for _, w := range []string{w, lineNumbers.ReplaceAllString(w, "")} {
				for i := strings.IndexByte(w, '/'); i >= 0; {
					named[w[i+1:]] = true
					j := strings.IndexByte(w[i+1:], '/')
					if j < 0 {
						break
					}
					i += 1 + j
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading patch %s: %w", p, err)
	}
	return nil
}
