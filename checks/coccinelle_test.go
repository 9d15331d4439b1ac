package checks

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/testenv"
)

// The core rules are also written as Coccinelle scripts
// (coccinelle/*.cocci, coccilib report mode, for make coccicheck): a
// second, independent oracle. These tests run both on the same C and
// fail when they disagree on a finding (its rule and line).

// cocciRule is one script and which of the engine's findings it is the
// counterpart of.
type cocciRule struct {
	script string // coccinelle/<script>.cocci
	id     string // the rule id its reports start with
	// engine selects the engine's findings the script must agree with.
	engine func(Finding) bool
}

var cocciRules = []cocciRule{
	// The errors: the warnings ("cannot show this SGE holds a kernel
	// virtual address") have no counterpart in a pattern language.
	{"inline_sge_addr", RuleInlineSGE, func(f Finding) bool { return f.Rule == RuleInlineSGE && f.Severity == SevError }},
	{"inline_on_registration", RuleInlineReg, func(f Finding) bool { return f.Rule == RuleInlineReg }},
	// Only the fallback part of inline-size.
	{"inline_fallback", RuleInlineSize, func(f Finding) bool {
		return f.Rule == RuleInlineSize && strings.Contains(f.Message, "but on this path the QP was created with")
	}},
}

// cocciExclusions are the cases where Coccinelle genuinely cannot say
// what the engine says, by case and script, each with why. Coccinelle
// follows every path of the control-flow graph but not the values of
// conditions, so it takes both ways of a branch that repeats an earlier
// decision; and it has no arithmetic to relate a request's num_sge to
// the index of an SGE. Each entry must still disagree (a stale entry
// fails), so the list cannot grow silently or outlive its reason.
var cocciExclusions = map[string]string{
	"flags_local_ok/inline_sge_addr":     "correlated conditions: the same test (desc->len <= conn->max_inline) re-points the address and, later, sets the flag; Coccinelle also follows the infeasible path that sets the flag without re-pointing",
	"flags_helper_ok/inline_sge_addr":    "correlated conditions across a call: tc_send_flags() returns IB_SEND_INLINE exactly when the caller's own test chose the virtual address; the engine summarises the helper by a predicate on its parameters, Coccinelle only knows that it can return the flag",
	"flow_bounds_ok/inline_sge_addr":     "num_sge bound: likely(d->num_sge <= 1) keeps the DMA address of sge[1] out of the inline request; Coccinelle cannot relate num_sge to an SGE index",
	"flow_field_ok/inline_sge_addr":      "num_sge bound: iu->num_sge != 1 leaves the inline path with only sge[0], re-pointed; Coccinelle cannot relate num_sge to an SGE index",
	"flow_switch_ok/inline_sge_addr":     "correlated conditions through a fall-through: case 1 tests m->len > ic->max_inline and falls into case 2, which tests it again; Coccinelle follows the infeasible path where case 2's test breaks out after case 1 set the flag, leaving the DMA address",
	"memory_array_ok/inline_sge_addr":    "correlated conditions in a loop: the same test (len <= c->max_inline) re-points sge[i] and flags wrs[i]; Coccinelle also follows the infeasible path that flags without re-pointing",
	"memory_literal_ok/inline_sge_addr":  "correlated conditions: the if that re-points the SGE and the ternary in the compound literal that sets the flag test the same len <= c->max_inline; Coccinelle treats the ternary's arm as reachable on the path where the if was not taken",
	"across_boolret_ok/inline_sge_addr":  "correlated across a call: tc_try_inline() returns true exactly on the path where it set IB_SEND_INLINE, and the caller re-points the SGE when it does; Coccinelle only knows the helper can set the flag",
	"across_builder_bug/inline_sge_addr": "across functions: the builder tc_build() sets num_sge = 2 and the DMA address of sge[1] in another function; a script sees one function's paths",
	"macro_flag_bug/inline_sge_addr":     "macros: IB_SEND_INLINE is set by the module's function-like macro TC_GO_INLINE(); spatch matches the use as an opaque call and never sees the flag set",
	// The second round of issue 26's classes.
	"across_ipoiballoc_ok/inline_sge_addr":       "across functions: the tx ring's num_sge = 1 is set at allocation (ipoib_init_tx()), so sge[1]'s DMA address is not sent; a script sees one function's paths and cannot relate num_sge to an SGE index",
	"across_isercallersge_bug/inline_sge_addr":   "across functions: the poster flags the request inline over SGEs its caller filled with a DMA address; a script sees one function's paths",
	"across_nvmetboolarg_bug/inline_sge_addr":    "correlated conditions: the address and the flag are chosen by ternaries on the same bool parameter (inl ? VA : dma, inl ? IB_SEND_INLINE : 0); Coccinelle takes the flag's arm with the address's other arm (this bug is the guard's, inline-size)",
	"across_nvmetboolarg_ok/inline_sge_addr":     "correlated conditions: the address and the flag are chosen by ternaries on the same bool parameter; Coccinelle takes the flag's arm with the address's other arm",
	"across_smcboolret_ok/inline_sge_addr":       "correlated across a call: smc_wr_try_inline() returns true exactly when it set IB_SEND_INLINE, and the caller gives the virtual address then; Coccinelle only knows the helper can set the flag",
	"across_xprtalias_ok/inline_sge_addr":        "num_sge bound through an alias: send_wr->num_sge = 1 (send_wr is &req->rl_wr) keeps sge[1]'s DMA address out of the inline request; Coccinelle cannot relate num_sge to an SGE index",
	"macro_rdsstmt_bug/inline_sge_addr":          "macros: a do-while statement macro of the module stores the DMA address and sets IB_SEND_INLINE; spatch matches its use as an opaque call",
	"across_handedpasson_bug/inline_sge_addr":    "across functions: the caller's mapped SGE is handed through a middle helper to the poster that sets IB_SEND_INLINE; a script sees one function's paths",
	"across_handedbool_bug/inline_sge_addr":      "across functions: the caller's mapped SGE is handed to a poster whose bool parameter sets IB_SEND_INLINE; a script sees one function's paths",
	"across_aliasmember_bug/inline_sge_addr":     "across functions: a helper fills the SGE and points sg_list through its own pointer to the request (w = &ctx->wr), the caller flags and posts ctx->wr; a script sees one function's paths",
	"across_aliascount_bug/inline_sge_addr":      "across functions: two helpers append SGEs through an alias of the request (r = &m->req, [r->num_sge++]), the caller flags and posts m->req; a script sees one function's paths",
	"memory_flagchoicefield_bug/inline_sge_addr": "values through memory across functions: the flag word l->send_opts is given IB_SEND_INLINE or 0 at QP setup in another function and or-ed in at the post; a script sees one function's paths",
	"memory_flagchoicetest_bug/inline_sge_addr":  "values through memory across functions: q->inl_bits is given IB_SEND_INLINE or 0 at QP creation in another function; the post's flags and its address test read it; a script sees one function's paths",
	"memory_isernested_bug/inline_sge_addr":      "values through memory across functions: the flag is the field ib_conn->inline_flag, given IB_SEND_INLINE at QP setup in another function; a script sees one function's paths",
	"memory_xprtlit_ok/inline_sge_addr":          "correlated conditions: the SGE's address and the compound literal's send_flags are ternaries on the same bool; Coccinelle takes the flag's arm with the address's other arm",
	// Held-out round 3's classes (cases of their own).
	"across_boolternpair_bug/inline_sge_addr":       "across functions: the helper bt_prep() gives the SGE the mapping on the path where its bool sets IB_SEND_INLINE, and the caller posts; a script sees one function's paths",
	"across_buildbool_bug/inline_sge_addr":          "across functions: the builder bb_build() is handed the negated bool and fills the mapped reply and trailer on the path where the caller sets IB_SEND_INLINE; a script sees one function's paths",
	"across_buildcmp_bug/inline_sge_addr":           "across functions: the builder bc_fill() is handed the inverted comparison and gives the SGE the mapping on the path where the caller sets IB_SEND_INLINE; a script sees one function's paths",
	"across_intguardlocal_bug/inline_sge_addr":      "across functions: the helper ig_xfer_prep() picks the mapping on the path where its int sets IB_SEND_INLINE, and the caller posts; a script sees one function's paths",
	"memory_flagbitbranch_ok/inline_sge_addr":       "the address follows the flag's bit: if (wr->send_flags & IB_SEND_INLINE) picks the virtual address; Coccinelle does not evaluate the test and follows the path that posts the mapping inline",
	"memory_flagbitorder_bug/inline_sge_addr":       "the flag's bit is read before it is set: flags & IB_SEND_INLINE ? VA : dma always picks the mapping, which then goes inline; Coccinelle treats the ternary's virtual arm as possible",
	"memory_ptrelemsinv_bug/inline_on_registration": "values through memory: the LOCAL_INV is flagged inline through seq[i] in a loop over an array of request pointers filled one element at a time, and posted through seq[0]; the script does not follow the array's elements to the requests",
	// The seed's mutants (TestCoccicheckNvmeHost), by mutant name.
	"num_sge not bounded/inline_sge_addr": "num_sge bound, across functions: without num_sge == 1 the inline request also carries req->sge[1], whose DMA address nvme_rdma_map_sg_inline() set; Coccinelle cannot relate num_sge to an SGE index, and a script sees one function's paths",
}

