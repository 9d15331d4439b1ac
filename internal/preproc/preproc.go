// Package preproc gives the checks the translation unit the compiler
// sees for a C file of a kernel tree that has been configured or built:
// the file's real compile flags (kbuild's .<file>.o.cmd in the build
// folder, else kbuild asked for <file>.i in a folder of patchctl's own),
// the preprocessor run with them (gcc -E -dD, line markers kept), a map
// from every output line to the source file and line it came from, the
// main file's share cut line for line (Project) with the macros each
// line expanded and where the configuration defined them, and the
// configuration used (build folder, .config hash). Outputs are cached
// under the patchctl cache (cpp/) by the file's content, the flags and
// the content of every header the preprocessor read, verified by
// content on reuse. Where no flags exist (a lone file, a tree never
// configured, a file the configuration does not build) Preprocess says
// why with a *FallbackError, and the caller analyses raw C.
package preproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
)

// Options say where a tree's flags and outputs are.
type Options struct {
	Tree string // the kernel source tree the files are in
	// BuildDir is kbuild's output folder (O=); "" is the tree itself
	// (a build in the tree).
	BuildDir string
	// CacheDir is patchctl's cache: outputs go under CacheDir/cpp; ""
	// caches nothing and never asks kbuild.
	CacheDir string
	// Kbuild, when a file has no .o.cmd, asks kbuild for its flags:
	// make -C Tree O=<a folder of its own under CacheDir/cpp/kbuild>
	// <file>.i, configured with Config (default BuildDir's .config).
	// The first file of a configuration prepares that folder (a few
	// minutes); the tree itself is never written.
	Kbuild bool
	Config string
}

// Config is the configuration a unit was preprocessed with.
type Config struct {
	BuildDir     string `json:"build_dir"`
	ConfigSHA256 string `json:"config_sha256"` // of BuildDir/.config; "" when none
	// Origin says where the flags came from: "kbuild .o.cmd" or
	// "make <file>.i".
	Origin string `json:"origin"`
}

func (c Config) String() string {
	h := c.ConfigSHA256
	if len(h) > 12 {
		h = h[:12]
	}
	if h == "" {
		h = "none"
	}
	return fmt.Sprintf("build folder %s (.config sha256 %s, flags from %s)", c.BuildDir, h, c.Origin)
}

// Dep is a file the preprocessor read, with its content's hash.
type Dep struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Unit is one preprocessed translation unit.
type Unit struct {
	Rel      string   `json:"rel"`  // the main file, relative to Tree
	Tree     string   `json:"tree"` // the source tree
	Compiler string   `json:"compiler"`
	Flags    []string `json:"flags"`    // as run, without -E and outputs
	CmdFile  string   `json:"cmd_file"` // the kbuild command file read
	Config   Config   `json:"config"`
	Deps     []Dep    `json:"deps"` // every file read, the main file too
	// Output is the preprocessor's output, line markers and -dD
	// #defines included.
	Output []byte `json:"-"`
	// Cached says the output was reused (verified) rather than made.
	Cached bool `json:"-"`

	dir     string // where the compiler ran
	srcPath string // the main file as the command and the markers name it
}

// ErrNoFlags is what a *FallbackError wraps.
var ErrNoFlags = errors.New("no compile flags")

// FallbackError says why a file is analysed as raw C.
type FallbackError struct {
	Rel, Reason string
}

func (e *FallbackError) Error() string {
	return fmt.Sprintf("%s: analysed as raw C: %s", e.Rel, e.Reason)
}

func (e *FallbackError) Unwrap() error { return ErrNoFlags }

// Session preprocesses the files of one tree and configuration,
// remembering header hashes and compiler identities between files.
type Session struct {
	opts Options

	mu       sync.Mutex
	hashes   map[string]string // path → sha256, within the session
	compiler map[string]string // compiler → identity
	kbuildMu sync.Mutex
}

// New starts a session.
func New(opts Options) (*Session, error) {
	if opts.Tree == "" {
		return nil, fmt.Errorf("preprocessing: no tree given: %w", errs.ErrUsage)
	}
	t, err := filepath.Abs(opts.Tree)
	if err != nil {
		return nil, fmt.Errorf("preprocessing: tree %s: %w", opts.Tree, err)
	}
	opts.Tree = t
	if opts.BuildDir != "" {
		if opts.BuildDir, err = filepath.Abs(opts.BuildDir); err != nil {
			return nil, fmt.Errorf("preprocessing: build folder: %w", err)
		}
	}
	return &Session{opts: opts, hashes: map[string]string{}, compiler: map[string]string{}}, nil
}

