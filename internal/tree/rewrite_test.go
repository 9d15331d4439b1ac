package tree

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/debian"
	"github.com/patchctl/patchctl/internal/errs"
)

// TestRewritePinFlowBinary: a binary kernel written as a flow mapping
// (binary: {...} on one line) has no block to rewrite line by line; the
// re-pin is refused by the read-back check with the lock file unchanged,
// never a crash.
func TestRewritePinFlowBinary(t *testing.T) {
	sum := func(c string) string { return strings.Repeat(c, 64) }
	text := "kernels:\n  - name: \"9.9\"\n    debian:\n      package: linux-source-9.9\n      suite: sid\n      version: 9.9.1-1\n" +
		"      deb_sha256: " + sum("a") + "\n      tarball: usr/src/linux-source-9.9.tar.xz\n      tarball_sha256: " + sum("b") + "\n" +
		"      binary: {version: 9.9.1-1, release: 9.9.1-amd64, image: {package: linux-image-9.9.1-amd64-unsigned, arch: amd64, sha256: " + sum("c") + "}, " +
		"headers: [{package: linux-headers-9.9.1-amd64, arch: amd64, sha256: " + sum("d") + "}]}\n"
	path := filepath.Join(t.TempDir(), "kernels.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := LoadLock(path)
	if err != nil {
		t.Fatal(err)
	}
	n := *l.Kernels[0].Debian
	n.Version, n.DebSHA256, n.TarballSHA256 = "9.9.2-1", sum("e"), sum("f")
	b := *n.Binary
	b.Version, b.Release = "9.9.2-1", "9.9.2-amd64"
	b.Image = &debian.Package{Package: "linux-image-9.9.2-amd64-unsigned", Arch: "amd64", SHA256: sum("1")}
	b.Headers = []debian.Package{{Package: "linux-headers-9.9.2-amd64", Arch: "amd64", SHA256: sum("2")}}
	n.Binary = &b
	err = RewritePin(path, "9.9", &n)
	if !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "does not read back") {
		t.Errorf("re-pin of a flow binary: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != text {
		t.Errorf("lock changed:\n%s", got)
	}
}
