package build

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/vocab"
)

// An image is one build's snapshot: StateDir(dir, variant, state), named
// by its id (ImageID: kernel/config/variant-state, relative to the
// cache's build folder), holding bzImage, System.map, .config, build.log
// and metadata.json, the record of what it carries. A snapshot is
// published once, whole (a rename of a folder written aside), and never
// rewritten while it holds a passing build: what another process named
// stays what it boots.

// PatchRecord is one patch an image carries (or was tried with and does
// not carry: its disposition says which).
type PatchRecord struct {
	Source      string `json:"source"`
	Subject     string `json:"subject,omitempty"`
	Disposition string `json:"disposition"`
	// DiffSHA256 is the sha256 of the patch's diff as received.
	DiffSHA256 string `json:"diff_sha256"`
}

// PatchRecords lists the patches of an apply stage's output for variant
// (none for the baseline: it carries no patch).
func PatchRecords(out *apply.Out, variant string) []PatchRecord {
	if out == nil || variant != vocab.Patched {
		return nil
	}
	var recs []PatchRecord
	for i, r := range out.Result.Results {
		pr := PatchRecord{Source: r.Source, Disposition: r.Disposition}
		if i < len(out.Plan.Patches) && out.Plan.Patches[i] != nil {
			p := out.Plan.Patches[i]
			pr.Subject, pr.DiffSHA256 = p.Subject, fsutil.Hash([]byte(p.Diff))
		}
		recs = append(recs, pr)
	}
	return recs
}

// ImageID names the snapshot folder snap under the cache's build folder.
func ImageID(cacheDir, snap string) string {
	rel, err := filepath.Rel(filepath.Join(cacheDir, "build"), snap)
	if err != nil || strings.HasPrefix(rel, "..") {
		return snap
	}
	// kernel/confighash/variants/variant-state -> kernel/confighash/variant-state
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) == 4 && parts[2] == "variants" {
		return parts[0] + "/" + parts[1] + "/" + parts[3]
	}
	return filepath.ToSlash(rel)
}

// ImageDir is the snapshot folder of an image id.
func ImageDir(cacheDir, id string) (string, error) {
	parts := strings.Split(id, "/")
	if len(parts) != 3 {
		return "", fmt.Errorf("image id %q: want KERNEL/CONFIG/VARIANT-STATE as build and try print it: %w", id, errs.ErrUsage)
	}
	for _, p := range parts {
		if err := fsutil.ValidName(p); err != nil {
			return "", fmt.Errorf("image id %q: %v: %w", id, err, errs.ErrUsage)
		}
	}
	return filepath.Join(cacheDir, "build", parts[0], parts[1], "variants", parts[2]), nil
}