// Options returns the session's options (paths made absolute).
func (s *Session) Options() Options { return s.opts }

func (s *Session) buildDir() string {
	if s.opts.BuildDir != "" {
		return s.opts.BuildDir
	}
	return s.opts.Tree
}

// Config is the configuration of the session's build folder.
func (s *Session) Config() Config {
	c := Config{BuildDir: s.buildDir(), Origin: "kbuild .o.cmd"}
	if h, err := fsutil.HashFile(filepath.Join(c.BuildDir, ".config")); err == nil {
		c.ConfigSHA256 = h
	}
	return c
}

// Preprocess gives the translation unit of rel (a .c file relative to
// the tree). A *FallbackError says the file has no flags here and why;
// other errors are the environment's (a cache that cannot be written).
func (s *Session) Preprocess(ctx context.Context, rel string) (*Unit, error) {
	if err := fsutil.ValidRel(rel); err != nil {
		return nil, fmt.Errorf("preprocessing %q: %w", rel, err)
	}
	tree := s.opts.Tree
	if !isKernelTree(tree) {
		return nil, &FallbackError{rel, fmt.Sprintf("%s is not a kernel tree (no Makefile and Kbuild at its top): a lone file has no kbuild flags", tree)}
	}
	src, err := os.ReadFile(filepath.Join(tree, rel))
	if err != nil {
		return nil, fmt.Errorf("preprocessing %s: %w: %w", rel, err, errs.ErrInput)
	}
	bd := s.buildDir()
	dir, base := filepath.Split(rel)
	obj := strings.TrimSuffix(base, ".c")
	cmdPath := filepath.Join(bd, dir, "."+obj+".o.cmd")
	cfg := s.Config()
	cf, err := readCmdFile(cmdPath)
	switch {
	case err == nil:
	case !errors.Is(err, os.ErrNotExist):
		return nil, &FallbackError{rel, err.Error()}
	default:
		cf, cfg, err = s.askKbuild(ctx, rel, cmdPath)
		if err != nil {
			return nil, err
		}
		bd = cfg.BuildDir
	}
	// Kbuild names the source relative to the build folder when srctree
	// is relative (patchctl's work tree beside its build folders:
	// ../src/...): made absolute here, so that the tree the command was
	// recorded for is known and replaced by the tree checked — else cpp
	// would read the build's own work tree, whatever state it is in.
	argv, source := absPaths(cf.argv, cf.source, bd)
	recorded := ""
	if filepath.IsAbs(source) && strings.HasSuffix(source, "/"+rel) {
		recorded = strings.TrimSuffix(source, "/"+rel)
	}
	compiler, flags, srcPath, err := cppArgv(argv, source, recorded, tree)
	if err != nil {
		return nil, &FallbackError{rel, fmt.Sprintf("%s: %v", cf.path, err)}
	}
	u := &Unit{Rel: rel, Tree: tree, Compiler: compiler, Flags: flags, CmdFile: cf.path, Config: cfg, dir: bd, srcPath: srcPath}
	id, err := s.compilerID(ctx, compiler, bd)
	if err != nil {
		return nil, &FallbackError{rel, err.Error()}
	}
	key := fsutil.Hash([]byte(strings.Join(append([]string{cacheVersion, id, bd, srcPath, fsutil.Hash(src)}, flags...), "\x00")))
	if s.reuse(key, u) {
		return u, nil
	}
	if err := s.runCPP(ctx, u); err != nil {
		return nil, err
	}
	if err := s.store(key, u); err != nil {
		return nil, err
	}
	return u, nil
}

