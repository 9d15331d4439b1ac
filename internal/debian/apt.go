package debian

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/patchctl/patchctl/internal/cachelock"
	"github.com/patchctl/patchctl/internal/errs"
)

// patchctl's own apt state: one folder per Debian suite under the cache
// (cache/apt/<suite>/ with sources.list, lists/ and cache/), used through
// apt-get's -o options. The system's apt configuration is only read (to
// find the machine's Debian mirror), never written.

// Keyring is the keyring every suite's sources line is signed-by
// (from the debian-archive-keyring package).
const Keyring = "/usr/share/keyrings/debian-archive-keyring.gpg"

var suiteName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// ValidSuite checks a suite name: it becomes a folder in the cache and a
// word on a sources line.
func ValidSuite(s string) error {
	if !suiteName.MatchString(s) || len(s) > 40 {
		return fmt.Errorf("suite %q: want a Debian suite name such as bookworm, bookworm-security, sid or experimental", s)
	}
	return nil
}

// Mirrors are the Debian archives patchctl's sources lines point at.
type Mirrors struct {
	Debian   string // e.g. http://deb.debian.org/debian
	Security string // e.g. http://deb.debian.org/debian-security
}

// FindMirrors reads the machine's apt sources under etc (normally
// /etc/apt; read only) for its Debian and Debian security mirrors. Any
// not found is deb.debian.org's. $PATCHCTL_DEBIAN_MIRROR and
// $PATCHCTL_DEBIAN_SECURITY_MIRROR override.
func FindMirrors(etc string) Mirrors {
	m := Mirrors{}
	var files []string
	files = append(files, filepath.Join(etc, "sources.list"))
	for _, pat := range []string{"*.list", "*.sources"} {
		g, _ := filepath.Glob(filepath.Join(etc, "sources.list.d", pat))
		files = append(files, g...)
	}
	for _, f := range files {
		for _, u := range sourceURIs(f) {
			u = strings.TrimRight(u, "/")
			switch {
			case strings.HasSuffix(u, "/debian-security") && m.Security == "":
				m.Security = u
			case strings.HasSuffix(u, "/debian") && m.Debian == "":
				m.Debian = u
			}
		}
	}
	if m.Debian == "" {
		m.Debian = "http://deb.debian.org/debian"
	}
	if m.Security == "" {
		m.Security = "http://deb.debian.org/debian-security"
	}
	if v := os.Getenv("PATCHCTL_DEBIAN_MIRROR"); v != "" {
		m.Debian = strings.TrimRight(v, "/")
	}
	if v := os.Getenv("PATCHCTL_DEBIAN_SECURITY_MIRROR"); v != "" {
		m.Security = strings.TrimRight(v, "/")
	}
	return m
}

// sourceURIs lists the URIs of the deb entries of a one-line (.list) or
// deb822 (.sources) file; comments and deb-src entries are skipped.
func sourceURIs(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if strings.HasSuffix(path, ".sources") {
		return deb822URIs(sc)
	}
	return oneLineURIs(sc)
}

// oneLineURIs reads the URIs of "deb [options] uri suite components"
// lines.
func oneLineURIs(sc *bufio.Scanner) []string {
	var out []string
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") {
			continue
		}
		fs := strings.Fields(l)
		if len(fs) < 3 || fs[0] != "deb" {
			continue
		}
		fs = fs[1:]
		if strings.HasPrefix(fs[0], "[") { // [options]
			for len(fs) > 0 && !strings.HasSuffix(fs[0], "]") {
				fs = fs[1:]
			}
			if len(fs) > 0 {
				fs = fs[1:]
			}
		}
		if len(fs) > 0 {
			out = append(out, fs[0])
		}
	}
	return out
}

// deb822URIs reads the URIs: of deb822 stanzas (blank-line separated)
// whose Types: include deb and that are not Enabled: no.
func deb822URIs(sc *bufio.Scanner) []string {
	var out []string
	isDeb := false
	var pending []string
	flush := func() {
		if isDeb {
			out = append(out, pending...)
		}
		pending, isDeb = nil, false
	}
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") {
			continue
		}
		if l == "" {
			flush()
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "types":
			isDeb = false
			for _, t := range strings.Fields(v) {
				if t == "deb" {
					isDeb = true
				}
			}
		case "uris":
			pending = append(pending, strings.Fields(v)...)
		case "enabled":
			if strings.TrimSpace(v) == "no" {
				isDeb = false
				pending = nil
			}
		}
	}
	flush()
	return out
}

// AptDir is patchctl's apt state for a suite.
func (c *Cache) AptDir(suite string) string { return filepath.Join(c.Dir, "apt", suite) }

func (c *Cache) aptEtc() string {
	if c.AptEtc != "" {
		return c.AptEtc
	}
	return "/etc/apt"
}

// aptOptions are the -o options that make apt-get and apt-cache use the
// suite's own state instead of the system's, writing its sources list
// first.
func (c *Cache) aptOptions(suite string) ([]string, error) {
	if err := ValidSuite(suite); err != nil {
		return nil, fmt.Errorf("%v: %w", err, errs.ErrInput)
	}
	d := c.AptDir(suite)
	for _, p := range []string{"lists/partial", "cache/archives/partial"} {
		if err := os.MkdirAll(filepath.Join(d, p), 0o755); err != nil {
			return nil, err
		}
	}
	m := FindMirrors(c.aptEtc())
	uri := m.Debian
	if strings.HasSuffix(suite, "-security") {
		uri = m.Security
	}
	line := fmt.Sprintf("deb [signed-by=%s] %s %s main\n", Keyring, uri, suite)
	list := filepath.Join(d, "sources.list")
	if b, err := os.ReadFile(list); err != nil || string(b) != line {
		if err := os.WriteFile(list, []byte(line), 0o644); err != nil {
			return nil, err
		}
	}
	return []string{
		"-o", "Dir::Etc::sourcelist=" + list,
		"-o", "Dir::Etc::sourceparts=/dev/null",
		"-o", "Dir::State::Lists=" + filepath.Join(d, "lists"),
		"-o", "Dir::Cache=" + filepath.Join(d, "cache"),
		"-o", "Dir::State::status=/dev/null",
	}, nil
}

