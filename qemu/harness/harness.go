// Package harness holds the kernel patches patchctl applies after the
// series under test, to the baseline and the patched tree alike, so that
// the boots test what soft-RDMA would otherwise hide:
//   - dma-faithful: virtual-DMA addresses (rxe, siw) that no CPU access
//     can use, so an inline SGE carrying a DMA address, or a non-inline
//     SGE carrying a CPU address, is reported in the guest's log;
//   - incapsule-wrap: the host driver sends, on request, one in-capsule
//     write whose SGL offset wraps the target's off + len bound check
//     (the in-capsule bounds reproducer).
//
// A harness has variants, one per shape of the code it changes; Select
// takes the first variant that applies to the tree with every line of
// context matching (at its line or moved, as patchctl's apply stage
// places hunks; never with fuzz), so a local tree of any version gets the
// variant that fits it or, when none does, a reason.
package harness

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/vocab"
)

//go:embed dma-faithful/*.patch incapsule-wrap/*.patch
var patches embed.FS

// DMAFaithful is the harness that makes virtual DMA addresses unusable
// as CPU addresses.
const DMAFaithful = "dma-faithful"

// IncapsuleWrap is the host-side half of the in-capsule bounds
// reproducer: nvme-rdma's patchctl_wrap_icdoff parameter.
const IncapsuleWrap = "incapsule-wrap"

// Variant is one harness patch: its name (the file's base name without
// .patch), its bytes and the files it changes.
type Variant struct {
	Harness string
	Name    string
	Patch   []byte
	files   []*gitdiff.File
}

// SHA256 is the patch's content hash, for build keys.
func (v *Variant) SHA256() string {
	s := sha256.Sum256(v.Patch)
	return hex.EncodeToString(s[:])
}

// Paths lists the files the variant changes, sorted.
func (v *Variant) Paths() []string {
	var out []string
	for _, f := range v.files {
		out = append(out, f.NewName)
	}
	sort.Strings(out)
	return out
}

// Variants returns the harness's variants in the order Select tries
// them (by file name).
func Variants(harness string) ([]*Variant, error) {
	names, err := fs.Glob(patches, harness+"/*.patch")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no harness %q (known: %s, %s)", harness, DMAFaithful, IncapsuleWrap)
	}
	sort.Strings(names)
	var out []*Variant
	for _, n := range names {
		b, err := patches.ReadFile(n)
		if err != nil {
			return nil, err
		}
		files, _, err := gitdiff.Parse(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("harness patch %s: %w", n, err)
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("harness patch %s changes no file", n)
		}
		for _, f := range files {
			if f.IsNew || f.IsDelete || f.IsRename || f.IsCopy || f.IsBinary || f.NewName != f.OldName {
				return nil, fmt.Errorf("harness patch %s: %s: only edits of existing text files are supported", n, f.NewName)
			}
		}
		out = append(out, &Variant{Harness: harness, Name: strings.TrimSuffix(path.Base(n), ".patch"), Patch: b, files: files})
	}
	return out, nil
}

// ErrNoVariant says that no variant of a harness fits the tree.
var ErrNoVariant = errors.New("no harness variant applies")

// Result is a variant applied in memory: the new content of each file
// it changes.
type Result struct {
	*Variant
	Files map[string][]byte
}

// Select applies the harness's variants in order to the files read
// through read (a path relative to the tree's top) and returns the
// first that applies exactly. When none does, the error wraps
// ErrNoVariant and says, for each variant, the first file and hunk that
// did not apply.
func Select(harness string, read func(rel string) ([]byte, error)) (*Result, error) {
	vs, err := Variants(harness)
	if err != nil {
		return nil, err
	}
	var why []string
	for _, v := range vs {
		files, err := v.apply(read)
		if err == nil {
			return &Result{Variant: v, Files: files}, nil
		}
		why = append(why, fmt.Sprintf("%s: %v", v.Name, err))
	}
	return nil, fmt.Errorf("%w: harness %s: %s", ErrNoVariant, harness, strings.Join(why, "; "))
}

// readTree is an apply.Tree over a read function.
type readTree func(string) ([]byte, error)

func (r readTree) ReadFile(p string) ([]byte, error) { return r(p) }
func (r readTree) ReadDir(string) ([]string, error)  { return nil, nil }

func (v *Variant) apply(read func(string) ([]byte, error)) (map[string][]byte, error) {
	return v.applyWith(read, false)
}