// LoadImage reads the record of the snapshot in dir and checks that its
// bzImage is the one the build recorded (sha256): a verified image, or an
// error saying what is wrong and what to do.
func LoadImage(dir string) (*Metadata, error) {
	b, err := os.ReadFile(filepath.Join(dir, "metadata.json"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no image in %s (no metadata.json): build it first (patchctl build, run or try): %w", dir, errs.ErrInput)
		}
		return nil, fmt.Errorf("reading the image record in %s: %w: %w", dir, err, errs.ErrInput)
	}
	var md Metadata
	if err := json.Unmarshal(b, &md); err != nil {
		return nil, fmt.Errorf("reading %s: %w: %w", filepath.Join(dir, "metadata.json"), err, errs.ErrInput)
	}
	if md.Status != vocab.Pass {
		return nil, fmt.Errorf("the image in %s is a failed build (status %s, log %s): %w", dir, md.Status, filepath.Join(dir, "build.log"), errs.ErrInput)
	}
	// The record's paths may come from another cache location (a copied
	// cache): the snapshot's own files are what is booted.
	md.VariantDir = dir
	want := md.SHA256["bzImage"]
	img := filepath.Join(dir, "bzImage")
	if md.KernelFrom == vocab.FromDistro {
		img = md.Artifacts["bzImage"]
	}
	got, err := fsutil.HashFile(img)
	if err != nil {
		return nil, fmt.Errorf("the image %s: %w: %w", img, err, errs.ErrInput)
	}
	if want == "" || got != want {
		return nil, fmt.Errorf("the image %s is not the one its build recorded (sha256 %.12s, recorded %.12s): rebuild it (patchctl build): %w", img, got, want, errs.ErrEnv)
	}
	// A distro image's rebuilt modules are in the snapshot (the rest is
	// Debian's, in the extracted packages, pinned by their sha256).
	for name, sum := range md.SHA256 {
		if !strings.HasPrefix(name, "modules/") {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if got, err := fsutil.HashFile(p); err != nil || got != sum {
			return nil, fmt.Errorf("the image's module %s is not the one its build recorded (sha256 %.12s, recorded %.12s; %v): rebuild it (patchctl build --kernel-from distro): %w", p, got, sum, err, errs.ErrEnv)
		}
	}
	if md.KernelFrom != vocab.FromDistro {
		md.Artifacts["bzImage"] = img
		if _, err := os.Stat(filepath.Join(dir, ".config")); err == nil {
			md.Artifacts["config"] = filepath.Join(dir, ".config")
		}
		// The modules the image carries are the snapshot's, as recorded.
		for i, m := range md.Modules {
			p := filepath.Join(dir, "modules", filepath.Base(m))
			want, ok := md.ModuleSHA256[modName(p)]
			got, err := fsutil.HashFile(p)
			if !ok || err != nil || got != want {
				return nil, fmt.Errorf("the image's module %s is missing or not the one its build recorded (sha256 %.12s, recorded %.12s): rebuild it (patchctl build): %w", p, got, want, errs.ErrEnv)
			}
			md.Modules[i] = p
		}
	}
	return &md, nil
}

// result is the part of a run's or try's result.json that names images.
type result struct {
	Kernels []struct {
		Kernel string               `json:"kernel"`
		Builds map[string]*Metadata `json:"builds"`
	} `json:"kernels"`
}

// ResolveImage finds the image ref names, in the cache: ref is an image
// id (KERNEL/CONFIG/VARIANT-STATE), a snapshot folder (holding
// metadata.json), or the output folder of a run or try (its result.json
// names the images it built; kernel picks one when it built several, ""
// the only one). The image is verified (LoadImage); an output folder's
// record must agree with the cache's (same sha256).
func ResolveImage(cacheDir, ref, kernel, variant string) (*Metadata, error) {
	if st, err := os.Stat(ref); err == nil && st.IsDir() {
		if _, err := os.Stat(filepath.Join(ref, "metadata.json")); err == nil {
			return LoadImage(ref)
		}
		if _, err := os.Stat(filepath.Join(ref, "result.json")); err == nil {
			return imageOfResult(cacheDir, filepath.Join(ref, "result.json"), kernel, variant)
		}
		return nil, fmt.Errorf("--image %s: a folder without metadata.json (an image) or result.json (a run or try output folder): %w", ref, errs.ErrUsage)
	}
	dir, err := ImageDir(cacheDir, ref)
	if err != nil {
		return nil, fmt.Errorf("--image %s: not a folder, and %w", ref, err)
	}
	return LoadImage(dir)
}

func imageOfResult(cacheDir, path, kernel, variant string) (*Metadata, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--image: %w: %w", err, errs.ErrInput)
	}
	var r result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("--image: reading %s: %w: %w", path, err, errs.ErrInput)
	}
	var names []string
	var builds map[string]*Metadata
	for _, k := range r.Kernels {
		names = append(names, k.Kernel)
		if kernel == "" || k.Kernel == kernel {
			builds = k.Builds
		}
	}
	switch {
	case len(names) == 0:
		return nil, fmt.Errorf("--image: %s records no kernel (the run did not start): %w", path, errs.ErrInput)
	case kernel == "" && len(names) > 1:
		return nil, fmt.Errorf("--image: %s records kernels %s: pass --kernel to pick one: %w", path, strings.Join(names, ", "), errs.ErrUsage)
	case builds == nil:
		return nil, fmt.Errorf("--image: %s records kernels %s, not %s: %w", path, strings.Join(names, ", "), kernel, errs.ErrUsage)
	}
	md := builds[variant]
	if md == nil || md.Status != vocab.Pass {
		return nil, fmt.Errorf("--image: %s has no passing %s build (see its summary.txt): %w", path, variant, errs.ErrInput)
	}
	if md.ID == "" {
		return nil, fmt.Errorf("--image: %s was written by a patchctl that did not name its images: run it again: %w", path, errs.ErrInput)
	}
	dir, err := ImageDir(cacheDir, md.ID)
	if err != nil {
		return nil, err
	}
	got, err := LoadImage(dir)
	if err != nil {
		return nil, fmt.Errorf("--image %s (%s): %w", filepath.Dir(path), md.ID, err)
	}
	if got.SHA256["bzImage"] != md.SHA256["bzImage"] {
		return nil, fmt.Errorf("--image %s: the cache's image %s (sha256 %.12s) is not the one the run booted (%.12s): the cache was pruned or is another one (--cache): %w",
			filepath.Dir(path), md.ID, got.SHA256["bzImage"], md.SHA256["bzImage"], errs.ErrEnv)
	}
	return got, nil
}

