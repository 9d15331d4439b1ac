package debian

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	runner "github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
)

// DebPath is where the pinned package is kept.
func (c *Cache) DebPath(d *Source) string {
	v := strings.ReplaceAll(d.Version, ":", "%3a")
	return filepath.Join(c.Dir, "debs", d.Package+"_"+v+"_all.deb")
}

func fileSHA256(path string) (string, error) { return fsutil.HashFile(path) }

// fetchSource downloads kernel's pinned source package d.
func (c *Cache) fetchSource(ctx context.Context, kernel string, d *Source) (string, error) {
	return c.fetch(ctx, c.DebPath(d), d.Package, d.Version, d.DebSHA256, d.Suite, kernel, "version, deb_sha256 and tarball_sha256")
}

// BinaryDebPath is where a pinned binary package is kept.
func (c *Cache) BinaryDebPath(p Package, version string) string {
	v := strings.ReplaceAll(version, ":", "%3a")
	return filepath.Join(c.Dir, "debs", p.Package+"_"+v+"_"+p.Arch+".deb")
}

// FetchBinary downloads a pinned binary package of kernel (of its
// Binary at version, from its source's suite; "" for the system's apt
// sources) the way the source package is, unless a copy with the pinned
// sha256 is cached, and returns its path.
func (c *Cache) FetchBinary(ctx context.Context, kernel, suite string, p Package, version string) (string, error) {
	return c.fetch(ctx, c.BinaryDebPath(p, version), p.Package, version, p.SHA256, suite, kernel, "the binary packages' version and sha256")
}

// fetch downloads package=version with apt-get download (Debian's
// ordinary client; from suite through patchctl's own apt state when one
// is named) to path unless a copy with the pinned sha256 is there. kernel
// and repin name what to re-pin when Debian no longer serves it.
func (c *Cache) fetch(ctx context.Context, path, pkg, version, want, suite, kernel, repin string) (string, error) {
	d := &Source{Package: pkg, Version: version, DebSHA256: want, Suite: suite}
	if sum, err := fileSHA256(path); err == nil && sum == d.DebSHA256 {
		return path, nil
	}
	spec := d.Package + "=" + d.Version
	if c.Offline {
		return "", fmt.Errorf("%s is not in the cache (%s): run without --offline to download it%s: %w", spec, path, c.debSize(ctx, suite, spec), ErrOffline)
	}
	if suite != "" && !c.hasLists(suite) {
		// The suite's lists first, so the size can be announced.
		if err := c.UpdateSuite(ctx, suite); err != nil {
			return "", err
		}
	}
	// Say what comes and how big before it starts (a fresh cache fetches
	// well over 100 MB).
	c.Progress.Start("download " + spec + c.debSize(ctx, suite, spec) + " from Debian into " + filepath.Dir(path))
	got, err := c.download(ctx, d.Suite, spec)
	if err != nil {
		if errors.Is(err, ErrNotServed) {
			if d.Suite == "" {
				return "", fmt.Errorf("Debian does not serve %s (anymore): re-pin %s in series/kernels.yaml to a served version (apt-cache policy %s lists them), or add the suite that serves it (suite:) and run `patchctl tree pin --kernel %s`: %w",
					spec, repin, d.Package, kernel, errs.ErrInput)
			}
			return "", fmt.Errorf("Debian's %s does not serve %s (anymore): re-pin with `patchctl tree pin --kernel %s` (it writes the version the suite serves now, with both sums computed from the download, into series/kernels.yaml; %s): %w",
				d.Suite, spec, kernel, repin, errs.ErrInput)
		}
		return "", err
	}
	defer os.RemoveAll(filepath.Dir(got))
	sum, err := fileSHA256(got)
	if err != nil {
		return "", err
	}
	if sum != d.DebSHA256 {
		return "", fmt.Errorf("checksum mismatch for %s: got sha256 %s, the lock pins %s; refused and not kept: %w", spec, sum, d.DebSHA256, errs.ErrInput)
	}
	if err := os.Rename(got, path); err != nil {
		return "", err
	}
	c.Progress.Done("%s verified", filepath.Base(path))
	return path, nil
}

