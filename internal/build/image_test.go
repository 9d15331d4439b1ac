package build

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/vocab"
)

// TestPublishOnce: a published passing image is kept when the same state
// is built again (staging discarded); a failed build or a snapshot of the
// former layout (no image id) is replaced; a changed image is refused by
// LoadImage.
func TestPublishOnce(t *testing.T) {
	dir := t.TempDir()
	final := filepath.Join(dir, "variants", "patched-0123456789ab")
	stage := func(content, id, status string) string {
		s, err := os.MkdirTemp(filepath.Join(dir, "variants"), ".patched.tmp-")
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(s, "bzImage"), []byte(content), 0o644)
		md := &Metadata{ID: id, Status: status, Variant: vocab.Patched, Artifacts: map[string]string{"bzImage": filepath.Join(s, "bzImage")},
			SHA256: map[string]string{"bzImage": fsutil.Hash([]byte(content))}}
		if err := fsutil.WriteJSON(filepath.Join(s, "metadata.json"), md); err != nil {
			t.Fatal(err)
		}
		return s
	}
	os.MkdirAll(filepath.Join(dir, "variants"), 0o755)
	publishOK := func(s string) {
		t.Helper()
		if got, err := publish(s, final); err != nil || got != final {
			t.Fatalf("publish: %v %s", err, got)
		}
	}
	image := func() string { b, _ := os.ReadFile(filepath.Join(final, "bzImage")); return string(b) }
	publishOK(stage("old layout", "", "PASS"))
	publishOK(stage("first", "k/c/patched-0123456789ab", "PASS"))
	if image() != "first" {
		t.Errorf("a snapshot of the former layout was kept: %q", image())
	}
	second := stage("second", "k/c/patched-0123456789ab", "PASS")
	publishOK(second)
	if image() != "first" {
		t.Errorf("a published image was rewritten: %q", image())
	}
	if _, err := os.Stat(second); err == nil {
		t.Error("the discarded staging folder is left")
	}
	if md, err := LoadImage(final); err != nil || md.SHA256["bzImage"] != fsutil.Hash([]byte("first")) {
		t.Errorf("LoadImage: %v", err)
	}
	os.WriteFile(filepath.Join(final, "bzImage"), []byte("changed"), 0o644)
	if _, err := LoadImage(final); err == nil || !strings.Contains(err.Error(), "not the one its build recorded") {
		t.Errorf("a changed image: %v", err)
	}
	// A failed build there is replaced by a passing one.
	os.RemoveAll(final)
	publishOK(stage("failed", "k/c/patched-0123456789ab", "FAIL"))
	publishOK(stage("passing", "k/c/patched-0123456789ab", "PASS"))
	if image() != "passing" {
		t.Errorf("a failed build was kept: %q", image())
	}
}

// TestKeptRecordNamesThePublishedModules: when another build of the same
// state published first, the build returns the published record whenever
// its files differ from this build's: a module compiled again in another
// folder differs in its build ID, with the same kernel. The record then
// names the module files the snapshot holds (LoadImage verifies them), and
// their "rebuilt" list.
func TestKeptRecordNamesThePublishedModules(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "variants"), 0o755)
	final := filepath.Join(dir, "variants", "patched-0123456789ab")
	stage := func(module string, rebuilt []string) *Metadata {
		s, err := os.MkdirTemp(filepath.Join(dir, "variants"), ".patched.tmp-")
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(s, "modules"), 0o755)
		os.WriteFile(filepath.Join(s, "bzImage"), []byte("kernel"), 0o644)
		ko := filepath.Join(s, "modules", "nvmet-rdma.ko")
		os.WriteFile(ko, []byte(module), 0o644)
		md := &Metadata{ID: "k/c/patched-0123456789ab", Status: vocab.Pass, Variant: vocab.Patched,
			Artifacts: map[string]string{"bzImage": filepath.Join(s, "bzImage")}, SHA256: map[string]string{"bzImage": fsutil.Hash([]byte("kernel"))},
			Modules: []string{ko}, ModuleSHA256: map[string]string{"nvmet_rdma": fsutil.Hash([]byte(module))}, Rebuilt: rebuilt, Duration: 7}
		if err := fsutil.WriteJSON(filepath.Join(s, "metadata.json"), md); err != nil {
			t.Fatal(err)
		}
		if got, err := publish(s, final); err != nil || got != final {
			t.Fatalf("publish: %v %s", err, got)
		}
		return md
	}
	first := stage("module, build ID 1", []string{"nvme_rdma"})
	if kept := KeptRecord(final, first); kept != nil {
		t.Fatalf("the build that published: another record returned, %+v", kept)
	}
	again := stage("module, build ID 1", []string{"nvme_rdma"})
	if kept := KeptRecord(final, again); kept != nil {
		t.Fatalf("the same files built again: another record returned, %+v", kept)
	}
	second := stage("module, build ID 2", []string{"nvme_rdma", "nvmet_rdma"})
	kept := KeptRecord(final, second)
	if kept == nil {
		t.Fatal("a build whose module differs from the published one returned its own record: it names a file the snapshot does not hold")
	}
	if kept.ModuleSHA256["nvmet_rdma"] != first.ModuleSHA256["nvmet_rdma"] || len(kept.Rebuilt) != 1 || kept.Duration != second.Duration {
		t.Errorf("kept record: modules %v, rebuilt %v, duration %v; want the published modules and rebuilt list, this build's duration", kept.ModuleSHA256, kept.Rebuilt, kept.Duration)
	}
	// Any file the record hashes: the same kernel and modules, another
	// System.map.
	other := *first
	other.SHA256 = map[string]string{"bzImage": first.SHA256["bzImage"], "System.map": fsutil.Hash([]byte("other symbols"))}
	if KeptRecord(final, &other) == nil {
		t.Error("a build whose System.map differs from the published one returned its own record")
	}
	if b, _ := os.ReadFile(filepath.Join(final, "modules", "nvmet-rdma.ko")); string(b) != "module, build ID 1" {
		t.Errorf("the published module was rewritten: %q", b)
	}
}