// Describe writes what an image carries, before a boot or bench starts.
func Describe(w io.Writer, md *Metadata) {
	id := md.ID
	if id == "" {
		id = md.VariantDir
	}
	fmt.Fprintf(w, "image %s\n", id)
	from := md.KernelFrom
	if from == "" {
		from = vocab.FromSource
	}
	fmt.Fprintf(w, "  kernel   %s %s (%s, source %s)\n", md.Kernel, md.KernelRelease, from, md.Source)
	fmt.Fprintf(w, "  variant  %s, source state %.12s\n", md.Variant, md.State)
	if len(md.Fragments) > 0 {
		fmt.Fprintf(w, "  config   %s (%.12s)\n", strings.Join(md.Fragments, ","), md.ConfigHash)
	}
	if md.Variant == vocab.Baseline {
		fmt.Fprintf(w, "  patches  none (the pristine tree)\n")
	}
	for _, p := range md.Patches {
		carried := "carried"
		if !series.IsApplied(p.Disposition) {
			carried = "not carried"
		}
		fmt.Fprintf(w, "  patch    %s: %s (%s, diff sha256 %.12s)", p.Source, p.Disposition, carried, p.DiffSHA256)
		if p.Subject != "" {
			fmt.Fprintf(w, " %s", p.Subject)
		}
		fmt.Fprintln(w)
	}
	if md.Variant == vocab.Patched && len(md.Patches) == 0 {
		for _, a := range md.Applied {
			fmt.Fprintf(w, "  patch    %s\n", a)
		}
	}
	fmt.Fprintf(w, "  bzImage  sha256 %s\n", md.SHA256["bzImage"])
}

// Publish is publish, for the distro path's snapshots (internal/debian/distro).
func Publish(staging, final string) (string, error) { return publish(staging, final) }

// publish makes the snapshot written in staging the image at final, once:
// a passing image already there (another build of the same state) is
// kept, and staging removed; anything else there (a failed build, a
// snapshot of the former layout) is replaced. It returns the folder that
// holds the image.
func publish(staging, final string) (string, error) {
	// A snapshot of the former layout (no image id: written in place,
	// recording no patches) is replaced, not kept.
	if md, err := LoadImage(final); err == nil && md.Status == vocab.Pass && md.ID != "" {
		os.RemoveAll(staging)
		return final, nil
	}
	if _, err := os.Lstat(final); err == nil {
		old := staging + ".old"
		if err := os.Rename(final, old); err != nil {
			return "", fmt.Errorf("replacing %s: %w", final, err)
		}
		defer os.RemoveAll(old)
	}
	if err := os.Rename(staging, final); err != nil {
		// Another process published the same state first: theirs stands.
		if md, lerr := LoadImage(final); lerr == nil && md.Status == vocab.Pass && md.ID != "" {
			os.RemoveAll(staging)
			return final, nil
		}
		return "", fmt.Errorf("publishing the image %s: %w", final, err)
	}
	return final, nil
}
