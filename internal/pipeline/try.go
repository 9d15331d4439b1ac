package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/patchsource"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
)

// The steps of try before and after Run: reading what it takes (files,
// git commits, a thread), deciding where to test it, saying where a
// patch already in the kernel is not, and try.json.

// KernelNewest is the --kernel value that names the newest pinned kernel.
const KernelNewest = "newest"

// TryResult is try.json: what was taken from the sources and the run.
type TryResult struct {
	Threads []*TryThread `json:"threads"`
	// Where says which kernels were tested and why (the base-commit,
	// --kernel, the default); Elsewhere, for patches already in a
	// kernel tested, where they are not.
	Where     []string `json:"where"`
	Elsewhere []string `json:"elsewhere,omitempty"`
	Record    []string `json:"recorded,omitempty"`
	Run       *Result  `json:"run"`
	// RecordErr is why --record did not keep the patches.
	RecordErr error `json:"-"`
}

// Write writes try.json into the folder out.
func (tr *TryResult) Write(out string) error {
	return fsutil.WriteJSON(filepath.Join(out, "try.json"), tr)
}

// TryThread is one source's thread as read.
type TryThread struct {
	Source string `json:"source"`
	*mailpatch.Thread
	Subjects []string `json:"subjects"`
}

// TryInput is every patch taken, in order, with its source and raw bytes.
type TryInput struct {
	Threads []*TryThread
	Patches []*mailpatch.Patch
	Sources []string
	Raw     [][]byte
	// Inputs are each thread's input messages as read (the cover
	// letter's base-commit: is there).
	Inputs [][][]byte
}

// TryInputOptions say what try takes.
type TryInputOptions struct {
	// Sources are files and folders; with Git, the first is the RANGE
	// when there is one (default -1).
	Sources []string
	Git     string
	// MsgID's thread comes from the inbox Inbox or the server Lore
	// (fetched with HTTP; nil: the default client).
	MsgID, Inbox, Lore string
	HTTP               *http.Client
	// Notes receives what was skipped while reading (nil: dropped).
	Notes io.Writer
	// Cache keeps the inbox's index (nil: built in memory).
	Cache *tree.Cache
}

// countRange is a RANGE of the form -N (the last N commits).
var countRange = regexp.MustCompile(`^-[0-9]+$`)

// IsCountRange reports whether s is a RANGE of the form -N (the last N
// commits), which goes with --git.
func IsCountRange(s string) bool { return countRange.MatchString(s) }

// CheckRecordName refuses a --record name that cannot be the folder
// patches/NAME.
func CheckRecordName(name string) error {
	if err := fsutil.ValidName(name); err != nil {
		return fmt.Errorf("--record %q: %v: a series name becomes the folder patches/NAME: %w", name, err, errs.ErrUsage)
	}
	return nil
}

// ReadTryInput reads what try takes, as b4 reads threads: each source's
// newest revision's patches in order, trailers from replies attached.
func ReadTryInput(ctx context.Context, o TryInputOptions) (*TryInput, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	notes := o.Notes
	if notes == nil {
		notes = io.Discard
	}
	groups, err := tryGroups(ctx, o, notes)
	if err != nil {
		return nil, err
	}
	in := &TryInput{}
	for _, g := range groups {
		t, err := mailpatch.ReadThreadContext(ctx, g.inputs, "", mailpatch.Options{})
		if err != nil && ctx.Err() != nil {
			return nil, fmt.Errorf("reading %s: interrupted: %w: %w", g.label, ctx.Err(), errs.ErrEnv)
		}
		if err != nil {
			var ie *mailpatch.InputError
			if errors.As(err, &ie) {
				return nil, fmt.Errorf("%w: %w", err, errs.ErrInput)
			}
			return nil, err
		}
		tt := &TryThread{Source: g.label, Thread: t}
		for i, p := range t.Patches {
			tt.Subjects = append(tt.Subjects, p.SubjectLine())
			in.Patches = append(in.Patches, p)
			in.Sources = append(in.Sources, fmt.Sprintf("try/%s/%04d-%s", t.Series, len(in.Sources)+1, mailpatch.Slug(p.Subject)))
			in.Raw = append(in.Raw, t.Raw[i])
		}
		in.Threads = append(in.Threads, tt)
		var data [][]byte
		for _, i := range g.inputs {
			data = append(data, i.Data)
		}
		in.Inputs = append(in.Inputs, data)
	}
	return in, nil
}

// tryGroup is one source's messages: a git range, a file or folder, a
// thread by its Message-ID.
type tryGroup struct {
	label  string
	inputs []mailpatch.Input
}

