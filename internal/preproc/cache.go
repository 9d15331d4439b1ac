package preproc

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
)

// cacheVersion changes when what is cached changes.
const cacheVersion = "preproc-1"

// cached is an entry's record: the unit (its deps with their hashes) and
// the output's hash.
type cached struct {
	Version   string `json:"version"`
	Unit      *Unit  `json:"unit"`
	Dir       string `json:"dir"`
	SrcPath   string `json:"src_path"`
	OutSHA256 string `json:"out_sha256"`
}

func (s *Session) entry(key string) string {
	return filepath.Join(s.opts.CacheDir, "cpp", key[:2], key)
}

// reuse fills u from the cache when an entry exists and every file it
// read still has the content it had, and the output is what was stored.
func (s *Session) reuse(key string, u *Unit) bool {
	if s.opts.CacheDir == "" {
		return false
	}
	dir := s.entry(key)
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return false
	}
	var c cached
	if json.Unmarshal(b, &c) != nil || c.Version != cacheVersion || c.Unit == nil || len(c.Unit.Deps) == 0 {
		return false
	}
	for _, d := range c.Unit.Deps {
		h, err := s.hash(d.Path)
		if err != nil || h != d.SHA256 {
			return false
		}
	}
	out, err := os.ReadFile(filepath.Join(dir, "out.i"))
	if err != nil || fsutil.Hash(out) != c.OutSHA256 {
		return false
	}
	u.Deps, u.Output, u.Cached = c.Unit.Deps, out, true
	return true
}

// store records u under key.
func (s *Session) store(key string, u *Unit) error {
	if s.opts.CacheDir == "" {
		return nil
	}
	dir := s.entry(key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("caching the preprocessed %s: %w: %w", u.Rel, err, errs.ErrEnv)
	}
	if err := fsutil.WriteFile(filepath.Join(dir, "out.i"), u.Output, 0o644); err != nil {
		return fmt.Errorf("caching the preprocessed %s: %w: %w", u.Rel, err, errs.ErrEnv)
	}
	c := cached{Version: cacheVersion, Unit: u, Dir: u.dir, SrcPath: u.srcPath, OutSHA256: fsutil.Hash(u.Output)}
	if err := fsutil.WriteJSON(filepath.Join(dir, "meta.json"), c); err != nil {
		return fmt.Errorf("caching the preprocessed %s: %w: %w", u.Rel, err, errs.ErrEnv)
	}
	return nil
}
