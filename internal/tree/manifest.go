package tree

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
)

// A prepared tree's manifest records every file with its size and hash,
// made when the tree was extracted and verified. Stages check what they
// read against it, so a damaged tree is reported as such, not blamed on a
// patch.

// fileEntry is one file of a pristine tree.
type fileEntry struct {
	Size   int64  `json:"s"`
	SHA256 string `json:"h,omitempty"` // "" for a symlink
	Link   string `json:"l,omitempty"`
}

type manifest struct {
	Key   string               `json:"key"`
	Files map[string]fileEntry `json:"files"` // slash path relative to the tree
	// Seal binds the files to the key (which holds the package's and the
	// tarball's sha256, or the commit): the sha256 of both, written when
	// the tree was extracted from the verified package, checked on every
	// read. A manifest from before seals has none and is taken as read.
	Seal string `json:"seal,omitempty"`
}

// seal is the digest of the key and every entry, in path order.
func (m *manifest) seal() string {
	paths := make([]string, 0, len(m.Files))
	for p := range m.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	fmt.Fprintf(h, "patchctl tree manifest 1\x00%s\x00%d\n", m.Key, len(paths))
	// The same bytes as fmt's "%s\x00%d\x00%s\x00%s\n" per entry, without
	// fmt's cost (86k entries in a kernel tree, read on every stage).
	var line []byte
	for _, p := range paths {
		e := m.Files[p]
		line = append(line[:0], p...)
		line = append(line, 0)
		line = strconv.AppendInt(line, e.Size, 10)
		line = append(line, 0)
		line = append(line, e.SHA256...)
		line = append(line, 0)
		line = append(line, e.Link...)
		line = append(line, '\n')
		h.Write(line)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (c *Cache) manifestPath(k *Kernel) string {
	return filepath.Join(c.Dir, "trees", k.Name+".manifest.json.gz")
}

// makeManifest walks dir and records every file. The walk lists; the
// hashing (most of the time: 86k files, a gigabyte, on 6.12) runs in
// workers beside it.
func makeManifest(dir, key string) (*manifest, error) {
	m := &manifest{Key: key, Files: map[string]fileEntry{}}
	type job struct{ rel, path string }
	type done struct {
		rel string
		e   fileEntry
		err error
	}
	jobs, results := make(chan job, 256), make(chan done, 256)
	workers := max(2, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				info, err := os.Lstat(j.path)
				if err != nil {
					results <- done{rel: j.rel, err: err}
					continue
				}
				h, err := fsutil.HashFile(j.path)
				results <- done{rel: j.rel, e: fileEntry{Size: info.Size(), SHA256: h}, err: err}
			}
		}()
	}
	var firstErr error
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for r := range results {
			if r.err != nil {
				if firstErr == nil {
					firstErr = r.err
				}
				continue
			}
			m.Files[r.rel] = r.e
		}
	}()
	walkErr := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.Type()&fs.ModeSymlink != 0 {
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			results <- done{rel: rel, e: fileEntry{Link: l}}
			return nil
		}
		jobs <- job{rel, p}
		return nil
	})
	close(jobs)
	wg.Wait()
	close(results)
	<-collected
	if err := errors.Join(walkErr, firstErr); err != nil {
		return nil, fmt.Errorf("recording the tree's manifest: %w", err)
	}
	return m, nil
}

func writeManifest(path string, m *manifest) error {
	m.Seal = m.seal()
	return fsutil.Write(path, 0o644, func(w io.Writer) error {
		zw := gzip.NewWriter(w)
		if err := json.NewEncoder(zw).Encode(m); err != nil {
			return err
		}
		return zw.Close()
	})
}

// manifests holds the manifests this process read and found sealed,
// by path, with the file's identity when read (size, time, inode): the
// apply, check and build stages of one run each verify the tree, and a
// kernel's manifest is megabytes of JSON. A manifest file rewritten (tree
// prepare --force) or replaced has another identity and is read again.
var manifests struct {
	sync.Mutex
	byPath map[string]memoManifest
}

type memoManifest struct {
	size, ino int64
	mtime     time.Time
	m         *manifest
}

func identity(st os.FileInfo) (size, ino int64, mtime time.Time) {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		ino = int64(sys.Ino)
	}
	return st.Size(), ino, st.ModTime()
}

// readManifest reads the manifest at path, or returns the one this
// process read from the same file (same size, time and inode). Callers
// only read it.
func readManifest(path string) (*manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	size, ino, mtime := identity(st)
	manifests.Lock()
	mm, ok := manifests.byPath[path]
	manifests.Unlock()
	if ok && mm.size == size && mm.ino == ino && mm.mtime.Equal(mtime) {
		return mm.m, nil
	}
	m, err := decodeManifest(path, f)
	if err != nil {
		return nil, err
	}
	manifests.Lock()
	if manifests.byPath == nil {
		manifests.byPath = map[string]memoManifest{}
	}
	manifests.byPath[path] = memoManifest{size: size, ino: ino, mtime: mtime, m: m}
	manifests.Unlock()
	return m, nil
}

