// Package series reads the per-kernel manifests under series/: which
// patches of record go to a kernel, in which order, and what is expected
// of each (the disposition, with the reason where it is not "applies").
//
// A manifest is series/<kernel>/manifest.yaml. Next to it, patchctl
// refresh writes the regenerated patches and a quilt "series" file that
// lists them, so `quilt push -a` or `git am series/<kernel>/*.patch` work
// on the pristine tree.
package series

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/yamlx"
)

// Dispositions: what happens when a patch meets a tree.
const (
	Applies         = "applies"             // every hunk at its stated line
	AppliesOffset   = "applies-with-offset" // some hunk moved, none needed fuzz
	AppliesFuzz     = "applies-with-fuzz"   // some hunk matched only without outer context
	AlreadyApplied  = "already-applied"     // the reverse applies
	AlreadyUpstream = "already-upstream"    // most added lines are in the tree already, maybe moved
	Conflict        = "conflict"            // none of the above
)

// Dispositions lists the valid dispositions.
var Dispositions = []string{Applies, AppliesOffset, AppliesFuzz, AlreadyApplied, AlreadyUpstream, Conflict}

// IsApplied reports whether a disposition means the patch goes in.
func IsApplied(d string) bool { return d == Applies || d == AppliesOffset || d == AppliesFuzz }

// Manifest is one kernel's list of patches.
type Manifest struct {
	Kernel  string  `yaml:"kernel"`
	Patches []Entry `yaml:"patches"`
	Boot    Boot    `yaml:"boot"`
	path    string
}

// Boot says what the boot test sets up and expects on this kernel.
type Boot struct {
	// InlineDataSize is written to the nvmet port's param_inline_data_size
	// (NVMe-oF in-capsule data), before the port is linked.
	InlineDataSize int `yaml:"inline_data_size"`
	// ExpectInline says, per variant, whether the host's command capsule
	// SENDs must carry IB_SEND_INLINE (verbs inline) or must not; a
	// variant it does not name is reported, not judged.
	ExpectInline map[string]bool `yaml:"expect_inline_capsules"`
}

// Expect is the inline expectation of a variant.
func (b Boot) Expect(variant string) guestconf.Expect {
	v, ok := b.ExpectInline[variant]
	if !ok {
		return guestconf.ExpectReport
	}
	return guestconf.ExpectOf(v)
}

// Entry is one patch of record and what is expected of it.
type Entry struct {
	Source string `yaml:"source"` // e.g. patches/nvme-rdma-inline-capsule/000_....txt
	Expect string `yaml:"expect"`
	Reason string `yaml:"reason,omitempty"`
	// Trailers are added to the patch's message (review trailers that
	// replies gave, as patchctl try --record collected them).
	Trailers []string `yaml:"trailers,omitempty"`
	// Strip is the -pN for a plain diff (no "diff --git" line): how many
	// leading components of its file names to drop. Unset: found from
	// the tree (see package apply).
	Strip *int `yaml:"strip,omitempty"`
}

// trailerForm is one trailer line: "Reviewed-by: Name <addr>".
var trailerForm = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]*: [^\r\n]*\S$`)

// Series is the series an entry belongs to: its folder under patches/.
func (e Entry) Series() string { return filepath.Base(filepath.Dir(e.Source)) }

// Path is where the manifest was read from.
func (m *Manifest) Path() string { return m.path }

// Dir is the folder of the manifest: where regenerated patches go.
func (m *Manifest) Dir() string { return filepath.Dir(m.path) }

// ManifestPath is where kernel's manifest lives under root (the repo).
func ManifestPath(root, kernel string) string {
	return filepath.Join(root, "series", kernel, "manifest.yaml")
}

// New is a manifest that no file holds (patchctl try): its Dir is dir,
// where the regenerated patches go.
func New(dir, kernel string, boot Boot, entries []Entry) *Manifest {
	return &Manifest{Kernel: kernel, Patches: entries, Boot: boot, path: filepath.Join(dir, "manifest.yaml")}
}

// Load reads and checks a manifest.
func Load(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading manifest: %w: %w", err, errs.ErrInput)
	}
	var m Manifest
	if err := yamlx.Decode(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %v: %w", path, err, errs.ErrInput)
	}
	m.path = path
	lines := yamlx.ItemLines(data, "patches")
	for i, e := range m.Patches {
		bad := func(msg string) error {
			return fmt.Errorf("%s:%d: patch %d (%s): %s: %w", path, yamlx.Line(lines, i), i+1, e.Source, msg, errs.ErrInput)
		}
		if e.Source == "" {
			return nil, bad("no source")
		}
		// A source is a file of the repository's patches/ folder, in a
		// series folder of its own.
		if err := fsutil.ValidRel(e.Source); err != nil || !strings.HasPrefix(e.Source, "patches/") || strings.Count(e.Source, "/") != 2 {
			return nil, bad("a source is patches/<series>/<file>, inside the repository")
		}
		ok := false
		for _, d := range Dispositions {
			ok = ok || e.Expect == d
		}
		if !ok {
			return nil, bad(fmt.Sprintf("expect %q is not one of %s", e.Expect, strings.Join(Dispositions, ", ")))
		}
		if !IsApplied(e.Expect) && e.Reason == "" {
			return nil, bad("a patch expected not to apply needs a reason")
		}
		for _, tr := range e.Trailers {
			if !trailerForm.MatchString(tr) {
				return nil, bad(fmt.Sprintf("trailer %q is not \"Token: value\" on one line", tr))
			}
		}
	}
	return &m, nil
}

// Filter keeps the entries of one series ("" keeps all).
func (m *Manifest) Filter(series string) ([]Entry, error) {
	if series == "" {
		return m.Patches, nil
	}
	var out []Entry
	var known []string
	for _, e := range m.Patches {
		if e.Series() == series {
			out = append(out, e)
		}
		known = append(known, e.Series())
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no series %q in %s; it lists: %s: %w", series, m.path, strings.Join(known, ", "), errs.ErrInput)
	}
	return out, nil
}
