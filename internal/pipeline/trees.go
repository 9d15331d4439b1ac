package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/patchctl/patchctl/internal/debian"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
)

// The steps of the tree verbs (tree list, prepare, verify, pin) and of
// matrix: the pinned kernels and their pristine trees in the cache.

// SourceOf says where a kernel's sources come from: the Debian package,
// the git tag or commit, or the local tree.
func SourceOf(k *tree.Kernel) string {
	switch {
	case k.Debian != nil:
		s := "debian " + k.Debian.Package + "=" + k.Debian.Version
		if k.Debian.Suite != "" {
			s += " (" + k.Debian.Suite + ")"
		}
		return s
	case k.Git != nil:
		return "git " + k.Git.URL + " " + firstNonEmpty(k.Git.Tag, k.Git.Commit)
	case k.Local != nil:
		return "local " + k.Local.Dir + " (" + k.Local.Release + ", " + k.Local.Identity() + ")"
	}
	return k.Key()
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// SelectKernels is what --kernel K... and --all name: the lock's default
// when neither is given.
func (w *Workspace) SelectKernels(names []string, all bool) []string {
	if all {
		return w.Lock.Names()
	}
	if len(names) == 0 {
		return []string{w.Lock.Default}
	}
	return names
}

// ListedTree is one line of tree list.
type ListedTree struct {
	Kernel   string `json:"kernel"`
	Source   string `json:"source"`
	Default  bool   `json:"default"`
	Prepared bool   `json:"prepared"`
	Dir      string `json:"dir,omitempty"`
}

// ListTrees lists the pinned kernels and whether their trees are
// prepared.
func (w *Workspace) ListTrees() ([]ListedTree, error) {
	cache, err := w.Cache(false)
	if err != nil {
		return nil, err
	}
	var out []ListedTree
	for i := range w.Lock.Kernels {
		k := &w.Lock.Kernels[i]
		e := ListedTree{Kernel: k.Name, Source: SourceOf(k), Default: k.Name == w.Lock.Default, Prepared: cache.Prepared(k)}
		if e.Prepared {
			e.Dir = cache.PristineDir(k)
		}
		out = append(out, e)
	}
	return out, nil
}

// MatrixEntry is one kernel of matrix (a GitHub Actions
// strategy.matrix entry).
type MatrixEntry struct {
	Kernel  string `json:"kernel"`
	Source  string `json:"source"`
	Default bool   `json:"default"`
}

// Matrix is the pinned kernels as matrix prints them.
func (w *Workspace) Matrix() []MatrixEntry {
	var out []MatrixEntry
	for i := range w.Lock.Kernels {
		k := &w.Lock.Kernels[i]
		out = append(out, MatrixEntry{Kernel: k.Name, Source: SourceOf(k), Default: k.Name == w.Lock.Default})
	}
	return out
}

// PreparedTree is one kernel of tree prepare.
type PreparedTree struct {
	Kernel  string  `json:"kernel"`
	Source  string  `json:"source"`
	Dir     string  `json:"dir"`
	Seconds float64 `json:"seconds"`
}

// PrepareTrees prepares the pristine trees of the named kernels (force:
// extracted again even when prepared).
func (w *Workspace) PrepareTrees(ctx context.Context, names []string, force bool) ([]PreparedTree, error) {
	cache, err := w.Cache(false)
	if err != nil {
		return nil, err
	}
	var out []PreparedTree
	for _, n := range names {
		k, err := w.Lock.Find(n)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		prep := cache.Prepare
		if force {
			prep = cache.Reprepare
		}
		dir, err := prep(ctx, k)
		if err != nil {
			return nil, err
		}
		out = append(out, PreparedTree{k.Name, SourceOf(k), dir, time.Since(start).Seconds()})
	}
	return out, nil
}

// VerifiedTree is one kernel of tree verify.
type VerifiedTree struct {
	Kernel  string  `json:"kernel"`
	Status  string  `json:"status"` // PASS (intact) or FAIL (damaged)
	Problem string  `json:"problem,omitempty"`
	Seconds float64 `json:"seconds"`
	// Err is the damage found (Status FAIL).
	Err error `json:"-"`
}

// VerifyTrees checks the prepared trees of the named kernels against
// their manifests, every file, telling each as it is done; damage is a
// result (Status FAIL), any other error ends the step.
func (w *Workspace) VerifyTrees(names []string, each func(VerifiedTree)) ([]VerifiedTree, error) {
	cache, err := w.Cache(false)
	if err != nil {
		return nil, err
	}
	var res []VerifiedTree
	for _, n := range names {
		k, err := w.Lock.Find(n)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		v := VerifiedTree{Kernel: k.Name, Status: vocab.Pass}
		if err := cache.VerifyAll(k); err != nil {
			if !errs.IsEnv(err) {
				return nil, err
			}
			v.Status, v.Problem, v.Err = vocab.Fail, errs.Message(err), err
		}
		v.Seconds = time.Since(start).Seconds()
		res = append(res, v)
		if each != nil {
			each(v)
		}
	}
	return res, nil
}

// PinOptions say which pins Pins checks or renews.
type PinOptions struct {
	Kernels []string // none: every kernel that pins a suite
	All     bool
	// Check only compares; else a stale pin is rewritten in
	// series/kernels.yaml.
	Check bool
}

// Pins asks each kernel's Debian suite what it serves now, and renews
// the stale pins unless o.Check. It returns each kernel's status and how
// many were stale.
func (w *Workspace) Pins(ctx context.Context, o PinOptions) ([]*debian.PinStatus, int, error) {
	if o.All && len(o.Kernels) > 0 {
		return nil, 0, fmt.Errorf("--all and --kernel exclude each other: %w", errs.ErrUsage)
	}
	var ks []*tree.Kernel
	if len(o.Kernels) == 0 {
		for i := range w.Lock.Kernels {
			if k := &w.Lock.Kernels[i]; k.Debian != nil && k.Debian.Suite != "" {
				ks = append(ks, k)
			}
		}
		if len(ks) == 0 {
			return nil, 0, fmt.Errorf("no kernel in series/kernels.yaml pins a Debian suite: %w", errs.ErrInput)
		}
	}
	for _, n := range o.Kernels {
		k, err := w.Lock.Find(n)
		if err != nil {
			return nil, 0, err
		}
		ks = append(ks, k)
	}
	cache, err := w.Cache(false)
	if err != nil {
		return nil, 0, err
	}
	updated := map[string]bool{}
	var out []*debian.PinStatus
	stale := 0
	for _, k := range ks {
		if k.Debian != nil && k.Debian.Suite != "" && !updated[k.Debian.Suite] {
			if err := cache.Debian().UpdateSuite(ctx, k.Debian.Suite); err != nil {
				return nil, 0, err
			}
			updated[k.Debian.Suite] = true
		}
		var st *debian.PinStatus
		if o.Check {
			st, err = cache.Debian().CheckPin(ctx, k.Name, k.Debian)
		} else {
			st, err = cache.Debian().Repin(ctx, k.Name, k.Debian)
		}
		if err != nil {
			return nil, 0, err
		}
		if st.Stale != "" {
			stale++
		}
		if !o.Check && st.Stale != "" {
			if err := tree.RewritePin(filepath.Join(w.Root, "series", "kernels.yaml"), k.Name, st.New); err != nil {
				return nil, 0, err
			}
		}
		out = append(out, st)
	}
	return out, stale, nil
}