// isKernelTree: a Makefile and a Kbuild or Kconfig at the top.
func isKernelTree(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "Makefile")); err != nil {
		return false
	}
	for _, n := range []string{"Kbuild", "Kconfig"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// compilerID identifies a compiler by its path and version.
func (s *Session) compilerID(ctx context.Context, compiler, dir string) (string, error) {
	s.mu.Lock()
	id, ok := s.compiler[compiler]
	s.mu.Unlock()
	if ok {
		return id, nil
	}
	p, err := command.LookPath(compiler)
	if err != nil {
		return "", fmt.Errorf("the compiler of the kbuild command, %s, is not installed here: %w", compiler, err)
	}
	c := command.Command(p, "-dumpfullversion", "-dumpmachine")
	c.Dir = dir
	out, err := c.Output(ctx)
	if err != nil {
		return "", fmt.Errorf("asking %s its version: %w", p, err)
	}
	id = p + " " + strings.Join(strings.Fields(string(out)), " ")
	s.mu.Lock()
	s.compiler[compiler] = id
	s.mu.Unlock()
	return id, nil
}

// runCPP runs the preprocessor into a temporary folder and reads its
// output and the files it read.
func (s *Session) runCPP(ctx context.Context, u *Unit) error {
	tmp, err := os.MkdirTemp("", "patchctl-cpp-")
	if err != nil {
		return fmt.Errorf("preprocessing %s: %w: %w", u.Rel, err, errs.ErrEnv)
	}
	defer os.RemoveAll(tmp)
	out, deps := filepath.Join(tmp, "out.i"), filepath.Join(tmp, "deps")
	args := append(append([]string{}, u.Flags...), "-E", "-dD", "-MD", "-MF", deps, "-o", out, u.srcPath)
	c := command.Command(u.Compiler, args...)
	c.Dir = u.dir
	if err := c.Run(ctx); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("preprocessing %s: %w", u.Rel, ctx.Err())
		}
		return &FallbackError{u.Rel, fmt.Sprintf("the preprocessor failed with the flags of %s: %v", u.CmdFile, err)}
	}
	if u.Output, err = os.ReadFile(out); err != nil {
		return fmt.Errorf("preprocessing %s: %w", u.Rel, err)
	}
	d, err := os.ReadFile(deps)
	if err != nil {
		return fmt.Errorf("preprocessing %s: reading the dependencies: %w", u.Rel, err)
	}
	u.Deps = nil
	seen := map[string]bool{}
	for _, p := range parseDeps(string(d)) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(u.dir, p)
		}
		p = filepath.Clean(p)
		if seen[p] {
			continue
		}
		seen[p] = true
		h, err := s.hash(p)
		if err != nil {
			return fmt.Errorf("preprocessing %s: hashing what it read: %w", u.Rel, err)
		}
		u.Deps = append(u.Deps, Dep{Path: p, SHA256: h})
	}
	sort.Slice(u.Deps, func(i, j int) bool { return u.Deps[i].Path < u.Deps[j].Path })
	return nil
}

// parseDeps reads a make rule "target: dep dep \ ...".
func parseDeps(s string) []string {
	if i := strings.Index(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	s = strings.ReplaceAll(s, "\\\n", " ")
	var out []string
	for _, f := range strings.Fields(s) {
		if strings.HasSuffix(f, ":") {
			continue
		}
		out = append(out, f)
	}
	return out
}

func (s *Session) hash(p string) (string, error) {
	s.mu.Lock()
	h, ok := s.hashes[p]
	s.mu.Unlock()
	if ok {
		return h, nil
	}
	h, err := fsutil.HashFile(p)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	s.hashes[p] = h
	s.mu.Unlock()
	return h, nil
}

// absPaths makes the source and the relative paths that reach out of the
// build folder ("../...": bare arguments and -I, -isystem, -iquote,
// -include values) absolute, against dir, the folder kbuild compiled in.
// Paths inside the build folder (./include, generated headers) stay as
// they are: cpp runs there.
func absPaths(argv []string, source, dir string) ([]string, string) {
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) || !strings.HasPrefix(filepath.Clean(p), "..") {
			return p
		}
		return filepath.Join(dir, p)
	}
	out := make([]string, len(argv))
	for i, a := range argv {
		switch {
		case a == source:
			out[i] = abs(a)
		case strings.HasPrefix(a, "-I"):
			out[i] = "-I" + abs(strings.TrimPrefix(a, "-I"))
		case !strings.HasPrefix(a, "-") && i > 0 && (argv[i-1] == "-include" || argv[i-1] == "-isystem" || argv[i-1] == "-iquote" || argv[i-1] == "-I"):
			out[i] = abs(a)
		case !strings.HasPrefix(a, "-") && i > 0 && (strings.HasSuffix(a, ".c") || strings.HasSuffix(a, ".S")):
			out[i] = abs(a)
		default:
			out[i] = a
		}
	}
	return out, abs(source)
}
