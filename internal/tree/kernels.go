package tree

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/patchctl/patchctl/internal/debian"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/yamlx"
)

// Lock pins the target kernels.
type Lock struct {
	Default string `yaml:"default"`
	// Checkpatch names the kernel whose scripts/checkpatch.pl judges the
	// patches on every pinned kernel: patches are submitted to mainline,
	// and an older tree's checkpatch does not know what mainline accepts
	// (5.10's errors on an Assisted-by: trailer). Empty: each kernel's own.
	Checkpatch string   `yaml:"checkpatch,omitempty"`
	Kernels    []Kernel `yaml:"kernels"`
}

// Kernel is one kernel source. A pinned kernel has exactly one of Debian
// and Git; a local tree (--tree, see Local) has Local, never read from
// kernels.yaml.
type Kernel struct {
	Name   string         `yaml:"name"`
	Debian *debian.Source `yaml:"debian,omitempty"`
	Git    *GitSource     `yaml:"git,omitempty"`
	Local  *LocalSource   `yaml:"-"`
}

// GitSource is a repository at a tag or commit. When both are given the
// tag must resolve to the commit.
type GitSource struct {
	URL    string `yaml:"url"`
	Tag    string `yaml:"tag,omitempty"`
	Commit string `yaml:"commit,omitempty"`
}

// Key identifies the exact source; a prepared tree records it.
func (k *Kernel) Key() string {
	switch {
	case k.Debian != nil:
		d := k.Debian
		return fmt.Sprintf("debian %s=%s deb:%s tar:%s", d.Package, d.Version, d.DebSHA256, d.TarballSHA256)
	case k.Git != nil:
		return fmt.Sprintf("git %s tag:%s commit:%s", k.Git.URL, k.Git.Tag, k.Git.Commit)
	case k.Local != nil:
		return "local " + k.Local.Identity()
	}
	return ""
}

// LoadLock reads and checks a lock file.
func LoadLock(path string) (*Lock, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading kernel lock: %w: %w", err, errs.ErrInput)
	}
	var l Lock
	if err := yamlx.Decode(data, &l); err != nil {
		return nil, fmt.Errorf("%s: %v: %w", path, err, errs.ErrInput)
	}
	lines := yamlx.ItemLines(data, "kernels")
	seen := map[string]bool{}
	for i, k := range l.Kernels {
		bad := func(msg string) error {
			return fmt.Errorf("%s:%d: kernel %d (%q): %s: %w", path, yamlx.Line(lines, i), i+1, k.Name, msg, errs.ErrInput)
		}
		switch {
		case k.Name == "":
			return nil, bad("no name")
		case fsutil.ValidName(k.Name) != nil:
			return nil, bad(fsutil.ValidName(k.Name).Error() + ": a kernel name becomes a folder name in the cache")
		case k.Debian != nil && k.Debian.Tarball != "" && fsutil.ValidRel(strings.TrimPrefix(k.Debian.Tarball, "./")) != nil:
			return nil, bad("tarball: " + fsutil.ValidRel(strings.TrimPrefix(k.Debian.Tarball, "./")).Error())
		case k.Debian != nil && k.Debian.Suite != "" && debian.ValidSuite(k.Debian.Suite) != nil:
			return nil, bad(debian.ValidSuite(k.Debian.Suite).Error())
		case seen[k.Name]:
			return nil, bad("named twice")
		case (k.Debian == nil) == (k.Git == nil):
			return nil, bad("needs exactly one source, debian or git")
		case k.Debian != nil && (k.Debian.Package == "" || k.Debian.Version == "" || len(k.Debian.DebSHA256) != 64 || len(k.Debian.TarballSHA256) != 64 || k.Debian.Tarball == ""):
			return nil, bad("a debian source pins package, version, tarball, and the sha256 of the .deb and of the tarball")
		case k.Debian != nil && k.Debian.Binary != nil && k.Debian.Binary.Missing() != "":
			return nil, bad("binary: " + k.Debian.Binary.Missing())
		case k.Git != nil && (k.Git.URL == "" || k.Git.Tag == "" && k.Git.Commit == ""):
			return nil, bad("a git source needs a url and a tag or commit")
		}
		seen[k.Name] = true
	}
	if l.Default != "" && !seen[l.Default] {
		return nil, fmt.Errorf("%s: default kernel %q is not in the lock: %w", path, l.Default, errs.ErrInput)
	}
	if l.Checkpatch != "" && !seen[l.Checkpatch] {
		return nil, fmt.Errorf("%s: checkpatch kernel %q is not in the lock: %w", path, l.Checkpatch, errs.ErrInput)
	}
	return &l, nil
}

// CheckpatchKernel is the pinned kernel whose checkpatch.pl judges k's
// patches, or nil for k's own (no Checkpatch set, k is it, or k is a
// local tree: a user's own tree brings its own checkpatch).
func (l *Lock) CheckpatchKernel(k *Kernel) (*Kernel, error) {
	if l == nil || l.Checkpatch == "" || k.IsLocal() || k.Name == l.Checkpatch {
		return nil, nil
	}
	return l.Find(l.Checkpatch)
}

// Names lists the pinned kernels in lock order.
func (l *Lock) Names() []string {
	var n []string
	for _, k := range l.Kernels {
		n = append(n, k.Name)
	}
	return n
}

// Find returns the kernel named name; "" means the default.
func (l *Lock) Find(name string) (*Kernel, error) {
	if name == "" {
		name = l.Default
	}
	for i := range l.Kernels {
		if l.Kernels[i].Name == name {
			return &l.Kernels[i], nil
		}
	}
	known := l.Names()
	sort.Strings(known)
	return nil, fmt.Errorf("unknown kernel %q; pinned kernels: %s: %w", name, strings.Join(known, ", "), errs.ErrInput)
}
