package checks

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/checks/engine"
	"github.com/patchctl/patchctl/internal/report/reportcheck"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// checkSrc checks one module file under caseModule in a scratch tree.
func checkSrc(t *testing.T, src string) *Report {
	t.Helper()
	tree := t.TempDir()
	dir := filepath.Join(tree, caseModule)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "m.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(Options{Tree: tree, Paths: []string{caseModule}})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func readCase(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func states(rep *Report) map[string]int {
	out := map[string]int{}
	for _, f := range rep.Findings {
		out[f.Function+" "+f.Rule+" "+f.Baseline]++
	}
	return out
}

// TestJudgeAgainstPristine: a "pristine" module with two bugs of
// different rules (an in-capsule bound and a physical address on an
// inline post) and "patches" of it, checked by the engine, both trees
// for real. Findings the pristine module has are pre-existing wherever
// the patch moved them; what the patch adds is new and fails; what it
// fixes is absent.
func TestJudgeAgainstPristine(t *testing.T) {
	bounds := readCase(t, "incapsule_reject_bug.c")
	pa := readCase(t, "addr_pa_bug.c")
	pristineSrc := bounds + "\n" + pa
	pristine := checkSrc(t, pristineSrc)
	if n := pristine.Errors(); n != 2 {
		t.Fatalf("the pristine module draws %d errors, want 2: %v", n, pristine.Findings)
	}
	// Twelve lines added above everything: every finding moves.
	shift := "/* a patch's new comment\n" + strings.Repeat(" *\n", 10) + " */\n"
	// A copy of the bound check in a new function: a new finding of the
	// same rule, in the same file.
	copyFn := strings.Replace(bounds[strings.Index(bounds, "static u16 tc_map_inline"):], "tc_map_inline", "tc_map_inline2", 1)
	// The same check twice in the pristine function: one is new.
	twice := strings.Replace(bounds, "\tif (!len)\n", "\tif (off + len > c->inline_size)\n\t\treturn NVME_SC_SGL_INVALID_OFFSET;\n\tif (!len)\n", 1)
	// The bound fixed as the v2 fix does it.
	fixed := strings.Replace(bounds, "if (off + len > c->inline_size)", "if (off > c->inline_size || len > c->inline_size - off)", 1)
	for _, tc := range []struct {
		name  string
		src   string
		want  map[string]int
		fails int // new errors
		gone  int
	}{
		{"no change", pristineSrc, map[string]int{"tc_map_inline incapsule-bounds unchanged": 1, "tc_write inline-sge-addr unchanged": 1}, 0, 0},
		{"lines shifted", shift + pristineSrc, map[string]int{"tc_map_inline incapsule-bounds unchanged": 1, "tc_write inline-sge-addr unchanged": 1}, 0, 0},
		{"a new copy elsewhere", shift + pristineSrc + "\n" + copyFn,
			map[string]int{"tc_map_inline incapsule-bounds unchanged": 1, "tc_map_inline2 incapsule-bounds new": 1, "tc_write inline-sge-addr unchanged": 1}, 1, 0},
		{"a second copy in the same function", twice + "\n" + pa,
			map[string]int{"tc_map_inline incapsule-bounds unchanged": 1, "tc_map_inline incapsule-bounds new": 1, "tc_write inline-sge-addr unchanged": 1}, 1, 0},
		{"one fixed", shift + fixed + "\n" + pa, map[string]int{"tc_write inline-sge-addr unchanged": 1}, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := checkSrc(t, tc.src)
			rep.Judge(pristine)
			got := states(rep)
			if len(got) != len(tc.want) {
				t.Errorf("states %v, want %v", got, tc.want)
			}
			for k, n := range tc.want {
				if got[k] != n {
					t.Errorf("%s: %d, want %d (all: %v)", k, got[k], n, got)
				}
			}
			if rep.Errors() != tc.fails || rep.Failing(false) != tc.fails {
				t.Errorf("%d new errors (failing %d), want %d", rep.Errors(), rep.Failing(false), tc.fails)
			}
			if len(rep.Baseline.Absent) != tc.gone {
				t.Errorf("%d absent, want %d: %v", len(rep.Baseline.Absent), tc.gone, rep.Baseline.Absent)
			}
			if rep.Baseline.New+rep.Baseline.Unchanged != len(rep.Findings) {
				t.Errorf("counts %+v for %d findings", rep.Baseline, len(rep.Findings))
			}
			assertOutputs(t, rep)
			if tc.fails > 0 {
				// A judged log, both states in it, as its consumers read it.
				p := filepath.Join(t.TempDir(), "judged.sarif")
				var b bytes.Buffer
				if err := rep.WriteSARIFWith(&b, SARIFOptions{Version: "v1.2.3", Kernel: testkernel.Default, RunID: "20261201T072910Z-0123abcd"}); err != nil {
					t.Fatal(err)
				}
				os.WriteFile(p, b.Bytes(), 0o644)
				if errs := reportcheck.SARIFErrors(t, p); len(errs) > 0 {
					t.Errorf("SARIF Multitool:\n%s", strings.Join(errs, "\n"))
				}
				if errs := reportcheck.SARIFSchema(t, p); len(errs) > 0 {
					t.Errorf("SARIF schema:\n%s", strings.Join(errs, "\n"))
				}
			}
		})
	}
}