// tryGroups reads try's sources, each as given, in order: --git's
// range, the files and folders, --msgid's thread.
func tryGroups(ctx context.Context, o TryInputOptions, notes io.Writer) ([]tryGroup, error) {
	var groups []tryGroup
	args := o.Sources
	if o.Git == "" {
		for _, a := range args {
			if countRange.MatchString(a) {
				return nil, fmt.Errorf("%s: a RANGE of the last N commits goes with --git DIR (for a file of that name, give ./%s): %w", a, a, errs.ErrUsage)
			}
		}
	}
	if o.Git != "" {
		rng := "-1"
		if len(args) > 0 {
			rng, args = args[0], args[1:]
		}
		ins, err := patchsource.Git(ctx, o.Git, rng)
		if err != nil {
			return nil, err
		}
		groups = append(groups, tryGroup{"git " + o.Git + " " + rng, ins})
	}
	for _, a := range args {
		ins, ns, err := patchsource.Files(a)
		for _, n := range ns {
			fmt.Fprintf(notes, "note: %s\n", n)
		}
		if err != nil {
			return nil, err
		}
		groups = append(groups, tryGroup{a, ins})
	}
	if o.MsgID != "" {
		var in mailpatch.Input
		var err error
		switch {
		case (o.Inbox == "") == (o.Lore == ""):
			return nil, fmt.Errorf("--msgid needs exactly one of --inbox DIR and --lore URL: %w", errs.ErrUsage)
		case o.Inbox != "":
			ib := patchsource.InboxOptions{Context: ctx}
			if o.Cache != nil { // no cache: the index is built in memory
				ib.CacheDir, ib.Progress = o.Cache.Dir, o.Cache.Progress
			}
			in, err = patchsource.InboxIndexed(o.Inbox, o.MsgID, ib)
		default:
			in, err = patchsource.Lore(ctx, o.HTTP, o.Lore, o.MsgID)
		}
		if err != nil {
			return nil, err
		}
		groups = append(groups, tryGroup{"msgid " + o.MsgID, []mailpatch.Input{in}})
	} else if o.Inbox != "" || o.Lore != "" {
		return nil, fmt.Errorf("--inbox and --lore go with --msgid: %w", errs.ErrUsage)
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("nothing to try: give patch files, --git DIR [RANGE] or --msgid ID: %w", errs.ErrUsage)
	}
	return groups, nil
}

// pins are the lock's kernels.
func pins(lock *tree.Lock) []*tree.Kernel {
	var ks []*tree.Kernel
	for _, n := range lock.Names() {
		if k, err := lock.Find(n); err == nil {
			ks = append(ks, k)
		}
	}
	return ks
}

// baseOf finds the base-commit of what try takes: in a taken patch, else
// in the cover letter of its thread.
func baseOf(in *TryInput) string {
	if b := BaseCommit(in.Raw...); b != "" {
		return b
	}
	for i, t := range in.Threads {
		if t.Cover == nil || t.Cover.MessageID == "" || i >= len(in.Inputs) {
			continue
		}
		id := strings.Trim(t.Cover.MessageID, "<>")
		for _, data := range in.Inputs[i] {
			for _, m := range splitMbox(data) {
				if bytes.Contains(m, []byte(id)) {
					if b := BaseCommit(m); b != "" {
						return b
					}
				}
			}
		}
	}
	return ""
}

// splitMbox cuts an mbox at its "From " lines (one message: itself).
func splitMbox(b []byte) [][]byte {
	var out [][]byte
	start := 0
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			break
		}
		next := i + j + 1
		if bytes.HasPrefix(b[next:], []byte("From ")) {
			out = append(out, b[start:next])
			start = next
		}
		i = next
	}
	return append(out, b[start:])
}

// TryWhere is what try is told about where to test: --tree, --git (a
// repository that places a base-commit) and --kernel.
type TryWhere struct {
	Tree, Git string
	Kernels   []string
}

// CheckKernels refuses, before any input is read, a --kernel that names
// no pinned kernel (newest names one; with --tree the name is the
// manifest's, checked with the tree).
func (w *Workspace) CheckKernels(o TryWhere) error {
	for _, n := range o.Kernels {
		if _, err := w.Lock.Find(n); err != nil && n != KernelNewest && o.Tree == "" {
			return err
		}
	}
	return nil
}

// TryPlace is where try tests, and why.
type TryPlace struct {
	Kernels []*tree.Kernel
	Where   []string
}

// TryKernels decides where try tests, and says why: --tree (the local
// tree), --kernel K or newest, else the pinned kernel that the
// base-commit trailer is in, else the lock's default.
func (w *Workspace) TryKernels(ctx context.Context, o TryWhere, in *TryInput) (*TryPlace, error) {
	ks, where, err := w.tryKernels(ctx, o, in)
	if err != nil {
		return nil, err
	}
	return &TryPlace{Kernels: ks, Where: where}, nil
}

