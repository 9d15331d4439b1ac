package checks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeCheckpatchTree makes a tree whose scripts/checkpatch.pl (perl)
// reports one finding of the given severity naming the tree.
func fakeCheckpatchTree(t *testing.T, name, sev string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	for _, d := range append([]string{"scripts"}, DefaultPaths...) {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := `my $p = $ARGV[-1]; print "$p:3: ` + sev + `:BAD_SIGN_OFF: judged by ` + name + `\n"; exit 1;` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "scripts", "checkpatch.pl"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCheckpatchTree: with CheckpatchTree set, that tree's checkpatch.pl
// judges the patches (the lock's checkpatch kernel), not the checked
// tree's own.
func TestCheckpatchTree(t *testing.T) {
	old := fakeCheckpatchTree(t, "old", "ERROR")
	mainline := fakeCheckpatchTree(t, "mainline", "WARNING")
	patch := filepath.Join(t.TempDir(), "0001-x.patch")
	os.WriteFile(patch, []byte("Subject: [PATCH] x\n\nAssisted-by: LLM\n---\n"), 0o644)
	for _, c := range []struct {
		cp, judge, sev string
	}{{"", "old", SevError}, {mainline, "mainline", SevWarning}} {
		rep, err := Run(Options{Tree: old, Paths: []string{"drivers/nvme"}, Patches: []string{patch}, CheckpatchTree: c.cp})
		if err != nil {
			t.Fatal(err)
		}
		var got []Finding
		for _, f := range rep.Findings {
			if f.Rule == RuleCheckpatch {
				got = append(got, f)
			}
		}
		if len(got) != 1 || !strings.Contains(got[0].Message, "judged by "+c.judge) || got[0].Severity != c.sev {
			t.Errorf("CheckpatchTree %q: findings %+v, want one %s judged by %s", c.cp, got, c.sev, c.judge)
		}
	}
}
