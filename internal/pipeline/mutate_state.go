package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
)

// mutateState is what a mutation run changes and puts back: the work
// tree's state and touched files, the patched build folder's latest
// image link and the snapshots the run made.
type mutateState struct {
	st    tree.State
	files map[string]savedFile
	// buildDir is the build folder ("" when it cannot be located);
	// link the target of its latest patched link ("" for none); had the
	// patched snapshots it held.
	buildDir, link string
	had            map[string]bool
	// made are the source states the run built (apply.Out.State).
	made []string
}

type savedFile struct {
	content []byte
	mode    os.FileMode
	gone    bool
}

// saveState reads what a mutation run will change, holding the work
// tree while it reads.
func (t *Target) saveState(ctx context.Context, fragments []string, out *apply.Out) (*mutateState, error) {
	wt, release, err := t.Cache.HoldWorkTree(ctx, t.Kernel)
	if err != nil {
		return nil, err
	}
	defer release()
	st, err := wt.State()
	if err != nil {
		return nil, fmt.Errorf("reading the %s work tree's state: %w", t.Kernel.Name, err)
	}
	s := &mutateState{st: *st, files: map[string]savedFile{}, had: map[string]bool{}}
	for _, p := range st.Touched {
		full := filepath.Join(wt.Dir, filepath.FromSlash(p))
		fi, err := os.Lstat(full)
		if errors.Is(err, fs.ErrNotExist) {
			s.files[p] = savedFile{gone: true}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading the work tree's %s: %w", p, err)
		}
		b, err := os.ReadFile(full)
		if err != nil {
			return nil, fmt.Errorf("reading the work tree's %s: %w", p, err)
		}
		s.files[p] = savedFile{content: b, mode: fi.Mode().Perm()}
	}
	if dir, err := build.Locate(t.Root, t.Cache, t.Kernel, out, fragments); err == nil {
		s.buildDir = dir
		s.link, _ = os.Readlink(build.VariantDir(dir, vocab.Patched))
		snaps, _ := filepath.Glob(filepath.Join(dir, "variants", vocab.Patched+"-*"))
		for _, p := range snaps {
			s.had[filepath.Base(p)] = true
		}
	}
	return s, nil
}

// restoreState puts the work tree back into its saved state (the files'
// content as they were: an unchanged file keeps its time, so builds stay
// incremental), points the latest patched image back where it pointed
// and removes the patched snapshots the run made.
func (t *Target) restoreState(ctx context.Context, s *mutateState) error {
	var errsOut []error
	if s.buildDir != "" {
		for _, state := range s.made {
			p := build.StateDir(s.buildDir, vocab.Patched, state)
			if !s.had[filepath.Base(p)] {
				if err := os.RemoveAll(p); err != nil {
					errsOut = append(errsOut, err)
				}
			}
		}
		link := build.VariantDir(s.buildDir, vocab.Patched)
		if s.link != "" {
			if err := build.LinkLatest(s.buildDir, vocab.Patched, filepath.Join(s.buildDir, "variants", s.link)); err != nil {
				errsOut = append(errsOut, err)
			}
		} else if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errsOut = append(errsOut, err)
		}
	}
	wt, release, err := t.Cache.HoldWorkTree(ctx, t.Kernel)
	if err != nil {
		return errors.Join(append(errsOut, err)...)
	}
	defer release()
	cur, err := wt.State()
	if err != nil {
		return errors.Join(append(errsOut, err)...)
	}
	var changes []tree.Change
	for _, p := range cur.Touched {
		if _, ok := s.files[p]; !ok {
			changes = append(changes, tree.Change{Path: p, Pristine: true})
		}
	}
	for _, p := range s.st.Touched {
		f := s.files[p]
		if f.gone {
			if _, err := os.Lstat(filepath.Join(wt.Dir, filepath.FromSlash(p))); err == nil {
				changes = append(changes, tree.Change{Path: p, Delete: true})
			}
			continue
		}
		changes = append(changes, tree.Change{Path: p, Content: f.content, Mode: f.mode})
	}
	if err := wt.Commit(changes, s.st); err != nil {
		errsOut = append(errsOut, err)
	}
	return errors.Join(errsOut...)
}
