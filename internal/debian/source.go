package debian

import (
	"fmt"
	"strings"

	"github.com/patchctl/patchctl/internal/fsutil"
)

// Source is a linux-source package at an exact version. Suite,
// when set, is the Debian suite that serves it (bullseye, bookworm-security,
// sid, experimental, ...): patchctl then fetches it through its own apt
// state for that suite, and `patchctl tree pin` follows what the suite
// serves. Without a suite the system's apt sources are used.
type Source struct {
	Package       string `yaml:"package"`
	Suite         string `yaml:"suite,omitempty"`
	Version       string `yaml:"version"`
	DebSHA256     string `yaml:"deb_sha256"`
	Tarball       string `yaml:"tarball"` // path inside the package
	TarballSHA256 string `yaml:"tarball_sha256"`
	// Binary pins Debian's binary kernel built from this source, for
	// --kernel-from distro (optional).
	Binary *Binary `yaml:"binary,omitempty"`
}

// Binary is Debian's binary kernel of a linux-source version: the
// image with its modules, and the headers modules are built against.
type Binary struct {
	// Version is the Debian version of the binary packages: it must be
	// the source's (the modules are rebuilt from that source).
	Version string `yaml:"version"`
	// Release is the kernel release (uname -r, vermagic's first word).
	Release string    `yaml:"release"`
	Image   *Package  `yaml:"image"`           // linux-image-*-unsigned: vmlinuz, modules, config
	Headers []Package `yaml:"headers"`         // linux-headers-*, -common, linux-kbuild-*
	Debug   *Package  `yaml:"debug,omitempty"` // linux-image-*-dbg, when DWARF of vmlinux is wanted
}

// Package is one binary package at the binary kernel's version.
type Package struct {
	Package string `yaml:"package"`
	Arch    string `yaml:"arch"` // amd64 or all
	SHA256  string `yaml:"sha256"`
}

// Packages lists the binary packages: the image, then the headers.
func (b *Binary) Packages() []Package {
	var out []Package
	if b.Image != nil {
		out = append(out, *b.Image)
	}
	return append(out, b.Headers...)
}

// Key identifies the binary kernel exactly.
func (b *Binary) Key() string {
	var s strings.Builder
	fmt.Fprintf(&s, "debian-binary %s %s", b.Version, b.Release)
	for _, p := range b.Packages() {
		fmt.Fprintf(&s, " %s:%s:%s", p.Package, p.Arch, p.SHA256)
	}
	return s.String()
}

// Missing says what a binary kernel pin lacks ("" when complete).
func (b *Binary) Missing() string {
	if b.Version == "" || b.Release == "" || b.Image == nil || len(b.Headers) == 0 {
		return "a binary kernel pins version, release, the image and the headers packages"
	}
	for _, p := range b.Packages() {
		if p.Package == "" || fsutil.ValidName(p.Package) != nil || (p.Arch != "amd64" && p.Arch != "all") || len(p.SHA256) != 64 {
			return fmt.Sprintf("package %q: each pins a package name, arch (amd64 or all) and the .deb's sha256", p.Package)
		}
	}
	return ""
}
