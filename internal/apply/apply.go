package apply

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/series"
)

// Tree is what patches are applied to: the pristine files.
type Tree interface {
	// ReadFile returns a file's content; an error wrapping fs.ErrNotExist
	// when there is no such file.
	ReadFile(path string) ([]byte, error)
	// ReadDir lists the regular files in a folder (names, not paths).
	ReadDir(dir string) ([]string, error)
}

// DirTree is a Tree on a folder.
type DirTree string

func (d DirTree) ReadFile(p string) ([]byte, error) {
	// A path that leaves the tree (through a symbolic link, below a file,
	// a name too long) is the patch's fault: an input error, not an I/O one.
	if err := fsutil.CheckBeneath(string(d), p); err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(string(d), filepath.FromSlash(p)))
}

// Mode is a file's permission bits.
func (d DirTree) Mode(p string) (os.FileMode, error) {
	st, err := os.Stat(filepath.Join(string(d), filepath.FromSlash(p)))
	if err != nil {
		return 0, err
	}
	return st.Mode().Perm(), nil
}

func (d DirTree) ReadDir(dir string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(string(d), filepath.FromSlash(dir)))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Hunk is what happened to one hunk.
type Hunk struct {
	File    string `json:"file"`
	Index   int    `json:"hunk"` // 1-based within the file
	Stated  int64  `json:"stated"`
	Landed  int64  `json:"landed,omitempty"`
	Offset  int64  `json:"offset"`
	Fuzz    int    `json:"fuzz"`
	Applied bool   `json:"applied"`
	// Reversed: the hunk applies reversed where it does not apply
	// forward (GNU patch: "Reversed (or previously applied) patch
	// detected!"); Landed and Fuzz then say where and how.
	Reversed bool `json:"reversed"`
	// For a hunk that did not apply: the closest place in the file.
	Nearest     int  `json:"nearest,omitempty"`
	NearMatched int  `json:"near_matched,omitempty"`
	NearTotal   int  `json:"near_total,omitempty"`
	MissingFile bool `json:"missing_file,omitempty"`
	// For a hunk that did not apply: the fuzz tried up to, the first
	// line of the nearest place that differs (as the hunk has it and as
	// the file has it), and where its reverse matches exactly, if
	// anywhere (part of the patch is already there).
	FuzzTried  int    `json:"fuzz_tried,omitempty"`
	NearWant   string `json:"near_want,omitempty"`
	NearHave   string `json:"near_have,omitempty"`
	ReversedAt int    `json:"reversed_at,omitempty"`
	// Why says, in words, why a hunk (or a file) did not apply when no
	// line can be named (a rename onto an existing file).
	Why          string `json:"why,omitempty"`
	Text         string `json:"text,omitempty"`
	placement    placement
	located      bool // found (forward, or reversed when Reversed)
	fragment     *gitdiff.TextFragment
	newPosOffset int64
}

// Result is what happened to one patch.
type Result struct {
	Entry       series.Entry   `json:"-"`
	Source      string         `json:"source"`
	Subject     string         `json:"subject"`
	Disposition string         `json:"disposition"`
	Expected    string         `json:"expected"`
	Reason      string         `json:"reason,omitempty"`
	Match       bool           `json:"match"`
	Hunks       []Hunk         `json:"hunks"`
	Upstream    *UpstreamMatch `json:"upstream,omitempty"`
	// Strip is the -pN a plain diff's names were read with (nil: a git
	// diff, -p1).
	Strip *int             `json:"strip,omitempty"`
	Patch *mailpatch.Patch `json:"-"`
	// Regenerated is the patch for this kernel (patches that apply).
	Regenerated *mailpatch.Patch `json:"-"`
}

// SeriesResult is a whole series on one tree.
type SeriesResult struct {
	Results []*Result `json:"patches"`
	// Files holds the final content of every file the series changed
	// (nil: deleted), Original their pristine content (nil: absent).
	Files    map[string][]byte `json:"-"`
	Original map[string][]byte `json:"-"`
	Modes    map[string]os.FileMode
}

