package mailpatch

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// Options control an import.
type Options struct {
	// Tree is a kernel tree to prove repairs against (context and removed
	// lines are looked up in their target file). Optional.
	Tree string
	// AllowUnicodeControl lets bidirectional control characters through.
	AllowUnicodeControl bool
	// MaxInputSize caps the bytes read from one input file; 0 means
	// DefaultMaxInputSize. A larger input (or an endless one such as
	// /dev/zero) is refused, not read to the end.
	MaxInputSize int64
}

// DefaultMaxInputSize is the input cap: a whole public-inbox thread of a
// large series is a few megabytes.
const DefaultMaxInputSize = 64 << 20

func (o Options) maxInput() int64 {
	if o.MaxInputSize > 0 {
		return o.MaxInputSize
	}
	return DefaultMaxInputSize
}

// Result is everything an import produced.
type Result struct {
	Patches  []*Patch        `json:"-"`
	Warnings []Warning       `json:"warnings"`
	ids      map[string]bool // Message-IDs imported
}

// Import reads each path (a file with one or more messages, or a folder of
// such files, which forms one series named after the folder) and returns
// the repaired patches in order. Nothing is written.
func Import(paths []string, opts Options) (*Result, error) {
	res := &Result{}
	for _, in := range paths {
		st, err := os.Stat(in)
		if err != nil {
			return nil, &InputError{File: in, Msg: fmt.Sprintf("cannot read: %v", err)}
		}
		if st.IsDir() {
			files, warns, err := SeriesFiles(in)
			if err != nil {
				return nil, err
			}
			res.Warnings = append(res.Warnings, warns...)
			name := folderSeries(in)
			var series []*Patch
			for _, f := range files {
				ps, err := ImportFile(f, name, opts)
				if err != nil {
					return nil, err
				}
				series = append(series, ps...)
			}
			res.add(series)
			continue
		}
		ps, err := ImportFile(in, "", opts)
		if err != nil {
			return nil, err
		}
		res.add(ps)
	}
	return res, nil
}

// SeriesFiles lists the message files of a series folder, in name order.
// Hidden files and patchctl's own metadata are not messages. Entries that
// are not regular files (FIFOs, sockets, devices, and symbolic links to
// them) are skipped, each with a warning: opening a FIFO would block for
// ever, a device could be endless.
func SeriesFiles(dir string) ([]string, []Warning, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, &InputError{File: dir, Msg: fmt.Sprintf("cannot read folder: %v", err)}
	}
	var files []string
	var warns []Warning
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || strings.HasPrefix(n, ".") || strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".yaml") || n == "README.md" {
			continue
		}
		path := filepath.Join(dir, n)
		mode := e.Type()
		if mode&fs.ModeSymlink != 0 {
			if st, err := os.Stat(path); err == nil {
				mode = st.Mode().Type()
			}
		}
		if mode.IsDir() {
			continue
		}
		if !mode.IsRegular() {
			warns = append(warns, Warning{File: path, Message: "skipped: " + notRegular(mode) + ", not a message file"})
			continue
		}
		files = append(files, path)
	}
	if len(files) == 0 {
		return nil, warns, &InputError{File: dir, Msg: "folder holds no patch files"}
	}
	sort.Strings(files)
	return files, warns, nil
}

// readable reports whether a file given by name is read: a regular file,
// a pipe or a character device.
func readable(m fs.FileMode) bool {
	return m.IsRegular() || m&fs.ModeNamedPipe != 0 || m&fs.ModeCharDevice != 0
}

func notAFile(name string, m fs.FileMode) error {
	return &InputError{File: name, Msg: notRegular(m) + ", not a file: patchctl reads patch files, mboxes and folders of them",
		Hint: "save the messages to a file and give that"}
}

// notRegular names a file type that is not a regular file.
func notRegular(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a block device"
	case mode&fs.ModeSymlink != 0:
		return "a dangling symbolic link"
	}
	return "not a regular file"
}

