package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/patchctl/patchctl/internal/guestconf"
	"golang.org/x/sys/unix"
)

// loadModules loads the modules in order with finit_module(2), each with
// its parameters; a module already there (built in, or loaded) is fine.
func loadModules(mods []guestconf.Module) error {
	for _, m := range mods {
		f, err := os.Open(m.Path)
		if err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
		err = unix.FinitModule(int(f.Fd()), m.Params, 0)
		f.Close()
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("loading %s (%s %s): %w", m.Name, m.Path, m.Params, err)
		}
	}
	return nil
}

// tainted is /proc/sys/kernel/tainted: unsigned and out-of-tree modules
// (12288) are expected on a distro kernel with rebuilt modules.
func tainted() string {
	b, err := os.ReadFile("/proc/sys/kernel/tainted")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
