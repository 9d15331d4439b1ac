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
