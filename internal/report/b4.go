package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/checks"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/vocab"
)

// B4Result is one result of b4's external check protocol (b4 review:
// b4.review-perpatch-check-cmd and b4.review-series-check-cmd): tool and
// status are required, status one of pass, warn, fail.
type B4Result struct {
	Tool    string `json:"tool"`
	Status  string `json:"status"`
	Summary string `json:"summary,omitempty"`
	URL     string `json:"url,omitempty"`
	Details string `json:"details,omitempty"`
}

func firstLineOf(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// B4PerPatch is a patch's static check (pipeline.Target.CheckPatch) on
// kernel as b4's two results: the rules (fail on a new error, warn on a
// new warning) and checkpatch (warn on any message).
func B4PerPatch(kernel string, pc *pipeline.PatchCheck) []B4Result {
	name := "patchctl " + kernel
	if !pc.Applied {
		return []B4Result{{Tool: name, Status: "fail", Summary: "does not apply to the pristine " + kernel, Details: pc.Output}}
	}
	rulesURL := checks.InformationURI + "/blob/main/" + checks.RulesPage
	static := B4Result{Tool: name, Status: "pass", URL: rulesURL}
	cp := B4Result{Tool: "patchctl checkpatch", Status: "pass", URL: rulesURL + "#" + checks.RuleCheckpatch}
	var sd, cd []string
	se, sw, pre := 0, 0, 0
	cpn := 0
	for _, f := range pc.Report.Findings {
		line := fmt.Sprintf("%s:%d: %s: %s", f.File, f.Line, f.Rule, firstLineOf(f.Message))
		if f.Rule == checks.RuleCheckpatch {
			cpn++
			cd = append(cd, line)
			continue
		}
		if !f.Judged() {
			pre++
			sd = append(sd, line+" [pre-existing]")
			continue
		}
		sd = append(sd, line+" ["+f.Severity+"]")
		switch f.Severity {
		case checks.SevError:
			se++
		case checks.SevWarning:
			sw++
		}
	}
	switch {
	case se > 0:
		static.Status = "fail"
	case sw > 0:
		static.Status = "warn"
	}
	static.Summary = fmt.Sprintf("%s, %s on %s (%s); %d pre-existing", errs.Count(se, "new error"), errs.Count(sw, "new warning"),
		kernel, strings.Join(pc.Paths, ", "), pre)
	static.Details = strings.Join(sd, "\n")
	if cpn > 0 {
		cp.Status = "warn"
	}
	cp.Summary = fmt.Sprintf("%s from %s", errs.Count(cpn, "message"), filepath.Join(filepath.Base(pc.CheckpatchTree), "scripts/checkpatch.pl"))
	cp.Details = strings.Join(cd, "\n")
	return []B4Result{static, cp}
}

// B4Checkpatch writes a patch check's judged findings (pc: nil for
// none), and the failed results when there are no findings, as
// checkpatch --terse style lines (FILE:LINE: ERROR|WARNING: ...), and
// returns how many new errors it wrote.
func B4Checkpatch(w io.Writer, pc *pipeline.PatchCheck, results []B4Result) int {
	var findings []checks.Finding
	if pc != nil && pc.Report != nil {
		findings = pc.Report.Findings
	}
	newErrors := 0
	for _, f := range findings {
		if !f.Judged() || (f.Severity != checks.SevError && f.Severity != checks.SevWarning) {
			continue
		}
		level := "WARNING"
		if f.Severity == checks.SevError {
			level = "ERROR"
			newErrors++
		}
		fmt.Fprintf(w, "%s:%d: %s: %s: %s\n", f.File, f.Line, level, f.Rule, firstLineOf(f.Message))
	}
	for _, r := range results {
		if r.Status == "fail" && len(findings) == 0 {
			fmt.Fprintf(w, "-:1: ERROR: %s: %s\n", r.Tool, r.Summary)
			newErrors++
		}
	}
	return newErrors
}

// B4Series is try's verdict as one b4 result: the report folder as its
// url (a file:// URL), the stages that did not pass as details.
func B4Series(res *pipeline.Result, out string, err error) B4Result {
	abs, _ := filepath.Abs(out)
	r := B4Result{Tool: "patchctl try", Status: "pass", URL: "file://" + filepath.ToSlash(abs)}
	if res == nil {
		r.Status, r.Summary = "fail", "try did not run"
		if err != nil {
			r.Details = errs.Message(err)
		}
		return r
	}
	var kernels, details []string
	for _, k := range res.Kernels {
		kernels = append(kernels, k.Name+" "+k.Verdict)
		for _, s := range k.Stages {
			if s.Status != vocab.Pass && s.Status != vocab.Done {
				details = append(details, fmt.Sprintf("%s %s: %s %s", k.Name, s.Name, s.Status, s.Detail))
			}
		}
	}
	if res.Verdict != vocab.Pass {
		r.Status = "fail"
	}
	r.Summary = fmt.Sprintf("verdict %s (%s)", res.Verdict, strings.Join(kernels, ", "))
	if res.Reason != "" {
		details = append([]string{res.Reason}, details...)
	}
	r.Details = strings.Join(details, "\n")
	return r
}
