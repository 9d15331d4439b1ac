package build

import (
	"fmt"
	"github.com/patchctl/patchctl/internal/command"
	"os"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
)

// hostTool is something the kernel build needs and the Debian package
// that brings it.
type hostTool struct {
	what, pkg string
	ok        func(command.Runner) bool
}

func onPath(prog string) func(command.Runner) bool {
	return func(r command.Runner) bool { _, err := r.LookPath(prog); return err == nil }
}

func fileExists(p string) func(command.Runner) bool {
	return func(command.Runner) bool { _, err := os.Stat(p); return err == nil }
}

var hostTools = []hostTool{
	{"gcc", "build-essential", onPath("gcc")},
	{"make", "build-essential", onPath("make")},
	{"flex", "flex", onPath("flex")},
	{"bison", "bison", onPath("bison")},
	{"bc", "bc", onPath("bc")},
	{"libelf headers", "libelf-dev", fileExists("/usr/include/libelf.h")},
	{"OpenSSL headers", "libssl-dev", fileExists("/usr/include/openssl/ssl.h")},
	{"perl", "perl", onPath("perl")},
	// The kernel image's compressor (kconfig/base.config: KERNEL_LZ4).
	{"lz4", "lz4", onPath("lz4")},
}

// CheckHostTools returns one error listing every missing tool and the
// packages that bring them.
func CheckHostTools() error { return checkHostTools(nil) }

// checkHostTools looks for the programs through r (nil: the real PATH).
func checkHostTools(r command.Runner) error {
	r = command.Or(r)
	var what, pkgs []string
	seen := map[string]bool{}
	for _, t := range hostTools {
		if t.ok(r) {
			continue
		}
		what = append(what, t.what)
		if !seen[t.pkg] {
			seen[t.pkg] = true
			pkgs = append(pkgs, t.pkg)
		}
	}
	if len(what) == 0 {
		return nil
	}
	return fmt.Errorf("the kernel build needs %s: install them with 'apt-get install %s' (or run make deps): %w",
		strings.Join(what, ", "), strings.Join(pkgs, " "), errs.ErrEnv)
}
