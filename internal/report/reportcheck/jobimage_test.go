package reportcheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// The job-image test: each CI job's script (scripts/ci/<job>) runs in a
// bookworm root filesystem built from Debian's packages, the job image's
// package list (scripts/ci/packages JOB) installed and nothing else, as
// debian:bookworm plus the job's setup step would be. The checkout is
// bind-mounted at its own path, Go (what actions/setup-go provides)
// read-only at its own. The matrix job runs offline (its modules from the
// host's module cache, read-only); pins and kernel reach Debian's mirror
// as they would in CI. A missing compiler, package or path fails it.
//
// make test-ci runs it (PATCHCTL_TEST_CI=1); it never builds a kernel.
// The root filesystems are cached as tarballs under the user's cache
// (ci/rootfs-<hash of the package list>.tar).

var jobImageKernel = testkernel.Default

func TestJobImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds root filesystems and patchctl three times: make test-ci")
	}
	if os.Getenv("PATCHCTL_TEST_CI") == "" {
		t.Skip("the job-image test runs under make test-ci (PATCHCTL_TEST_CI=1)")
	}
	for _, tool := range []string{"mmdebstrap", "unshare", "chroot", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Unavailable(t, tool+" not installed (apt-get install mmdebstrap util-linux coreutils tar)")
		}
	}
	repo := testenv.RepoRoot(t)
	gocache := t.TempDir()
	jobs := []struct {
		job     string
		args    []string
		offline bool
		check   func(t *testing.T, out string, code int)
	}{
		{"matrix", nil, true, func(t *testing.T, out string, code int) {
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			last := strings.TrimSpace(out)
			if i := strings.LastIndex(last, "\n"); i >= 0 {
				last = last[i+1:]
			}
			var m struct {
				Include []struct{ Kernel string } `json:"include"`
			}
			if err := json.Unmarshal([]byte(last), &m); err != nil || len(m.Include) == 0 {
				t.Fatalf("the matrix job does not print a matrix (%v): %q", err, last)
			}
		}},
		// exit 1 is a stale pin (the job's finding), not a broken job
		{"pins", nil, false, func(t *testing.T, out string, code int) {
			if code != 0 && code != 1 {
				t.Fatalf("exit %d", code)
			}
			if !strings.Contains(out, jobImageKernel) {
				t.Errorf("pins names no kernel: %q", out)
			}
		}},
		{"kernel", []string{"prepare", jobImageKernel}, false, func(t *testing.T, out string, code int) {
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
		}},
	}
	// The control: the image the workflow used to install (git and
	// ca-certificates, no compiler) cannot run its matrix step (go run
	// ./cmd/patchctl matrix), and the
	// test says so.
	t.Run("matrix-without-compiler", func(t *testing.T) {
		root := rootWith(t, []string{"git", "ca-certificates"})
		out, code := inJobImage(t, root, repo, gocache, true, []string{"go", "run", "./cmd/patchctl", "matrix"})
		if code == 0 || !strings.Contains(out, "build constraints exclude all Go files") {
			t.Errorf("without a C compiler the matrix job exits %d:\n%s", code, tail(out, 2000))
		}
	})
	for _, j := range jobs {
		t.Run(j.job, func(t *testing.T) {
			start := time.Now()
			root := jobRoot(t, repo, j.job)
			cache := filepath.Join(root, "root", ".cache", "patchctl")
			if j.job == "kernel" {
				seedDebs(t, cache)
			}
			out, code := inJobImage(t, root, repo, gocache, j.offline, append([]string{"scripts/ci/" + j.job}, j.args...))
			t.Logf("%s: exit %d in %s", j.job, code, time.Since(start).Round(time.Second))
			if t.Failed() {
				return
			}
			defer func() {
				if t.Failed() {
					t.Logf("output:\n%s", tail(out, 4000))
				}
			}()
			j.check(t, out, code)
		})
	}
}

// seedDebs hard-links the host cache's source packages into the job's
// cache (the job would download them: the same bytes, checked against the
// pins' sums either way).
func seedDebs(t *testing.T, cache string) {
	t.Helper()
	host := filepath.Join(testenv.Cache().Dir, "debs")
	debs, _ := filepath.Glob(filepath.Join(host, "linux-source-*.deb"))
	dst := filepath.Join(cache, "debs")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range debs {
		if os.Link(d, filepath.Join(dst, filepath.Base(d))) != nil {
			t.Logf("%s not linked: the job downloads it", filepath.Base(d))
		}
	}
}

// jobRoot extracts the job image's root filesystem into a temporary
// folder, building and caching its tarball first when needed.
func jobRoot(t *testing.T, repo, job string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(repo, "scripts", "ci", "packages"), job).Output()
	if err != nil {
		t.Fatalf("scripts/ci/packages %s: %v", job, err)
	}
	return rootWith(t, strings.Fields(string(out)))
}

