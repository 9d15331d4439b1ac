package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/patchctl/patchctl/checks"
	"github.com/patchctl/patchctl/internal/ktap"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/vocab"
)

// JUnit XML as Jenkins (the xUnit plugin's junit-10 schema), GitLab and
// GitHub's test reporters read it: a testsuite per kernel, a testcase per
// stage, patch disposition, check finding, and KTAP test. Times have at
// most three decimals; the testsuites root has no skipped count (the
// schema does not allow one); names hold no host paths.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     secs         `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      secs        `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      secs          `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// secs is a time in seconds, written with three decimals.
type secs float64

func (s secs) MarshalXMLAttr(name xml.Name) (xml.Attr, error) {
	v := float64(s)
	if v < 0 {
		v = 0
	}
	return xml.Attr{Name: name, Value: strconv.FormatFloat(v, 'f', 3, 64)}, nil
}

func (s *secs) UnmarshalXMLAttr(a xml.Attr) error {
	v, err := strconv.ParseFloat(a.Value, 64)
	*s = secs(v)
	return err
}

func (s *junitSuite) add(c junitCase) {
	s.Tests++
	switch {
	case c.Failure != nil:
		s.Failures++
	case c.Error != nil:
		s.Errors++
	case c.Skipped != nil:
		s.Skipped++
	}
	s.Time += c.Time
	s.Cases = append(s.Cases, c)
}

func statusCase(name, class, status, detail string, t float64) junitCase {
	c := junitCase{Name: name, Classname: class, Time: secs(t)}
	switch status {
	case vocab.Fail:
		c.Failure = &junitProblem{Message: firstLine(detail), Text: detail}
	case vocab.Error:
		c.Error = &junitProblem{Message: firstLine(detail), Text: detail}
	case vocab.Skip:
		c.Skipped = &junitProblem{Message: detail}
	default:
		c.SystemOut = detail
	}
	return c
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func junit(w io.Writer, res *pipeline.Result, n *namer) error {
	all := junitSuites{Name: "patchctl", Time: secs(res.Duration)}
	if res.Reason != "" {
		// The run did not start: one error case says why.
		s := junitSuite{Name: "patchctl"}
		s.add(statusCase("start", "patchctl", res.Verdict, n.subst(res.Reason), 0))
		all.Suites = append(all.Suites, s)
		all.Tests, all.Failures, all.Errors = s.Tests, s.Failures, s.Errors
	}
	for _, k := range res.Kernels {
		s := kernelSuite(k, n)
		all.Suites = append(all.Suites, s)
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Errors += s.Errors
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// kernelSuite is one kernel's suite: its stages, each patch's
// disposition, the check's findings and the boots' KTAP tests.
func kernelSuite(k *pipeline.Kernel, n *namer) junitSuite {
	s := junitSuite{Name: "patchctl." + k.Name}
	if !k.Start.IsZero() {
		s.Timestamp = k.Start.UTC().Format("2006-01-02T15:04:05")
	}
	cls := "patchctl." + k.Name
	for _, st := range k.Stages {
		s.add(statusCase("stage."+st.Name, cls+".stage", st.Status, n.subst(st.Detail), st.Duration))
	}
	for _, r := range k.Apply {
		st := vocab.Pass
		if !r.Match {
			st = vocab.Fail
		}
		s.add(statusCase("apply."+r.Entry.Series(), cls+".apply", st,
			fmt.Sprintf("%s: %s (manifest: %s) %s", n.rel(r.Source), r.Disposition, r.Expected, r.Reason), 0))
	}
	if k.Check != nil {
		checkCases(&s, k, cls, n)
	}
	for _, v := range vocab.Variants() {
		b := k.Boots[v]
		if b == nil || b.KTAP == nil {
			continue
		}
		st, start := stageOf(k, "boot-"+v)
		dur := 0.0
		if st != nil {
			dur = st.Duration
		}
		times := ktapTimes(b.KTAP, start, dur)
		if b.KTAP.Bail != "" {
			s.add(statusCase("ktap", cls+".boot."+v, vocab.Error, "the guest could not run its tests: "+b.KTAP.Bail, 0))
		}
		for _, tr := range b.KTAP.Subtests {
			addKTAP(&s, cls+".boot."+v, tr, times)
		}
	}
	if k.Duration > 0 {
		s.Time = secs(k.Duration) // the stages ran one after another, the KTAP tests inside a boot stage
	}
	return s
}

// checkCases adds a case per error or warning of the kernel's check
// (one that the pristine tree has too passes: it is not the patch's), or
// one "no findings" case.
func checkCases(s *junitSuite, k *pipeline.Kernel, cls string, n *namer) {
	count := 0
	for _, f := range k.Check.Findings {
		st := vocab.Pass
		if f.Severity == "error" && f.Judged() {
			st = vocab.Fail
		}
		if f.Severity == "error" || f.Severity == "warning" {
			count++
			what := f.Severity
			if f.Baseline != "" {
				what += " (" + baselineWord(f) + ")"
			}
			s.add(statusCase(fmt.Sprintf("check.%s:%s:%d", f.Rule, n.rel(f.File), f.Line), cls+".check", st, what+": "+n.subst(f.Message), 0))
		}
	}
	if count == 0 {
		s.add(statusCase("check", cls+".check", vocab.Pass, "no findings", 0))
	}
}

// ktapStatus is a KTAP result as a pipeline status.
func ktapStatus(t *ktap.Test) string {
	switch {
	case t.Skip:
		return vocab.Skip
	case !t.OK && t.Directive == "ERROR":
		return vocab.Error
	case !t.OK:
		return vocab.Fail
	}
	return vocab.Pass
}

// failedBelow reports whether a test has a failed or errored descendant.
func failedBelow(t *ktap.Test) bool {
	for _, c := range t.Subtests {
		if (!c.OK && !c.Skip) || failedBelow(c) {
			return true
		}
	}
	return false
}

// addKTAP adds t's leaves as test cases of class (t's path). A failed
// parent none of whose results failed (the guest crashed or the list was
// cut short) is a failing test case of its own, so the failure is not
// lost.
func addKTAP(s *junitSuite, parent string, t *ktap.Test, times map[*ktap.Test]timing) {
	if len(t.Subtests) == 0 {
		s.add(statusCase(t.Name, parent, ktapStatus(t), strings.Join(diagnostics(t), "\n"), times[t].dur))
		return
	}
	class := parent + "." + t.Name
	for _, c := range t.Subtests {
		addKTAP(s, class, c, times)
	}
	if !t.OK && !t.Skip && !failedBelow(t) {
		why := fmt.Sprintf("%s failed although none of its %d results failed", t.Name, len(t.Subtests))
		if t.Plan > len(t.Subtests) {
			why += fmt.Sprintf(" (%d of %d planned results: the run was cut short)", len(t.Subtests), t.Plan)
		}
		if d := diagnostics(t); len(d) > 0 {
			why += "\n" + strings.Join(d, "\n")
		}
		st := vocab.Fail
		if t.Directive == "ERROR" {
			st = vocab.Error
		}
		s.add(statusCase(t.Name, parent, st, why, times[t].dur))
	}
}

// baselineWord says whether a finding is the patch's: "new", or
// "pre-existing" when the baseline has it too.
func baselineWord(f checks.Finding) string {
	if f.PreExisting() {
		return "pre-existing"
	}
	return "new"
}