// Mismatches lists the patches whose disposition differs from the manifest.
func (s *SeriesResult) Mismatches() []*Result {
	var out []*Result
	for _, r := range s.Results {
		if !r.Match {
			out = append(out, r)
		}
	}
	return out
}

// overlay is the tree with the series so far applied, in memory.
type overlay struct {
	tree     Tree
	files    map[string][]byte // current content; nil value: deleted
	original map[string][]byte
	present  map[string]bool // whether the path exists now
	modes    map[string]os.FileMode
}

func (o *overlay) read(p string) ([]byte, bool, error) {
	if c, ok := o.files[p]; ok {
		return c, o.present[p], nil
	}
	b, err := o.tree.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// mode is the permission bits of p now: as a patch set them, else the
// tree's (when the tree knows modes), else 0644.
func (o *overlay) mode(p string) (os.FileMode, error) {
	if m, ok := o.modes[p]; ok {
		return m, nil
	}
	if mt, ok := o.tree.(interface {
		Mode(string) (os.FileMode, error)
	}); ok {
		m, err := mt.Mode(p)
		if err == nil {
			return m, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
	}
	return 0o644, nil
}

func (o *overlay) write(p string, content []byte, exists bool, mode os.FileMode) error {
	if _, ok := o.original[p]; !ok {
		b, present, err := o.read(p)
		if err != nil {
			return err
		}
		if !present {
			b = nil
		}
		o.original[p] = b
	}
	o.files[p] = content
	o.present[p] = exists
	if mode != 0 {
		o.modes[p] = mode
	}
	return nil
}

// Series applies entries (with their imported patches, same order) to tree.
func Series(tree Tree, entries []series.Entry, patches []*mailpatch.Patch) (*SeriesResult, error) {
	if len(entries) != len(patches) {
		return nil, fmt.Errorf("%d manifest entries but %d patches", len(entries), len(patches))
	}
	o := &overlay{tree: tree, files: map[string][]byte{}, original: map[string][]byte{}, present: map[string]bool{}, modes: map[string]os.FileMode{}}
	res := &SeriesResult{}
	for i, e := range entries {
		strip := NoStrip
		if e.Strip != nil {
			strip = *e.Strip
		}
		used, err := resolveNames(o, patches[i], strip)
		if err != nil {
			return nil, fmt.Errorf("applying %s: %w", e.Source, err)
		}
		r, err := applyPatch(o, patches[i])
		if err != nil {
			return nil, fmt.Errorf("applying %s: %w", e.Source, err)
		}
		if used >= 0 {
			r.Strip = &used
		}
		r.Entry, r.Source, r.Expected, r.Reason = e, e.Source, e.Expect, e.Reason
		r.Match = r.Disposition == e.Expect
		res.Results = append(res.Results, r)
	}
	res.Files, res.Original, res.Modes = map[string][]byte{}, o.original, o.modes
	for p := range o.original {
		if o.present[p] {
			res.Files[p] = o.files[p]
		} else {
			res.Files[p] = nil
		}
	}
	return res, nil
}

// fileOutcome is one file of a patch tried against the overlay.
type fileOutcome struct {
	path    string
	content []byte
	exists  bool
	hunks   []Hunk
	ok      bool
	// reversed: every hunk of the file applies reversed (the file has
	// the patch already).
	reversed bool
	before   []byte // content before this patch
	// renamedFrom is the old name of a file the patch renames: removed
	// when the patch applies.
	renamedFrom string
}

func applyPatch(o *overlay, p *mailpatch.Patch) (*Result, error) {
	r := &Result{Patch: p, Subject: p.SubjectLine()}
	fwd, err := tryPatch(o, p.Files, false, MaxFuzz)
	if err != nil {
		return nil, err
	}
	r.Hunks = collectHunks(fwd)
	if allOK(fwd) {
		r.Disposition = series.Applies
		for _, h := range r.Hunks {
			if h.Fuzz > 0 {
				r.Disposition = series.AppliesFuzz
			} else if h.Offset != 0 && r.Disposition == series.Applies {
				r.Disposition = series.AppliesOffset
			}
		}
		regen, err := regenerate(p, fwd)
		if err != nil {
			return nil, err
		}
		r.Regenerated = regen
		modes := make([]os.FileMode, len(fwd))
		for i, fo := range fwd {
			// The mode git apply gives: the patch's new mode, else the
			// mode of the file it comes from before the patch (a
			// rename or copy keeps its source's), else a new file's
			// 0644.
			mode := os.FileMode(0)
			if f := p.Files[i]; f.NewMode != 0 {
				mode = f.NewMode.Perm()
			} else if fo.exists {
				if mode, err = o.mode(firstNonEmpty(f.OldName, fo.path)); err != nil {
					return nil, err
				}
			}
			modes[i] = mode
		}
		for i, fo := range fwd {
			if err := o.write(fo.path, fo.content, fo.exists, modes[i]); err != nil {
				return nil, err
			}
			if fo.renamedFrom != "" {
				// git apply: the old name is gone.
				if err := o.write(fo.renamedFrom, nil, false, 0); err != nil {
					return nil, err
				}
			}
		}
		return r, nil
	}
	if allReversed(fwd) {
		r.Disposition = series.AlreadyApplied
		return r, nil
	}
	up, err := findUpstream(o, p)
	if err != nil {
		return nil, err
	}
	r.Upstream = up
	if up.IsUpstream() && !anyReversed(fwd) {
		r.Disposition = series.AlreadyUpstream
		return r, nil
	}
	// Partly there (some hunks reversed) or not at all: the report shows
	// which hunks fail and which are previously applied.
	r.Disposition = series.Conflict
	return r, nil
}

func allReversed(fos []fileOutcome) bool {
	for _, f := range fos {
		if !f.reversed {
			return false
		}
	}
	return len(fos) > 0
}

func anyReversed(fos []fileOutcome) bool {
	for _, f := range fos {
		for _, h := range f.hunks {
			if h.Reversed {
				return true
			}
		}
	}
	return false
}

func allOK(fos []fileOutcome) bool {
	for _, f := range fos {
		if !f.ok {
			return false
		}
	}
	return true
}

func collectHunks(fos []fileOutcome) []Hunk {
	var out []Hunk
	for _, f := range fos {
		out = append(out, f.hunks...)
	}
	return out
}

// tryPatch applies each file's hunks with the locator; it reports every
// hunk, applied or not. A hunk that does not apply forward at some fuzz
// level but applies reversed at that level is reversed, as GNU patch says
// "Reversed (or previously applied) patch detected!": for the first hunk
// of a file (GNU patch's rule) the whole file is then taken reversed; for
// a later hunk only that hunk (GNU patch does not look, and lands it with
// fuzz: a duplicate). A reversed hunk is never applied.
func tryPatch(o *overlay, files []*gitdiff.File, reverse bool, maxFuzz int) ([]fileOutcome, error) {
	var out []fileOutcome
	for _, f := range files {
		fo, err := tryFile(o, files, f, reverse, maxFuzz)
		if err != nil {
			return nil, err
		}
		out = append(out, fo)
	}
	return out, nil
}

// tryFile is tryPatch for one file of the patch (files is all of them).
func tryFile(o *overlay, files []*gitdiff.File, f *gitdiff.File, reverse bool, maxFuzz int) (fileOutcome, error) {
	src, dst := f.OldName, f.NewName
	isNew, isDel := f.IsNew, f.IsDelete
	if reverse {
		src, dst, isNew, isDel = f.NewName, f.OldName, f.IsDelete, f.IsNew
	}
	fo := fileOutcome{path: firstNonEmpty(dst, src)}
	renamedAlready, samePlain, startReversed := false, false, false
	content, exists, err := o.read(firstNonEmpty(src, dst))
	if err != nil {
		return fo, err
	}
	if (f.IsRename || f.IsCopy) && src != "" && dst != "" && src != dst {
		if f.IsRename {
			fo.renamedFrom = src
		}
		dstContent, there, err := o.read(dst)
		if err != nil {
			return fo, err
		}
		if there && exists && f.IsRename {
			// git apply: "already exists in working directory".
			fo.hunks = append(fo.hunks, Hunk{File: dst, Index: 1, Why: fmt.Sprintf("%s to %s, which already exists", map[bool]string{true: "renamed", false: "copied"}[f.IsRename], dst)})
			return fo, nil
		}
		if there && (!exists || f.IsCopy) {
			// Renamed or copied already (the new name is there, for
			// a rename the old one gone): its hunks are looked for,
			// reversed, there; with none, a copy is there when it
			// is the same bytes as its source (or that is gone, or
			// the patch changes it too).
			samePlain = f.IsRename || !exists || bytes.Equal(content, dstContent) || changesFile(files, src)
			content, exists, renamedAlready = dstContent, true, true
		}
	}
	fo.before = content
	frags := f.TextFragments
	if reverse {
		frags = make([]*gitdiff.TextFragment, len(f.TextFragments))
		for i, fr := range f.TextFragments {
			frags[i] = reversed(fr)
		}
	}
	name := firstNonEmpty(dst, src)
	switch {
	case isNew && exists && len(content) == 0:
		// GNU patch creates onto an empty file.
	case isNew && exists:
		// A file created that is there: GNU patch ("which already
		// exists! Assuming -R") looks for what the patch creates,
		// reversed, anywhere in it: found, previously applied (the
		// file may have grown since); else a conflict.
		startReversed = true
	case !isNew && !exists:
		// A file changed or deleted that is not there: a deleted
		// file is gone (previously applied), a changed one missing.
		prev := isDel
		for i, fr := range frags {
			fo.hunks = append(fo.hunks, Hunk{File: name, Index: i + 1, Stated: fr.OldPosition, MissingFile: !exists, Reversed: prev, Text: fr.String()})
		}
		fo.reversed = prev
		return fo, nil
	}
	w := &hunkWalk{lines: splitLines(content), name: name, reverse: reverse, maxFuzz: maxFuzz, fileReversed: startReversed}
	fo.ok = true
	for i, fr := range frags {
		h, ok := w.hunk(i, fr)
		fo.ok = fo.ok && ok
		fo.hunks = append(fo.hunks, h)
	}
	if w.fileReversed {
		fo.reversed = true
		fo.ok = false
		for _, h := range fo.hunks {
			if !h.Reversed || !h.located {
				fo.reversed = false // a hunk that does not apply reversed either
			}
		}
	}
	if renamedAlready {
		// Previously applied when every hunk is (or there is none);
		// else half there: the new name without the change.
		fo.reversed = fo.reversed || len(frags) == 0 && samePlain
		fo.ok = false
	}
	if len(frags) == 0 && !reverse && !renamedAlready && f.NewMode != 0 && f.OldMode != 0 && f.NewMode != f.OldMode {
		// A mode change alone: previously applied when the file
		// has the new mode (git apply -R takes it then).
		m, err := o.mode(firstNonEmpty(src, dst))
		if err != nil {
			return fo, err
		}
		if m&0o100 == f.NewMode&0o100 {
			fo.reversed, fo.ok = true, false
		}
	}
	if !fo.ok {
		return fo, nil
	}
	if isDel {
		fo.exists = false
		fo.content = nil
		return fo, nil
	}
	spliced, err := splice(w.lines, w.placed)
	if err != nil {
		return fo, fmt.Errorf("%s: splicing a located hunk: %w", dst, err)
	}
	fo.content, fo.exists = spliced, true
	return fo, nil
}

// hunkWalk locates one file's hunks in order, as GNU patch does: each
// from where the last one landed (inOffset), never before what the last
// one froze (lastFrozen).
type hunkWalk struct {
	lines   []string
	name    string
	reverse bool // the whole patch is applied reversed
	maxFuzz int

	inOffset, lastFrozen int
	fileReversed         bool // the file is taken reversed from here on
	placed               []placedHunk
	newShift             int64
}

// hunk locates hunk i (0-based) and reports it; ok is false when it does
// not apply forward.
func (w *hunkWalk) hunk(i int, fr *gitdiff.TextFragment) (h Hunk, ok bool) {
	h = Hunk{File: w.name, Index: i + 1, Stated: fr.OldPosition, fragment: fr}
	pl, fwd, found, hunkReversed := w.search(i, fr, &h)
	h.Reversed = hunkReversed
	if !found || hunkReversed && !w.fileReversed {
		w.explain(&h, fr, pl, fwd, hunkReversed)
		return h, false
	}
	h.placement, h.Fuzz, h.located = pl, pl.fuzz, true
	h.Landed = pl.landed()
	where := int(h.Landed)
	if len(fwd.pat) == 0 {
		h.Landed-- // the line it goes after, as the hunk header says
	}
	h.Offset = int64(where - fwd.first)
	if w.fileReversed {
		h.Stated = int64(fwd.first)
		if len(fwd.pat) == 0 {
			h.Stated--
		}
	}
	w.inOffset = where - fwd.first
	w.lastFrozen = where - 1 + len(fwd.pat) - fwd.suffix
	if w.fileReversed {
		return h, true // the file's ok is decided by its reversal
	}
	h.Applied = true
	h.newPosOffset = w.newShift
	w.newShift += fr.LinesAdded - fr.LinesDeleted
	w.placed = append(w.placed, placedHunk{lines: fr.Lines[pl.dropL : len(fr.Lines)-pl.dropT], start: pl.pos})
	return h, true
}

// search looks for hunk i forward at each fuzz level and, for a file's
// first hunk, reversed (which reverses the file from there on); a later
// hunk's reverse is looked for too, for the report (previously applied).
// fwd is the pattern the hunk was looked for as.
func (w *hunkWalk) search(i int, fr *gitdiff.TextFragment, h *Hunk) (pl placement, fwd hunkPattern, found, hunkReversed bool) {
	fwd, rev := patternOf(fr), patternOf(reversed(fr))
	if w.fileReversed {
		fwd, rev = rev, fwd
	}
	for fuzz := 0; fuzz <= fwd.maxFuzzFor(w.maxFuzz); fuzz++ {
		if pl, found = locate(w.lines, fwd, w.inOffset, w.lastFrozen, fuzz); found {
			break
		}
		if w.fileReversed || w.reverse {
			continue
		}
		if i > 0 {
			continue // GNU patch tries only a file's first hunk reversed
		}
		if rpl, ok := locate(w.lines, rev, w.inOffset, w.lastFrozen, fuzz); ok {
			// GNU patch: the file is reversed from here on.
			hunkReversed = true
			w.fileReversed, fwd, rev = true, rev, fwd
			pl, found = rpl, true
			break
		}
	}
	if i > 0 && !w.fileReversed && !w.reverse {
		// A later hunk: GNU patch lands it forward wherever it
		// can (even with fuzz where its reverse matches: the
		// report says so), else fails it; the report says
		// whether its reverse is there (previously applied).
		for fuzz := 0; fuzz <= rev.maxFuzzFor(w.maxFuzz); fuzz++ {
			rpl, ok := locate(w.lines, rev, w.inOffset, w.lastFrozen, fuzz)
			if !ok {
				continue
			}
			if !found {
				hunkReversed, pl = true, rpl
			} else if fuzz == 0 && pl.fuzz > 0 {
				h.ReversedAt = int(rpl.landed())
			}
			break
		}
	}
	if w.fileReversed {
		// Only a hunk found (reversed) is reversed; one found
		// nowhere is reported not found, never at line 1.
		hunkReversed = found
	}
	if found && !hunkReversed && misordered(fwd, int(pl.landed()), w.lastFrozen) {
		// GNU patch keeps the offset it found and fails the hunk.
		w.inOffset = int(pl.landed()) - fwd.first
		found = false
	}
	return pl, fwd, found, hunkReversed
}

// explain fills in a hunk that does not apply forward: where its
// reverse was found, or its nearest match, the first differing line,
// the fuzz tried and where its reverse already stands.
func (w *hunkWalk) explain(h *Hunk, fr *gitdiff.TextFragment, pl placement, fwd hunkPattern, hunkReversed bool) {
	if hunkReversed {
		// Where the reverse was found: the new side's lines.
		rp := patternOf(reversed(fr))
		h.Landed, h.Fuzz, h.located = pl.landed(), pl.fuzz, true
		h.Offset = h.Landed - int64(rp.first)
		if len(rp.pat) == 0 {
			h.Landed--
		}
	} else {
		h.Nearest, h.NearMatched, h.NearTotal = nearest(w.lines, fr, fwd.first-1+w.inOffset)
		h.FuzzTried = fwd.maxFuzzFor(w.maxFuzz)
		h.NearWant, h.NearHave = nearDiffer(w.lines, fr, h.Nearest)
		if !w.fileReversed && !w.reverse {
			// GNU patch -R -F0 anywhere: part of it already there?
			if rp := patternOf(reversed(fr)); len(rp.pat) > 0 {
				if at, ok := locate(w.lines, rp, 0, 0, 0); ok {
					h.ReversedAt = int(at.landed())
				}
			}
		}
	}
	h.Text = fr.String()
}

// placedHunk is a located hunk without the context fuzz dropped: its
// lines, and the 0-based index of the old line the first of them stands
// for.
type placedHunk struct {
	lines []gitdiff.Line
	start int
}

// splice writes the file the placed hunks make of lines, the way GNU
// patch's apply_hunk does: the original is copied up to each change, a
// deleted line is skipped, an added one written. A hunk's context may
// reach back over the trailing context of the hunk before (GNU patch
// allows it; go-gitdiff's applier refuses it), never over a changed line.
func splice(lines []string, placed []placedHunk) ([]byte, error) {
	var b strings.Builder
	afterNewline := true
	write := func(s string) {
		if s == "" {
			return
		}
		if !afterNewline {
			b.WriteByte('\n')
		}
		b.WriteString(s)
		afterNewline = s[len(s)-1] == '\n'
	}
	frozen := 0 // original lines [0, frozen) are written or deleted
	copyTill := func(n int) error {
		if frozen > n {
			return fmt.Errorf("hunks out of order: line %d is already written", n+1)
		}
		for ; frozen < n; frozen++ {
			write(lines[frozen])
		}
		return nil
	}
	for _, h := range placed {
		old := h.start
		for _, l := range h.lines {
			switch l.Op {
			case gitdiff.OpContext, gitdiff.OpDelete:
				if old >= len(lines) || lines[old] != l.Line {
					return nil, fmt.Errorf("line %d does not match the hunk", old+1)
				}
				if l.Op == gitdiff.OpDelete {
					if err := copyTill(old); err != nil {
						return nil, err
					}
					frozen++
				}
				old++
			case gitdiff.OpAdd:
				if err := copyTill(old); err != nil {
					return nil, err
				}
				write(l.Line)
			}
		}
	}
	if err := copyTill(len(lines)); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// touched lists the changed paths in order.
func (s *SeriesResult) Touched() []string {
	var out []string
	for p := range s.Files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// changesFile says whether files change the content of name (a hunk).
func changesFile(files []*gitdiff.File, name string) bool {
	for _, f := range files {
		if f.OldName == name && len(f.TextFragments) > 0 {
			return true
		}
	}
	return false
}
