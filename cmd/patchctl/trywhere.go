package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/tree"
)

// KernelNewest is the --kernel value that names the newest pinned kernel.
const KernelNewest = "newest"

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
func baseOf(in *tryInput) string {
	if b := pipeline.BaseCommit(in.raw...); b != "" {
		return b
	}
	for i, t := range in.threads {
		if t.Cover == nil || t.Cover.MessageID == "" || i >= len(in.inputs) {
			continue
		}
		id := strings.Trim(t.Cover.MessageID, "<>")
		for _, data := range in.inputs[i] {
			for _, m := range splitMbox(data) {
				if bytes.Contains(m, []byte(id)) {
					if b := pipeline.BaseCommit(m); b != "" {
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

// tryKernels decides where try tests, and says why: --tree (the local
// tree), --kernel K or newest, else the pinned kernel that the
// base-commit trailer is in, else the lock's default.
func tryKernels(ctx context.Context, opts *TryOptions, root string, lock *tree.Lock, in *tryInput) ([]*tree.Kernel, []string, error) {
	all := pins(lock)
	base := baseOf(in)
	var repos []string
	for _, r := range []string{opts.Tree, opts.Git} {
		if r != "" {
			repos = append(repos, r)
		}
	}
	var where []string
	if opts.Tree != "" {
		k, err := opts.Global.localKernel(ctx, root, lock, opts.Tree, opts.Kernels)
		if err != nil {
			return nil, nil, err
		}
		where = append(where, fmt.Sprintf("the local tree %s (--tree)", opts.Tree))
		if base != "" {
			p := pipeline.PlaceBase(ctx, base, repos, all)
			where = append(where, p.Why)
		}
		return []*tree.Kernel{k}, where, nil
	}
	if len(opts.Kernels) > 0 {
		var ks []*tree.Kernel
		for _, n := range opts.Kernels {
			if n == KernelNewest {
				k := pipeline.Newest(all)
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
			where = append(where, pipeline.PlaceBase(ctx, base, repos, all).Why)
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
	p := pipeline.PlaceBase(ctx, base, repos, all)
	if p.Pin == nil {
		return []*tree.Kernel{def}, []string{fmt.Sprintf("%s, the lock's default: %s", def.Name, p.Why)}, nil
	}
	return []*tree.Kernel{p.Pin}, []string{p.Why + ": testing there"}, nil
}

// elsewhere says, for each kernel tested where a patch was already in
// the tree (already-applied or already-upstream), the newest pinned
// kernel where none is, checked by applying them to its prepared tree
// (in memory); kernels whose trees are not prepared are named as not
// checked.
func elsewhere(ctx context.Context, lock *tree.Lock, cache *tree.Cache, ks []*tree.Kernel, res *pipeline.Result, in *tryInput) []string {
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
		here, ok := pipeline.PinUpstream(ks[i])
		var unchecked []string
		found := ""
		for _, pk := range newestFirst(all) {
			pu, _ := pipeline.PinUpstream(pk)
			if pk.Name == ks[i].Name || ok && !pu.Newer(here) {
				continue
			}
			if !cache.Prepared(pk) {
				unchecked = append(unchecked, pk.Name)
				continue
			}
			o, err := apply.RunGiven(ctx, apply.Given{Kernel: pk, Pristine: cache.PristineDir(pk), Patches: in.patches, Sources: in.sources,
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
		n := pipeline.Newest(rest)
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
