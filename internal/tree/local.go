package tree

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"

	runner "github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/errs"
)

// LocalSource is a kernel source tree on this machine (the user's own
// checkout or a plain folder), used as the pristine tree in place: it is
// never written to; its work tree and builds live in the cache as for a
// pinned kernel. It is not pinned in kernels.yaml: Local makes one.
type LocalSource struct {
	Dir string `json:"dir"` // absolute
	// Head is the git commit checked out; "" when the folder is not a git
	// checkout.
	Head string `json:"head,omitempty"`
	// Dirty hashes the uncommitted changes of a git checkout (tracked
	// changes and untracked files that are not ignored); "" when clean.
	Dirty string `json:"dirty,omitempty"`
	// Content hashes every file of a folder that is not a git checkout.
	Content string `json:"content,omitempty"`
	// Release is the kernel release the Makefile states (6.12.117).
	Release string `json:"release"`
	// Series names the manifest (series/<Series>/) the tree is checked
	// against; "" when there is none.
	Series string `json:"series,omitempty"`
}

// Identity names the tree's content: git HEAD plus the hash of the
// uncommitted changes, or the content hash.
func (l *LocalSource) Identity() string {
	if l.Head != "" {
		return "git:" + l.Head + " dirty:" + firstNonEmpty(l.Dirty, "none")
	}
	return "content:" + l.Content
}

// SeriesName is the manifest (series/<name>/) and the kernel-<name>
// fragment that go with the kernel: its name for a pinned kernel, the
// chosen manifest for a local tree.
func (k *Kernel) SeriesName() string {
	if k.Local != nil {
		return k.Local.Series
	}
	return k.Name
}

// IsLocal reports whether k is a local tree.
func (k *Kernel) IsLocal() bool { return k.Local != nil }

var makefileVar = regexp.MustCompile(`^(VERSION|PATCHLEVEL|SUBLEVEL|EXTRAVERSION)\s*=\s*(\S*)\s*$`)

// MakefileRelease reads VERSION, PATCHLEVEL, SUBLEVEL and EXTRAVERSION from
// a kernel tree's top Makefile: "6.12.117", and "6.12" as the series.
func MakefileRelease(dir string) (release, series string, err error) {
	f, err := os.Open(filepath.Join(dir, "Makefile"))
	if err != nil {
		return "", "", fmt.Errorf("%s is not a kernel tree (no top-level Makefile): %w", dir, errs.ErrInput)
	}
	defer f.Close()
	v := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 0; sc.Scan() && n < 50; n++ {
		if m := makefileVar.FindStringSubmatch(sc.Text()); m != nil {
			if _, seen := v[m[1]]; !seen {
				v[m[1]] = m[2]
			}
		}
	}
	if v["VERSION"] == "" || v["PATCHLEVEL"] == "" {
		return "", "", fmt.Errorf("%s/Makefile states no VERSION and PATCHLEVEL in its first lines: not a kernel tree: %w", dir, errs.ErrInput)
	}
	series = v["VERSION"] + "." + v["PATCHLEVEL"]
	release = series
	if v["SUBLEVEL"] != "" {
		release += "." + v["SUBLEVEL"]
	}
	return release + v["EXTRAVERSION"], series, nil
}

// Local makes the kernel for a local tree at dir: its identity (git HEAD
// and uncommitted changes, or a content hash), its release from the
// Makefile. series names the manifest to check it against; "" picks
// series/<VERSION.PATCHLEVEL> when hasSeries says it exists. The kernel's
// name, which names its work tree and build folders in the cache, comes
// from the folder's path, so builds of one tree stay incremental across
// edits.
func Local(ctx context.Context, dir, series string, hasSeries func(string) bool) (*Kernel, error) {
	return local(ctx, dir, series, hasSeries, "")
}

// Local is tree.Local with the content hashes of a plain folder's files
// remembered in the cache by path, size, modification time and inode (as
// git's index does), so a second look at an unchanged folder reads no
// file.
func (c *Cache) Local(ctx context.Context, dir, series string, hasSeries func(string) bool) (*Kernel, error) {
	return local(ctx, dir, series, hasSeries, filepath.Join(c.Dir, "local"))
}

