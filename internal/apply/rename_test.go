package apply

import (
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/testenv"
)

// The rename/copy/mode differential test: a generated tree committed in
// a temporary git repository, random renames, copies, mode changes,
// edits, deletions and new files, the diff git writes for them (-M -C),
// then patchctl's result on the old tree against git apply's: the same
// files, the same bytes, the same executable bits. The same patch on the
// tree that has it is already-applied exactly when git apply -R --check
// takes it.

func TestRenameCopyModeGitApply(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		testenv.Unavailable(t, "git not installed")
	}
	seed, cases := propSeed(t, 31, 300, 60)
	r := rand.New(rand.NewSource(seed))
	disagree := 0
	kinds := map[string]int{}
	for i := 0; i < cases; i++ {
		why, ops := renameCase(t, r, i)
		for _, op := range ops {
			kinds[op]++
		}
		if why != "" {
			disagree++
			if disagree <= 10 {
				t.Errorf("seed %d case %d (%s): %s", seed, i, strings.Join(ops, ", "), why)
			}
		}
	}
	t.Logf("%d cases (%v), %d disagreements with git apply", cases, kinds, disagree)
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.org", "-c", "core.fileMode=true"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "ERROR " + err.Error() + ": " + string(out)
	}
	return string(out)
}

// snapshot is a folder's files: content and whether executable.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, _ := os.ReadFile(p)
		info, _ := d.Info()
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = fmt.Sprintf("%v|%s", info.Mode().Perm()&0o100 != 0, b)
		return nil
	})
	return out
}

