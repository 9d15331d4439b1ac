package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/patchctl/patchctl/internal/ktap"
	"github.com/patchctl/patchctl/internal/pipeline"
)

// JUnit XML, as CI systems read it: a testsuite per kernel, a testcase per
// stage, patch disposition, check finding, build, and KTAP subtest.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     float64      `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     float64     `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      float64       `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
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

func statusCase(name, class, status, detail string, secs float64) junitCase {
	c := junitCase{Name: name, Classname: class, Time: secs}
	switch status {
	case pipeline.Fail:
		c.Failure = &junitProblem{Message: firstLine(detail), Text: detail}
	case pipeline.Error:
		c.Error = &junitProblem{Message: firstLine(detail), Text: detail}
	case pipeline.Skip:
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

// JUnit writes the run as JUnit XML.
func JUnit(w io.Writer, res *pipeline.Result) error {
	all := junitSuites{Name: "patchctl", Time: res.Duration}
	for _, k := range res.Kernels {
		s := junitSuite{Name: "patchctl." + k.Name}
		cls := "patchctl." + k.Name
		for _, st := range k.Stages {
			s.add(statusCase("stage."+st.Name, cls+".stage", st.Status, st.Detail, st.Duration))
		}
		for _, r := range k.Apply {
			st := pipeline.Pass
			if !r.Match {
				st = pipeline.Fail
			}
			s.add(statusCase("apply."+r.Entry.Series(), cls+".apply", st,
				fmt.Sprintf("%s: %s (manifest: %s) %s", r.Source, r.Disposition, r.Expected, r.Reason), 0))
		}
		if k.Check != nil {
			n := 0
			for _, f := range k.Check.Findings {
				st := pipeline.Pass
				if f.Severity == "error" {
					st = pipeline.Fail
				}
				if f.Severity == "error" || f.Severity == "warning" {
					n++
					s.add(statusCase(fmt.Sprintf("check.%s:%s:%d", f.Rule, f.File, f.Line), cls+".check", st, f.Severity+": "+f.Message, 0))
				}
			}
			if n == 0 {
				s.add(statusCase("check", cls+".check", pipeline.Pass, "no findings", 0))
			}
		}
		for _, v := range []string{"baseline", "patched"} {
			if b := k.Boots[v]; b != nil && b.KTAP != nil {
				for _, tr := range b.KTAP.Subtests {
					addKTAP(&s, cls+".boot."+v+"."+tr.Name, tr)
				}
			}
		}
		all.Suites = append(all.Suites, s)
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Errors += s.Errors
		all.Skipped += s.Skipped
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

func addKTAP(s *junitSuite, class string, t *ktap.Test) {
	for _, c := range t.Subtests {
		if len(c.Subtests) > 0 {
			addKTAP(s, class+"."+c.Name, c)
			continue
		}
		st := pipeline.Pass
		switch {
		case c.Skip:
			st = pipeline.Skip
		case !c.OK:
			st = pipeline.Fail
		}
		s.add(statusCase(c.Name, class, st, strings.Join(c.Diagnostics, "\n"), 0))
	}
}
