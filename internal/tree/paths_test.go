package tree

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
)

// hostileTree is a work tree whose pristine tree holds a symbolic link to a
// folder outside it (outside -> OUT), one to a folder inside it
// (inlink -> drivers/d0) and one to a file outside it (outfile -> OUT/target.txt).
func hostileTree(t *testing.T) (*WorkTree, string) {
	t.Helper()
	c := &Cache{Dir: t.TempDir()}
	k := &Kernel{Name: "fx", Git: &GitSource{URL: "none", Tag: "fixture"}}
	pristine := c.PristineDir(k)
	for i := 0; i < 8; i++ {
		p := filepath.Join(pristine, "drivers", fmt.Sprintf("d%d", i%4), fmt.Sprintf("f%d.c", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf("file %d\n", i)), 0o644)
	}
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "target.txt"), []byte("outside\n"), 0o644)
	os.Symlink(outside, filepath.Join(pristine, "outside"))
	os.Symlink("drivers/d0", filepath.Join(pristine, "inlink"))
	os.Symlink(filepath.Join(outside, "target.txt"), filepath.Join(pristine, "outfile"))
	os.WriteFile(c.markerPath(k), []byte(k.Key()+"\n"), 0o644)
	return hold(t, c, k), outside
}

// TestCommitHostilePaths: a change that would write outside the work tree
// or into its own state is an input error (exit 2) that names the path,
// made before anything changes: the tree, its state and every file
// outside it stay as they were, and the next honest change works.
func TestCommitHostilePaths(t *testing.T) {
	long := strings.Repeat("a", 300)
	deep := strings.Repeat("d/", 2100) + "f.c"
	cases := []struct {
		name string
		c    Change
		want string
	}{
		{"journal", Change{Path: ".patchctl/journal.json", Content: []byte("{}")}, ".patchctl"},
		{"state", Change{Path: ".patchctl/state.json", Delete: true}, ".patchctl"},
		{"meta as a file", Change{Path: ".patchctl", Content: []byte("x")}, ".patchctl"},
		{"file as a folder", Change{Path: "drivers/d0/f0.c/foo", Content: []byte("x")}, "is a file, not a folder"},
		{"through a link out", Change{Path: "outside/target.txt", Content: []byte("owned\n")}, "symbolic link"},
		{"new file through a link out", Change{Path: "outside/new.txt", Content: []byte("owned\n")}, "symbolic link"},
		{"delete through a link out", Change{Path: "outside/target.txt", Delete: true}, "symbolic link"},
		{"through a link in", Change{Path: "inlink/f0.c", Content: []byte("x")}, "symbolic link"},
		{"name of 300 bytes", Change{Path: "drivers/" + long, Content: []byte("x")}, "255"},
		{"folder of 300 bytes", Change{Path: long + "/f.c", Content: []byte("x")}, "255"},
		{"path of 6 KB", Change{Path: deep, Content: []byte("x")}, "4095"},
		{"dot dot", Change{Path: "drivers/../../escape.c", Content: []byte("x")}, "leaves the tree"},
		{"absolute", Change{Path: "/etc/passwd", Content: []byte("x")}, "absolute"},
		{"empty component", Change{Path: "drivers//d0/f0.c", Content: []byte("x")}, "empty component"},
		{"a folder as a file", Change{Path: "drivers/d0", Content: []byte("x")}, "is a folder"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wt, outside := hostileTree(t)
			before := hashTree(t, wt.Dir)
			out := hashTree(t, outside)
			st0, _ := os.ReadFile(wt.meta("state.json"))
			// An honest change with it: nothing of it may be written either.
			changes := []Change{{Path: "drivers/d1/f1.c", Content: []byte("honest\n")}, tc.c}
			err := wt.Commit(changes, State{Touched: []string{"x"}})
			if err == nil || !errors.Is(err, errs.ErrInput) || errs.Code(err) != errs.ExitInput {
				t.Fatalf("%s: got %v (exit %d), want an input error (exit 2)", tc.c.Path, err, errs.Code(err))
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("message %q does not say %q", err, tc.want)
			}
			if hashTree(t, wt.Dir) != before {
				t.Error("the work tree changed")
			}
			if hashTree(t, outside) != out {
				t.Error("a file outside the tree changed")
			}
			if st, _ := os.ReadFile(wt.meta("state.json")); string(st) != string(st0) {
				t.Error("the state changed")
			}
			if _, err := os.Stat(wt.meta("journal.json")); err == nil {
				t.Error("a journal was left")
			}
			if err := wt.Commit(changes[:1], State{Touched: []string{"drivers/d1/f1.c"}}); err != nil {
				t.Errorf("an honest change after the refusal: %v", err)
			}
		})
	}
	// Replacing a link itself (the last component) stays in the tree: the
	// link becomes a file, the file it pointed to is untouched.
	wt, outside := hostileTree(t)
	if err := wt.Commit([]Change{{Path: "outfile", Content: []byte("mine\n")}}, State{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "target.txt")); string(b) != "outside\n" {
		t.Errorf("the file the link pointed to changed: %q", b)
	}
	if st, err := os.Lstat(filepath.Join(wt.Dir, "outfile")); err != nil || !st.Mode().IsRegular() {
		t.Errorf("outfile is not a file of the tree now: %v", err)
	}
}

// TestGitApplyRefusesTheSame is the differential check of the rule for
// symbolic links and files on a path: git apply (the reference) refuses a
// patch that writes beyond a symbolic link, inside or out, or below a
// file, as the work tree does.
func TestGitApplyRefusesTheSame(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, p := range []string{"outside/new.txt", "inlink/new.c", "drivers/d0/f0.c/new"} {
		wt, _ := hostileTree(t)
		dir := t.TempDir()
		if out, err := exec.Command("cp", "-a", wt.Pristine+"/.", dir).CombinedOutput(); err != nil {
			t.Fatalf("%v %s", err, out)
		}
		exec.Command("git", "-C", dir, "init", "-q").Run()
		patch := "diff --git a/" + p + " b/" + p + "\nnew file mode 100644\n--- /dev/null\n+++ b/" + p + "\n@@ -0,0 +1 @@\n+x\n"
		cmd := exec.Command("git", "-C", dir, "apply", "-")
		cmd.Stdin = strings.NewReader(patch)
		gitOut, gitErr := cmd.CombinedOutput()
		ours := wt.Commit([]Change{{Path: p, Content: []byte("x\n")}}, State{})
		if (gitErr == nil) != (ours == nil) {
			t.Errorf("%s: git apply: %v %s; patchctl: %v", p, gitErr, gitOut, ours)
		}
	}
}
