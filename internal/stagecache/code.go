package stagecache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"github.com/patchctl/patchctl"
)

// CodeKey names the code that runs a stage, the "code" of every stage's
// key. In patchctl itself it is the sources it was built from (SourceKey),
// so that a program built anew from the same sources (another checkout, a
// commit that changes only documentation, the test binary of a command)
// reuses what an earlier one made. It is the running program's own bytes
// (Self) where the sources cannot stand for the code:
//   - a program of another module that imports patchctl's packages, or one
//     built with a dependency not named by its sum (a local replace, a
//     workspace, vendored code);
//   - a test binary, unless it tests a command and its TestMain said how to
//     tell that its tests changed nothing the stages run with
//     (ShareCodeInTests). A test of a package can set that package's state
//     (hooks, fakes), and what a stage made under it is its own.
func CodeKey() (string, error) {
	if h, ok := sharedSourceKey(); ok {
		return h, nil
	}
	return Self()
}

var sharing struct {
	mu        sync.Mutex
	unchanged func() bool
}

// ShareCodeInTests lets the test binary of a command key its stages by
// the sources, as patchctl does, while unchanged says (at each key) that
// the tests changed nothing the stages run with: no hook or package state
// of the stages set, the environment as the binary started. A command's
// TestMain calls it; in a binary that tests anything else it changes
// nothing (the package under test is compiled with its tests).
func ShareCodeInTests(unchanged func() bool) {
	sharing.mu.Lock()
	defer sharing.mu.Unlock()
	sharing.unchanged = unchanged
}

// sharedSourceKey is the sources' key when this program may use it.
func sharedSourceKey() (string, bool) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	sharing.mu.Lock()
	unchanged := sharing.unchanged
	sharing.mu.Unlock()
	if !mayShare(bi.Path, bi.Main.Path, testing.Testing(), unchanged) {
		return "", false
	}
	h, err := SourceKey()
	return h, err == nil
}

// mayShare says whether the program whose main package is path, in the
// module mainModule, may key its stages by the sources: a program of the
// module's own packages (not a file given to go run), or the test binary
// of a command while unchanged says its tests changed nothing. A test
// binary's path is its package's with ".test" added, but a command's
// test binary has the command's own path: test says which it is
// (testing.Testing).
func mayShare(path, mainModule string, test bool, unchanged func() bool) bool {
	pkg, suffix := strings.CutSuffix(path, ".test")
	test = test || suffix
	if !strings.HasPrefix(pkg, mainModule+"/") {
		return false
	}
	if !test {
		return true
	}
	return strings.HasPrefix(pkg, mainModule+"/cmd/") && unchanged != nil && unchanged()
}

var source struct {
	once sync.Once
	hash string
	err  error
}

// SourceKey is the sha256 of what the running program was built from:
// the module's sources as embedded (patchctl.Sources), the Go release,
// the build's settings (the linker's -s and -w left out: they drop
// symbols and debug information only; the version control stamp left
// out: the sources are the content it names), and every dependency by
// its module sum. It is an error for a program of another module or one
// with a dependency that has no sum: its code is not named by these.
func SourceKey() (string, error) {
	source.once.Do(func() {
		bi, ok := debug.ReadBuildInfo()
		if !ok {
			source.err = fmt.Errorf("the program carries no build information")
			return
		}
		source.hash, source.err = sourceKey(bi, patchctl.Sources)
	})
	return source.hash, source.err
}

// sourceKey hashes bi and the files of src.
func sourceKey(bi *debug.BuildInfo, src fs.FS) (string, error) {
	const module = "github.com/patchctl/patchctl"
	if bi.Main.Path != module {
		return "", fmt.Errorf("the program is of module %q, not %s", bi.Main.Path, module)
	}
	h := sha256.New()
	fmt.Fprintf(h, "go\x00%s\x00", runtime.Version())
	for _, s := range bi.Settings {
		v := s.Value
		switch {
		case strings.HasPrefix(s.Key, "vcs"):
			continue
		case s.Key == "-ldflags" && onlySymbolFlags(v):
			continue
		}
		fmt.Fprintf(h, "setting\x00%s\x00%s\x00", s.Key, v)
	}
	for _, d := range bi.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		if m.Sum == "" {
			return "", fmt.Errorf("the dependency %s has no module sum (a local replace, a workspace or vendored code)", m.Path)
		}
		fmt.Fprintf(h, "dep\x00%s\x00%s\x00%s\x00", m.Path, m.Version, m.Sum)
	}
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "file\x00%s\x00%d\x00", p, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hashing the embedded sources: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// onlySymbolFlags says whether the linker's flags are -s and -w alone,
// which drop symbols and debug information and change no code. Any other
// flag (-X sets a variable) keeps them all in the key, as written.
func onlySymbolFlags(flags string) bool {
	for _, f := range strings.Fields(flags) {
		switch f {
		case "-s", "-w", "-s=true", "-w=true", "--s", "--w":
		default:
			return false
		}
	}
	return true
}
