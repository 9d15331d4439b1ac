package tree

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/patchctl/patchctl/internal/errs"
)

// prepareGit clones the pinned tag (shallow, one branch) or fetches the
// pinned commit, checks that HEAD is the pinned commit, and returns the
// checkout.
func (c *Cache) prepareGit(ctx context.Context, k *Kernel, tmp string) (string, error) {
	g := k.Git
	dir := filepath.Join(tmp, "src")
	if c.Offline {
		return "", fmt.Errorf("%s at %s is not in the cache: run without --offline to clone it: %w", g.URL, firstNonEmpty(g.Tag, g.Commit), ErrOffline)
	}
	c.Progress.Start("clone " + g.URL + " (a shallow clone of one tag, or the whole history for a bare commit)")
	var repo *git.Repository
	var err error
	if g.Tag != "" {
		repo, err = git.PlainCloneContext(ctx, dir, false, &git.CloneOptions{
			URL: g.URL, ReferenceName: plumbing.NewTagReferenceName(g.Tag),
			SingleBranch: true, Depth: 1, Tags: git.NoTags,
		})
	} else {
		// A bare commit cannot be asked for by name over every transport:
		// clone, then check out the commit.
		repo, err = git.PlainCloneContext(ctx, dir, false, &git.CloneOptions{URL: g.URL, NoCheckout: true})
		if err == nil {
			var wt *git.Worktree
			if wt, err = repo.Worktree(); err == nil {
				err = wt.Checkout(&git.CheckoutOptions{Hash: plumbing.NewHash(g.Commit), Force: true})
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("cloning %s at %s: %v: %w", g.URL, firstNonEmpty(g.Tag, g.Commit), err, errs.ErrInput)
	}
	head, err := repo.Head()
	if err != nil {
		return "", fmt.Errorf("reading HEAD of %s: %w", g.URL, err)
	}
	got := head.Hash().String()
	if obj, err := repo.TagObject(head.Hash()); err == nil {
		// An annotated tag: the commit it points at.
		if cm, err := obj.Commit(); err == nil {
			got = cm.Hash.String()
		}
	}
	if g.Commit != "" && !strings.EqualFold(got, g.Commit) {
		return "", fmt.Errorf("%s at %s is commit %s, the lock pins %s; refused: %w", g.URL, firstNonEmpty(g.Tag, g.Commit), got, g.Commit, errs.ErrInput)
	}
	c.Progress.Done("commit %s", got)
	return dir, nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