func decodeManifest(path string, f io.Reader) (*manifest, error) {
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	m, ok := decodeFast(string(b))
	if !ok {
		m = new(manifest)
		if err := json.Unmarshal(b, m); err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
	}
	if m.Seal != "" && m.Seal != m.seal() {
		return nil, fmt.Errorf("%s does not match its seal (edited or damaged)", path)
	}
	return m, nil
}

// loadManifest returns k's manifest. It is never made again from the tree
// it is to check (a damaged tree would then be "intact" for good): a
// manifest that is missing, unreadable, broken or recorded for another
// source is a damaged tree, repaired by extracting it again from the
// verified package (tree prepare --force), which records a new one.
func (c *Cache) loadManifest(k *Kernel) (*manifest, error) {
	path := c.manifestPath(k)
	m, err := readManifest(path)
	problem := ""
	switch {
	case errors.Is(err, fs.ErrNotExist):
		problem = "its manifest " + path + " is missing, so its files cannot be checked"
	case err != nil:
		problem = "its manifest cannot be used: " + err.Error()
	case m.Key != k.Key():
		problem = "its manifest " + path + " records another source (" + m.Key + ")"
	default:
		return m, nil
	}
	return nil, fmt.Errorf("the pristine %s tree is damaged: %s; run 'patchctl tree prepare --kernel %s --force' to extract it again from the verified package: %w",
		k.Name, problem, k.Name, errs.ErrEnv)
}

// Verify checks k's pristine tree against its manifest: every file under
// the scopes (folders or files, slash paths relative to the tree; none
// means the whole tree) exists with its size and no file was added, and
// the files in hash also have their content. The error lists what
// differs and how to repair.
func (c *Cache) Verify(k *Kernel, scopes, hash []string) error {
	if k.IsLocal() {
		// The user's own tree: its identity (Key) is computed from its
		// content when it is used; there is no extraction to check.
		return nil
	}
	if !c.Prepared(k) {
		return fmt.Errorf("kernel %s is not prepared: run 'patchctl tree prepare --kernel %s': %w", k.Name, k.Name, errs.ErrInput)
	}
	m, err := c.loadManifest(k)
	if err != nil {
		return err
	}
	bad := m.damage(c.PristineDir(k), scopes, hash)
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	more := ""
	if len(bad) > 8 {
		more = fmt.Sprintf(" and %d more", len(bad)-8)
		bad = bad[:8]
	}
	return fmt.Errorf("the pristine %s tree is damaged (%s%s): run 'patchctl tree prepare --kernel %s --force' to extract it again: %w",
		k.Name, strings.Join(bad, ", "), more, k.Name, errs.ErrEnv)
}

// damage lists what of the tree at dir differs from the manifest: under
// scopes (every file when none), files missing, resized or added; of the
// files in hash, those whose content changed.
func (m *manifest) damage(dir string, scopes, hash []string) []string {
	bad := m.walkScopes(dir, scopes)
	return append(bad, m.changed(dir, hash)...)
}

// inScopes reports whether the slash path p is under one of scopes
// (every path when there are none).
func inScopes(p string, scopes []string) bool {
	if len(scopes) == 0 {
		return true
	}
	for _, s := range scopes {
		s = strings.TrimSuffix(s, "/")
		if s == "." || p == s || strings.HasPrefix(p, s+"/") {
			return true
		}
	}
	return false
}

