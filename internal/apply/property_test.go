package apply

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// The apply property test: real files of the prepared 6.12 tree, a random
// edit, its unified diff, then drift of the file the diff is applied to
// (lines inserted or deleted above, context changed near a hunk, the edit
// already applied, hunks at the start or end of the file, the file grown
// at its ends), and patchctl's locator against GNU patch 2.7.6 on every
// hunk: success, landing line, fuzz, "reversed", and the resulting bytes.
// GNU patch runs once per batch of cases (one patch file for many files).
//
// PATCHCTL_PROP_SEED repeats a run, PATCHCTL_PROP_CASES sets its size. A
// disagreement fails the test and writes the case (target file, patch,
// both outputs) for reproduction.

// propDirs are where the files come from.
var propDirs = []string{"drivers/infiniband/core", "drivers/infiniband/sw/rxe", "drivers/nvme/host", "drivers/nvme/target", "net/rds", "net/smc", "lib"}

type propEdit struct {
	at  int      // 0-based index of the first replaced line (or of the line inserted before)
	del int      // lines removed
	ins []string // lines added
}

type propCase struct {
	n      int
	path   string // in the batch tree: caseNNNN/<name>
	source string // the tree file
	orig   []string
	target []string
	diff   string // unified diff of orig → edited, paths a/<path> b/<path>
	drift  string
}

func TestApplyPropertyGNU(t *testing.T) {
	if _, err := exec.LookPath("patch"); err != nil {
		testenv.Unavailable(t, "GNU patch not installed")
	}
	_, pristine := testenv.Kernel(t, testkernel.Default)
	seed, cases := propSeed(t, 20261201, 3000, 400)

	files := propFiles(t, pristine)
	r := rand.New(rand.NewSource(seed))
	contents := map[string][]string{}
	var all []*propCase
	for i := 0; i < cases; i++ {
		src := files[r.Intn(len(files))]
		lines, ok := contents[src]
		if !ok {
			b, err := os.ReadFile(filepath.Join(pristine, src))
			if err != nil {
				t.Fatal(err)
			}
			lines = splitLines(b)
			contents[src] = lines
		}
		all = append(all, genCase(r, i, src, lines))
	}

	checkProperty(t, seed, all)
}

// propSeed is the seed and number of cases of a property run: fixed
// unless PATCHCTL_PROP_SEED names one (or "random": a new one each run,
// for exploring; `make fuzz` does), PATCHCTL_PROP_CASES a count.
func propSeed(t *testing.T, fixed int64, cases, short int) (int64, int) {
	t.Helper()
	seed := fixed
	switch s := os.Getenv("PATCHCTL_PROP_SEED"); s {
	case "":
	case "random":
		seed = time.Now().UnixNano() % 1_000_000_007
	default:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("PATCHCTL_PROP_SEED=%q: not a number or \"random\"", s)
		}
		seed = n
	}
	if testing.Short() {
		cases = short
	}
	if s := os.Getenv("PATCHCTL_PROP_CASES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("PATCHCTL_PROP_CASES=%q: not a positive number", s)
		}
		cases = n
	}
	t.Logf("%s: seed %d, %d cases (PATCHCTL_PROP_SEED=%d to repeat)", t.Name(), seed, cases, seed)
	return seed, cases
}

// TestApplyPropertyGNUSynthetic is the property test on files made of a
// few distinct lines, without a tree: every context recurs, so hunks
// land on each other's context, at other copies of themselves and
// below frozen lines far more often than in real code.
func TestApplyPropertyGNUSynthetic(t *testing.T) {
	if _, err := exec.LookPath("patch"); err != nil {
		testenv.Unavailable(t, "GNU patch not installed")
	}
	seed, cases := propSeed(t, 7, 3000, 3000)
	r := rand.New(rand.NewSource(seed))
	alphabet := []string{"{\n", "}\n", "\n", "\tint x;\n", "\treturn 0;\n", "\tx++;\n"}
	var all []*propCase
	for i := 0; i < cases; i++ {
		n := 20 + r.Intn(60)
		k := 2 + r.Intn(len(alphabet)-1)
		lines := make([]string, n)
		for j := range lines {
			lines[j] = alphabet[r.Intn(k)]
		}
		if r.Intn(4) == 0 {
			// A file whose last line has no newline: EOF hunks carry
			// "\ No newline at end of file".
			lines[n-1] = strings.TrimSuffix(lines[n-1], "\n") + "/* end */"
		}
		all = append(all, genCase(r, i, fmt.Sprintf("synthetic%d.c", i), lines))
	}
	checkProperty(t, seed, all)
}