// ImportFile reads one file. series names the series; when empty it is
// the subject of the file's first patch, as git format-patch would name it.
func ImportFile(name, series string, opts Options) ([]*Patch, error) {
	data, err := ReadInputFile(name, opts.maxInput())
	if err != nil {
		return nil, err
	}
	return ImportBytes(name, data, series, opts)
}

// ReadInputFile reads at most limit bytes of a file and refuses a larger
// one. It never blocks in open: the file is opened non-blocking, so a
// FIFO without a writer reads as empty instead of hanging patchctl. A
// file given by name may be a pipe or a character device (a shell's
// <(b4 am -o - ...), /dev/stdin), read up to the cap; a socket or a
// block device is refused. (In folders only regular files are read:
// SeriesFiles.)
func ReadInputFile(name string, limit int64) ([]byte, error) {
	if st, err := os.Stat(name); err == nil && !readable(st.Mode()) {
		return nil, notAFile(name, st.Mode())
	}
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &InputError{File: name, Msg: fmt.Sprintf("cannot read: %v", err)}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &InputError{File: name, Msg: fmt.Sprintf("cannot read: %v", err)}
	}
	if !readable(st.Mode()) {
		return nil, notAFile(name, st.Mode())
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &InputError{File: name, Msg: fmt.Sprintf("cannot read: %v", err)}
	}
	if int64(len(data)) > limit {
		return nil, &InputError{File: name,
			Msg:  fmt.Sprintf("input is larger than the %d MiB cap on one input file (read %d bytes and stopped)", limit>>20, len(data)),
			Hint: "split the mbox, or import the series folder message by message"}
	}
	return data, nil
}

