package apply

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/testenv"
)

// TestNewFileExistsGNU: a patch creates a file the tree already has (the
// same bytes, others, empty, what it creates with lines around it or one
// changed). GNU patch 2.7.6 says "which already exists! Assuming -R" and
// tries the reverse: the reverse applies (previously applied), fails
// (conflict), or the file is empty and the patch creates onto it
// (applies). patchctl's disposition must be the same.
func TestNewFileExistsGNU(t *testing.T) {
	if _, err := exec.LookPath("patch"); err != nil {
		testenv.Unavailable(t, "GNU patch not installed")
	}
	seed, cases := propSeed(t, 8, 200, 80)
	r := rand.New(rand.NewSource(seed))
	kinds := []string{"same", "other", "empty", "grown at end", "grown at start", "inside", "one line changed", "one line gone"}
	disagree, seen := 0, map[string]int{}
	for i := 0; i < cases; i++ {
		var created []string
		for j := 0; j < 2+r.Intn(8); j++ {
			created = append(created, fmt.Sprintf("\tcreated(%d, %d);", i, j))
		}
		kind := kinds[r.Intn(len(kinds))]
		extra := []string{"/* x */", "/* y */"}
		var have []string
		switch kind {
		case "same":
			have = created
		case "other":
			have = extra
		case "empty":
		case "grown at end":
			have = append(append([]string{}, created...), extra...)
		case "grown at start":
			have = append(append([]string{}, extra...), created...)
		case "inside":
			have = append(append(append([]string{}, extra...), created...), extra...)
		case "one line changed":
			have = append([]string{}, created...)
			have[r.Intn(len(have))] += " /* changed */"
		case "one line gone":
			k := r.Intn(len(created))
			have = append(append([]string{}, created[:k]...), created[k+1:]...)
		}
		content := ""
		if len(have) > 0 {
			content = join(have)
		}
		body := fmt.Sprintf("@@ -0,0 +1,%d @@\n", len(created))
		for _, l := range created {
			body += "+" + l + "\n"
		}
		text := "From: Jane Doe <jane@example.org>\nSubject: [PATCH] foo: new file\n\nNew.\n\nSigned-off-by: Jane Doe <jane@example.org>\n---\n" +
			"diff --git a/drivers/foo/new.c b/drivers/foo/new.c\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/drivers/foo/new.c\n" + body
		p := mustPatch(t, text)
		res, err := Series(memTree{"drivers/foo/new.c": content}, []series.Entry{{Source: "patches/t/x.patch", Expect: series.Applies}}, mustPatches(p))
		if err != nil {
			t.Fatal(err)
		}
		got := res.Results[0].Disposition
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "drivers/foo"), 0o755)
		os.WriteFile(filepath.Join(dir, "drivers/foo/new.c"), []byte(content), 0o644)
		pf := filepath.Join(t.TempDir(), "p.diff")
		os.WriteFile(pf, []byte(p.Diff), 0o644)
		out, _ := exec.Command("patch", "-p1", "--batch", "--dry-run", "-d", dir, "-i", pf).CombinedOutput()
		want := series.Applies
		switch {
		case strings.Contains(string(out), "FAILED"):
			want = series.Conflict
		case strings.Contains(string(out), "Assuming -R"):
			want = series.AlreadyApplied
		}
		seen[kind+": "+want]++
		// already-upstream is patchctl's kind of conflict: most of what
		// the patch adds is in the tree (GNU patch has no such word).
		if got != want && !(got == series.AlreadyUpstream && want == series.Conflict) {
			disagree++
			if disagree <= 10 {
				t.Errorf("case %d (%s): %s, GNU patch says %s:\n%s", i, kind, got, want, out)
			}
		}
	}
	t.Logf("%d cases (%v), %d disagreements with GNU patch", cases, seen, disagree)
}

func mustPatches(p ...*mailpatch.Patch) []*mailpatch.Patch { return p }
