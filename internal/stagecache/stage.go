// Package stagecache holds what every stage of the pipeline shares: the key
// that names a stage's inputs (their content, the code that runs the
// stage, its options), the artifacts a stage's output points at (recorded
// with their hashes when made, checked before any reuse), and the store
// of stage records the pipeline reuses outputs from.
//
// A stage package (apply, checks, build, boot) exports Run and Key; the
// pipeline only records, reuses and reports.
package stagecache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/patchctl/patchctl/internal/fsutil"
)

// Key accumulates a stage's inputs. Files are identified by name and
// content, never by their folder: the same inputs in another checkout
// give the same key.
type Key struct {
	parts []string
	err   error
}

// NewKey starts the key of the named stage.
func NewKey(stage string) *Key { return &Key{parts: []string{"stage " + stage}} }

// Add adds named values.
func (k *Key) Add(name string, values ...string) *Key {
	k.parts = append(k.parts, name+"="+strings.Join(values, "\x00"))
	return k
}

// JSON adds a value by its JSON form.
func (k *Key) JSON(name string, v any) *Key {
	b, err := json.Marshal(v)
	if err != nil && k.err == nil {
		k.err = fmt.Errorf("key %s: %w", name, err)
	}
	return k.Add(name, string(b))
}

// File adds a file by its base name and content; a missing file is an
// input too ("missing").
func (k *Key) File(paths ...string) *Key {
	for _, p := range paths {
		h, err := fsutil.HashFile(p)
		if os.IsNotExist(err) {
			h = "missing"
		} else if err != nil && k.err == nil {
			k.err = err
		}
		k.parts = append(k.parts, "file "+filepath.Base(p)+"="+h)
	}
	return k
}

// Bytes adds content under a name.
func (k *Key) Bytes(name string, b []byte) *Key {
	return k.Add(name, fsutil.Hash(b))
}

// Code adds the running program: the stage's own code is compiled into it.
func (k *Key) Code() *Key {
	h, err := Self()
	if err != nil && k.err == nil {
		k.err = err
	}
	return k.Add("code", h)
}

// Sum is the key; an input that could not be read makes it an error, so
// that nothing is reused on a key that does not cover its inputs.
func (k *Key) Sum() (string, error) {
	if k.err != nil {
		return "", k.err
	}
	s := sha256.Sum256([]byte(strings.Join(k.parts, "\n")))
	return hex.EncodeToString(s[:]), nil
}

var self struct {
	once sync.Once
	hash string
	err  error
}

// Self is the sha256 of the running executable: the code of every stage
// it runs. Computed once per process, from the file that runs: on Linux
// /proc/self/exe, which still opens it when its path was given another
// build since it started (a rebuild while a run goes on); the path
// (os.Executable) would hash the new build and key the old code's
// results as the new code's.
func Self() (string, error) {
	self.once.Do(func() {
		if runtime.GOOS == "linux" {
			if h, err := fsutil.HashFile("/proc/self/exe"); err == nil {
				self.hash = h
				return
			}
		}
		exe, err := os.Executable()
		if err != nil {
			self.err = fmt.Errorf("finding the running program: %w", err)
			return
		}
		self.hash, self.err = fsutil.HashFile(exe)
	})
	return self.hash, self.err
}

// Artifact is a file a stage made, with its hash when it was made.
type Artifact struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Artifacts records files by content. Missing files are an error: a
// stage must not claim what it did not make.
func Artifacts(paths ...string) ([]Artifact, error) {
	var out []Artifact
	for _, p := range paths {
		h, err := fsutil.HashFile(p)
		if err != nil {
			return nil, fmt.Errorf("recording artifact: %w", err)
		}
		out = append(out, Artifact{Path: p, SHA256: h})
	}
	return out, nil
}

