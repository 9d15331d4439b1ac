package apply

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// The plain-diff differential test: files in a generated tree, edits and
// drift as in the property test, the diff written in one of the forms
// mail carries without a "diff --git" line (a/ b/, no prefix, a release
// folder, quilt's dir.orig/ and dir/, "diff -u -p" and "diff --"
// command lines, Index: lines, timestamps), and patchctl (strip level
// found from the tree) against GNU patch 2.7.6 run with the -p the form
// needs: the same file names, each hunk found or not alike (offset,
// fuzz, reversed), the same bytes.

// plainForm writes a file header for path; strip is the -p it needs.
type plainForm struct {
	name  string
	strip int
	head  func(path string) string
}

const stamp1, stamp2 = "2026-06-01 10:00:00.000000000 +0000", "2026-06-02 11:30:00.000000000 +0000"

var plainForms = []plainForm{
	{"a/ b/", 1, func(p string) string { return "--- a/" + p + "\n+++ b/" + p + "\n" }},
	{"no prefix", 0, func(p string) string { return "--- " + p + "\n+++ " + p + "\n" }},
	{"release folder", 1, func(p string) string {
		return "--- linux-next-20260601/" + p + "\t" + stamp1 + "\n+++ linux-next-20260601/" + p + "\t" + stamp2 + "\n"
	}},
	{"quilt dir.orig/ dir/", 1, func(p string) string {
		return "--- linux-6.12.orig/" + p + "\n+++ linux-6.12/" + p + "\n"
	}},
	{"diff -u -p", 1, func(p string) string {
		return "diff -u -p a/" + p + " b/" + p + "\n--- a/" + p + "\t" + stamp1 + "\n+++ b/" + p + "\t" + stamp2 + "\n"
	}},
	{"diff --", 1, func(p string) string {
		return "diff --unified --recursive old/" + p + " new/" + p + "\n--- old/" + p + "\n+++ new/" + p + "\n"
	}},
	{"Index:", 0, func(p string) string {
		return "Index: " + p + "\n===================================================================\n--- " + p + "\t(revision 1)\n+++ " + p + "\t(working copy)\n"
	}},
	{"two levels", 2, func(p string) string { return "--- src/a/" + p + "\n+++ src/b/" + p + "\n" }},
}

// blankContext is a blank context line of a unified diff.
var blankContext = regexp.MustCompile(`(?m)^ $`)

var plainDirs = []string{"drivers/foo", "drivers/foo/core", "include/linux", "lib"}

func TestPlainDiffsGNU(t *testing.T) {
	if _, err := exec.LookPath("patch"); err != nil {
		testenv.Unavailable(t, "GNU patch not installed")
	}
	seed, cases := propSeed(t, 24, 1200, 300)
	r := rand.New(rand.NewSource(seed))
	alphabet := []string{"{\n", "}\n", "\n", "\tint x;\n", "\treturn 0;\n", "\tx++;\n"}
	gen := func(n int) []string {
		lines := make([]string, 30+r.Intn(50))
		for j := range lines {
			if r.Intn(3) == 0 {
				lines[j] = alphabet[r.Intn(len(alphabet))]
			} else {
				lines[j] = fmt.Sprintf("\tcall(%d, %d);\n", n, j)
			}
		}
		return lines
	}
	var real []string
	pristine := ""
	if !testing.Short() {
		if k, dir := testenv.Kernel(t, testkernel.Default); k != nil {
			pristine, real = dir, propFiles(t, dir)
		}
	}
	disagree, stripped, perForm := 0, 0, map[string]int{}
	for i := 0; i < cases; i++ {
		form := plainForms[r.Intn(len(plainForms))]
		perForm[form.name]++
		tree := memTree{}
		var diff strings.Builder
		var want []string
		nFiles := 1 + r.Intn(3)
		for k := 0; k < nFiles; k++ {
			path := fmt.Sprintf("%s/f%d_%d.c", plainDirs[r.Intn(len(plainDirs))], i, k)
			var lines []string
			if len(real) > 0 && r.Intn(2) == 0 {
				src := real[r.Intn(len(real))]
				b, err := os.ReadFile(filepath.Join(pristine, src))
				if err != nil {
					t.Fatal(err)
				}
				// Non-ASCII context (a "©") can be refused by import's
				// entity check without a tree: not this test's question.
				if _, dup := tree[src]; !dup && isASCII(b) {
					path, lines = src, splitLines(b)
				}
			}
			if lines == nil {
				lines = gen(i*10 + k)
			}
			c := genCase(r, i, path, lines)
			body := c.diff[strings.Index(c.diff, "\n@@ ")+1:]
			tree[path] = strings.Join(c.target, "")
			diff.WriteString(form.head(path) + body)
			want = append(want, path)
		}
		text := diff.String()
		if r.Intn(4) == 0 {
			// A mailer that trims trailing white space: each blank
			// context line loses its space (an empty line, which GNU
			// patch reads as context), the last line of the mail too.
			text = blankContext.ReplaceAllString(text, "")
			stripped++
		}
		if why := comparePlain(t, tree, text, form, want); why != "" {
			disagree++
			if disagree <= 10 {
				t.Errorf("seed %d case %d (%s): %s", seed, i, form.name, why)
			}
		}
	}
	t.Logf("%d plain diffs (%v; %d with blank context lines stripped to empty lines), %d disagreements with GNU patch", cases, perForm, stripped, disagree)
}

