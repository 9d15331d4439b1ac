package checks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/patchctl/patchctl/checks/engine"
	"github.com/patchctl/patchctl/internal/fsutil"
)

// Reuse of a report. The analysis of a tree is a function of the files
// and folders it read and of the code that read them. A run records
// every read (engine.Reads: each file's content digest, each listing's
// result) beside its report; a later run of the same code on the same
// tree and paths reuses the report only after every recorded read reads
// the same again, so a file edited, added or removed anywhere the
// analysis looked, even one that decided nothing, makes a new analysis.
// Checkpatch is not part of it: it runs on the patches every time.
//
// A build's objects whose DWARF the layout rule reads are recorded reads
// too, and the build folder is part of the key: a rebuilt object is read
// again. Not reused (always analysed): a preprocessed analysis (its units
// have their own cache, keyed by the compiler's inputs).

// reuseFormat names the layout of a kept report; a change of it, like
// a change of the code, makes every kept report unused.
const reuseFormat = "patchctl check report 1"

type keptReport struct {
	Format string         `json:"format"`
	Reads  *engine.Reads  `json:"reads"`
	Report *Report        `json:"report"`
	Made   time.Time      `json:"made"`
	Opts   map[string]any `json:"options"`
}

func reusable(opts Options) bool {
	return opts.Cache != "" && opts.Code != "" && opts.Preprocessor == nil
}

// reuseKey names a report by the code, the tree's folder, the paths and
// the build folder whose objects' DWARF it may read (those objects are
// recorded reads like the sources: a rebuilt object is read again).
func reuseKey(opts Options) (string, map[string]any) {
	abs := func(p string) string {
		if p == "" {
			return ""
		}
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	tree, build := abs(opts.Tree), abs(opts.BuildDir)
	o := map[string]any{"tree": tree, "paths": opts.Paths}
	if build != "" {
		o["build"] = build
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00build\x00%s", reuseFormat, opts.Code, tree, strings.Join(opts.Paths, "\x00"), build)
	return hex.EncodeToString(h.Sum(nil)), o
}

// reuseReport is the kept report of opts when every read it recorded
// reads the same, or nil (with why, for the log).
func reuseReport(opts Options) (*Report, string) {
	key, _ := reuseKey(opts)
	b, err := os.ReadFile(filepath.Join(opts.Cache, key+".json"))
	if err != nil {
		return nil, "no report kept"
	}
	var k keptReport
	if err := json.Unmarshal(b, &k); err != nil || k.Format != reuseFormat || k.Reads == nil || k.Report == nil {
		return nil, "the kept report is unreadable"
	}
	if len(k.Reads.Files) == 0 {
		return nil, "the kept report records no reads"
	}
	if ok, changed := k.Reads.Verify(); !ok {
		return nil, "changed: " + changed
	}
	// Used now: pruneKept removes the reports least recently used.
	now := time.Now()
	_ = os.Chtimes(filepath.Join(opts.Cache, key+".json"), now, now)
	return k.Report, ""
}

// keepReport writes rep and its reads (atomically: a reader sees the
// old file or the new one), and says why it did not when it did not. A
// report is kept only when it is exactly what a reuse would read back:
// its reads consistent (no file read twice and changed between) and the
// report itself carried by JSON byte for byte (a byte that is not UTF-8
// in a quoted line would come back as U+FFFD).
//
// A cache that cannot be written is not an error of the check: Run
// ignores the error this returns, and analyses every time.
func keepReport(opts Options, reads *engine.Reads, rep *Report) error {
	if ok, what := reads.Consistent(); !ok {
		return fmt.Errorf("not keeping the check report: %s changed while it was analysed", what)
	}
	key, o := reuseKey(opts)
	b, err := json.Marshal(keptReport{Format: reuseFormat, Reads: reads, Report: rep, Made: time.Now().UTC(), Opts: o})
	if err != nil {
		return fmt.Errorf("encoding the check report to keep: %w", err)
	}
	var back keptReport
	if err := json.Unmarshal(b, &back); err != nil {
		return fmt.Errorf("decoding the check report to keep: %w", err)
	}
	if !sameValue(reflect.ValueOf(back.Report), reflect.ValueOf(rep)) {
		return fmt.Errorf("not keeping the check report: JSON does not carry it exactly")
	}
	if err := os.MkdirAll(opts.Cache, 0o755); err != nil {
		return fmt.Errorf("keeping the check report: %w", err)
	}
	if err := fsutil.WriteFile(filepath.Join(opts.Cache, key+".json"), b, 0o644); err != nil {
		return fmt.Errorf("keeping the check report: %w", err)
	}
	pruneKept(opts.Cache)
	return nil
}

// maxKept bounds the reports kept (a tree, its paths and a build of
// patchctl each make one): the least recently used go first (a reuse
// touches its report).
const maxKept = 64

// staleTemp is the age past which a temporary file is one a run left
// when it died (a report is written in well under a second).
const staleTemp = time.Hour

// tempPattern names the temporary files fsutil.WriteFile leaves when a
// run dies while writing a report.
const tempPattern = ".*.json.tmp-*"

func pruneKept(dir string) {
	tmps, _ := filepath.Glob(filepath.Join(dir, tempPattern))
	for _, p := range tmps {
		if st, err := os.Stat(p); err == nil && time.Since(st.ModTime()) > staleTemp {
			os.Remove(p)
		}
	}
	ms, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(ms) <= maxKept {
		return
	}
	type kept struct {
		path string
		mod  time.Time
	}
	var ks []kept
	for _, m := range ms {
		if st, err := os.Stat(m); err == nil {
			ks = append(ks, kept{m, st.ModTime()})
		}
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].mod.After(ks[j].mod) })
	for _, k := range ks[min(maxKept, len(ks)):] {
		os.Remove(k.path)
	}
}

// sameValue says whether two values hold the same, byte for byte, an
// empty slice or map and none counting the same (encoding/json keeps
// neither apart under omitempty). A kind it does not know is not the
// same.
func sameValue(a, b reflect.Value) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameValue(a.Elem(), b.Elem())
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := 0; i < a.Len(); i++ {
			if !sameValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		for it := a.MapRange(); it.Next(); {
			if v := b.MapIndex(it.Key()); !v.IsValid() || !sameValue(it.Value(), v) {
				return false
			}
		}
		return true
	case reflect.Struct:
		// What JSON does not carry (json:"-", unexported: a finding's
		// Subject, which only the analysis reads) is not the report's.
		t := a.Type()
		for i := 0; i < a.NumField(); i++ {
			if f := t.Field(i); !f.IsExported() || f.Tag.Get("json") == "-" {
				continue
			}
			if !sameValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	}
	return false
}