// Verify checks that every artifact still has the content it was made
// with; the error names the first that does not.
func Verify(arts []Artifact) error {
	for _, a := range arts {
		h, err := fsutil.HashFile(a.Path)
		if err != nil {
			return fmt.Errorf("artifact %s: %w", a.Path, err)
		}
		if h != a.SHA256 {
			return fmt.Errorf("artifact %s changed since it was made (sha256 %s, recorded %s)", a.Path, h[:12], a.SHA256[:12])
		}
	}
	return nil
}

// Record is one stage's last successful output.
type Record struct {
	Key       string          `json:"key"`
	Output    json.RawMessage `json:"output"`
	Artifacts []Artifact      `json:"artifacts,omitempty"`
}

// Store keeps stage records in a folder, one file per scope (e.g. per
// kernel), stage and key, written atomically: runs with other inputs (a
// test binary beside patchctl, another series on the same kernel) keep
// records of their own instead of evicting each other's, and concurrent
// runs can at worst lose a record (and redo the stage), never read a torn
// one. The maxRecords records of a stage last saved or reused are kept.
type Store struct{ Dir string }

const maxRecords = 8

func (s *Store) dir(scope, name string) string {
	return filepath.Join(s.Dir, scope, "records", name)
}

func (s *Store) path(scope, name, key string) string {
	return filepath.Join(s.dir(scope, name), fileKey(key)+".json")
}

// fileKey is key as a file name: a hex key as it is, anything else hashed.
func fileKey(key string) string {
	if len(key) >= 16 && len(key) <= 64 && strings.Trim(key, "0123456789abcdef") == "" {
		return key
	}
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// Load returns the output recorded for the stage under key, after
// checking its artifacts. ok is false when there is none, only records
// of other keys (inputs changed), or an artifact changed (why says which).
func (s *Store) Load(scope, name, key string, out any) (ok bool, why string) {
	b, err := os.ReadFile(s.path(scope, name, key))
	if err != nil {
		if ents, _ := os.ReadDir(s.dir(scope, name)); len(ents) > 0 {
			return false, "inputs changed"
		}
		return false, "not run before"
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil || r.Key != key {
		return false, "record unreadable"
	}
	if err := Verify(r.Artifacts); err != nil {
		return false, err.Error()
	}
	if err := json.Unmarshal(r.Output, out); err != nil {
		return false, "record unreadable"
	}
	now := time.Now()
	_ = os.Chtimes(s.path(scope, name, key), now, now) // used: the last to be pruned (best effort)
	return true, ""
}

// Save records a stage's output and artifacts under key, and drops the
// stage's records least recently saved or reused beyond maxRecords.
func (s *Store) Save(scope, name, key string, out any, arts []Artifact) error {
	b, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("recording stage %s: %w", name, err)
	}
	p := s.path(scope, name, key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("recording stage %s: %w", name, err)
	}
	if err := fsutil.WriteJSON(p, Record{Key: key, Output: b, Artifacts: arts}); err != nil {
		return err
	}
	os.Remove(filepath.Join(s.Dir, scope, name+".json")) // the former one-record layout
	s.prune(scope, name)
	return nil
}

// prune drops the stage's records least recently saved or reused beyond
// maxRecords (best effort: a record lost is a stage redone).
func (s *Store) prune(scope, name string) {
	ents, err := os.ReadDir(s.dir(scope, name))
	if err != nil || len(ents) <= maxRecords {
		return
	}
	type rec struct {
		path string
		t    time.Time
	}
	var recs []rec
	for _, e := range ents {
		if info, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), ".json") {
			recs = append(recs, rec{filepath.Join(s.dir(scope, name), e.Name()), info.ModTime()})
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].t.After(recs[j].t) })
	for _, r := range recs[min(maxRecords, len(recs)):] {
		os.Remove(r.path)
	}
}

// Forget drops a stage's record under key (after a failure: the next run
// redoes it).
func (s *Store) Forget(scope, name, key string) error {
	if err := os.Remove(s.path(scope, name, key)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("forgetting stage %s: %w", name, err)
	}
	return nil
}