// ImportBytes is ImportFile on data already read; name is used in messages.
func ImportBytes(name string, data []byte, series string, opts Options) ([]*Patch, error) {
	if int64(len(data)) > opts.maxInput() {
		return nil, &InputError{File: name, Msg: fmt.Sprintf("input is larger than the %d MiB cap on one input file", opts.maxInput()>>20)}
	}
	if hasNUL(data) {
		return nil, &InputError{File: name, Msg: "binary file (NUL bytes), not a patch message"}
	}
	raws, err := splitFile(name, data)
	if err != nil {
		return nil, err
	}
	var out []*Patch
	for _, raw := range raws {
		m, err := readMessage(raw)
		if err != nil {
			return nil, err
		}
		p, err := buildPatch(m, series, opts)
		if err != nil {
			return nil, err
		}
		if p != nil {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, &InputError{File: name, Msg: "not a patch: no message in the file carries a diff"}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		last := out[len(out)-1]
		lines := bytes.Count(data, []byte("\n")) + 1
		tail := string(data[bytes.LastIndexByte(data, '\n')+1:])
		last.Repairs = append(last.Repairs, Repair{Kind: KindFinalNewline, File: name, Line: lines,
			Before: tail, After: tail + "\\n",
			Why: "every line of a patch ends in a newline; without one the last line reads as \"\\ No newline at end of file\""})
	}
	series = SeriesName(series, out[0].Subject, name)
	for _, p := range out {
		p.Series = series
	}
	return out, nil
}

// collapse leaves out a message whose Message-ID an earlier one has, as
// b4 does (a message fetched twice, the copies differing at most in the
// headers an archive adds), with a warning.
func (r *Result) collapse(series []*Patch) []*Patch {
	if r.ids == nil {
		r.ids = map[string]bool{}
	}
	out := series[:0:0]
	for _, p := range series {
		id := firstID(p.MessageID)
		if id != "" && r.ids[id] {
			r.Warnings = append(r.Warnings, Warning{File: p.Source, Line: p.Line,
				Message: fmt.Sprintf("message %s appears again; the first copy is imported, this one left out (as b4 does)", id)})
			continue
		}
		if id != "" {
			r.ids[id] = true
		}
		out = append(out, p)
	}
	return out
}

// add appends a series and warns about gaps in its [PATCH n/m] numbering.
func (r *Result) add(series []*Patch) {
	series = r.collapse(series)
	r.Patches = append(r.Patches, series...)
	if len(series) == 0 {
		return
	}
	have := map[int]bool{}
	total := 0
	for _, p := range series {
		if p.Total > 0 {
			if total != 0 && p.Total != total {
				w := Warning{File: p.Source, Line: p.Line, Message: fmt.Sprintf("series %s: %s says %d patches, an earlier one says %d", p.Series, p.Prefix(), p.Total, total)}
				p.Warnings = append(p.Warnings, w)
				r.Warnings = append(r.Warnings, w)
			}
			total = max(total, p.Total)
			if have[p.Number] {
				w := Warning{File: p.Source, Line: p.Line, Message: fmt.Sprintf("series %s: patch %d/%d appears twice", p.Series, p.Number, p.Total)}
				p.Warnings = append(p.Warnings, w)
				r.Warnings = append(r.Warnings, w)
			}
			have[p.Number] = true
		}
	}
	var missing []string
	for n := 1; n <= total; n++ {
		if !have[n] {
			missing = append(missing, fmt.Sprintf("%d/%d", n, total))
		}
	}
	if len(missing) > 0 {
		var got []string
		for n := 1; n <= total; n++ {
			if have[n] {
				got = append(got, fmt.Sprintf("%d/%d", n, total))
			}
		}
		first := series[0]
		w := Warning{File: first.Source, Line: first.Line,
			Message: fmt.Sprintf("series %s is incomplete: %s missing (received %s); importing what is there", first.Series, strings.Join(missing, ", "), strings.Join(got, ", "))}
		for _, p := range series {
			p.Warnings = append(p.Warnings, w)
		}
		r.Warnings = append(r.Warnings, w)
	}
}

// Slug makes a file name part from a subject the way git format-patch does:
// letters, digits, '.' and '_' stay, runs of anything else become one '-'.
func Slug(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range s {
		ok := c < 0x80 && (isIdentByte(byte(c)) || c == '.')
		switch {
		case ok:
			b.WriteRune(c)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-.")
	if len(out) > 52 {
		out = strings.TrimRight(out[:52], "-.")
	}
	return out
}

// Report is the data form of an import, for --json and import.json.
type Report struct {
	Patches  []PatchReport `json:"patches"`
	Warnings []Warning     `json:"warnings"`
}

// PatchReport describes one written patch.
type PatchReport struct {
	Series   string   `json:"series"`
	Output   string   `json:"output,omitempty"`
	Source   string   `json:"source"`
	Line     int      `json:"line"`
	Subject  string   `json:"subject"`
	Author   string   `json:"author"`
	Date     string   `json:"date,omitempty"`
	Repairs  []Repair `json:"repairs"`
	Warnings []string `json:"warnings,omitempty"`
}

// Report builds the data form; outputs maps a patch to the file it went to.
func (r *Result) Report(outputs map[*Patch]string) Report {
	rep := Report{Patches: []PatchReport{}, Warnings: r.Warnings}
	if rep.Warnings == nil {
		rep.Warnings = []Warning{}
	}
	for _, p := range r.Patches {
		pr := PatchReport{Series: p.Series, Output: outputs[p], Source: p.Source, Line: p.Line,
			Subject: p.SubjectLine(), Author: formatAddress(p.Author.Name, p.Author.Address), Repairs: p.SortedRepairs()}
		if !p.Date.IsZero() {
			pr.Date = p.Date.Format("2006-01-02T15:04:05-07:00")
		}
		for _, w := range p.Warnings {
			pr.Warnings = append(pr.Warnings, w.Message)
		}
		rep.Patches = append(rep.Patches, pr)
	}
	return rep
}

// SortedRepairs returns the repairs in input line order.
func (p *Patch) SortedRepairs() []Repair {
	out := append([]Repair{}, p.Repairs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}