var cocciLine = regexp.MustCompile(`^(.+?):(\d+):\d+-\d+: ([a-z-]+): (.*)$`)

// cocciFinding is a report of a script: file (as spatch names it), line.
type cocciFinding struct {
	file string
	line int
	msg  string
}

// spatch runs a script in report mode over files or, with dir, a folder,
// the way make coccicheck MODE=report runs it.
func spatch(t *testing.T, script string, dir string, files ...string) []cocciFinding {
	t.Helper()
	bin, err := exec.LookPath("spatch")
	if err != nil {
		testenv.Unavailable(t, "spatch not installed (Debian's coccinelle; scripts/deps.sh installs it)")
	}
	args := []string{"-D", "report", "--very-quiet", "--no-show-diff", "--no-includes", "--include-headers", "--sp-file", filepath.Join("coccinelle", script+".cocci")}
	if dir != "" {
		args = append(args, "--dir", dir)
	}
	args = append(args, files...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("spatch %s: %v\n%s", script, err, out)
	}
	return parseCocci(t, script, string(out))
}

func parseCocci(t *testing.T, script, out string) []cocciFinding {
	t.Helper()
	var fs []cocciFinding
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		m := cocciLine.FindStringSubmatch(l)
		if m == nil {
			// anything else (a parse failure, a Python error) is a broken
			// script or a file it could not read: never a silent pass
			t.Fatalf("%s: unexpected spatch output %q\n%s", script, l, out)
		}
		n, _ := strconv.Atoi(m[2])
		fs = append(fs, cocciFinding{m[1], n, m[3] + ": " + m[4]})
	}
	return fs
}