// assertOutputs: text, JSON and SARIF say the same as the findings.
func assertOutputs(t *testing.T, rep *Report) {
	t.Helper()
	var txt bytes.Buffer
	rep.WriteText(&txt)
	for _, f := range rep.Findings {
		line := ""
		for _, l := range strings.Split(txt.String(), "\n") {
			if strings.HasPrefix(l, f.File+":") && strings.Contains(l, f.Message) && strings.Contains(l, ":"+engine.Itoa(f.Line)+":") {
				line = l
			}
		}
		if line == "" {
			t.Errorf("text has no line for %s", f)
		} else if strings.HasSuffix(line, "[pre-existing]") != f.PreExisting() {
			t.Errorf("text line %q, pre-existing %v", line, f.PreExisting())
		}
	}
	if !strings.Contains(txt.String(), "against the pristine tree:") {
		t.Errorf("text does not say what it was judged against:\n%s", txt.String())
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	var sb bytes.Buffer
	if err := rep.WriteSARIF(&sb, "v1.0.0"); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID        string
				BaselineState string
				Kind          string
				Locations     []struct {
					PhysicalLocation struct{ Region struct{ StartLine int } }
				}
			}
		}
	}
	if err := json.Unmarshal(sb.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	// a finding the patch fixed is a passing result after the findings
	var res []struct {
		RuleID        string
		BaselineState string
		Kind          string
		Locations     []struct {
			PhysicalLocation struct{ Region struct{ StartLine int } }
		}
	}
	fixed := 0
	for _, r := range log.Runs[0].Results {
		if r.Kind == "pass" {
			fixed++
			continue
		}
		res = append(res, r)
	}
	if rep.Baseline != nil && fixed != len(rep.Baseline.Absent) {
		t.Errorf("%d passing SARIF results for %d fixed findings", fixed, len(rep.Baseline.Absent))
	}
	if len(res) != len(rep.Findings) || len(back.Findings) != len(rep.Findings) {
		t.Fatalf("%d SARIF results, %d JSON findings for %d findings", len(res), len(back.Findings), len(rep.Findings))
	}
	for i, f := range rep.Findings {
		if back.Findings[i].Baseline != f.Baseline || res[i].BaselineState != f.Baseline || res[i].Locations[0].PhysicalLocation.Region.StartLine != f.Line {
			t.Errorf("%s: JSON %q, SARIF %q (line %d), want %q", f, back.Findings[i].Baseline, res[i].BaselineState, res[i].Locations[0].PhysicalLocation.Region.StartLine, f.Baseline)
		}
	}
}

// TestMatchKeyMasksLineReferences: a message naming a line matches across
// a shift, one whose code differs does not.
func TestMatchKeyMasksLineReferences(t *testing.T) {
	a := Finding{Rule: RuleInlineSize, File: "x.c", Function: "f", Message: "requests 32 bytes, but 64 bytes is posted inline (line 120), see x.c:118"}
	b := a
	b.Message = "requests 32 bytes, but 64 bytes is posted inline (line 131), see x.c:129"
	c := a
	c.Message = "requests 16 bytes, but 64 bytes is posted inline (line 120), see x.c:118"
	if MatchKey(a) != MatchKey(b) {
		t.Error("a line shift changes the key")
	}
	if MatchKey(a) == MatchKey(c) {
		t.Error("a different constant gives the same key")
	}
	d := a
	d.Function = "g"
	if MatchKey(a) == MatchKey(d) {
		t.Error("another function gives the same key")
	}
}

// TestJudgeRealTree: on the 6.12 tree, nvmet-rdma with lines added
// above the known finding and a copy of the pattern in nvmet-tcp, judged
// against the pristine tree's check: the known finding is pre-existing
// at its new line, the copy is the one new error.
func TestJudgeRealTree(t *testing.T) {
	_, pristine := testenv.Kernel(t, testkernel.Default)
	paths := []string{"drivers/nvme/target"}
	base, err := Run(Options{Tree: pristine, Paths: paths})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, rel := range []string{nvmetRdma, "drivers/nvme/target/tcp.c"} {
		b, err := os.ReadFile(filepath.Join(pristine, rel))
		if err != nil {
			t.Fatal(err)
		}
		files[rel] = b
	}
	copyMut := incapsuleMutants[2]
	if copyMut.file != "drivers/nvme/target/tcp.c" {
		t.Fatalf("mutant 2 is %q", copyMut.name)
	}
	tree, src := mutate(t, files, copyMut)
	// And shift nvmet-rdma by a comment block at the top.
	rdmaSrc := "/* shifted */\n/* by */\n/* a patch */\n" + string(files[nvmetRdma])
	if err := os.WriteFile(filepath.Join(tree, nvmetRdma), []byte(rdmaSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(Options{Tree: tree, Paths: paths})
	if err != nil {
		t.Fatal(err)
	}
	rep.Judge(base)
	var pre, fresh []Finding
	for _, f := range rep.Findings {
		if f.Rule != RuleIncapsule {
			continue
		}
		if f.PreExisting() {
			pre = append(pre, f)
		} else {
			fresh = append(fresh, f)
		}
	}
	var was int
	for _, f := range base.Findings {
		if f.Rule == RuleIncapsule {
			was = f.Line
		}
	}
	if len(pre) != 1 || pre[0].File != nvmetRdma || pre[0].Line != was+3 {
		t.Errorf("pre-existing: %v, want the known finding at %s:%d", pre, nvmetRdma, was+3)
	}
	want := lineOf(src, copyMut.edits[0][1], copyMut.at, 0)
	if len(fresh) != 1 || fresh[0].File != copyMut.file || fresh[0].Line != want {
		t.Errorf("new: %v, want the copy at %s:%d", fresh, copyMut.file, want)
	}
	if rep.Errors() != 1 {
		t.Errorf("%d new errors, want 1", rep.Errors())
	}
}
