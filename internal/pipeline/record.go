package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
)

// RecordOptions say what try --record keeps, and where.
type RecordOptions struct {
	Root  string
	Lock  *tree.Lock
	Cache *tree.Cache
	// Name is the series: patches/NAME/.
	Name string
	// Strip is -pN for plain diffs (nil: found from the tree).
	Strip *int
	// Kernels are the kernels tried, Result the run on them.
	Kernels []*tree.Kernel
	Result  *Result
	// Patches are the patches taken, in order; Raw each one's message
	// as received.
	Patches []*mailpatch.Patch
	Raw     [][]byte
}

// Record writes patches/NAME/ and each kernel's manifest entries with
// the dispositions the patches have after the series of record, then
// refreshes series/<kernel>/ (patchctl try --record). It refuses when a
// kernel's apply stage did not pass. It returns what it wrote, relative
// to the repository.
func Record(ctx context.Context, o RecordOptions) ([]string, error) {
	manifests, err := recordKernels(o)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(o.Root, "patches", o.Name)
	msgs, err := writeRecorded(o, dir)
	if err != nil {
		return nil, err
	}
	recorded := append([]string(nil), msgs.sources...)
	for _, k := range manifests {
		written, err := recordOn(ctx, o, k, msgs)
		if err != nil {
			return nil, err
		}
		recorded = append(recorded, written...)
	}
	return recorded, nil
}

// recordKernels are the pinned kernels whose manifests Record writes
// (each kernel tried, or the manifest a local tree names); it refuses
// when a kernel's apply stage did not pass.
func recordKernels(o RecordOptions) ([]*tree.Kernel, error) {
	for _, k := range o.Result.Kernels {
		for _, s := range k.Stages {
			if s.Name == StageApply && s.Status != vocab.Pass {
				return nil, fmt.Errorf("--record %s: not recorded: the apply stage of %s did not pass (%s): %w", o.Name, k.Name, s.Detail, errs.ErrFindings)
			}
		}
	}
	var manifests []*tree.Kernel
	for _, k := range o.Kernels {
		name := k.SeriesName()
		if name == "" {
			return nil, fmt.Errorf("--record %s: the local tree has no manifest in series/ (pass --kernel K): %w", o.Name, errs.ErrUsage)
		}
		pk, err := o.Lock.Find(name)
		if err != nil {
			return nil, err
		}
		manifests = append(manifests, pk)
	}
	return manifests, nil
}

// recordedMessages are the messages Record wrote under patches/NAME/:
// each one's source, its patch as imported from the file, and the
// trailers the thread's replies added to it.
type recordedMessages struct {
	sources  []string
	patches  []*mailpatch.Patch
	trailers [][]string
}

// writeRecorded writes the messages as received into dir (patches/NAME/,
// replaced only when patchctl try wrote it) and imports each back.
func writeRecorded(o RecordOptions, dir string) (*recordedMessages, error) {
	mark := filepath.Join(dir, ".patchctl-try")
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		if _, err := os.Stat(mark); err != nil {
			return nil, fmt.Errorf("--record %s: patches/%s exists and was not written by patchctl try: pick another name: %w", o.Name, o.Name, errs.ErrUsage)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	m := &recordedMessages{}
	for i, raw := range o.Raw {
		ext := ".eml"
		if strings.HasPrefix(string(raw), "From ") {
			ext = ".mbox"
		}
		name := fmt.Sprintf("%04d-%s%s", i+1, mailpatch.Slug(o.Patches[i].Subject), ext)
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
			return nil, err
		}
		src := "patches/" + o.Name + "/" + name
		m.sources = append(m.sources, src)
		// The message as imported from the file, plus the trailers the
		// thread's replies gave: what the manifest entry will produce.
		ps, err := mailpatch.ImportFile(filepath.Join(dir, name), o.Name, mailpatch.Options{})
		if err != nil {
			return nil, fmt.Errorf("--record: %s does not import on its own: %w", src, err)
		}
		if len(ps) != 1 {
			return nil, fmt.Errorf("--record: %s holds %d patches, want 1: %w", src, len(ps), errs.ErrInput)
		}
		var add []string
		for _, tr := range trailersOf(o.Patches[i].Message) {
			if ps[0].AddTrailer(tr) {
				add = append(add, tr)
			}
		}
		m.patches = append(m.patches, ps[0])
		m.trailers = append(m.trailers, add)
	}
	if err := os.WriteFile(mark, []byte("written by patchctl try --record\n"), 0o644); err != nil {
		return nil, err
	}
	return m, nil
}

// recordOn adds the recorded messages to kernel k's manifest after its
// series of record, each with the disposition it has there, and
// refreshes series/<k>/; it returns what it wrote.
func recordOn(ctx context.Context, o RecordOptions, k *tree.Kernel, m *recordedMessages) ([]string, error) {
	pristine, err := o.Cache.Prepare(ctx, k)
	if err != nil {
		return nil, err
	}
	plan, err := apply.LoadPlan(o.Root, k.Name, "")
	if err != nil {
		return nil, err
	}
	var entries []series.Entry
	var ps []*mailpatch.Patch
	for i, e := range plan.Entries {
		if e.Series() != o.Name {
			entries, ps = append(entries, e), append(ps, plan.Patches[i])
		}
	}
	base := len(entries)
	for i, s := range m.sources {
		entries = append(entries, series.Entry{Source: s, Expect: series.Applies, Trailers: m.trailers[i], Strip: o.Strip})
		ps = append(ps, m.patches[i])
	}
	sr, err := apply.Series(apply.DirTree(pristine), entries, ps)
	if err != nil {
		return nil, err
	}
	var add []series.Entry
	for i, r := range sr.Results[base:] {
		e := entries[base+i]
		e.Expect = r.Disposition
		if !series.IsApplied(r.Disposition) {
			e.Reason = fmt.Sprintf("recorded by patchctl try: %s on %s after the series before it", r.Disposition, k.Name)
		}
		add = append(add, e)
	}
	mp := series.ManifestPath(o.Root, k.Name)
	if err := series.Record(mp, o.Name, add); err != nil {
		return nil, err
	}
	written := []string{filepath.ToSlash(filepath.Join("series", k.Name, "manifest.yaml"))}
	out, err := apply.Run(ctx, apply.In{Root: o.Root, Kernel: k, Pristine: pristine})
	if err != nil {
		return nil, err
	}
	if err := out.Mismatch(); err != nil {
		return nil, fmt.Errorf("--record: %w", err)
	}
	if err := out.Refreshed.Write(out.Plan.Manifest.Dir()); err != nil {
		return nil, fmt.Errorf("writing series/%s: %w", k.Name, err)
	}
	return append(written, filepath.ToSlash(filepath.Join("series", k.Name))+"/"), nil
}

// trailersOf lists the trailer lines at the end of a commit message.
func trailersOf(msg string) []string {
	lines := strings.Split(msg, "\n")
	var out []string
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" {
			break
		}
		out = append([]string{l}, out...)
	}
	return out
}