func lineSet(lines []int) []int {
	sort.Ints(lines)
	return slices.Compact(lines)
}

// TestCoccinelleAgreesWithEngine runs the engine and every script on
// every case of checks/testdata, bug and correct twin, and compares the
// lines each reports for the script's rule.
func TestCoccinelleAgreesWithEngine(t *testing.T) {
	ents, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var cases []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".c") {
			cases = append(cases, e.Name())
		}
	}
	// The engine, case by case (each its own module, as TestCases).
	engine := map[string][]Finding{}
	for _, c := range cases {
		_, _, rep := runCase(t, filepath.Join("testdata", c))
		engine[c] = rep.Findings
	}
	used := map[string]bool{}
	agreed := 0
	for _, r := range cocciRules {
		// One spatch run per script over the folder, as coccicheck does.
		got := map[string][]int{}
		for _, f := range spatch(t, r.script, "testdata") {
			if !strings.HasPrefix(f.msg, r.id+": ") {
				t.Errorf("%s: a report of another rule: %s:%d: %s", r.script, f.file, f.line, f.msg)
			}
			got[filepath.Base(f.file)] = append(got[filepath.Base(f.file)], f.line)
		}
		for _, c := range cases {
			var want []int
			for _, f := range engine[c] {
				if r.engine(f) {
					want = append(want, f.Line)
				}
			}
			w, g := lineSet(want), lineSet(got[c])
			key := strings.TrimSuffix(c, ".c") + "/" + r.script
			why, excluded := cocciExclusions[key]
			if excluded {
				used[key] = true
				if slices.Equal(w, g) {
					t.Errorf("%s: excluded (%s) but the two agree now: drop the exclusion", key, why)
				} else {
					t.Logf("%s: excluded: engine %v, coccinelle %v: %s", key, w, g, why)
				}
				continue
			}
			if !slices.Equal(w, g) {
				t.Errorf("%s: the engine reports %s at lines %v, coccinelle at %v", key, r.id, w, g)
				continue
			}
			agreed++
		}
	}
	for key := range cocciExclusions {
		if c := strings.Split(key, "/")[0]; (strings.HasSuffix(c, "_ok") || strings.HasSuffix(c, "_bug")) && !used[key] {
			t.Errorf("exclusion %s names no case and script", key)
		}
	}
	// Every script has bug cases to find: agreement on nothing proves nothing.
	for _, r := range cocciRules {
		n := 0
		for _, c := range cases {
			for _, f := range engine[c] {
				if r.engine(f) && !strings.Contains(c, "_ok") {
					n++
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no case where the engine finds its rule", r.script)
		}
	}
	t.Logf("%d case × script pairs agree, %d excluded", agreed, len(used))
}

// TestCoccicheckNvmeHost runs the scripts the way a kernel developer
// does, make coccicheck MODE=report COCCI=... M=drivers/nvme/host, on a
// copy of what coccicheck reads from the 6.12 tree (its Makefile,
// scripts/ and the headers it passes with --include) with
// drivers/nvme/host holding the seed applied (rdma.c) and each of the
// seed's mutants as a file of its own: each script reports exactly the
// mutants of its rule at the engine's line, and nothing in rdma.c or the
// rest of the folder.
func TestCoccicheckNvmeHost(t *testing.T) {
	if _, err := exec.LookPath("spatch"); err != nil {
		testenv.Unavailable(t, "spatch not installed (Debian's coccinelle; scripts/deps.sh installs it)")
	}
	if _, err := exec.LookPath("make"); err != nil {
		testenv.Unavailable(t, "make not installed")
	}
	pristine, patched := patchedFiles(t)
	if testing.Short() {
		t.Skip("-short: three make coccicheck runs over drivers/nvme/host (about a minute)")
	}
	tree := t.TempDir()
	copyIn := func(rel string) {
		t.Helper()
		if err := exec.Command("cp", "-r", filepath.Join(pristine, rel), filepath.Join(tree, rel)).Run(); err != nil {
			t.Fatalf("copying %s: %v", rel, err)
		}
	}
	for _, d := range []string{"include/linux", "arch/x86", "drivers/nvme"} {
		os.MkdirAll(filepath.Join(tree, d), 0o755)
	}
	for _, rel := range []string{"Makefile", "Kconfig", "scripts", "arch/x86/Makefile", "include/linux/kconfig.h", "include/linux/compiler-version.h", "drivers/nvme/host"} {
		copyIn(rel)
	}
	host := filepath.Join(tree, "drivers/nvme/host")
	if err := os.WriteFile(filepath.Join(host, "rdma.c"), patched[rdma], 0o644); err != nil {
		t.Fatal(err)
	}
	// Each mutant as drivers/nvme/host/mutant_NN.c, with the line the
	// engine reports it at in that file.
	type placed struct {
		m    mutant
		line int
	}
	files := map[string][]byte{rdma: patched[rdma]}
	h, err := os.ReadFile(filepath.Join(pristine, "include/linux/nvme.h"))
	if err != nil {
		t.Fatal(err)
	}
	files["include/linux/nvme.h"] = h
	mutants := map[string]placed{}
	for i, m := range nvmeMutants {
		mt, src := mutate(t, files, m)
		name := fmt.Sprintf("mutant_%02d.c", i)
		if err := os.WriteFile(filepath.Join(host, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := Run(Options{Tree: mt, Paths: []string{"drivers/nvme/host"}})
		if err != nil {
			t.Fatal(err)
		}
		line := 0
		for _, f := range rep.Findings {
			if f.Rule == m.rule && f.Severity == SevError && f.File == rdma {
				line = f.Line
			}
		}
		if (m.rule != "") != (line != 0) {
			t.Fatalf("mutant %q: the engine reports %v", m.name, rep.Findings)
		}
		mutants[name] = placed{m, line}
	}
	used := map[string]bool{}
	for _, r := range cocciRules {
		cmd := exec.Command("make", "-s", "coccicheck", "MODE=report", "COCCI="+filepath.Join(testenv.RepoRoot(t), "checks", "coccinelle", r.script+".cocci"), "M=drivers/nvme/host")
		cmd.Dir = tree
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make coccicheck %s: %v\n%s", r.script, err, out)
		}
		var reports []string
		for _, l := range strings.Split(string(out), "\n") {
			if cocciLine.MatchString(l) {
				reports = append(reports, l)
			} else if strings.Contains(l, "EXN") || strings.Contains(l, "rror") {
				t.Errorf("%s: coccicheck: %s", r.script, l)
			}
		}
		got := map[string][]int{}
		for _, f := range parseCocci(t, r.script, strings.Join(reports, "\n")) {
			got[filepath.Base(f.file)] = append(got[filepath.Base(f.file)], f.line)
		}
		for name, p := range mutants {
			var want []int
			if p.m.rule == r.id && p.line != 0 {
				want = []int{p.line}
			}
			g := lineSet(got[name])
			delete(got, name)
			key := p.m.name + "/" + r.script
			if why, ok := cocciExclusions[key]; ok {
				used[key] = true
				if slices.Equal(g, want) {
					t.Errorf("%s: excluded (%s) but the two agree now: drop the exclusion", key, why)
				} else {
					t.Logf("%s: excluded: engine %v, coccinelle %v: %s", key, want, g, why)
				}
				continue
			}
			if !slices.Equal(g, want) {
				t.Errorf("%s on %s (%q): coccicheck reports lines %v, the engine %v", r.script, name, p.m.name, g, want)
			}
		}
		for f, ls := range got {
			t.Errorf("%s: coccicheck reports %s at %v, where the engine finds nothing", r.script, f, ls)
		}
	}
	for _, m := range nvmeMutants {
		for _, r := range cocciRules {
			if key := m.name + "/" + r.script; cocciExclusions[key] != "" && !used[key] {
				t.Errorf("exclusion %s names no mutant and script", key)
			}
		}
	}
}