func (c *Cache) aptGet() string {
	if c.AptGet != "" {
		return c.AptGet
	}
	return "apt-get"
}

func (c *Cache) aptCache() string {
	if c.AptCache != "" {
		return c.AptCache
	}
	return "apt-cache"
}

// hasLists reports whether the suite's package lists were fetched.
func (c *Cache) hasLists(suite string) bool {
	g, _ := filepath.Glob(filepath.Join(c.AptDir(suite), "lists", "*Packages*"))
	return len(g) > 0
}

// UpdateSuite fetches the suite's package lists into patchctl's own apt
// state (apt-get update; the system's lists are not touched).
func (c *Cache) UpdateSuite(ctx context.Context, suite string) error {
	opts, err := c.aptOptions(suite)
	if err != nil {
		return err
	}
	unlock, err := cachelock.Take(ctx, c.Dir, "apt-"+suite, c.Progress)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Stat(Keyring); err != nil && c.AptGet == "" {
		return fmt.Errorf("%s is missing: install debian-archive-keyring (scripts/deps.sh): %w", Keyring, errs.ErrEnv)
	}
	c.Progress.Start("apt-get update " + suite)
	out, err := runIn(ctx, c.AptDir(suite), c.aptGet(), append(opts, "update", "-qq")...)
	if err != nil {
		return fmt.Errorf("apt-get update of suite %s: %v: %s: %w", suite, err, lastLines(out, 3), errs.ErrEnv)
	}
	c.Progress.Done("%s lists fetched", suite)
	return nil
}

// Served is what a suite serves of a package, from its index.
type Served struct {
	Package  string `json:"package"`
	Version  string `json:"version"`
	Suite    string `json:"suite"`
	SHA256   string `json:"sha256"` // the index's sum of the .deb
	Size     int64  `json:"size"`
	Filename string `json:"filename"`
}

// Serves asks the suite's index (fetched before, see UpdateSuite) which
// version of pkg it serves: apt's candidate there.
func (c *Cache) Serves(ctx context.Context, suite, pkg string) (*Served, error) {
	opts, err := c.aptOptions(suite)
	if err != nil {
		return nil, err
	}
	out, err := runIn(ctx, c.AptDir(suite), c.aptCache(), append(opts, "policy", pkg)...)
	if err != nil {
		return nil, fmt.Errorf("apt-cache policy %s in suite %s: %v: %s: %w", pkg, suite, err, lastLines(out, 3), errs.ErrEnv)
	}
	cand := ""
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "Candidate:"); ok {
			cand = strings.TrimSpace(v)
		}
	}
	if cand == "" || cand == "(none)" {
		return nil, fmt.Errorf("suite %s does not serve %s (apt-cache policy has no candidate): fix suite or package in series/kernels.yaml: %w", suite, pkg, errs.ErrInput)
	}
	return c.ServedVersion(ctx, suite, pkg, cand)
}

// ServedVersion reads the index entry of pkg=version in the suite; an
// error wrapping ErrNotServed when the suite does not have it.
func (c *Cache) ServedVersion(ctx context.Context, suite, pkg, version string) (*Served, error) {
	opts, err := c.aptOptions(suite)
	if err != nil {
		return nil, err
	}
	out, err := runIn(ctx, c.AptDir(suite), c.aptCache(), append(opts, "show", "--no-all-versions", pkg+"="+version)...)
	if err != nil {
		if notServed(out) || strings.Contains(out, "No packages found") {
			return nil, fmt.Errorf("suite %s does not serve %s=%s: %w", suite, pkg, version, ErrNotServed)
		}
		return nil, fmt.Errorf("apt-cache show %s=%s in suite %s: %v: %s: %w", pkg, version, suite, err, lastLines(out, 3), errs.ErrEnv)
	}
	s := &Served{Package: pkg, Suite: suite}
	for _, l := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || strings.HasPrefix(l, " ") {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Version":
			if s.Version == "" {
				s.Version = v
			}
		case "SHA256":
			if s.SHA256 == "" {
				s.SHA256 = v
			}
		case "Size":
			if s.Size == 0 {
				s.Size, _ = strconv.ParseInt(v, 10, 64)
			}
		case "Filename":
			if s.Filename == "" {
				s.Filename = v
			}
		}
	}
	if s.Version == "" {
		// apt-cache show says nothing of a version the index lacks.
		return nil, fmt.Errorf("suite %s does not serve %s=%s: %w", suite, pkg, version, ErrNotServed)
	}
	if s.Version != version || len(s.SHA256) != 64 {
		return nil, fmt.Errorf("apt-cache show %s=%s in suite %s: no version and SHA256 in its answer: %w", pkg, version, suite, errs.ErrEnv)
	}
	return s, nil
}

// ErrNotServed is a package version the suite's index does not have.
var ErrNotServed = fmt.Errorf("not served: %w", errs.ErrInput)