// comparePlain applies diff to tree with patchctl and GNU patch.
func comparePlain(t *testing.T, tree memTree, diff string, form plainForm, want []string) string {
	mail := "From: Jane Doe <jane@example.org>\nSubject: [PATCH] foo: plain\n\nA plain diff.\n\nSigned-off-by: Jane Doe <jane@example.org>\n---\n" + diff
	ps, err := mailpatch.ImportBytes("t.patch", []byte(mail), "t", mailpatch.Options{})
	if err != nil {
		return fmt.Sprintf("import: %v\n%s", err, diff)
	}
	res, err := Series(tree, []series.Entry{{Source: "patches/t/x.patch", Expect: series.Applies}}, ps)
	if err != nil {
		return fmt.Sprintf("apply: %v", err)
	}
	ours := res.Results[0]
	if ours.Strip == nil || *ours.Strip != form.strip {
		return fmt.Sprintf("strip level %v, the form needs -p%d", ours.Strip, form.strip)
	}
	dir := t.TempDir()
	for p, c := range tree {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644)
	}
	pf := filepath.Join(t.TempDir(), "p.diff")
	os.WriteFile(pf, []byte(diff), 0o644)
	cmd := exec.Command("patch", "-p"+strconv.Itoa(form.strip), "--batch", "--forward", "--no-backup-if-mismatch", "-r", "-", "-d", dir, "-i", pf)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, _ := cmd.CombinedOutput()
	gnu := parseGNU(string(out))
	for k, f := range ps[0].Files {
		name := firstNonEmpty(f.NewName, f.OldName)
		if name != want[k] {
			return fmt.Sprintf("file %d named %q, want %q", k+1, name, want[k])
		}
		g := gnu[name]
		if g == nil {
			return fmt.Sprintf("GNU patch did not patch %s:\n%s", name, out)
		}
		var hs []Hunk
		for _, h := range ours.Hunks {
			if h.File == name {
				hs = append(hs, h)
			}
		}
		if len(hs) == 0 {
			return "no hunks reported for " + name
		}
		if hs[0].Reversed != g.reversed {
			return fmt.Sprintf("%s: reversed %v, GNU patch %v\n%s", name, hs[0].Reversed, g.reversed, out)
		}
		if g.reversed {
			continue
		}
		for i, h := range hs {
			if i > 0 && h.Reversed {
				break // a later hunk already there: GNU patch does not look (deliberate)
			}
			gh, said := g.hunks[i+1]
			if !said {
				gh = gnuHunkResult{ok: true}
			}
			if h.Applied != gh.ok {
				return fmt.Sprintf("%s hunk %d: applied %v, GNU patch %+v\n%s", name, i+1, h.Applied, gh, out)
			}
			if h.Applied && (int(h.Offset) != gh.offset || h.Fuzz != gh.fuzz) {
				return fmt.Sprintf("%s hunk %d: offset %d fuzz %d, GNU patch offset %d fuzz %d", name, i+1, h.Offset, h.Fuzz, gh.offset, gh.fuzz)
			}
		}
	}
	if ours.Disposition == series.Applies || ours.Disposition == series.AppliesOffset || ours.Disposition == series.AppliesFuzz {
		for p, c := range res.Files {
			got, _ := os.ReadFile(filepath.Join(dir, p))
			if !bytes.Equal(got, c) {
				return fmt.Sprintf("%s: the files differ", p)
			}
		}
	}
	return ""
}

// parseGNU reads GNU patch's report per file.
func parseGNU(out string) map[string]*gnuFile {
	res := map[string]*gnuFile{}
	var cur *gnuFile
	for _, l := range strings.Split(out, "\n") {
		if m := gnuPatching.FindStringSubmatch(l); m != nil {
			cur = &gnuFile{hunks: map[int]gnuHunkResult{}}
			res[m[1]] = cur
			continue
		}
		if cur == nil {
			continue
		}
		cur.log += l + "\n"
		switch {
		case strings.HasPrefix(l, "Reversed (or previously applied) patch detected!"):
			cur.reversed = true
		case gnuSucceeded.MatchString(l):
			m := gnuSucceeded.FindStringSubmatch(l)
			n, _ := strconv.Atoi(m[1])
			at, _ := strconv.Atoi(m[2])
			fz, _ := strconv.Atoi(m[3])
			off, _ := strconv.Atoi(m[4])
			cur.hunks[n] = gnuHunkResult{ok: true, line: at, fuzz: fz, offset: off}
		case gnuFailed.MatchString(l):
			m := gnuFailed.FindStringSubmatch(l)
			n, _ := strconv.Atoi(m[1])
			cur.hunks[n] = gnuHunkResult{failed: true}
		}
	}
	return res
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
