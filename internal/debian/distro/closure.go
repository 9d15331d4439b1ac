package distro

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
)

// Index maps module names to their files under a modules folder
// (lib/modules/<release>/kernel).
type Index map[string]string

// IndexModules lists the modules under dir.
func IndexModules(dir string) (Index, error) {
	ix := Index{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".ko") || strings.HasSuffix(p, ".ko.xz")) {
			ix[ModuleName(p)] = p
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing modules: %w", err)
	}
	return ix, nil
}

// Closure orders the named modules and everything they depend on so that
// each comes after its dependencies (ties by name: the order is a function
// of the input). depends reads a module's depends=. A module that is not
// there, or a dependency cycle, is an error naming it.
func Closure(names []string, depends func(name string) ([]string, error)) ([]string, error) {
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var order []string
	var visit func(n string, path []string) error
	visit = func(n string, path []string) error {
		switch state[n] {
		case done:
			return nil
		case visiting:
			return fmt.Errorf("module dependency cycle: %s: %w", strings.Join(append(path, n), " -> "), errs.ErrInput)
		}
		state[n] = visiting
		deps, err := depends(n)
		if err != nil {
			if len(path) > 0 {
				return fmt.Errorf("%w (needed by %s)", err, path[len(path)-1])
			}
			return err
		}
		deps = append([]string(nil), deps...)
		sort.Strings(deps)
		for _, d := range deps {
			if err := visit(d, append(path, n)); err != nil {
				return err
			}
		}
		state[n] = done
		order = append(order, n)
		return nil
	}
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	for _, n := range sorted {
		if err := visit(n, nil); err != nil {
			return nil, err
		}
	}
	return order, nil
}