func local(ctx context.Context, dir, series string, hasSeries func(string) bool, statDir string) (*Kernel, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("--tree %s: %w", dir, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--tree %s is not a folder: %w", dir, errs.ErrInput)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	release, mm, err := MakefileRelease(abs)
	if err != nil {
		return nil, err
	}
	l := &LocalSource{Dir: abs, Release: release, Series: series}
	if l.Series == "" && hasSeries != nil && hasSeries(mm) {
		l.Series = mm
	}
	sum := sha256.Sum256([]byte(abs))
	name := "local-" + hex.EncodeToString(sum[:6])
	if _, err := os.Stat(filepath.Join(abs, ".git")); err == nil {
		if err := l.gitIdentity(ctx); err != nil {
			return nil, err
		}
	} else {
		statFile := ""
		if statDir != "" {
			statFile = filepath.Join(statDir, name+".stat")
		}
		if l.Content, err = contentHash(abs, statFile); err != nil {
			return nil, fmt.Errorf("hashing %s: %w", abs, err)
		}
	}
	return &Kernel{Name: name, Local: l}, nil
}

// gitIdentity reads HEAD and hashes what is not committed: the binary
// diff of the tracked files against HEAD, and the untracked files that are
// not ignored (names and content).
func (l *LocalSource) gitIdentity(ctx context.Context) error {
	git := func(args ...string) ([]byte, error) {
		out, err := (&runner.Cmd{Name: "git", Args: append([]string{"-C", l.Dir, "-c", "core.quotepath=off"}, args...), Stderr: io.Discard}).Output(ctx)
		if err != nil {
			return nil, fmt.Errorf("git %s in %s: %v (a git checkout needs git installed): %w", args[0], l.Dir, err, errs.ErrEnv)
		}
		return out, nil
	}
	head, err := git("rev-parse", "--verify", "HEAD")
	if err != nil {
		return fmt.Errorf("%s has no commit checked out: %w", l.Dir, errs.ErrInput)
	}
	l.Head = strings.TrimSpace(string(head))
	diff, err := git("diff", "--binary", "--no-ext-diff", "HEAD", "--")
	if err != nil {
		return err
	}
	others, err := git("ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return err
	}
	h := sha256.New()
	dirty := len(diff) > 0
	h.Write(diff)
	names := strings.Split(strings.TrimRight(string(others), "\x00"), "\x00")
	sort.Strings(names)
	for _, n := range names {
		if n == "" {
			continue
		}
		dirty = true
		fmt.Fprintf(h, "\x00untracked %s\x00", n)
		if err := hashFileInto(h, filepath.Join(l.Dir, filepath.FromSlash(n))); err != nil {
			return err
		}
	}
	if dirty {
		l.Dirty = hex.EncodeToString(h.Sum(nil))
	}
	return nil
}

func hashFileInto(h io.Writer, path string) error {
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		t, err := os.Readlink(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "symlink %s\x00", t)
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(h, "%o %d\x00", st.Mode().Perm()&0o111, st.Size())
	_, err = io.Copy(h, f)
	return err
}

// statKey is what says a file did not change since it was hashed.
type statKey struct {
	Size, MTime int64
	Ino         uint64
	Mode        uint32
}

type statEntry struct {
	Key statKey
	Sum string
}

// hashItem is one file of a folder being hashed: its sum is known from
// the stat file when its statKey is the recorded one.
type hashItem struct {
	rel  string
	path string
	key  statKey
	sum  string
}

// contentHash hashes every file under dir (path, executable bit, content;
// symlinks by target), in path order. With statFile, a file whose stat is
// the one recorded there is not read again; the file is rewritten.
func contentHash(dir, statFile string) (string, error) {
	items, err := listFiles(dir, readStats(statFile))
	if err != nil {
		return "", err
	}
	if err := hashUnknown(items); err != nil {
		return "", err
	}
	h := sha256.New()
	now := map[string]statEntry{}
	for _, it := range items {
		fmt.Fprintf(h, "%s\x00%s\x00", it.rel, it.sum)
		now[it.rel] = statEntry{Key: it.key, Sum: it.sum}
	}
	if statFile != "" {
		writeStats(statFile, now)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// readStats reads the stat file ("" or unreadable: nothing known).
func readStats(statFile string) map[string]statEntry {
	old := map[string]statEntry{}
	if statFile != "" {
		if f, err := os.Open(statFile); err == nil {
			_ = gob.NewDecoder(f).Decode(&old) // unreadable: every file is hashed again
			f.Close()
		}
	}
	return old
}

// writeStats replaces the stat file with now, or leaves it when it
// cannot (the next look reads the files again).
func writeStats(statFile string, now map[string]statEntry) {
	if err := os.MkdirAll(filepath.Dir(statFile), 0o755); err != nil {
		return
	}
	tmp := statFile + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return
	}
	err = gob.NewEncoder(f).Encode(now)
	if cerr := f.Close(); err == nil && cerr == nil {
		_ = os.Rename(tmp, statFile) // a cache: not kept, the next run hashes again
	} else {
		os.Remove(tmp)
	}
}

// listFiles lists the files under dir (not the work tree's metaDir) in
// path order, with the sums old knows for the unchanged ones.
func listFiles(dir string, old map[string]statEntry) ([]*hashItem, error) {
	var items []*hashItem
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel == metaDir {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		it := &hashItem{rel: filepath.ToSlash(rel), path: p, key: statKey{Size: info.Size(), MTime: info.ModTime().UnixNano(), Mode: uint32(info.Mode())}}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			it.key.Ino = st.Ino
		}
		if e, ok := old[it.rel]; ok && e.Key == it.key {
			it.sum = e.Sum
		}
		items = append(items, it)
		return nil
	})
	return items, err
}

// hashUnknown hashes the items whose sum is not known, on every core.
func hashUnknown(items []*hashItem) error {
	work := make(chan *hashItem)
	errc := make(chan error, runtime.NumCPU())
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				h := sha256.New()
				if err := hashFileInto(h, it.path); err != nil {
					select {
					case errc <- err:
					default:
					}
					continue
				}
				it.sum = hex.EncodeToString(h.Sum(nil))
			}
		}()
	}
	for _, it := range items {
		if it.sum == "" {
			work <- it
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
	}
	return nil
}

// errCrossDevice says a hardlink cannot be made across file systems.
func isCrossDevice(err error) bool {
	var le *os.LinkError
	return errors.As(err, &le) && bytes.Contains([]byte(le.Err.Error()), []byte("cross-device"))
}
