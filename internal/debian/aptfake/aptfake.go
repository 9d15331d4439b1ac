// Package aptfake is a fake Debian archive for tests: apt-get and
// apt-cache stand-ins (shell scripts) that answer update, policy, show and
// download from suites the test controls, with real .deb files built by
// dpkg-deb. No network. The fakes check that every call uses patchctl's
// own apt state (its sources list signed-by Debian's keyring, no source
// parts, its own lists and cache) and log every call.
package aptfake

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Archive is the fake's state: what each suite serves.
type Archive struct {
	Dir      string // holds the programs, debs and state
	AptGet   string // the apt-get stand-in
	AptCache string
	Log      string // one line per call: the program's arguments
	t        testing.TB
}

// Pkg is one built package.
type Pkg struct {
	Package, Version string
	Deb              string // path of the .deb
	DebSHA256        string
	Tarball          string // path inside the package
	TarballSHA256    string
}

// New makes an empty archive with its programs. It skips the test when
// dpkg-deb, tar or xz are missing.
func New(t testing.TB) *Archive {
	t.Helper()
	for _, tool := range []string{"dpkg-deb", "tar", "xz", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	a := &Archive{Dir: t.TempDir(), t: t}
	a.Log = filepath.Join(a.Dir, "calls.log")
	os.MkdirAll(filepath.Join(a.Dir, "served"), 0o755)
	os.MkdirAll(filepath.Join(a.Dir, "bin"), 0o755)
	a.AptGet = filepath.Join(a.Dir, "bin", "apt-get")
	a.AptCache = filepath.Join(a.Dir, "bin", "apt-cache")
	for _, p := range []string{a.AptGet, a.AptCache} {
		if err := os.WriteFile(p, []byte(fmt.Sprintf(script, a.Dir)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// BinDir holds programs named apt-get and apt-cache (for PATH).
func (a *Archive) BinDir() string { return filepath.Join(a.Dir, "bin") }

func (a *Archive) run(dir, prog string, args ...string) {
	a.t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		a.t.Fatalf("%s %v: %v\n%s", prog, args, err, out)
	}
}

func sum(t testing.TB, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Build makes a linux-source-like package at version whose tree differs
// by version (its Makefile names it).
func (a *Archive) Build(pkg, version string) *Pkg {
	a.t.Helper()
	name := strings.TrimPrefix(pkg, "linux-source-")
	work, err := os.MkdirTemp(a.Dir, "build-")
	if err != nil {
		a.t.Fatal(err)
	}
	src := filepath.Join(work, pkg)
	os.MkdirAll(filepath.Join(src, "drivers", "nvme", "host"), 0o755)
	os.WriteFile(filepath.Join(src, "drivers", "nvme", "host", "rdma.c"), []byte("int x;\n"), 0o644)
	os.WriteFile(filepath.Join(src, "Makefile"), []byte("# "+pkg+" "+version+"\nVERSION = "+name+"\n"), 0o644)
	root := filepath.Join(work, "pkg")
	os.MkdirAll(filepath.Join(root, "DEBIAN"), 0o755)
	os.MkdirAll(filepath.Join(root, "usr", "src"), 0o755)
	os.WriteFile(filepath.Join(root, "DEBIAN", "control"), []byte(fmt.Sprintf("Package: %s\nVersion: %s\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: test\n", pkg, version)), 0o644)
	rel := "usr/src/" + pkg + ".tar.xz"
	a.run(work, "tar", "-cJf", filepath.Join(root, rel), pkg)
	deb := filepath.Join(a.Dir, "debs", pkg+"_"+strings.ReplaceAll(version, ":", "%3a")+"_all.deb")
	os.MkdirAll(filepath.Dir(deb), 0o755)
	a.run(work, "dpkg-deb", "--build", "-Zxz", root, deb)
	p := &Pkg{Package: pkg, Version: version, Deb: deb, DebSHA256: sum(a.t, deb), Tarball: rel, TarballSHA256: sum(a.t, filepath.Join(root, rel))}
	os.RemoveAll(work)
	return p
}

// Serve makes suite serve exactly these packages (of one name), the first
// its candidate; a package served before and not named now is gone.
func (a *Archive) Serve(suite string, pkgs ...*Pkg) {
	a.t.Helper()
	dir := filepath.Join(a.Dir, "served", suite)
	os.MkdirAll(dir, 0o755)
	var b strings.Builder
	for _, p := range pkgs {
		fmt.Fprintf(&b, "%s %s %s %s\n", p.Version, p.Deb, p.DebSHA256, p.Package)
	}
	if len(pkgs) == 0 {
		a.t.Fatal("Serve: no packages")
	}
	if err := os.WriteFile(filepath.Join(dir, pkgs[0].Package), []byte(b.String()), 0o644); err != nil {
		a.t.Fatal(err)
	}
}

// Calls returns the logged calls.
func (a *Archive) Calls() []string {
	b, _ := os.ReadFile(a.Log)
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// The stand-in for both apt-get and apt-cache. It refuses a call that
// does not use a private apt state, and answers from served/<suite>/<pkg>
// (lines "version deb sha256 package", the first the candidate).
const script = `#!/bin/sh
fake=%q
echo "$(basename "$0") $*" >> "$fake/calls.log"
list= parts= lists= cache= status=
while [ $# -gt 0 ]; do
  case "$1" in
  -o) case "$2" in
      Dir::Etc::sourcelist=*) list=${2#*=};;
      Dir::Etc::sourceparts=*) parts=${2#*=};;
      Dir::State::Lists=*) lists=${2#*=};;
      Dir::Cache=*) cache=${2#*=};;
      Dir::State::status=*) status=${2#*=};;
      esac; shift 2;;
  *) break;;
  esac
done
if [ -z "$list" ] || [ "$parts" != /dev/null ] || [ -z "$lists" ] || [ -z "$cache" ]; then
  echo "E: fake apt: called without a private apt state: $*" >&2; exit 99
fi
grep -q '^deb \[signed-by=/usr/share/keyrings/debian-archive-keyring.gpg\] [a-z]*://[^ ]* [a-z0-9-]* main$' "$list" || { echo "E: fake apt: bad sources list $list" >&2; exit 99; }
suite=$(awk '{print $4}' "$list")
verb=$1; shift
case "$verb" in
update)
  [ -d "$lists" ] || { echo "E: no lists dir $lists" >&2; exit 100; }
  : > "$lists/fake_${suite}_Packages"
  for f in "$fake/served/$suite"/*; do [ -f "$f" ] && cat "$f" >> "$lists/fake_${suite}_Packages"; done
  exit 0;;
policy)
  pkg=$1
  f="$lists/fake_${suite}_Packages"
  echo "$pkg:"
  echo "  Installed: (none)"
  v=$(awk -v p="$pkg" '$4==p {print $1; exit}' "$f" 2>/dev/null)
  echo "  Candidate: ${v:-(none)}"
  exit 0;;
show)
  [ "$1" = --no-all-versions ] && shift
  pkg=${1%%%%=*}; ver=${1#*=}
  line=$(awk -v p="$pkg" -v v="$ver" '$4==p && $1==v {print; exit}' "$lists/fake_${suite}_Packages" 2>/dev/null)
  [ -n "$line" ] || exit 0
  set -- $line
  echo "Package: $4"
  echo "Version: $1"
  echo "Filename: pool/main/l/linux/$(basename "$2")"
  echo "Size: $(wc -c < "$2")"
  echo "SHA256: $3"
  exit 0;;
download)
  pkg=${1%%%%=*}; ver=${1#*=}
  line=$(awk -v p="$pkg" -v v="$ver" '$4==p && $1==v {print; exit}' "$fake/served/$suite/$pkg" 2>/dev/null)
  if [ -z "$line" ]; then echo "E: Version '$ver' for '$pkg' was not found" >&2; exit 100; fi
  set -- $line
  cp "$2" . ; exit 0;;
esac
echo "E: fake apt: unknown verb $verb" >&2; exit 99
`