// checkProperty runs GNU patch on the cases in batches and compares each
// with patchctl's locator; any disagreement fails t.
func checkProperty(t *testing.T, seed int64, all []*propCase) {
	t.Helper()
	const batch = 250
	type verdict struct {
		disagree []string
		kinds    map[string]int
	}
	results := make([]verdict, (len(all)+batch-1)/batch)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for b := 0; b*batch < len(all); b++ {
		wg.Add(1)
		go func(b int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			part := all[b*batch : min((b+1)*batch, len(all))]
			gnu, err := runGNUBatch(part)
			v := verdict{kinds: map[string]int{}}
			if err != nil {
				v.disagree = append(v.disagree, err.Error())
				results[b] = v
				return
			}
			// GNU patch -R: where the reverse of each hunk is found.
			rev, err := runGNUBatch(part, "-R")
			if err != nil {
				v.disagree = append(v.disagree, err.Error())
				results[b] = v
				return
			}
			regen := map[*propCase]string{}
			for _, c := range part {
				kind, why := compareCase(c, gnu[c.path], rev[c.path])
				v.kinds[kind]++
				if strings.Contains(c.diff, "\n\\ No newline at end of file") {
					v.kinds["(of which hunks at an end of file without newline)"]++
				}
				if why != "" {
					v.disagree = append(v.disagree, fmt.Sprintf("case %d (%s, %s): %s\n  reproduce: %s", c.n, c.source, c.drift, why, writeRepro(seed, c, gnu[c.path])))
				}
				if strings.HasPrefix(kind, "applies") {
					d, err := regenDiff(c)
					if err != nil {
						v.disagree = append(v.disagree, fmt.Sprintf("case %d: regenerating: %v", c.n, err))
					}
					regen[c] = d
				}
			}
			// refresh's property: every regenerated patch passes git
			// apply --check on the file it was made for.
			bad, err := runGitCheck(regen)
			if err != nil {
				v.disagree = append(v.disagree, err.Error())
			}
			for _, c := range bad {
				dir := writeRepro(seed, c, gnu[c.path])
				os.WriteFile(filepath.Join(dir, "regenerated.patch"), []byte(regen[c]), 0o644)
				v.disagree = append(v.disagree, fmt.Sprintf("case %d (%s, %s): git apply --check refuses the regenerated patch (reproduce: cd %s/tree && git apply --check ../regenerated.patch):\n%s", c.n, c.source, c.drift, dir, regen[c]))
			}
			v.kinds["regenerated, git apply --check ok"] += len(regen) - len(bad)
			results[b] = v
		}(b)
	}
	wg.Wait()
	kinds := map[string]int{}
	var disagree []string
	for _, v := range results {
		for k, n := range v.kinds {
			kinds[k] += n
		}
		disagree = append(disagree, v.disagree...)
	}
	var ks []string
	for k, n := range kinds {
		ks = append(ks, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(ks)
	t.Logf("outcomes: %s", strings.Join(ks, ", "))
	if len(disagree) > 0 {
		if len(disagree) > 20 {
			disagree = append(disagree[:20], fmt.Sprintf("... and %d more", len(disagree)-20))
		}
		t.Errorf("seed %d: %d disagreements with GNU patch:\n%s", seed, len(disagree), strings.Join(disagree, "\n"))
	}
}

// propFiles lists the C files of propDirs between 40 lines and 80 KB.
func propFiles(t *testing.T, root string) []string {
	var out []string
	for _, d := range propDirs {
		ents, err := os.ReadDir(filepath.Join(root, d))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			n := e.Name()
			if !e.Type().IsRegular() || !(strings.HasSuffix(n, ".c") || strings.HasSuffix(n, ".h")) {
				continue
			}
			if info, err := e.Info(); err != nil || info.Size() > 80<<10 || info.Size() < 1500 {
				continue
			}
			out = append(out, d+"/"+n)
		}
	}
	sort.Strings(out)
	if len(out) < 20 {
		t.Fatalf("only %d files found under %v", len(out), propDirs)
	}
	return out
}

// genCase makes one edit (one to three hunks) and one drift.
func genCase(r *rand.Rand, n int, src string, lines []string) *propCase {
	c := &propCase{n: n, source: src, orig: lines, path: fmt.Sprintf("case%05d/%s", n, filepath.Base(src))}
	L := len(lines)
	noEOL := L > 0 && !strings.HasSuffix(lines[L-1], "\n")
	// Where the edits go: anywhere, or at the start or end of the file.
	var edits []propEdit
	nEdits := 1 + r.Intn(3)
	place := r.Intn(6)
	for k := 0; k < nEdits; k++ {
		var at int
		switch {
		case place == 0 && k == 0:
			at = r.Intn(3) // near the start
		case place == 1 && k == nEdits-1:
			at = L - 1 - r.Intn(3) // near the end
		default:
			at = r.Intn(L)
		}
		e := propEdit{at: at}
		switch r.Intn(4) {
		case 0: // insert
		case 1: // delete
			e.del = 1 + r.Intn(2)
		default: // replace
			e.del = 1 + r.Intn(3)
		}
		if e.del == 0 || r.Intn(3) > 0 {
			for j := 1 + r.Intn(3); j > 0; j-- {
				if r.Intn(3) == 0 && L > 0 {
					e.ins = append(e.ins, strings.TrimSuffix(lines[r.Intn(L)], "\n")+"\n") // a real line: ambiguity
				} else {
					e.ins = append(e.ins, fmt.Sprintf("\tpatchctl_prop(%d, %d);\n", n, j))
				}
			}
		}
		if place == 1 && k == nEdits-1 && r.Intn(2) == 0 && !noEOL {
			e.at, e.del = L, 0 // append at the very end
			if len(e.ins) == 0 {
				e.ins = []string{"/* appended */\n"}
			}
		}
		e.del = min(e.del, L-min(e.at, L))
		if noEOL && e.at+e.del >= L-1 {
			// The last line (no newline) stays: edits end before it, so
			// hunks carry it as context with "\ No newline at end of file".
			e.at, e.del = max(min(e.at, L-2), 0), 0
			if len(e.ins) == 0 {
				e.ins = []string{"/* before the end */\n"}
			}
		}
		edits = append(edits, e)
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].at < edits[j].at })
	// Keep edits apart (8 lines) so each is its own hunk or merges cleanly.
	var kept []propEdit
	for _, e := range edits {
		if len(kept) > 0 {
			p := kept[len(kept)-1]
			if e.at < p.at+p.del+1 {
				continue
			}
		}
		kept = append(kept, e)
	}
	edited := applyEdits(lines, kept)
	c.diff = unifiedDiff(c.path, lines, edited, kept)

	// Drift the target.
	target := append([]string(nil), lines...)
	hunkLo, hunkHi := kept[0].at, kept[len(kept)-1].at+kept[len(kept)-1].del
	var drift []string
	switch r.Intn(12) {
	case 0:
		drift = append(drift, "none")
	case 1, 2: // lines inserted above
		k := 1 + r.Intn(40)
		at := r.Intn(hunkLo + 1)
		ins := make([]string, k)
		for i := range ins {
			ins[i] = fmt.Sprintf("/* drift %d */\n", i)
		}
		target = append(append(append([]string(nil), target[:at]...), ins...), target[at:]...)
		drift = append(drift, fmt.Sprintf("%d lines inserted at %d", k, at+1))
	case 3: // lines deleted above
		if hunkLo > 5 {
			at := r.Intn(hunkLo - 4)
			k := 1 + r.Intn(min(10, hunkLo-at-1))
			target = append(append([]string(nil), target[:at]...), target[at+k:]...)
			drift = append(drift, fmt.Sprintf("%d lines deleted at %d", k, at+1))
		} else {
			drift = append(drift, "none")
		}
	case 4, 5: // context changed near a hunk
		e := kept[r.Intn(len(kept))]
		var near []int
		for i := e.at - 4; i <= e.at+e.del+3; i++ {
			if i >= 0 && i < len(target) && (i < e.at || i >= e.at+e.del) {
				near = append(near, i)
			}
		}
		if len(near) > 0 {
			i := near[r.Intn(len(near))]
			target[i] = strings.TrimSuffix(target[i], "\n") + " /* drift */\n"
			drift = append(drift, fmt.Sprintf("line %d changed", i+1))
		} else {
			drift = append(drift, "none")
		}
	case 6: // already applied
		target = append([]string(nil), edited...)
		drift = append(drift, "already applied")
		if r.Intn(2) == 0 {
			i := r.Intn(len(target))
			target[i] = strings.TrimSuffix(target[i], "\n") + " /* drift */\n"
			drift = append(drift, fmt.Sprintf("line %d changed", i+1))
		}
	case 7: // the file grew or shrank at its ends
		if r.Intn(2) == 0 {
			target = append(target, "/* grown 1 */\n", "/* grown 2 */\n")
			drift = append(drift, "2 lines appended")
		} else {
			target = append([]string{"/* grown 1 */\n", "/* grown 2 */\n"}, target...)
			drift = append(drift, "2 lines prepended")
		}
	case 8: // half applied: the last hunk only
		last := kept[len(kept)-1]
		target = applyEdits(lines, []propEdit{last})
		drift = append(drift, "last hunk already applied")
	case 9, 10: // already applied, moved, and a later hunk's lines edited since
		target = append([]string(nil), edited...)
		drift = append(drift, "already applied")
		if k := r.Intn(30); k > 0 {
			at := r.Intn(kept[0].at + 1)
			ins := make([]string, k)
			for i := range ins {
				ins[i] = fmt.Sprintf("/* moved %d */\n", i)
			}
			target = append(append(append([]string(nil), target[:at]...), ins...), target[at:]...)
			drift = append(drift, fmt.Sprintf("%d lines inserted at %d", k, at+1))
		}
		if len(target) > 0 && r.Intn(3) > 0 {
			// An added line of the last edit changed: its reverse is
			// found nowhere (or only with fuzz).
			e := kept[len(kept)-1]
			shift := len(target) - len(edited)
			for _, x := range kept[:len(kept)-1] {
				shift += len(x.ins) - x.del
			}
			i := min(max(e.at+shift+r.Intn(len(e.ins)+1), 0), len(target)-1)
			target[i] = strings.TrimSuffix(target[i], "\n") + " /* edited since */\n"
			drift = append(drift, fmt.Sprintf("line %d changed", i+1))
		}
	case 11: // already applied, every line of the file moved apart
		target = nil
		for i, l := range edited {
			if i%7 == 3 {
				target = append(target, "\n")
			}
			target = append(target, l)
		}
		drift = append(drift, "already applied, blank lines spread")
	}
	_ = hunkHi
	c.target = target
	c.drift = strings.Join(drift, ", ")
	return c
}