func renameCase(t *testing.T, r *rand.Rand, n int) (string, []string) {
	repo, old := t.TempDir(), t.TempDir()
	files := map[string]bool{}
	var names []string
	for k := 0; k < 3+r.Intn(3); k++ {
		p := fmt.Sprintf("%s/r%d_%d.c", plainDirs[r.Intn(len(plainDirs))], n, k)
		var b strings.Builder
		for j := 0; j < 15+r.Intn(20); j++ {
			fmt.Fprintf(&b, "\tline(%d, %d, %d);\n", n, k, j)
		}
		mode := os.FileMode(0o644)
		if r.Intn(4) == 0 {
			mode = 0o755
		}
		for _, d := range []string{repo, old} {
			os.MkdirAll(filepath.Join(d, filepath.Dir(p)), 0o755)
			os.WriteFile(filepath.Join(d, p), []byte(b.String()), mode)
			os.Chmod(filepath.Join(d, p), mode)
		}
		files[p] = true
		names = append(names, p)
	}
	if out := gitIn(t, repo, "init", "-q"); strings.HasPrefix(out, "ERROR") {
		t.Fatal(out)
	}
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "-qm", "base")
	editFile := func(p string) {
		fp := filepath.Join(repo, p)
		b, _ := os.ReadFile(fp)
		lines := splitLines(b)
		i := r.Intn(len(lines))
		lines[i] = fmt.Sprintf("\tedited(%d);\n", r.Intn(1000))
		info, _ := os.Stat(fp)
		os.WriteFile(fp, []byte(strings.Join(lines, "")), info.Mode().Perm())
	}
	pick := func() string {
		var live []string
		for _, p := range names {
			if files[p] {
				live = append(live, p)
			}
		}
		sort.Strings(live)
		if len(live) == 0 {
			return ""
		}
		return live[r.Intn(len(live))]
	}
	var ops []string
	for k := 0; k < 1+r.Intn(3); k++ {
		p := pick()
		if p == "" {
			break
		}
		to := fmt.Sprintf("%s/moved%d_%d.c", plainDirs[r.Intn(len(plainDirs))], n, k)
		switch r.Intn(7) {
		case 0, 1:
			os.MkdirAll(filepath.Join(repo, filepath.Dir(to)), 0o755)
			if err := os.Rename(filepath.Join(repo, p), filepath.Join(repo, to)); err != nil {
				t.Fatal(err)
			}
			files[p], files[to] = false, true
			names = append(names, to)
			op := "rename"
			if r.Intn(2) == 0 {
				editFile(to)
				op += "+edit"
			}
			if r.Intn(3) == 0 {
				info, _ := os.Stat(filepath.Join(repo, to))
				os.Chmod(filepath.Join(repo, to), info.Mode().Perm()^0o111)
				op += "+mode"
			}
			ops = append(ops, op)
		case 2:
			os.MkdirAll(filepath.Join(repo, filepath.Dir(to)), 0o755)
			b, _ := os.ReadFile(filepath.Join(repo, p))
			info, _ := os.Stat(filepath.Join(repo, p))
			os.WriteFile(filepath.Join(repo, to), b, info.Mode().Perm())
			files[to] = true
			names = append(names, to)
			op := "copy"
			if r.Intn(2) == 0 {
				editFile(to)
				op += "+edit"
			}
			ops = append(ops, op)
		case 3:
			info, _ := os.Stat(filepath.Join(repo, p))
			os.Chmod(filepath.Join(repo, p), info.Mode().Perm()^0o111)
			op := "mode"
			if r.Intn(2) == 0 {
				editFile(p)
				op += "+edit"
			}
			ops = append(ops, op)
		case 4:
			editFile(p)
			ops = append(ops, "edit")
		case 5:
			os.Remove(filepath.Join(repo, p))
			files[p] = false
			ops = append(ops, "delete")
		case 6:
			os.MkdirAll(filepath.Join(repo, filepath.Dir(to)), 0o755)
			os.WriteFile(filepath.Join(repo, to), []byte("\tnew();\n\tfile();\n"), 0o755)
			files[to] = true
			names = append(names, to)
			ops = append(ops, "new executable")
		}
	}
	gitIn(t, repo, "add", "-A")
	diff := gitIn(t, repo, "diff", "--cached", "-M", "-C", "-C", "HEAD")
	if strings.HasPrefix(diff, "ERROR") || diff == "" {
		return "", append(ops, "no change")
	}
	after := snapshot(t, repo)

	mail := "From: Jane Doe <jane@example.org>\nSubject: [PATCH] foo: move\n\nMoves.\n\nSigned-off-by: Jane Doe <jane@example.org>\n---\n" + diff
	ps, err := mailpatch.ImportBytes("t.patch", []byte(mail), "t", mailpatch.Options{})
	if err != nil {
		return fmt.Sprintf("import: %v\n%s", err, diff), ops
	}
	res, err := Series(DirTree(old), []series.Entry{{Source: "patches/t/x.patch", Expect: series.Applies}}, ps)
	if err != nil {
		return "apply: " + err.Error(), ops
	}
	if d := res.Results[0].Disposition; !series.IsApplied(d) {
		return fmt.Sprintf("disposition %s (hunks %+v), git apply applies it\n%s", d, res.Results[0].Hunks, diff), ops
	}
	ours := snapshot(t, old)
	for p, c := range res.Files {
		if c == nil {
			delete(ours, p)
			continue
		}
		ours[p] = fmt.Sprintf("%v|%s", res.Modes[p]&0o100 != 0, c)
	}
	var diffs []string
	for p, want := range after {
		if got, ok := ours[p]; !ok {
			diffs = append(diffs, p+" missing")
		} else if got != want {
			diffs = append(diffs, fmt.Sprintf("%s: exec/content %.5s, git apply %.5s", p, got, want))
		}
	}
	for p := range ours {
		if _, ok := after[p]; !ok {
			diffs = append(diffs, p+" left behind (git apply removes it)")
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		return strings.Join(diffs, "; ") + "\n" + diff, ops
	}
	// On the tree that has it: already-applied exactly when git apply -R
	// --check takes the patch. (git apply -R turns a copy into a copy
	// onto an existing file and refuses it: there the copy, its bytes
	// and mode there are the oracle.)
	if strings.Contains(diff, "\ncopy from ") {
		again, err := Series(DirTree(repo), []series.Entry{{Source: "patches/t/x.patch", Expect: series.Applies}}, ps)
		if err != nil {
			return "apply again: " + err.Error(), ops
		}
		if d := again.Results[0].Disposition; d != series.AlreadyApplied {
			return fmt.Sprintf("on the patched tree: %s (hunks %+v), want already-applied\n%s", d, again.Results[0].Hunks, diff), ops
		}
		return "", ops
	}
	pf := filepath.Join(t.TempDir(), "p.diff")
	os.WriteFile(pf, []byte(diff), 0o644)
	revOK := !strings.HasPrefix(gitIn(t, repo, "apply", "-R", "--check", pf), "ERROR")
	again, err := Series(DirTree(repo), []series.Entry{{Source: "patches/t/x.patch", Expect: series.Applies}}, ps)
	if err != nil {
		return "apply again: " + err.Error(), ops
	}
	if d := again.Results[0].Disposition; (d == series.AlreadyApplied) != revOK {
		return fmt.Sprintf("on the patched tree: %s, git apply -R --check ok=%v\n%s", d, revOK, diff), ops
	}
	return "", ops
}
