package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Reads records what an analysis read of the file system: every file's
// content (or that it could not be read) and every listing (a folder's
// entries, a glob, the C files under a scope) with its result. A result
// drawn from those reads is reused only where every one of them reads the
// same again (Verify): a file added, removed or changed anywhere the
// analysis looked changes a listing or a file's digest.
//
// The engine's primitives (ListC, ReadDirNames, Glob, the source and
// header reads) report to every recorder that is active while they run,
// so a concurrent analysis may add reads of its own: a recorder holds at
// least what its analysis read, never less.
//
// A read made twice in one recording that reads differently the second
// time (a file changed while the analysis ran) makes the recording
// inconsistent (Consistent): the analysis drew on both contents, and no
// later state of the tree reads like that.
type Reads struct {
	mu       sync.Mutex
	Files    map[string]string `json:"files"` // path → sha256 of its content; "" when it could not be read
	Lists    map[string]string `json:"lists"` // listing (kind and arguments) → sha256 of its result
	conflict string            // the first read that read differently twice
}

// Consistent says whether every read made twice while recording read
// the same both times, and names the first that did not.
func (r *Reads) Consistent() (bool, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conflict == "", r.conflict
}

var recording struct {
	sync.RWMutex
	on map[*Reads]bool
}

// Record starts recording reads; Stop ends it.
func Record() *Reads {
	r := &Reads{Files: map[string]string{}, Lists: map[string]string{}}
	recording.Lock()
	if recording.on == nil {
		recording.on = map[*Reads]bool{}
	}
	recording.on[r] = true
	recording.Unlock()
	return r
}

// Stop ends the recording.
func (r *Reads) Stop() {
	recording.Lock()
	delete(recording.on, r)
	recording.Unlock()
}

func noteRead(kind, key, digest string) {
	recording.RLock()
	defer recording.RUnlock()
	for r := range recording.on {
		r.mu.Lock()
		m, k := r.Lists, kind+"\x00"+key
		if kind == "file" {
			m, k = r.Files, key
		}
		if old, ok := m[k]; ok && old != digest && r.conflict == "" {
			r.conflict = kind + " " + strings.ReplaceAll(key, "\x00", " ")
		}
		m[k] = digest
		r.mu.Unlock()
	}
}

func recordingOn() bool {
	recording.RLock()
	defer recording.RUnlock()
	return len(recording.on) > 0
}

// ReadFile reads a file, reporting it to the recorders: an input of the
// analysis outside the tree's sources (a build's object).
func ReadFile(p string) ([]byte, error) { return readFile(p) }

// readFile reads a file, reporting it to the recorders.
func readFile(p string) ([]byte, error) {
	b, err := os.ReadFile(p)
	if recordingOn() {
		noteRead("file", absPath(p), fileDigest(b, err))
	}
	return b, err
}

func fileDigest(b []byte, err error) string {
	if err != nil {
		return ""
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func listDigest(names []string, err error) string {
	if err != nil {
		return "error"
	}
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s\n", n)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// ReadDirNames are the entries of a folder ("name/" for a folder),
// sorted, reported to the recorders.
func ReadDirNames(dir string) ([]string, error) {
	names, err := dirNames(dir)
	if recordingOn() {
		noteRead("readdir", absPath(dir), listDigest(names, err))
	}
	return names, err
}

// dirNames are a folder's entries, sorted, a folder's name ending in "/".
func dirNames(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names, err
}

// Glob is filepath.Glob reported to the recorders. The pattern and its
// matches are recorded absolute, as Verify globs them again (a relative
// pattern's matches are relative).
func Glob(pattern string) []string {
	m, err := filepath.Glob(pattern)
	if recordingOn() {
		abs := make([]string, len(m))
		for i, p := range m {
			abs[i] = absPath(p)
		}
		noteRead("glob", absPath(pattern), listDigest(abs, err))
	}
	return m
}

// Verify says whether every read recorded reads the same now, and names
// the first one that does not.
func (r *Reads) Verify() (bool, string) {
	type item struct{ kind, key, digest string }
	var items []item
	for p, d := range r.Files {
		items = append(items, item{"file", p, d})
	}
	for k, d := range r.Lists {
		kind, key, _ := strings.Cut(k, "\x00")
		items = append(items, item{kind, key, d})
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		changed string
	)
	work := make(chan item)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				mu.Lock()
				done := changed != ""
				mu.Unlock()
				if done {
					continue
				}
				var now string
				switch it.kind {
				case "file":
					b, err := os.ReadFile(it.key)
					now = fileDigest(b, err)
				case "readdir":
					names, err := dirNames(it.key)
					now = listDigest(names, err)
				case "glob":
					m, err := filepath.Glob(it.key)
					now = listDigest(m, err)
				case "listc":
					root, dirs, _ := strings.Cut(it.key, "\x00")
					l, err := listC(root, strings.Split(dirs, "\x00"))
					now = listDigest(l, err)
				default:
					now = "unknown read " + it.kind
				}
				if now != it.digest {
					mu.Lock()
					if changed == "" {
						changed = it.kind + " " + strings.ReplaceAll(it.key, "\x00", " ")
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, it := range items {
		work <- it
	}
	close(work)
	wg.Wait()
	return changed == "", changed
}