// walkRoots are the folders (or files) a walk of scopes starts from:
// each scope once, cleaned (a leading slash is the tree's root, as a join
// with the tree's folder makes it), none inside another ("." for none,
// and for a scope that leaves the tree).
func walkRoots(scopes []string) []string {
	var roots []string
	for _, s := range scopes {
		s = path.Clean(strings.TrimLeft(s, "/"))
		if s == "." || s == ".." || strings.HasPrefix(s, "../") {
			return []string{"."}
		}
		roots = append(roots, s)
	}
	if len(roots) == 0 {
		return []string{"."}
	}
	// Shortest first: a folder comes before whatever is inside it (a
	// byte order puts "a-b" between "a" and "a/b").
	sort.Slice(roots, func(i, j int) bool {
		if len(roots[i]) != len(roots[j]) {
			return len(roots[i]) < len(roots[j])
		}
		return roots[i] < roots[j]
	})
	var out []string
	for _, r := range roots {
		if len(out) == 0 || !inScopes(r, out) {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// walkScopes lists, sorted, the files under scopes that are missing
// from dir, have another size than the manifest's (links: present) or
// are not in it (added). One listing per folder, each entry stat'ed
// relative to its open folder without following links, folders listed
// in parallel: a whole kernel tree (86k files) is a system call per
// entry, not a path lookup from the root per file plus a second walk
// (BenchmarkVerify).
func (m *manifest) walkScopes(dir string, scopes []string) []string {
	var (
		mu       sync.Mutex
		bad      []string
		seen     = map[string]bool{}
		unlisted []string // folders that could not be read
	)
	report := func(mine, found []string) {
		mu.Lock()
		bad = append(bad, mine...)
		for _, p := range found {
			seen[p] = true
		}
		mu.Unlock()
	}
	unreadable := func(rel string, err error) {
		mu.Lock()
		// What it holds is unknown, not "missing".
		bad = append(bad, fmt.Sprintf("%s cannot be read (%v)", rel, unwrapPath(err)))
		unlisted = append(unlisted, rel)
		mu.Unlock()
	}
	// judge says what is wrong with the entry rel (not a folder to walk)
	// and whether the manifest has it.
	judge := func(rel string, size int64, isDir bool) (problem string, known bool) {
		e, ok := m.Files[rel]
		switch {
		case !ok && isDir:
			return "", false
		case !ok:
			return rel + " added", false
		case isDir:
			return rel + " is a folder", true
		case e.Link == "" && size != e.Size:
			return fmt.Sprintf("%s has %d bytes, not %d", rel, size, e.Size), true
		}
		return "", true
	}
	// visit says whether the entry rel (st: its lstat) is a folder to
	// list, or judges it into mine and found: a folder where the manifest
	// has a file is judged, not listed.
	visit := func(rel string, st *unix.Stat_t, mine, found *[]string) (folder bool) {
		isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
		if _, file := m.Files[rel]; isDir && !file {
			return true
		}
		problem, known := judge(rel, st.Size, isDir)
		if problem != "" {
			*mine = append(*mine, problem)
		}
		if known {
			*found = append(*found, rel)
		}
		return false
	}
	roots := walkRoots(scopes)
	var starts, mine, found []string
	for _, r := range roots {
		var st unix.Stat_t
		switch err := unix.Lstat(filepath.Join(dir, filepath.FromSlash(r)), &st); {
		case errors.Is(err, unix.ENOENT): // its files are missing
		case err != nil:
			unreadable(r, err)
		case visit(r, &st, &mine, &found):
			starts = append(starts, r)
		}
	}
	report(mine, found)
	fsutil.ListFolders(dir, starts, openFolder, func(rel string, fd int, names []string, err error) (subs []string) {
		if err != nil {
			unreadable(rel, err)
			return nil
		}
		var mine, found []string
		for _, name := range names {
			r := name
			if rel != "." {
				r = rel + "/" + name
			}
			var st unix.Stat_t
			if err := statAt(fd, name, &st); err != nil {
				if !errors.Is(err, unix.ENOENT) { // gone since the listing: missing, if the manifest has it
					mine = append(mine, fmt.Sprintf("%s cannot be read (%v)", r, err))
					found = append(found, r)
				}
				continue
			}
			if visit(r, &st, &mine, &found) {
				subs = append(subs, r)
			}
		}
		report(mine, found)
		return subs
	})
	for p := range m.Files {
		if !seen[p] && inScopes(p, roots) && (len(unlisted) == 0 || !inScopes(p, unlisted)) {
			bad = append(bad, p+" missing")
		}
	}
	sort.Strings(bad)
	return bad
}

// unwrapPath is err without the path an *fs.PathError adds (the
// report names the path itself).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// openFolder and statAt are the walk's system calls (a test makes them
// fail as a user without permissions would see them fail).
var (
	openFolder = os.Open
	statAt     = fstatat
)

// fstatat is lstat of name in the folder open as fd.
func fstatat(fd int, name string, st *unix.Stat_t) error {
	for {
		err := unix.Fstatat(fd, name, st, unix.AT_SYMLINK_NOFOLLOW)
		if err != unix.EINTR {
			return err
		}
	}
}

// changed lists the files of hash whose content is not the manifest's (a
// file the manifest lacks, created by a patch, or a link is skipped).
func (m *manifest) changed(dir string, hash []string) []string {
	var bad []string
	for _, p := range hash {
		e, ok := m.Files[p]
		if !ok || e.Link != "" {
			continue
		}
		h, err := fsutil.HashFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err == nil && h != e.SHA256 {
			bad = append(bad, p+" changed")
		}
	}
	return bad
}

// VerifyAll checks every file of k's pristine tree, content included.
func (c *Cache) VerifyAll(k *Kernel) error {
	if !c.Prepared(k) {
		return c.Verify(k, nil, nil)
	}
	m, err := c.loadManifest(k)
	if err != nil {
		return err
	}
	all := make([]string, 0, len(m.Files))
	for p := range m.Files {
		all = append(all, p)
	}
	return c.Verify(k, []string{"."}, all)
}

// Dirs returns the folders of the paths (for Verify's scopes).
func Dirs(paths []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		d := path.Dir(p)
		if d != "." && !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// MarkPrepared records k's tree, put in place by hand, as prepared: the
// marker and a sealed manifest of the tree as it is now. It is for test
// fixtures; patchctl itself records a manifest only in Prepare, from the
// tree it has just extracted from the verified package.
func (c *Cache) MarkPrepared(k *Kernel) error {
	m, err := makeManifest(c.PristineDir(k), k.Key())
	if err != nil {
		return err
	}
	if err := writeManifest(c.manifestPath(k), m); err != nil {
		return err
	}
	return fsutil.WriteFile(c.markerPath(k), []byte(k.Key()+"\n"), 0o644)
}
