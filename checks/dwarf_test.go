package checks_test

import (
	"testing"

	"github.com/patchctl/patchctl/checks"
	"github.com/patchctl/patchctl/checks/engine"

	"github.com/patchctl/patchctl/internal/testenv/kbuild"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/vocab"
)

// TestSizeofHeadersAgreeWithDWARF: sizeof(struct nvme_command) from the
// layout calculation over 6.12's headers equals the one in the patched
// build's DWARF (the build is made when missing; outside CI a machine
// without the build tools skips and says why).
func TestSizeofHeadersAgreeWithDWARF(t *testing.T) {
	kbuild.Exclusive(t, testkernel.Default)
	md := kbuild.Build(t, testkernel.Default, vocab.Patched)
	// The work tree is read in its patched state, held: another test
	// process's build may have left it (or be putting it) in another.
	dir := kbuild.HoldPatched(t, testkernel.Default)
	open := engine.OpenTrees()
	rep, err := checks.Run(checks.Options{Tree: dir, Paths: []string{"drivers/nvme/host"}, BuildDir: md.BuildDir})
	if err != nil {
		t.Fatal(err)
	}
	// The headers the layout calculation parsed were freed with it (the
	// check's own files stay in the parse cache, which OpenTrees leaves
	// out).
	if left := engine.OpenTrees() - open; left != 0 {
		t.Errorf("the check left %d parsed trees open", left)
	}
	for _, l := range rep.Layouts {
		if l.Struct == "struct nvme_command" {
			if l.Headers != 64 || l.DWARF != l.Headers {
				t.Errorf("headers %d, DWARF %d (%s)", l.Headers, l.DWARF, l.Object)
			}
			return
		}
	}
	t.Fatalf("no layout of struct nvme_command computed: %+v", rep.Layouts)
}
