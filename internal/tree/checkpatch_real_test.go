package tree_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/progress"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/tree"
)

// TestCheckpatchKitSameFindings: mainline's checkpatch.pl run from the few
// files extracted from the package (the kit) says exactly what it says in
// the whole prepared tree, on the seeds (as received and as regenerated
// for every kernel) and on patches made to reach each test that reads the
// tree: the obsolete-maintainer test (get_maintainer.pl), <asm/x.h>,
// undocumented DT compatibles, an absolute path in the changelog, a -p0
// diff, spelling and const structs. Non-short: reads the prepared 7.3
// tree and its cached package (offline: nothing is downloaded).
func TestCheckpatchKitSameFindings(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: extracts from the 7.3 package (~20 s)")
	}
	root := testenv.RepoRoot(t)
	lock, err := tree.LoadLock(filepath.Join(root, "series", "kernels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := lock.Find(lock.Checkpatch)
	if err != nil {
		t.Fatal(err)
	}
	_, full := testenv.KernelIfTested(t, k.Name)
	user := testenv.Cache()
	deb := user.Debian().DebPath(k.Debian)
	if _, err := os.Stat(deb); err != nil {
		testenv.Unavailable(t, "the package of "+k.Name+" is not cached: "+err.Error())
	}
	c := &tree.Cache{Dir: t.TempDir(), Progress: progress.New(os.Stderr), Offline: true}
	if err := os.MkdirAll(filepath.Join(c.Dir, "debs"), 0o755); err != nil {
		t.Fatal(err)
	}
	local := c.Debian().DebPath(k.Debian)
	if err := os.Link(deb, local); err != nil {
		if err := exec.Command("cp", deb, local).Run(); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	kit, err := c.CheckpatchFiles(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kit of %s extracted in %s", k.Name, time.Since(start).Round(time.Millisecond))
	if kit == c.PristineDir(k) || c.Prepared(k) {
		t.Fatalf("CheckpatchFiles prepared the whole tree (%s) instead of a kit", kit)
	}
	if again, err := c.CheckpatchFiles(context.Background(), k); err != nil || again != kit {
		t.Fatalf("second CheckpatchFiles = %q, %v; want the cached kit %s", again, err, kit)
	}

	patches, _ := filepath.Glob(filepath.Join(root, "series", "*", "*.patch"))
	seeds, _ := filepath.Glob(filepath.Join(root, "patches", "*", "*"))
	own, _ := filepath.Glob(filepath.Join("testdata", "checkpatch", "*.patch"))
	if len(patches) == 0 || len(seeds) == 0 || len(own) < 3 {
		t.Fatalf("patches: %d regenerated, %d seeds, %d own", len(patches), len(seeds), len(own))
	}
	patches = append(append(patches, seeds...), own...)
	if err := tree.StubNamed(kit, patches); err != nil {
		t.Fatal(err)
	}
	types := map[string]bool{}
	for _, p := range patches {
		abs, _ := filepath.Abs(p)
		want := checkpatch(t, full, abs)
		got := checkpatch(t, kit, abs)
		if got != want {
			t.Errorf("%s: checkpatch from the kit differs from the whole tree's:\nkit:\n%s\ntree:\n%s", p, got, want)
		}
		for _, l := range strings.Split(want, "\n") {
			if _, rest, ok := strings.Cut(l, ": WARNING:"); ok {
				types[strings.SplitN(rest, ":", 2)[0]] = true
			}
			if _, rest, ok := strings.Cut(l, ": ERROR:"); ok {
				types[strings.SplitN(rest, ":", 2)[0]] = true
			}
		}
	}
	// The patches reach every test that reads the tree, so the
	// comparison proves each of them.
	for _, ty := range []string{"OBSOLETE", "INCLUDE_LINUX", "UNDOCUMENTED_DT_STRING", "USE_RELATIVE_PATH", "PATCH_PREFIX", "TYPO_SPELLING", "CONST_STRUCT"} {
		if !types[ty] {
			t.Errorf("no patch reached checkpatch's %s test (types seen: %v)", ty, types)
		}
	}
}

// checkpatch runs dir's checkpatch.pl on patch as checks/checkpatch.go
// runs it.
func checkpatch(t *testing.T, dir, patch string) string {
	t.Helper()
	cmd := exec.Command("perl", filepath.Join(dir, "scripts", "checkpatch.pl"), "--terse", "--show-types", "--no-summary", "--color=never", patch)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		t.Fatalf("checkpatch.pl in %s on %s: %v\n%s", dir, patch, err, out)
	}
	return string(out)
}
