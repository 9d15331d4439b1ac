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