// download runs apt-get download of spec (package=version) in a fresh
// folder under debs/ and returns the .deb's path there (the caller
// removes its folder). With a suite, patchctl's own apt state for it is
// used, its lists fetched first when missing; a version not found makes
// one fresh update of the lists before it is reported as ErrNotServed.
func (c *Cache) download(ctx context.Context, suite, spec string) (string, error) {
	dir := filepath.Join(c.Dir, "debs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	pkg, _, _ := strings.Cut(spec, "=")
	tmp, err := os.MkdirTemp(dir, ".download-"+pkg+"-")
	if err != nil {
		return "", err
	}
	var opts []string
	if suite != "" {
		if opts, err = c.aptOptions(suite); err != nil {
			os.RemoveAll(tmp)
			return "", err
		}
		if !c.hasLists(suite) {
			if err := c.UpdateSuite(ctx, suite); err != nil {
				os.RemoveAll(tmp)
				return "", err
			}
		}
	}
	args := append(append([]string{}, opts...), "download", spec)
	out, err := runIn(ctx, tmp, c.aptGet(), args...)
	if err != nil && notServed(out) {
		// The package lists may be old or missing: refresh once.
		if suite != "" {
			if uerr := c.UpdateSuite(ctx, suite); uerr == nil {
				out, err = runIn(ctx, tmp, c.aptGet(), args...)
			}
		} else if os.Geteuid() == 0 {
			_, _ = runIn(ctx, tmp, c.aptGet(), "update", "-qq") // the download below says what fails
			out, err = runIn(ctx, tmp, c.aptGet(), args...)
		}
	}
	if err != nil {
		os.RemoveAll(tmp)
		if notServed(out) {
			return "", fmt.Errorf("%s: %w", spec, ErrNotServed)
		}
		return "", fmt.Errorf("apt-get download %s: %v: %s: %w", spec, err, lastLines(out, 3), errs.ErrEnv)
	}
	debs, _ := filepath.Glob(filepath.Join(tmp, "*.deb"))
	if len(debs) != 1 {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("apt-get download %s left %d .deb files, want 1: %w", spec, len(debs), errs.ErrEnv)
	}
	return debs[0], nil
}

func notServed(out string) bool {
	return strings.Contains(out, "was not found") || strings.Contains(out, "Unable to locate package") || strings.Contains(out, "has no installation candidate")
}

// debSize is " (N MB)" for a package version as apt-cache knows it, or
// "" when it does not say.
func (c *Cache) debSize(ctx context.Context, suite, spec string) string {
	cacheProg := c.aptCache()
	if c.AptCache == "" && c.AptGet != "" {
		cacheProg = filepath.Join(filepath.Dir(c.AptGet), "apt-cache") // a test's fake apt-get sits with its fake apt-cache
	}
	if _, err := runner.LookPath(cacheProg); err != nil {
		return ""
	}
	var opts []string
	if suite != "" {
		if !c.hasLists(suite) {
			return ""
		}
		o, err := c.aptOptions(suite)
		if err != nil {
			return ""
		}
		opts = o
	}
	out, err := runIn(ctx, "", cacheProg, append(opts, "show", "--no-all-versions", spec)...)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "Size: "); ok {
			var n int64
			if _, err := fmt.Sscan(v, &n); err == nil && n > 0 {
				return fmt.Sprintf(" (%d MB)", (n+500_000)/1_000_000)
			}
		}
	}
	return ""
}

func runIn(ctx context.Context, dir, prog string, args ...string) (string, error) {
	var out strings.Builder
	err := (&runner.Cmd{Name: prog, Args: args, Dir: dir, Stdout: &out}).Run(ctx)
	return out.String(), err
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, " / ")
}