// rootWith is a bookworm root filesystem with pkgs (and apt), extracted
// from its cached tarball.
func rootWith(t *testing.T, pkgs []string) string {
	t.Helper()
	h := sha256.Sum256([]byte("bookworm apt\n" + strings.Join(pkgs, "\n")))
	tarball := filepath.Join(testenv.Cache().Dir, "ci", "rootfs-"+hex.EncodeToString(h[:8])+".tar")
	if _, err := os.Stat(tarball); err != nil {
		if err := os.MkdirAll(filepath.Dir(tarball), 0o755); err != nil {
			t.Fatal(err)
		}
		tmp := tarball + ".tmp"
		start := time.Now()
		// unshare mode: its mounts (proc, sys) live in its own namespace,
		// never on the host's view of the temporary folder
		cmd := exec.Command("mmdebstrap", "--quiet", "--mode=unshare", "--format=tar", "--variant=apt", "--include="+strings.Join(pkgs, ","), "bookworm", tmp)
		if b, err := cmd.CombinedOutput(); err != nil {
			os.Remove(tmp)
			testenv.Unavailable(t, fmt.Sprintf("mmdebstrap of bookworm with %s: %v: %s", strings.Join(pkgs, " "), err, tail(string(b), 2000)))
		}
		if err := os.Rename(tmp, tarball); err != nil {
			t.Fatal(err)
		}
		t.Logf("built %s (%s) in %s", filepath.Base(tarball), strings.Join(pkgs, " "), time.Since(start).Round(time.Second))
	}
	root := t.TempDir()
	if b, err := exec.Command("tar", "-C", root, "-xf", tarball).CombinedOutput(); err != nil {
		t.Fatalf("extracting %s: %v: %s", tarball, err, b)
	}
	return root
}

// inJobImage runs argv in the checkout inside root, in a mount namespace
// (and a network namespace of its own, with only loopback, when offline),
// and returns its combined output and exit code.
func inJobImage(t *testing.T, root, repo, gocache string, offline bool, argv []string) (string, int) {
	t.Helper()
	goroot := strings.TrimSpace(goEnv(t, "GOROOT"))
	gomod := strings.TrimSpace(goEnv(t, "GOMODCACHE"))
	gitdir, err := exec.Command("git", "-C", repo, "rev-parse", "--path-format=absolute", "--git-common-dir").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	env := []string{"HOME=/root", "PATH=" + goroot + "/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"LANG=C.UTF-8", "GOTOOLCHAIN=local", "CI=true"}
	if offline {
		env = append(env, "GOPROXY=off", "GOFLAGS=-mod=readonly")
	}
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	var script strings.Builder
	fmt.Fprintf(&script, "set -eu\nmount --make-rprivate /\nr=%s\n", q(root))
	bind := func(src, dst string, ro bool) {
		fmt.Fprintf(&script, "[ -d %s ] && mkdir -p \"$r\"%s || touch \"$r\"%s\nmount --bind %s \"$r\"%s\n", q(src), q(dst), q(dst), q(src), q(dst))
		if ro {
			fmt.Fprintf(&script, "mount -o remount,bind,ro \"$r\"%s\n", q(dst))
		}
	}
	script.WriteString("mount -t proc proc \"$r/proc\"\nmount --rbind /dev \"$r/dev\"\n")
	script.WriteString("cp /etc/resolv.conf \"$r/etc/resolv.conf\" 2>/dev/null || true\n")
	bind(repo, repo, false)
	bind(strings.TrimSpace(string(gitdir)), strings.TrimSpace(string(gitdir)), false)
	bind(goroot, goroot, true)
	bind(gocache, "/root/.cache/go-build", false)
	// The host's module cache, read-only (actions/setup-go restores it
	// in CI): nothing to download; offline, nothing can be.
	bind(gomod, "/root/go/pkg/mod", true)
	// The host's CA bundle: a machine behind a TLS-inspecting proxy
	// trusts it, the image's ca-certificates does not.
	// The host's local apt settings too (a mirror snapshot older than its
	// Valid-Until needs Acquire::Check-Valid-Until "false" here), the
	// files the image does not have.
	if !offline {
		if _, err := os.Stat("/etc/ssl/certs/ca-certificates.crt"); err == nil {
			bind("/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/certs/ca-certificates.crt", true)
		}
		confs, _ := filepath.Glob("/etc/apt/apt.conf.d/*")
		for _, c := range confs {
			if _, err := os.Stat(filepath.Join(root, c)); err != nil {
				fmt.Fprintf(&script, "cp %s \"$r\"%s\n", q(c), q(c))
			}
		}
	}
	var cmd strings.Builder
	for _, a := range argv {
		cmd.WriteString(" " + q(a))
	}
	fmt.Fprintf(&script, "exec chroot \"$r\" /usr/bin/env -i %s /bin/bash -c %s\n", strings.Join(quoteAll(env, q), " "), q("cd "+repo+" &&"+cmd.String()))
	args := []string{"--mount", "--pid", "--fork"}
	if offline {
		args = append(args, "--net")
	}
	c := exec.Command("unshare", append(args, "/bin/sh", "-c", script.String())...)
	var buf bytes.Buffer
	c.Stdout, c.Stderr = &buf, &buf
	err = c.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		ok := errors.As(err, &ee)
		if !ok {
			testenv.Unavailable(t, "unshare: "+err.Error())
		}
		code = ee.ExitCode()
	}
	return buf.String(), code
}

func quoteAll(s []string, q func(string) string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = q(v)
	}
	return out
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	b, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return string(b)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
