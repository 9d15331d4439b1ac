package distro

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
)

// TestDistroImageID: a distro build's image id names the kernel, the
// Debian release and a hash of the pinned packages and the compiler, and
// the source state the modules were rebuilt from; another package hash,
// another compiler or another state is another image.
func TestDistroImageID(t *testing.T) {
	c := &tree.Cache{Dir: t.TempDir()}
	k := lockKernel()
	b, _ := Binary(k)
	folder := ImageFolder(c, k, b, "gcc-12 (Debian 12.2.0-14) 12.2.0")
	id := build.ImageID(c.Dir, build.StateDir(folder, vocab.Patched, strings.Repeat("5", 64)))
	if !regexp.MustCompile(`^9\.9/distro-9\.9\.1-amd64-[0-9a-f]{12}/patched-555555555555$`).MatchString(id) {
		t.Errorf("image id %q, want 9.9/distro-<release>-<hash>/patched-<state>", id)
	}
	if dir, err := build.ImageDir(c.Dir, id); err != nil || dir != build.StateDir(folder, vocab.Patched, strings.Repeat("5", 64)) {
		t.Errorf("ImageDir(%s) = %s, %v", id, dir, err)
	}
	if other := ImageFolder(c, k, b, "gcc-12 (Debian 12.2.0-15) 12.2.0"); other == folder {
		t.Error("another compiler, the same image folder")
	}
	k2 := lockKernel()
	k2.Debian.Binary.Image.SHA256 = strings.Repeat("b", 64)
	b2, _ := Binary(k2)
	if other := ImageFolder(c, k2, b2, "gcc-12 (Debian 12.2.0-14) 12.2.0"); other == folder {
		t.Error("another image package, the same image folder")
	}
}

// TestDistroImagePublishedOnce: a distro build's snapshot (rebuilt
// modules, record) is published whole under its id; boot --image ID and
// bench --image ID find it (build.ResolveImage) and verify Debian's
// kernel and the rebuilt modules by sha256; a second build of the same
// state does not rewrite it (its record is returned); a failed build
// leaves a passing image alone; a changed module is refused (exit 3).
func TestDistroImagePublishedOnce(t *testing.T) {
	c := &tree.Cache{Dir: t.TempDir()}
	k := lockKernel()
	b, _ := Binary(k)
	// Debian's kernel, as Prepare extracts it.
	root := filepath.Join(Dir(c, k, b), "root")
	vmlinuz := filepath.Join(root, "boot", "vmlinuz-"+b.Release)
	if err := os.MkdirAll(filepath.Dir(vmlinuz), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(vmlinuz, []byte("debian kernel"), 0o644)
	state := strings.Repeat("7", 64)
	final := build.StateDir(ImageFolder(c, k, b, "cc"), vocab.Patched, state)
	os.MkdirAll(filepath.Dir(final), 0o755)
	// stage writes what Build writes into its staging folder.
	stage := func(module string, fail error) (*build.Metadata, error) {
		t.Helper()
		vdir, err := os.MkdirTemp(filepath.Dir(final), "."+filepath.Base(final)+".tmp-")
		if err != nil {
			t.Fatal(err)
		}
		ko := filepath.Join(vdir, "modules", "nvme_rdma.ko")
		os.MkdirAll(filepath.Dir(ko), 0o755)
		os.WriteFile(ko, []byte(module), 0o644)
		md := &build.Metadata{Kernel: k.Name, Variant: vocab.Patched, KernelFrom: vocab.FromDistro, KernelRelease: b.Release,
			State: state, VariantDir: vdir, Log: filepath.Join(vdir, "build.log"), BuildDir: filepath.Join(vdir, "src"),
			ID: build.ImageID(c.Dir, final), Key: "key", Rebuilt: []string{"nvme_rdma"},
			Modules:   []string{filepath.Join(root, "lib", "modules", "ib_core.ko"), ko},
			Artifacts: map[string]string{"bzImage": vmlinuz}, SHA256: map[string]string{}}
		md.SHA256["bzImage"], _ = fsutil.HashFile(vmlinuz)
		md.SHA256["modules/nvme_rdma.ko"], _ = fsutil.HashFile(ko)
		return finish(md, final, time.Now(), fail)
	}
	md, err := stage("module, first build", nil)
	if err != nil {
		t.Fatal(err)
	}
	if md.VariantDir != final || md.Modules[1] != filepath.Join(final, "modules", "nvme_rdma.ko") || md.BuildDir != filepath.Join(final, "src") {
		t.Errorf("the record names the staging folder: %s %v %s", md.VariantDir, md.Modules, md.BuildDir)
	}
	got, err := build.ResolveImage(c.Dir, md.ID, "", vocab.Patched)
	if err != nil {
		t.Fatalf("--image %s: %v", md.ID, err)
	}
	if got.KernelFrom != vocab.FromDistro || got.KernelRelease != b.Release || got.Artifacts["bzImage"] != vmlinuz {
		t.Errorf("resolved %+v", got)
	}
	var desc strings.Builder
	build.Describe(&desc, got)
	if !strings.Contains(desc.String(), "distro") || !strings.Contains(desc.String(), b.Release) || !strings.Contains(desc.String(), md.ID) {
		t.Errorf("Describe:\n%s", desc.String())
	}
	module := func() string {
		b, _ := os.ReadFile(filepath.Join(final, "modules", "nvme_rdma.ko"))
		return string(b)
	}
	// The same state built again (another process, another run): the
	// published image stands, and its record is what the build returns.
	again, err := stage("module, second build", nil)
	if err != nil {
		t.Fatal(err)
	}
	if module() != "module, first build" || again.SHA256["modules/nvme_rdma.ko"] != md.SHA256["modules/nvme_rdma.ko"] {
		t.Errorf("a published image was rewritten: %q", module())
	}
	if _, err := stage("module, failed build", errors.New("compile error")); err == nil {
		t.Error("a failed build passed")
	}
	if _, err := build.ResolveImage(c.Dir, md.ID, "", vocab.Patched); err != nil || module() != "module, first build" {
		t.Errorf("a failed build replaced a passing image: %v %q", err, module())
	}
	ents, _ := os.ReadDir(filepath.Dir(final))
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("staging folder %s left", e.Name())
		}
	}
	os.WriteFile(filepath.Join(final, "modules", "nvme_rdma.ko"), []byte("changed"), 0o644)
	if _, err := build.ResolveImage(c.Dir, md.ID, "", vocab.Patched); !errors.Is(err, errs.ErrEnv) || !strings.Contains(err.Error(), "nvme_rdma.ko") {
		t.Errorf("a changed module: %v", err)
	}
}