// applyWith applies the variant; with fuzz, as a patch under test would
// (any disposition that applies).
func (v *Variant) applyWith(read func(string) ([]byte, error), fuzz bool) (map[string][]byte, error) {
	name := v.Harness + "/" + v.Name + ".patch"
	ps, err := mailpatch.ImportBytes(name, v.Patch, v.Harness, mailpatch.Options{})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(ps) != 1 {
		return nil, fmt.Errorf("%s holds %d patches, want 1", name, len(ps))
	}
	res, err := apply.Series(readTree(read), []series.Entry{{Source: name, Expect: series.Applies}}, ps)
	if err != nil {
		return nil, err
	}
	r := res.Results[0]
	if fuzz && r.Disposition == series.AppliesFuzz {
		return res.Files, nil
	}
	if r.Disposition != series.Applies && r.Disposition != series.AppliesOffset {
		for _, h := range r.Hunks {
			if !h.Applied || h.Fuzz > 0 || h.Reversed {
				return nil, fmt.Errorf("%s: %s, hunk %d (line %d)", r.Disposition, h.File, h.Index, h.Stated)
			}
		}
		return nil, errors.New(r.Disposition)
	}
	return res.Files, nil
}

// ForMode names the harnesses a build of the DMA mode (vocab.DMAFaithful,
// vocab.DMAPlain) applies, in order. The in-capsule host switch is in
// both: with its parameter off (the default) the host driver sends what
// it sends without it.
func ForMode(dma string) []string {
	if dma == vocab.DMAPlain {
		return []string{IncapsuleWrap}
	}
	return []string{DMAFaithful, IncapsuleWrap}
}

// Key is the content of every variant of the named harnesses, for build
// and boot keys: a change to any harness patch is a new build.
func Key(names []string) (string, error) {
	h := sha256.New()
	for _, n := range names {
		vs, err := Variants(n)
		if err != nil {
			return "", err
		}
		for _, v := range vs {
			fmt.Fprintf(h, "%s/%s %s\n", n, v.Name, v.SHA256())
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Applied says which harness patch a build applied.
type Applied struct {
	Harness string   `json:"harness"`
	Variant string   `json:"variant"`
	SHA256  string   `json:"sha256"`
	Files   []string `json:"files"`
}

// String is "harness/variant".
func (a Applied) String() string { return a.Harness + "/" + a.Variant }

// Plan is the harnesses applied on top of one state of a tree.
type Plan struct {
	// Files is the content of every file a harness changed, on top of
	// the state read.
	Files   map[string][]byte
	Applied []Applied
	// Off says, per harness not applied, why.
	Off map[string]string
}

// Paths lists the files the plan changes, sorted.
func (p *Plan) Paths() []string {
	var out []string
	for f := range p.Files {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// ErrConflict says that the series under test changes lines a harness
// patch changes or needs as context.
var ErrConflict = errors.New("the series under test conflicts with a harness patch")

// ForBuild applies the named harnesses, in order, on top of a state of
// a tree: pristine reads the pristine tree, state the state the build
// compiles (the pristine tree for a baseline; the series' files over it
// for a patched build). Each harness's variant is the one Select picks
// on the pristine tree, so baseline and patched builds carry the same
// one; on the state it applies as a patch under test would (moved or
// with fuzz, since the series may have changed its context). A harness
// with no variant for the tree is left off with the reason (a local
// tree of another shape); one whose variant does not apply over the
// series is an error wrapping ErrConflict.
func ForBuild(names []string, pristine, state func(rel string) ([]byte, error)) (*Plan, error) {
	p := &Plan{Files: map[string][]byte{}, Off: map[string]string{}}
	over := func(rel string) ([]byte, error) {
		if b, ok := p.Files[rel]; ok {
			return b, nil
		}
		return state(rel)
	}
	for _, n := range names {
		r, err := Select(n, pristine)
		if errors.Is(err, ErrNoVariant) {
			p.Off[n] = err.Error()
			continue
		}
		if err != nil {
			return nil, err
		}
		files, err := r.Variant.applyWith(over, true)
		if err != nil {
			return nil, fmt.Errorf("%w: %s (%s) does not apply over the series: %v; build with --dma %s to leave the DMA harness out, or rebase the series", ErrConflict, n, r.Variant.Name, err, vocab.DMAPlain)
		}
		for f, b := range files {
			p.Files[f] = b
		}
		p.Applied = append(p.Applied, Applied{Harness: n, Variant: r.Variant.Name, SHA256: r.Variant.SHA256(), Files: r.Variant.Paths()})
	}
	return p, nil
}
