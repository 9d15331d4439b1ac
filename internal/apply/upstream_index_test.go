package apply

import (
	"fmt"
	"math/rand"
	"os"
	"path"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// everyLineIndex is the index findUpstream used before indexFolders
// skipped lines: every line of every file of the touched folders,
// tokenized. The reference the tests below compare with.
func everyLineIndex(o *overlay, p *mailpatch.Patch, _ map[string]bool) *folderIndex {
	dirs := map[string]bool{}
	for _, f := range p.Files {
		dirs[path.Dir(firstNonEmpty(f.NewName, f.OldName))] = true
	}
	var sorted []string
	for d := range dirs {
		sorted = append(sorted, d)
	}
	sort.Strings(sorted)
	ix := &folderIndex{names: map[string][]NameAt{}, byToken: map[string][]int{}}
	for _, d := range sorted {
		files, err := o.tree.ReadDir(d)
		if err != nil {
			continue
		}
		for _, name := range files {
			fp := path.Join(d, name)
			content, exists, err := o.read(fp)
			if err != nil || !exists {
				continue
			}
			for i, l := range splitLines(content) {
				n := normalize(l)
				if n == "" {
					continue
				}
				toks := tokenRe.FindAllString(n, -1)
				idx := len(ix.lines)
				ix.lines = append(ix.lines, folderLine{fp, i + 1, toks})
				for _, t := range toks {
					if identRe.MatchString(t) && (len(ix.names[t]) == 0 || ix.names[t][len(ix.names[t])-1].Line != i+1) {
						ix.names[t] = append(ix.names[t], NameAt{Name: t, Path: fp, Line: i + 1})
					}
					if distinctive(t) {
						ix.byToken[t] = append(ix.byToken[t], idx)
					}
				}
			}
		}
	}
	return ix
}

// upstreamBoth runs findUpstream with the index of sought lines and with
// the index of every line; they must agree.
func upstreamBoth(t *testing.T, o *overlay, p *mailpatch.Patch) (*UpstreamMatch, error) {
	t.Helper()
	got, err := findUpstream(o, p)
	indexFoldersFunc = everyLineIndex
	defer func() { indexFoldersFunc = indexFolders }()
	want, werr := findUpstream(o, p)
	if (err == nil) != (werr == nil) {
		t.Fatalf("errors differ: %v / every line: %v", err, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the index of sought lines finds\n%+v\nthe index of every line\n%+v", got, want)
	}
	return got, err
}

// TestUpstreamIndexSoughtLines: findUpstream's evidence (files, lines
// found, names present and where) is the same from the index of the lines
// that name a sought token as from the index of every line, on generated
// folders and patches: names that are hex-like ("0x1f" holds "x1f"), that
// are prefixes of each other, ties between equally similar lines, names
// the patch introduces that the folder has, or has not.
func TestUpstreamIndexSoughtLines(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	words := []string{"mlx5_ib_post", "mlx5_ib_post_send", "umr_inline", "x1f", "0x1f", "klm", "klms", "reg_wr", "sge",
		"inline_size", "dev", "qp", "wr", "->", "(", ")", ";", "=", "+=", "if", "return", "u32", "1", "16", "MLX5_INLINE_KLM"}
	line := func() string {
		n := 2 + rng.Intn(8)
		var b strings.Builder
		b.WriteString(strings.Repeat("\t", rng.Intn(3)))
		for i := 0; i < n; i++ {
			b.WriteString(words[rng.Intn(len(words))])
			b.WriteString([]string{" ", "", "  ", "\t"}[rng.Intn(4)])
		}
		return b.String()
	}
	found, named := 0, 0
	for c := 0; c < 200; c++ {
		tree := memTree{}
		var lines []string
		for f := 0; f < 1+rng.Intn(4); f++ {
			var body []string
			for i := 0; i < 5+rng.Intn(40); i++ {
				l := line()
				body = append(body, l)
				lines = append(lines, l)
			}
			tree[fmt.Sprintf("drivers/x/f%d.c", f)] = strings.Join(body, "\n") + "\n"
		}
		tree["drivers/y/other.c"] = strings.Join(lines, "\n") + "\n" // not searched
		// The patch adds lines taken from the folder (some changed) and
		// new ones, to a file whose context does not match.
		var add []string
		for i := 0; i < 1+rng.Intn(8); i++ {
			switch rng.Intn(3) {
			case 0:
				add = append(add, lines[rng.Intn(len(lines))])
			case 1:
				add = append(add, lines[rng.Intn(len(lines))]+" "+words[rng.Intn(len(words))])
			default:
				add = append(add, line()+" introduced_name_"+fmt.Sprint(rng.Intn(3)))
			}
		}
		hunk := fmt.Sprintf("@@ -1,3 +1,%d @@\n no such context one\n no such context two\n", 3+len(add))
		for _, a := range add {
			hunk += "+" + a + "\n"
		}
		hunk += " no such context three\n"
		p := mustPatch(t, patchText("drivers/x/f0.c", hunk))
		o := &overlay{tree: tree, files: map[string][]byte{}, original: map[string][]byte{}, present: map[string]bool{}, modes: map[string]os.FileMode{}}
		u, err := upstreamBoth(t, o, p)
		if err != nil {
			t.Fatalf("case %d: %v", c, err)
		}
		if u.Found > 0 {
			found++
		}
		if len(u.NamesPresent) > 0 {
			named++
		}
		if t.Failed() {
			t.Fatalf("case %d:\n%s", c, hunk)
		}
	}
	// The cases reach both halves of the evidence.
	if found < 50 || named < 20 {
		t.Errorf("%d of 200 cases found lines, %d names: the generator no longer exercises the index", found, named)
	}
}

// TestUpstreamIndexSoughtLinesReal: the same comparison on the pinned
// kernels' trees, for every patch of their series that does not apply
// (those findUpstream measures: 002 against the mlx5 folders, 003
// against nvmet's).
func TestUpstreamIndexSoughtLinesReal(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads a kernel tree")
	}
	root := testenv.RepoRoot(t)
	_, pristine := testenv.Kernel(t, testkernel.Default)
	plan, err := LoadPlan(root, testkernel.Default, "")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	indexFoldersFunc = func(o *overlay, p *mailpatch.Patch, sought map[string]bool) *folderIndex {
		checked++
		return indexFolders(o, p, sought)
	}
	res, err := plan.Run(pristine)
	indexFoldersFunc = indexFolders
	if err != nil {
		t.Fatal(err)
	}
	indexFoldersFunc = everyLineIndex
	ref, err := plan.Run(pristine)
	indexFoldersFunc = indexFolders
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no patch of the series was measured against its folders")
	}
	for i, r := range res.Results {
		if !reflect.DeepEqual(r.Upstream, ref.Results[i].Upstream) {
			t.Errorf("%s: the index of sought lines finds\n%+v\nthe index of every line\n%+v", r.Source, r.Upstream, ref.Results[i].Upstream)
		}
	}
	t.Logf("%d patches measured against their folders", checked)
}