func (w *Workspace) tryKernels(ctx context.Context, o TryWhere, in *TryInput) ([]*tree.Kernel, []string, error) {
	lock := w.Lock
	all := pins(lock)
	base := baseOf(in)
	var repos []string
	for _, r := range []string{o.Tree, o.Git} {
		if r != "" {
			repos = append(repos, r)
		}
	}
	var where []string
	if o.Tree != "" {
		k, err := w.LocalKernel(ctx, o.Tree, o.Kernels)
		if err != nil {
			return nil, nil, err
		}
		where = append(where, fmt.Sprintf("the local tree %s (--tree)", o.Tree))
		if base != "" {
			p := PlaceBase(ctx, base, repos, all)
			where = append(where, p.Why)
		}
		return []*tree.Kernel{k}, where, nil
	}
	if len(o.Kernels) > 0 {
		var ks []*tree.Kernel
		for _, n := range o.Kernels {
			if n == KernelNewest {
				k := Newest(all)
				if k == nil {
					return nil, nil, fmt.Errorf("--kernel newest: no pinned kernel says its upstream version (series/kernels.yaml)")
				}
				ks = append(ks, k)
				where = append(where, fmt.Sprintf("%s, the newest pinned kernel (--kernel newest)", k.Name))
				continue
			}
			k, err := lock.Find(n)
			if err != nil {
				return nil, nil, err
			}
			ks = append(ks, k)
			where = append(where, fmt.Sprintf("%s (--kernel)", k.Name))
		}
		if base != "" {
			where = append(where, PlaceBase(ctx, base, repos, all).Why)
		}
		return ks, where, nil
	}
	def, err := lock.Find("")
	if err != nil {
		return nil, nil, err
	}
	if base == "" {
		return []*tree.Kernel{def}, []string{fmt.Sprintf("%s, the lock's default (no base-commit: trailer; --kernel K or --kernel newest choose another)", def.Name)}, nil
	}
	p := PlaceBase(ctx, base, repos, all)
	if p.Pin == nil {
		return []*tree.Kernel{def}, []string{fmt.Sprintf("%s, the lock's default: %s", def.Name, p.Why)}, nil
	}
	return []*tree.Kernel{p.Pin}, []string{p.Why + ": testing there"}, nil
}

// Elsewhere says, for each kernel tested where a patch was already in
// the tree (already-applied or already-upstream), the newest pinned
// kernel where none is, checked by applying them to its prepared tree
// (in memory); kernels whose trees are not prepared are named as not
// checked.
func Elsewhere(ctx context.Context, lock *tree.Lock, cache *tree.Cache, ks []*tree.Kernel, res *Result, in *TryInput) []string {
	if res == nil || in == nil {
		return nil
	}
	all := pins(lock)
	var out []string
	for i, kr := range res.Kernels {
		var already []string
		for _, r := range kr.Apply {
			if r.Disposition == series.AlreadyApplied || r.Disposition == series.AlreadyUpstream {
				already = append(already, fmt.Sprintf("%s (%s)", r.Source, r.Disposition))
			}
		}
		if len(already) == 0 || i >= len(ks) {
			continue
		}
		msg := fmt.Sprintf("%s already has %s", kr.Name, strings.Join(already, ", "))
		here, ok := PinUpstream(ks[i])
		var unchecked []string
		found := ""
		for _, pk := range newestFirst(all) {
			pu, _ := PinUpstream(pk)
			if pk.Name == ks[i].Name || ok && !pu.Newer(here) {
				continue
			}
			if !cache.Prepared(pk) {
				unchecked = append(unchecked, pk.Name)
				continue
			}
			o, err := apply.RunGiven(ctx, apply.Given{Kernel: pk, Pristine: cache.PristineDir(pk), Patches: in.Patches, Sources: in.Sources,
				Allow: []string{series.AlreadyApplied, series.AlreadyUpstream, series.Conflict}})
			if err != nil {
				unchecked = append(unchecked, pk.Name)
				continue
			}
			clean := true
			for _, r := range o.Result.Results {
				clean = clean && r.Disposition != series.AlreadyApplied && r.Disposition != series.AlreadyUpstream
			}
			if clean {
				found = pk.Name
				break
			}
		}
		switch {
		case found != "":
			msg += fmt.Sprintf("; the newest pinned kernel where none is: %s (checked by applying them there): patchctl try --kernel %s", found, found)
		case len(unchecked) > 0:
			msg += fmt.Sprintf("; newer pinned kernels not checked (trees not prepared: %s): patchctl try --kernel newest tests on the newest", strings.Join(unchecked, ", "))
		default:
			msg += "; every newer pinned kernel has them too"
		}
		out = append(out, msg)
	}
	return out
}

