package mailpatch

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

func isLetterOrDigit(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func lastRune(s string) (rune, int) { return utf8.DecodeLastRuneInString(s) }

// Names that come from input (a folder's name, a subject, a file name)
// become folder and file names under --out. They are sanitized to one
// path element that is never "", "." or "..", and holds no separator, so
// a writer can never address --out itself, its parent, or anything
// outside it.

// SeriesName picks the series name: the one given (a folder's name or a
// manifest's series) when it sanitizes to something, else the slug of the
// first subject, else the input file's stem, else "series".
func SeriesName(given, subject, file string) string {
	for _, c := range []string{given, Slug(subject), stem(file)} {
		if s := safeName(c); s != "" {
			return s
		}
	}
	return "series"
}

// folderSeries names the series of a folder: its own name, resolved
// ("." and ".." name the folder they are).
func folderSeries(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return filepath.Base(filepath.Clean(dir))
}

func stem(file string) string {
	b := filepath.Base(file)
	if i := strings.LastIndexByte(b, '.'); i > 0 {
		b = b[:i]
	}
	return Slug(b)
}

// safeName makes s one safe path element, or "" when nothing of it is:
// letters and digits of any script, '.', '_', '-' and '+' stay, anything
// else (separators, controls, spaces) becomes '-'; leading dots and dashes
// go (no hidden names, no "..", no option-like names); at most 64 bytes.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '.' || r == '_' || r == '-' || r == '+',
			r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9',
			r >= 0x80 && isLetterOrDigit(r):
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	out := strings.TrimLeft(b.String(), ".-")
	for len(out) > 64 {
		_, size := lastRune(out)
		out = out[:len(out)-size]
	}
	out = strings.TrimRight(out, ".-")
	if out == "" || out == "." || out == ".." || strings.ContainsAny(out, `/\`) {
		return ""
	}
	return out
}

// FileName is the name git format-patch would give the patch; a subject
// with nothing git keeps gives "NNNN-patch.patch".
func (p *Patch) FileName(seq int) string {
	n := p.Number
	if n == 0 {
		n = seq
	}
	slug := Slug(p.Subject)
	if slug == "" {
		slug = "patch"
	}
	return fmt.Sprintf("%04d-%s.patch", n, slug)
}

// ownerMark is the file in each series folder import writes: the names of
// the files it wrote there, one a line. Only a folder with this mark is
// replaced, and only when it holds nothing else.
const ownerMark = ".patchctl-import"

// Write writes each patch under dir/<series>/. Each series folder is
// written beside its final place and renamed over it, so a failure leaves
// the old output, never half a series. A writer removes only what it
// created: an existing series folder is replaced only when import wrote it
// (its mark lists every file in it); anything else in the way is an error,
// and dir itself is never removed.
func (r *Result) Write(dir string) (map[*Patch]string, error) {
	outputs := map[*Patch]string{}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating output folder: %w", err)
	}
	bySeries := map[string][]*Patch{}
	var order []string
	for _, p := range r.Patches {
		s := p.Series
		if safeName(s) != s {
			return nil, fmt.Errorf("series name %s is not a safe folder name (internal error: names are sanitized on import)", excerpt(s))
		}
		if _, ok := bySeries[s]; !ok {
			order = append(order, s)
		}
		bySeries[s] = append(bySeries[s], p)
	}
	// Check every series before writing any.
	for _, s := range order {
		if err := replaceable(filepath.Join(dir, s)); err != nil {
			return nil, err
		}
	}
	for _, s := range order {
		tmp, err := os.MkdirTemp(dir, "."+s+".tmp-")
		if err != nil {
			return nil, fmt.Errorf("writing series %s: %w", s, err)
		}
		var names []string
		seen := map[string]bool{}
		for i, p := range bySeries[s] {
			name := p.FileName(i + 1)
			for k := 2; seen[name]; k++ {
				name = strings.TrimSuffix(p.FileName(i+1), ".patch") + fmt.Sprintf("-%d.patch", k)
			}
			seen[name] = true
			if err := os.WriteFile(filepath.Join(tmp, name), p.Format(), 0o644); err != nil {
				removeOwn(tmp, names)
				return nil, fmt.Errorf("writing %s: %w", name, err)
			}
			names = append(names, name)
			outputs[p] = filepath.Join(dir, s, name)
		}
		if err := os.WriteFile(filepath.Join(tmp, ownerMark), []byte(strings.Join(names, "\n")+"\n"), 0o644); err != nil {
			removeOwn(tmp, names)
			return nil, fmt.Errorf("writing series %s: %w", s, err)
		}
		final := filepath.Join(dir, s)
		old := ""
		if _, err := os.Lstat(final); err == nil {
			// replaceable said it is ours: move it aside, then ours in.
			old = final + ".old-" + filepath.Base(tmp)
			if err := os.Rename(final, old); err != nil {
				removeOwn(tmp, append(names, ownerMark))
				return nil, fmt.Errorf("replacing %s: %w", final, err)
			}
		}
		if err := os.Rename(tmp, final); err != nil {
			if old != "" {
				_ = os.Rename(old, final) // best effort: the error below says what failed
			}
			removeOwn(tmp, append(names, ownerMark))
			return nil, fmt.Errorf("replacing %s: %w", final, err)
		}
		_ = os.Chmod(final, 0o755) // MkdirTemp's 0700 opened up; ours, just renamed
		if old != "" {
			oldNames, _ := readMark(old)
			removeOwn(old, append(oldNames, ownerMark))
		}
	}
	return outputs, nil
}

// replaceable says whether a series folder may be written at path: it
// does not exist, or it is a folder import wrote holding only what its
// mark lists.
func replaceable(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("output %s exists and is not a folder import wrote; not replacing it (move it away or choose another --out)", path)
	}
	listed, err := readMark(path)
	if err != nil {
		return fmt.Errorf("output folder %s exists and was not written by patchctl import (no %s); not replacing it (move it away or choose another --out)", path, ownerMark)
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	mine := map[string]bool{ownerMark: true}
	for _, n := range listed {
		mine[n] = true
	}
	var foreign []string
	for _, e := range ents {
		if !mine[e.Name()] || !e.Type().IsRegular() {
			foreign = append(foreign, e.Name())
		}
	}
	if len(foreign) > 0 {
		sort.Strings(foreign)
		return fmt.Errorf("output folder %s holds files import did not write (%s); not replacing it (move them away or choose another --out)", path, strings.Join(foreign, ", "))
	}
	return nil
}

func readMark(dir string) ([]string, error) {
	f, err := os.Open(filepath.Join(dir, ownerMark))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n := sc.Text()
		if n != "" && safeName(n) == n {
			names = append(names, n)
		}
	}
	return names, sc.Err()
}

// removeOwn removes the named files from dir, then dir if it is empty:
// never anything it was not told it wrote.
func removeOwn(dir string, names []string) {
	for _, n := range names {
		if n == "" || strings.ContainsAny(n, `/\`) || n == "." || n == ".." {
			continue
		}
		os.Remove(filepath.Join(dir, n))
	}
	os.Remove(dir) // fails, and keeps it, when anything else is in it
}

// DiffHeader is one file's header in a diff as written: a git header
// ("diff --git"), or a plain one ("--- old" / "+++ new", with any "diff
// -u -p", "diff --" or "Index:" line before it). Plain names keep every
// component (a/, b/, linux-next-20260601/, quilt's dir.orig/): which to
// strip is the applier's to find, as GNU patch's -p is.
type DiffHeader struct {
	Git bool
	// Old and New are a plain header's names without their timestamps
	// ("" for /dev/null); Index is the "Index:" line's name.
	Old, New, Index string
}

// DiffHeaders lists the file headers of a diff in order, one for each
// file go-gitdiff parses from it. Hunk bodies are skipped by their line
// counts, so a removed line "-- x" never reads as a header.
func DiffHeaders(diff string) []DiffHeader {
	lines := strings.Split(diff, "\n")
	var out []DiffHeader
	index := ""
	gitPending := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "diff --git "):
			out = append(out, DiffHeader{Git: true})
			gitPending, index = true, ""
		case strings.HasPrefix(l, "Index: "):
			index = strings.TrimSpace(strings.TrimPrefix(l, "Index: "))
		case strings.HasPrefix(l, "--- ") && i+2 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") && strings.HasPrefix(lines[i+2], "@@ -"):
			if gitPending {
				gitPending = false
			} else {
				out = append(out, DiffHeader{Old: headerName(l[4:]), New: headerName(lines[i+1][4:]), Index: index})
			}
			index = ""
			i++
		case strings.HasPrefix(l, "@@ -"):
			gitPending = false
			oldN, newN, ok := hunkCounts(l)
			if !ok {
				continue
			}
			for i+1 < len(lines) && (oldN > 0 || newN > 0) {
				i++
				switch b := lines[i]; {
				case strings.HasPrefix(b, "\\"):
				case strings.HasPrefix(b, "-"):
					oldN--
				case strings.HasPrefix(b, "+"):
					newN--
				default: // context (a blank line is an empty context line)
					oldN--
					newN--
				}
			}
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\\") {
				i++
			}
		}
	}
	return out
}

// headerName is the name in a "--- " or "+++ " line: up to a tab (the
// timestamp), unquoted when quoted; "" for /dev/null. A name followed by
// a timestamp that is the epoch means the file does not exist on that
// side (GNU diff -N); go-gitdiff reads that, this only keeps the name.
func headerName(s string) string {
	if strings.HasPrefix(s, "\"") {
		if end := strings.Index(s[1:], "\""); end >= 0 {
			if u, err := strconv.Unquote(s[:end+2]); err == nil {
				s = u
			}
		}
	} else if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	} else if m := dateSuffix.FindStringIndex(s); m != nil {
		s = s[:m[0]] // "--- a/x  2026-06-01 10:00:00" with spaces, not a tab
	}
	s = strings.TrimRight(s, " \r")
	if s == "/dev/null" {
		return ""
	}
	return s
}

// dateSuffix is a timestamp after a name written with spaces.
var dateSuffix = regexp.MustCompile(`\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?( [+-]\d{4})?$`)

// hunkCounts reads a unified hunk header's old and new line counts.
func hunkCounts(l string) (oldN, newN int, ok bool) {
	m := hunkHeaderRe.FindStringSubmatch(l)
	if m == nil {
		return 0, 0, false
	}
	oldN, newN = 1, 1
	if m[1] != "" {
		oldN, _ = strconv.Atoi(m[1])
	}
	if m[2] != "" {
		newN, _ = strconv.Atoi(m[2])
	}
	return oldN, newN, true
}

var hunkHeaderRe = regexp.MustCompile(`^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@`)

// StripName drops n leading components of a name as GNU patch's -p does
// (runs of slashes count as one); ok is false when the name has fewer
// than n+1 components.
func StripName(name string, n int) (string, bool) {
	for ; n > 0; n-- {
		i := strings.IndexByte(name, '/')
		if i < 0 {
			return "", false
		}
		name = strings.TrimLeft(name[i+1:], "/")
	}
	if name == "" {
		return "", false
	}
	return name, true
}

// CheckPath accepts a relative, clean path that stays inside the tree
// (the check import makes on every name a diff gives).
func CheckPath(name string) error { return checkPath(name) }