func applyEdits(lines []string, edits []propEdit) []string {
	var out []string
	i := 0
	for _, e := range edits {
		out = append(out, lines[i:e.at]...)
		out = append(out, e.ins...)
		i = e.at + e.del
	}
	return append(out, lines[i:]...)
}

// unifiedDiff writes the edits as diff -u does, three lines of context,
// hunks whose context would touch merged.
func unifiedDiff(path string, old, new []string, edits []propEdit) string {
	const ctx = 3
	type group struct{ edits []propEdit }
	var groups []group
	for _, e := range edits {
		if n := len(groups); n > 0 {
			last := groups[n-1].edits[len(groups[n-1].edits)-1]
			if e.at-(last.at+last.del) <= 2*ctx {
				groups[n-1].edits = append(groups[n-1].edits, e)
				continue
			}
		}
		groups = append(groups, group{[]propEdit{e}})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n", path, path, path, path)
	shift := 0 // new-line index minus old-line index so far
	for _, g := range groups {
		first, last := g.edits[0], g.edits[len(g.edits)-1]
		lo := max(first.at-ctx, 0)
		hi := min(last.at+last.del+ctx, len(old))
		var body strings.Builder
		oldN, newN := 0, 0
		i := lo
		for _, e := range g.edits {
			for ; i < e.at; i++ {
				body.WriteString(diffLine(" ", old[i]))
				oldN++
				newN++
			}
			for k := 0; k < e.del; k++ {
				body.WriteString(diffLine("-", old[i]))
				i++
				oldN++
			}
			for _, l := range e.ins {
				body.WriteString("+" + l)
				newN++
			}
		}
		for ; i < hi; i++ {
			body.WriteString(diffLine(" ", old[i]))
			oldN++
			newN++
		}
		oldStart, newStart := lo+1, lo+1+shift
		if oldN == 0 {
			oldStart--
		}
		if newN == 0 {
			newStart--
		}
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", rangeOf(oldStart, oldN), rangeOf(newStart, newN))
		b.WriteString(body.String())
		for _, e := range g.edits {
			shift += len(e.ins) - e.del
		}
	}
	_ = new
	return b.String()
}

// diffLine writes one diff line; a line without its newline (the end of
// a file that lacks one) gets diff's marker.
func diffLine(op, l string) string {
	if strings.HasSuffix(l, "\n") {
		return op + l
	}
	return op + l + "\n\\ No newline at end of file\n"
}

func rangeOf(start, n int) string {
	if n == 1 {
		return strconv.Itoa(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// gnuFile is what GNU patch said about one file.
type gnuFile struct {
	reversed bool
	hunks    map[int]gnuHunkResult
	out      []byte
	log      string
}

type gnuHunkResult struct {
	ok         bool
	line, fuzz int
	offset     int
	failed     bool
}

var (
	gnuPatching  = regexp.MustCompile(`^(?:patching|checking) file (\S+)$`)
	gnuSucceeded = regexp.MustCompile(`^Hunk #(\d+) succeeded at (\d+)(?: with fuzz (\d+))?(?: \(offset (-?\d+) lines?\))?\.$`)
	gnuFailed    = regexp.MustCompile(`^Hunk #(\d+) FAILED at (\d+)`)
)

// runGNUBatch applies every case's diff with one GNU patch run on a tree
// of the cases' target files, and reads back each file's result.
func runGNUBatch(cases []*propCase, extra ...string) (map[string]*gnuFile, error) {
	dir, err := os.MkdirTemp("", "patchctl-prop-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var all strings.Builder
	for _, c := range cases {
		p := filepath.Join(dir, c.path)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(strings.Join(c.target, "")), 0o644); err != nil {
			return nil, err
		}
		all.WriteString(c.diff)
	}
	pf := filepath.Join(dir, "all.patch")
	os.WriteFile(pf, []byte(all.String()), 0o644)
	args := []string{"-p1", "--batch", "--no-backup-if-mismatch", "-d", dir, "-i", pf}
	if len(extra) == 0 {
		extra = []string{"--forward"}
	}
	cmd := exec.Command("patch", append(args, extra...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) {
			return nil, fmt.Errorf("running GNU patch: %v", err)
		}
	}
	res := map[string]*gnuFile{}
	var cur *gnuFile
	for _, l := range strings.Split(string(out), "\n") {
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
	for _, c := range cases {
		g := res[c.path]
		if g == nil {
			return nil, fmt.Errorf("GNU patch said nothing about %s:\n%s", c.path, out)
		}
		g.out, _ = os.ReadFile(filepath.Join(dir, c.path))
	}
	return res, nil
}

// compareCase runs patchctl's locator on the case and compares with GNU
// patch. kind names the outcome; why is "" when they agree (or differ
// only as README documents).
func compareCase(c *propCase, g, gr *gnuFile) (kind, why string) {
	files, _, err := gitdiff.Parse(strings.NewReader(c.diff))
	if err != nil || len(files) != 1 {
		return "bad-diff", fmt.Sprintf("generated diff does not parse: %v", err)
	}
	o := &overlay{tree: memTree{c.path: strings.Join(c.target, "")}, files: map[string][]byte{}, original: map[string][]byte{}, present: map[string]bool{}, modes: map[string]os.FileMode{}}
	fos, err := tryPatch(o, files, false, MaxFuzz)
	if err != nil {
		return "error", err.Error()
	}
	fo := fos[0]
	frags := files[0].TextFragments
	ours := fo.hunks
	// A later hunk (not the file's first) that does not apply forward
	// and applies reversed is reported previously applied; GNU patch
	// fails it (it does not look). One that GNU patch lands is landed.
	laterReversed := false
	for i, h := range ours {
		if i > 0 && h.Reversed && !ours[0].Reversed {
			if gh, said := g.hunks[i+1]; !said || gh.ok {
				return "later-hunk-reversed-mismatch", fmt.Sprintf("hunk %d: patchctl fails it (reversed at %d), GNU patch lands it\n%s", i+1, h.Landed, g.log)
			}
			laterReversed = true
		}
	}
	if ours[0].Reversed != g.reversed {
		return "reversed-mismatch", fmt.Sprintf("patchctl reversed=%v, GNU patch reversed=%v\n%s", ours[0].Reversed, g.reversed, g.log)
	}
	if g.reversed {
		if why := compareReversed(ours, gr); why != "" {
			return "reversed-location-mismatch", why
		}
		return "reversed", ""
	}
	var diffs []string
	allOK := true
	for i, h := range ours {
		gh, said := g.hunks[i+1]
		if !said {
			gh = gnuHunkResult{ok: true} // GNU patch is silent on a hunk applied as stated
		}
		if h.Reversed && i > 0 && gh.failed {
			allOK = false
			continue // both leave it out
		}
		if h.Applied != gh.ok {
			diffs = append(diffs, fmt.Sprintf("hunk %d: patchctl applied=%v (landed %d fuzz %d), GNU patch %+v", i+1, h.Applied, h.Landed, h.Fuzz, gh))
			continue
		}
		if !h.Applied {
			allOK = false
			continue
		}
		fr := frags[i]
		where := int(h.placement.landed())
		pchFirst := int(fr.OldPosition)
		if fr.OldLines == 0 {
			pchFirst++
		}
		// GNU patch names the line in the file it writes: after what the
		// hunks before (those that applied) added and removed.
		newWhere := where + int(h.newPosOffset)
		if said && (gh.line != newWhere || gh.fuzz != h.Fuzz || gh.offset != where-pchFirst) {
			diffs = append(diffs, fmt.Sprintf("hunk %d: patchctl at %d (new %d) fuzz %d offset %d, GNU patch at %d fuzz %d offset %d", i+1, where, newWhere, h.Fuzz, where-pchFirst, gh.line, gh.fuzz, gh.offset))
		}
		if !said && (h.Fuzz != 0 || where != pchFirst) {
			diffs = append(diffs, fmt.Sprintf("hunk %d: patchctl at %d fuzz %d, GNU patch applied it as stated (%d)", i+1, where, h.Fuzz, pchFirst))
		}
	}
	if len(diffs) > 0 {
		return "hunk-mismatch", strings.Join(diffs, "; ") + "\n" + g.log
	}
	if laterReversed {
		return "later-hunk-reversed, GNU patch fails it", ""
	}
	if !allOK {
		return "fails", ""
	}
	if !bytes.Equal(fo.content, g.out) {
		return "bytes-mismatch", "both applied every hunk, the files differ"
	}
	fuzz, offset := false, false
	for _, h := range ours {
		fuzz = fuzz || h.Fuzz > 0
		offset = offset || h.Offset != 0
	}
	switch {
	case fuzz:
		return "applies-with-fuzz", ""
	case offset:
		return "applies-with-offset", ""
	}
	return "applies", ""
}

// writeRepro writes a disagreeing case where a person can rerun it.
func writeRepro(seed int64, c *propCase, g *gnuFile) string {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("patchctl-apply-property-%d", seed), fmt.Sprintf("case%05d", c.n))
	os.MkdirAll(filepath.Join(dir, "tree", filepath.Dir(c.path)), 0o755)
	os.WriteFile(filepath.Join(dir, "tree", c.path), []byte(strings.Join(c.target, "")), 0o644)
	os.WriteFile(filepath.Join(dir, "patch.diff"), []byte(c.diff), 0o644)
	log := ""
	if g != nil {
		log = g.log
	}
	os.WriteFile(filepath.Join(dir, "gnu-patch.txt"), []byte(log), 0o644)
	os.WriteFile(filepath.Join(dir, "README"), []byte(fmt.Sprintf("source %s, drift: %s\nreproduce: patch -p1 --dry-run --batch --forward -d tree -i patch.diff\n", c.source, c.drift)), 0o644)
	return dir
}

// compareReversed checks a file patchctl finds reversed (its first hunk
// is) against GNU patch -R on the same file: each hunk is reported
// reversed exactly where GNU patch -R lands it (same offset and fuzz),
// and not found where GNU patch -R fails it.
func compareReversed(ours []Hunk, gr *gnuFile) string {
	if gr == nil {
		return "GNU patch -R said nothing about the file"
	}
	var diffs []string
	for i, h := range ours {
		gh, said := gr.hunks[i+1]
		if !said {
			gh = gnuHunkResult{ok: true}
		}
		found := h.Reversed && h.located
		if found != gh.ok {
			diffs = append(diffs, fmt.Sprintf("hunk %d: patchctl reversed=%v landed %d fuzz %d, GNU patch -R %+v", i+1, h.Reversed, h.Landed, h.Fuzz, gh))
			continue
		}
		if !found {
			continue
		}
		if h.Offset != int64(gh.offset) || h.Fuzz != gh.fuzz {
			diffs = append(diffs, fmt.Sprintf("hunk %d: patchctl reversed at %d offset %d fuzz %d, GNU patch -R offset %d fuzz %d", i+1, h.Landed, h.Offset, h.Fuzz, gh.offset, gh.fuzz))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	return strings.Join(diffs, "; ") + "\n" + gr.log
}

// regenDiff is the patch refresh writes for a case that applies.
func regenDiff(c *propCase) (string, error) {
	files, _, err := gitdiff.Parse(strings.NewReader(c.diff))
	if err != nil {
		return "", err
	}
	o := &overlay{tree: memTree{c.path: strings.Join(c.target, "")}, files: map[string][]byte{}, original: map[string][]byte{}, present: map[string]bool{}, modes: map[string]os.FileMode{}}
	fos, err := tryPatch(o, files, false, MaxFuzz)
	if err != nil {
		return "", err
	}
	q, err := regenerate(&mailpatch.Patch{Files: files}, fos)
	if err != nil {
		return "", err
	}
	return q.Diff, nil
}

var gitApplyFailed = regexp.MustCompile(`(?m)^error: (?:patch failed: )?(\S+?)(?::\d+)?(?:: patch does not apply)?$`)

// runGitCheck runs git apply --check on each regenerated patch against
// its case's target and returns the cases it refuses.
func runGitCheck(regen map[*propCase]string) ([]*propCase, error) {
	if len(regen) == 0 {
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "patchctl-regen-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var all strings.Builder
	byPath := map[string]*propCase{}
	for c, d := range regen {
		p := filepath.Join(dir, c.path)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(strings.Join(c.target, "")), 0o644); err != nil {
			return nil, err
		}
		all.WriteString(d)
		byPath[c.path] = c
	}
	pf := filepath.Join(dir, "regen.patch")
	os.WriteFile(pf, []byte(all.String()), 0o644)
	cmd := exec.Command("git", "apply", "--check", "--unidiff-zero=false", pf)
	cmd.Args = []string{"git", "apply", "--check", pf}
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil, nil
	}
	seen := map[*propCase]bool{}
	var bad []*propCase
	for _, m := range gitApplyFailed.FindAllStringSubmatch(string(out), -1) {
		if c := byPath[m[1]]; c != nil && !seen[c] {
			seen[c] = true
			bad = append(bad, c)
		}
	}
	if len(bad) == 0 {
		return nil, fmt.Errorf("git apply --check failed and named no case: %s", clipOut(out))
	}
	return bad, nil
}

func clipOut(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}