// newestFirst orders pinned kernels by upstream version, newest first.
func newestFirst(ks []*tree.Kernel) []*tree.Kernel {
	rest := append([]*tree.Kernel(nil), ks...)
	var out []*tree.Kernel
	for len(rest) > 0 {
		n := Newest(rest)
		if n == nil {
			return append(out, rest...)
		}
		out = append(out, n)
		for i, k := range rest {
			if k == n {
				rest = append(rest[:i], rest[i+1:]...)
				break
			}
		}
	}
	return out
}

// NotRun is the result of a run that did not start: an error verdict
// with err as its reason, and no kernels, for the reports that still say
// so.
func NotRun(err error) *Result {
	return &Result{Verdict: vocab.Error, Reason: err.Error(), Kernels: []*Kernel{}}
}

// TryOptions say what try runs and how: the input and where to test it,
// the run's options, and what to record.
type TryOptions struct {
	Input TryInputOptions
	Where TryWhere
	// Cache is the workspace's cache, opened once by the caller (the
	// inbox's index goes there too).
	Cache *tree.Cache
	// Out is the output folder: the regenerated patches go to
	// Out/series/<kernel>.
	Out        string
	Transports []string
	Accel      string // "" for auto
	KernelFrom string
	NoCcache   bool
	Fragments  []string
	// DMA and Reproduce are as in Options.
	DMA, Reproduce string
	// Allow, ExpectInline and Strip are as in GivenOptions.
	Allow        []string
	ExpectInline map[string]bool
	Strip        *int
	// Record names the series to keep the patches as ("" none).
	Record string
	// Taken, when set, is told what was taken and where it is tested,
	// once, before the run.
	Taken func(*TryResult)
}

// Try runs try's steps: the named kernels checked, the input read
// (ReadTryInput), where to test decided (TryKernels), the whole
// pipeline run on the patches given (Run with ApplyGiven), where a patch
// already in a kernel is not (Elsewhere), and the patches recorded when
// o.Record names a series (Record). The result is there even when the
// run did not start (its Run is NotRun, and err says why); a failed
// record is RecordErr.
func (w *Workspace) Try(ctx context.Context, o TryOptions) (*TryResult, error) {
	tr := &TryResult{}
	in, place, res, err := w.tryRun(ctx, o, tr)
	if err != nil {
		tr.Run = NotRun(err)
		return tr, err
	}
	tr.Run = res
	tr.Elsewhere = Elsewhere(ctx, w.Lock, o.Cache, place.Kernels, res, in)
	if o.Record != "" {
		tr.Record, tr.RecordErr = Record(ctx, RecordOptions{Root: w.Root, Lock: w.Lock, Cache: o.Cache, Name: o.Record, Strip: o.Strip,
			Kernels: place.Kernels, Result: res, Patches: in.Patches, Raw: in.Raw})
	}
	return tr, nil
}

// tryRun reads try's input, decides where to test it and runs the
// pipeline there, filling tr's threads and where as it learns them.
func (w *Workspace) tryRun(ctx context.Context, o TryOptions, tr *TryResult) (*TryInput, *TryPlace, *Result, error) {
	// Named kernels are checked before the input is read.
	if err := w.CheckKernels(o.Where); err != nil {
		return nil, nil, nil, err
	}
	input := o.Input
	input.Cache = o.Cache
	in, err := ReadTryInput(ctx, input)
	if err != nil {
		return nil, nil, nil, err
	}
	tr.Threads = in.Threads
	place, err := w.TryKernels(ctx, o.Where, in)
	if err != nil {
		return nil, nil, nil, err
	}
	tr.Where = place.Where
	if o.Taken != nil {
		o.Taken(tr)
	}
	res, err := Run(ctx, Options{Root: w.Root, Cache: o.Cache, Lock: w.Lock, Targets: place.Kernels, Transports: o.Transports,
		Progress: o.Cache.Progress, Accel: o.Accel, NoCcache: o.NoCcache, KernelFrom: o.KernelFrom, Fragments: o.Fragments, DMA: o.DMA, Reproduce: o.Reproduce,
		Apply: ApplyGiven(GivenOptions{Root: w.Root, Dir: filepath.Join(o.Out, "series"), Patches: in.Patches, Sources: in.Sources,
			Allow: o.Allow, ExpectInline: o.ExpectInline, Strip: o.Strip})})
	return in, place, res, err
}
