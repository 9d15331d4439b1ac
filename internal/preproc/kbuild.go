package preproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
)

// askKbuild finds flags for a file no .o.cmd describes: with Kbuild set
// and a configuration at hand, make -C Tree O=<own folder> <file>.i and
// the .<file>.i.cmd kbuild writes; else a *FallbackError that says why.
func (s *Session) askKbuild(ctx context.Context, rel, cmdPath string) (*cmdFile, Config, error) {
	bd := s.buildDir()
	config := s.opts.Config
	if config == "" {
		config = filepath.Join(bd, ".config")
	}
	if _, err := os.Stat(config); err != nil {
		return nil, Config{}, &FallbackError{rel, fmt.Sprintf("the tree was never configured: no %s (configure or build it with patchctl build, or pass a build folder)", config)}
	}
	if !s.opts.Kbuild || s.opts.CacheDir == "" {
		return nil, Config{}, &FallbackError{rel, fmt.Sprintf("no %s: the configuration in %s does not build this file, or it was not built yet (kbuild not asked)", cmdPath, bd)}
	}
	if _, err := os.Stat(filepath.Join(s.opts.Tree, ".config")); err == nil {
		return nil, Config{}, &FallbackError{rel, fmt.Sprintf("no %s, and %s is configured in place: make <file>.i would write into the tree", cmdPath, s.opts.Tree)}
	}
	cb, err := os.ReadFile(config)
	if err != nil {
		return nil, Config{}, &FallbackError{rel, err.Error()}
	}
	cfgHash := fsutil.Hash(cb)
	obj := filepath.Join(s.opts.CacheDir, "cpp", "kbuild", fsutil.Hash([]byte(s.opts.Tree + "\x00" + cfgHash))[:16])
	s.kbuildMu.Lock()
	defer s.kbuildMu.Unlock()
	if err := os.MkdirAll(obj, 0o755); err != nil {
		return nil, Config{}, fmt.Errorf("preparing kbuild's folder for %s: %w: %w", rel, err, errs.ErrEnv)
	}
	if old, err := os.ReadFile(filepath.Join(obj, ".config.patchctl")); err != nil || !bytes.Equal(old, cb) {
		if err := fsutil.WriteFile(filepath.Join(obj, ".config"), cb, 0o644); err != nil {
			return nil, Config{}, fmt.Errorf("preparing kbuild's folder for %s: %w: %w", rel, err, errs.ErrEnv)
		}
		if err := s.make(ctx, obj, "olddefconfig"); err != nil {
			return nil, Config{}, &FallbackError{rel, err.Error()}
		}
		if err := fsutil.WriteFile(filepath.Join(obj, ".config.patchctl"), cb, 0o644); err != nil {
			return nil, Config{}, fmt.Errorf("preparing kbuild's folder for %s: %w: %w", rel, err, errs.ErrEnv)
		}
	}
	target := strings.TrimSuffix(rel, ".c") + ".i"
	dir, base := filepath.Split(rel)
	icmd := filepath.Join(obj, dir, "."+strings.TrimSuffix(base, ".c")+".i.cmd")
	if !s.fresh(obj, icmd, dir) {
		os.Remove(icmd)
		if err := s.make(ctx, obj, target); err != nil {
			if ctx.Err() != nil {
				return nil, Config{}, ctx.Err()
			}
			return nil, Config{}, &FallbackError{rel, err.Error()}
		}
	}
	cf, err := readCmdFile(icmd)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, Config{}, &FallbackError{rel, fmt.Sprintf("make %s wrote no %s", target, icmd)}
		}
		return nil, Config{}, &FallbackError{rel, err.Error()}
	}
	if cf.source == "" {
		cf.source = filepath.Join(s.opts.Tree, rel)
	}
	return cf, Config{BuildDir: obj, ConfigSHA256: cfgHash, Origin: "make " + target}, nil
}

// fresh reports whether kbuild's command file for a file is newer than
// the .config it was made with and the Makefiles that decide its flags
// (the tree's top Makefile and the file's folder's Makefile and Kbuild):
// the flags are then kbuild's still, and make need not run again.
func (s *Session) fresh(obj, icmd, dir string) bool {
	st, err := os.Stat(icmd)
	if err != nil {
		return false
	}
	for _, p := range []string{
		filepath.Join(obj, ".config.patchctl"),
		filepath.Join(s.opts.Tree, "Makefile"),
		filepath.Join(s.opts.Tree, dir, "Makefile"),
		filepath.Join(s.opts.Tree, dir, "Kbuild"),
	} {
		if o, err := os.Stat(p); err == nil && !o.ModTime().Before(st.ModTime()) {
			return false
		}
	}
	return true
}

func (s *Session) make(ctx context.Context, obj, target string) error {
	c := command.Command("make", "-s", "-C", s.opts.Tree, "O="+obj, target)
	if err := c.Run(ctx); err != nil {
		return fmt.Errorf("make O=%s %s: %w", obj, target, err)
	}
	return nil
}
