// Package reportcheck runs the reference tools of each ecosystem on
// patchctl's reports, for tests in any package (the report generators'
// own tests and the end-to-end run's): Microsoft's SARIF Multitool with
// GitHub's rules and the OASIS SARIF schema, xmllint with a JUnit schema
// in Jenkins' shape and Debian's python3-junitparser as a consumer, a
// JSON schema of KCIDB v5.3 run by python3-jsonschema, the kernel's own
// KTAP parser (tools/testing/kunit/kunit_parser.py of a prepared tree)
// and actionlint for the workflow.
//
// Every check returns what the tool rejected (nothing when it accepts
// the file). A tool that is not installed skips the test on a developer's
// machine and fails it in CI (testenv.Unavailable); scripts/deps.sh
// installs the Debian packages, and the npm and Go tools are installed
// into the user's cache on first use.
package reportcheck

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/patchctl/patchctl/internal/testenv"
)

//go:embed junit.xsd
var junitXSD []byte

//go:embed kcidb-v5.3.schema.json
var kcidbSchema []byte

// JUnitXSD is the JUnit schema the checks use (Jenkins' shape).
func JUnitXSD() []byte { return append([]byte(nil), junitXSD...) }

// KCIDBSchema is the KCIDB v5.3 JSON schema the checks use.
func KCIDBSchema() []byte { return append([]byte(nil), kcidbSchema...) }

// python is Debian's python3: its dist-packages hold python3-junitparser
// and python3-jsonschema, which a python3 earlier in PATH (pyenv, a
// virtualenv) may not see.
func python(t testing.TB, modules ...string) string {
	t.Helper()
	exe := "/usr/bin/python3"
	if _, err := os.Stat(exe); err != nil {
		p, err := exec.LookPath("python3")
		if err != nil {
			testenv.Unavailable(t, "python3 not installed")
		}
		exe = p
	}
	for _, m := range modules {
		if out, err := exec.Command(exe, "-c", "import "+m).CombinedOutput(); err != nil {
			testenv.Unavailable(t, fmt.Sprintf("python module %s missing (scripts/deps.sh installs it): %s", m, bytes.TrimSpace(out)))
		}
	}
	return exe
}

func writeTemp(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// run runs a tool; a non-zero exit is the tool's verdict, not an error.
func run(t testing.TB, cmd *exec.Cmd) (string, bool) {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("running %s: %v\n%s", cmd.Path, err, out.String())
	}
	return out.String(), err == nil
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// ---- SARIF ----

// multitool is Microsoft's SARIF Multitool for Linux from npm.
const multitool = "@microsoft/sarif-multitool-linux@5.7.0"

func multitoolPath(t testing.TB) string {
	t.Helper()
	dir := testenv.NPMTool(t, "sarif-multitool", multitool)
	exe := filepath.Join(dir, "node_modules", "@microsoft", "sarif-multitool-linux", "Sarif.Multitool")
	// npm may skip the package's postinstall (chmod u+x).
	if st, err := os.Stat(exe); err == nil && st.Mode()&0o100 == 0 {
		os.Chmod(exe, st.Mode()|0o755)
	}
	return exe
}

// MultitoolResult is one rule the Multitool reported.
type MultitoolResult struct {
	Level, RuleID, Message string
}

func (r MultitoolResult) String() string { return r.Level + " " + r.RuleID + ": " + r.Message }

// SARIFMultitool validates a SARIF log with the SARIF Multitool's GitHub
// rules (--rule-kind Gh) and its SARIF rules, and returns every result
// (errors, warnings, notes).
func SARIFMultitool(t testing.TB, path string) []MultitoolResult {
	t.Helper()
	exe := multitoolPath(t)
	out := filepath.Join(t.TempDir(), "validation.sarif")
	cmd := exec.Command(exe, "validate", "--rule-kind", "Gh;Sarif", "-o", out, path)
	cmd.Env = append(os.Environ(), "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1") // no ICU needed
	text, _ := run(t, cmd)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("the SARIF Multitool wrote no results: %v\n%s", err, text)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID  string `json:"ruleId"`
				Level   string `json:"level"`
				Message struct {
					ID        string   `json:"id"`
					Text      string   `json:"text"`
					Arguments []string `json:"arguments"`
				} `json:"message"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatalf("reading the SARIF Multitool's results: %v", err)
	}
	var res []MultitoolResult
	// The console names each result with its text: take it from there.
	console := map[string][]string{}
	for _, l := range lines(text) {
		if m := consoleResult.FindStringSubmatch(l); m != nil {
			console[m[1]] = append(console[m[1]], m[1]+": "+m[2])
		}
	}
	for _, r := range log.Runs {
		for _, x := range r.Results {
			level := x.Level
			if level == "" {
				level = "warning"
			}
			msg := x.Message.Text
			if msg == "" {
				msg = strings.Join(x.Message.Arguments, "; ")
			}
			if c := console[x.RuleID]; len(c) > 0 {
				msg, console[x.RuleID] = c[0], c[1:]
			}
			res = append(res, MultitoolResult{Level: level, RuleID: x.RuleID, Message: msg})
		}
	}
	return res
}

var consoleResult = regexp.MustCompile(`: (?:error|warning|note) ([A-Z]+[0-9]+): (.*)$`)

// SARIFErrors is SARIFMultitool's errors.
func SARIFErrors(t testing.TB, path string) []string {
	t.Helper()
	var out []string
	for _, r := range SARIFMultitool(t, path) {
		if r.Level == "error" {
			out = append(out, r.String())
		}
	}
	return out
}

// SARIFSchema validates a SARIF log against the OASIS SARIF 2.1.0 JSON
// schema.
func SARIFSchema(t testing.TB, path string) []string {
	t.Helper()
	return lines(testenv.ValidateSARIF(t, path))
}

// ---- JUnit ----

// JUnitSchema validates a JUnit XML file with xmllint against JUnitXSD.
func JUnitSchema(t testing.TB, path string) []string {
	t.Helper()
	if _, err := exec.LookPath("xmllint"); err != nil {
		testenv.Unavailable(t, "xmllint not installed (Debian: libxml2-utils)")
	}
	xsd := writeTemp(t, "junit.xsd", junitXSD)
	out, ok := run(t, exec.Command("xmllint", "--noout", "--schema", xsd, path))
	if ok {
		return nil
	}
	var errs []string
	for _, l := range lines(out) {
		if !strings.HasSuffix(l, "fails to validate") {
			errs = append(errs, l)
		}
	}
	if len(errs) == 0 {
		errs = []string{strings.TrimSpace(out)}
	}
	return errs
}

// JUnitCounts is what a JUnit consumer read: totals over the test cases
// and the suites' own attributes.
type JUnitCounts struct {
	Suites, Tests, Failures, Errors, Skipped int
	// Attr are the suites' tests/failures/errors/skipped attributes,
	// summed: a consumer that trusts them sees these.
	AttrTests, AttrFailures, AttrErrors, AttrSkipped int
	Cases                                            []JUnitCase
}

// JUnitCase is one test case as the consumer read it.
type JUnitCase struct {
	Suite, Classname, Name, Result string // result: passed, failure, error, skipped
	Time                           float64
}

const junitparserPy = `import json, sys
from junitparser import JUnitXml, Failure, Error, Skipped
xml = JUnitXml.fromfile(sys.argv[1])
suites = [xml] if xml._tag == "testsuite" else list(xml)
out = {"suites": 0, "tests": 0, "failures": 0, "errors": 0, "skipped": 0,
       "attr": {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}, "cases": []}
for s in suites:
    out["suites"] += 1
    for k in ("tests", "failures", "errors", "skipped"):
        out["attr"][k] += int(getattr(s, k) or 0)
    for c in s:
        out["tests"] += 1
        res = "passed"
        for r in c.result:
            if isinstance(r, Failure): res = "failure"
            elif isinstance(r, Error): res = "error"
            elif isinstance(r, Skipped): res = "skipped"
        if res != "passed":
            out[{"failure": "failures", "error": "errors", "skipped": "skipped"}[res]] += 1
        out["cases"].append({"suite": s.name, "classname": c.classname, "name": c.name, "result": res, "time": c.time})
json.dump(out, sys.stdout)
`

// JUnitRead reads a JUnit XML file with Debian's python3-junitparser.
func JUnitRead(t testing.TB, path string) JUnitCounts {
	t.Helper()
	py := python(t, "junitparser")
	out, ok := run(t, exec.Command(py, writeTemp(t, "read.py", []byte(junitparserPy)), path))
	if !ok {
		t.Fatalf("junitparser cannot read %s:\n%s", path, out)
	}
	var r struct {
		Suites, Tests, Failures, Errors, Skipped int
		Attr                                     struct{ Tests, Failures, Errors, Skipped int }
		Cases                                    []JUnitCase
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("junitparser's output: %v\n%s", err, out)
	}
	return JUnitCounts{Suites: r.Suites, Tests: r.Tests, Failures: r.Failures, Errors: r.Errors, Skipped: r.Skipped,
		AttrTests: r.Attr.Tests, AttrFailures: r.Attr.Failures, AttrErrors: r.Attr.Errors, AttrSkipped: r.Attr.Skipped, Cases: r.Cases}
}

// ---- KCIDB ----

const jsonschemaPy = `import datetime, json, re, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
checker = jsonschema.FormatChecker()
rfc3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
@checker.checks("date-time", raises=ValueError)
def date_time(v):
    if not isinstance(v, str):
        return True
    if not rfc3339.match(v):
        raise ValueError("not RFC 3339")
    datetime.datetime.fromisoformat(v.replace("Z", "+00:00").replace("z", "+00:00"))
    return True
if "uri" not in checker.checkers:
    sys.exit("jsonschema cannot check the uri format: install python3-rfc3987")
v = jsonschema.Draft7Validator(schema, format_checker=checker)
errs = sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))
for e in errs:
    print("/".join(str(p) for p in e.absolute_path) + ": " + e.message[:300])
sys.exit(1 if errs else 0)
`

// KCIDB validates a KCIDB report against the v5.3 JSON schema with
// python3-jsonschema (formats checked: uri, date-time, email), and checks
// what the schema cannot say: ids unique per object type and links that
// name objects of the report.
func KCIDB(t testing.TB, path string) []string {
	t.Helper()
	py := python(t, "jsonschema")
	out, ok := run(t, exec.Command(py, writeTemp(t, "validate.py", []byte(jsonschemaPy)), writeTemp(t, "kcidb.schema.json", kcidbSchema), path))
	var errs []string
	if !ok {
		errs = lines(out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return append(errs, kcidbLinks(data)...)
}

func kcidbLinks(data []byte) []string {
	var doc map[string][]map[string]any
	var raw map[string]json.RawMessage
	if json.Unmarshal(data, &raw) != nil {
		return nil // the schema check said so
	}
	doc = map[string][]map[string]any{}
	for _, k := range []string{"checkouts", "builds", "tests"} {
		var list []map[string]any
		json.Unmarshal(raw[k], &list)
		doc[k] = list
	}
	var errs []string
	ids := map[string]map[string]bool{}
	for _, k := range []string{"checkouts", "builds", "tests"} {
		ids[k] = map[string]bool{}
		for i, o := range doc[k] {
			id, _ := o["id"].(string)
			if ids[k][id] {
				errs = append(errs, fmt.Sprintf("%s/%d: id %q is not unique", k, i, id))
			}
			ids[k][id] = true
		}
	}
	for _, l := range [][3]string{{"builds", "checkout_id", "checkouts"}, {"tests", "build_id", "builds"}} {
		for i, o := range doc[l[0]] {
			if id, _ := o[l[1]].(string); !ids[l[2]][id] {
				errs = append(errs, fmt.Sprintf("%s/%d: %s %q names nothing in the report", l[0], i, l[1], id))
			}
		}
	}
	return errs
}

// KCIDBIDs returns every id in a KCIDB report.
func KCIDBIDs(t testing.TB, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var ids []string
	for _, k := range []string{"checkouts", "builds", "tests"} {
		var list []struct {
			ID string `json:"id"`
		}
		json.Unmarshal(doc[k], &list)
		for _, o := range list {
			ids = append(ids, o.ID)
		}
	}
	return ids
}

// ---- KTAP ----

// KTAPTest is a test as kunit_parser read it.
type KTAPTest struct {
	Name     string      `json:"name"`
	Status   string      `json:"status"` // SUCCESS, FAILURE, SKIPPED, TEST_CRASHED, NO_TESTS, FAILURE_TO_PARSE_TESTS
	Subtests []*KTAPTest `json:"subtests,omitempty"`
}

// KTAPResult is kunit_parser's reading of a console.
type KTAPResult struct {
	Status                                   string
	Passed, Failed, Crashed, Skipped, Errors int
	Root                                     *KTAPTest
	Output                                   string // what the parser printed
}

const kunitPy = `import contextlib, inspect, io, json, sys
sys.path.insert(0, sys.argv[1])
import kunit_parser
lines = open(sys.argv[2], encoding="utf-8", errors="replace").read().splitlines(True)
log = io.StringIO()
with contextlib.redirect_stdout(log):
    if len(inspect.signature(kunit_parser.parse_run_tests).parameters) > 1:
        import kunit_printer
        test = kunit_parser.parse_run_tests(lines, kunit_printer.stdout)
    else:
        test = kunit_parser.parse_run_tests(lines)
def tree(t):
    return {"name": t.name, "status": t.status.name, "subtests": [tree(s) for s in t.subtests]}
c = test.counts
# kunit_printer.stdout holds the real stdout: the result goes to a file.
with open(sys.argv[3], "w") as f:
    json.dump({"status": test.status.name, "passed": c.passed, "failed": c.failed, "crashed": c.crashed,
               "skipped": c.skipped, "errors": c.errors, "root": tree(test), "output": log.getvalue()}, f)
`

// KTAP parses a console log with tools/testing/kunit/kunit_parser.py of
// the kernel tree tree.
func KTAP(t testing.TB, tree, console string) KTAPResult {
	t.Helper()
	dir := filepath.Join(tree, "tools", "testing", "kunit")
	if _, err := os.Stat(filepath.Join(dir, "kunit_parser.py")); err != nil {
		t.Fatalf("%s has no tools/testing/kunit/kunit_parser.py", tree)
	}
	py := python(t)
	result := filepath.Join(t.TempDir(), "kunit.json")
	printed, ok := run(t, exec.Command(py, writeTemp(t, "ktap.py", []byte(kunitPy)), dir, console, result))
	if !ok {
		t.Fatalf("kunit_parser failed on %s:\n%s", console, printed)
	}
	out, err := os.ReadFile(result)
	if err != nil {
		t.Fatalf("kunit_parser wrote no result: %v\n%s", err, printed)
	}
	var r struct {
		Status                                   string
		Passed, Failed, Crashed, Skipped, Errors int
		Root                                     *KTAPTest
		Output                                   string
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("kunit_parser's output: %v\n%s", err, out)
	}
	r.Output += printed
	return KTAPResult(r)
}

// ---- GitHub Actions ----

// installMu makes the tests of one binary install actionlint once.
var installMu sync.Mutex

// actionlintVersion is the actionlint the checks install with go install.
const actionlintVersion = "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12"

// Actionlint lints a workflow file; it installs actionlint into the
// user's cache with go install on first use.
func Actionlint(t testing.TB, path string) []string {
	t.Helper()
	installMu.Lock()
	bin := filepath.Join(testenv.Cache().Dir, "tools", "go", "bin")
	exe := filepath.Join(bin, "actionlint")
	if _, err := os.Stat(exe); err != nil {
		goexe, err := exec.LookPath("go")
		if err != nil {
			installMu.Unlock()
			testenv.Unavailable(t, "go not in PATH: cannot install actionlint")
		}
		cmd := exec.Command(goexe, "install", actionlintVersion)
		// The caller's GOFLAGS stay (make exports -trimpath, which keys
		// every package in Go's build cache: without it the install
		// compiled the standard library once more).
		cmd.Env = append(os.Environ(), "GOBIN="+bin, "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"))
		cmd.Dir = os.TempDir() // outside this module: its go.mod does not constrain the tool
		if out, err := cmd.CombinedOutput(); err != nil {
			installMu.Unlock()
			testenv.Unavailable(t, "installing actionlint: "+err.Error()+": "+string(out))
		}
	}
	installMu.Unlock()
	out, ok := run(t, exec.Command(exe, "-no-color", "-oneline", path))
	if ok {
		return nil
	}
	return lines(out)
}

// ---- a whole output folder ----

// Folder runs every check on a patchctl output folder (what `patchctl
// run --out DIR` writes) and returns the problems, each prefixed with its
// file: SARIF (Multitool errors with GitHub's rules, the OASIS schema),
// junit.xml (the XSD; junitparser's counts equal the suites' own),
// kcidb.json (the v5.3 schema, unique ids, links), each console
// (kunit_parser of tree finds KTAP in it) and each build metadata
// (tuxmake's two levels). The caller compares the counts with its run.
func Folder(t testing.TB, dir, tree string) []string {
	t.Helper()
	var problems []string
	add := func(file string, errs []string) {
		for _, e := range errs {
			problems = append(problems, file+": "+e)
		}
	}
	sarifs, _ := filepath.Glob(filepath.Join(dir, "*.sarif"))
	for _, p := range sarifs {
		add(filepath.Base(p), SARIFErrors(t, p))
		add(filepath.Base(p), SARIFSchema(t, p))
	}
	if p := filepath.Join(dir, "junit.xml"); exists(p) {
		add("junit.xml", JUnitSchema(t, p))
		c := JUnitRead(t, p)
		if c.AttrTests != c.Tests || c.AttrFailures != c.Failures || c.AttrErrors != c.Errors || c.AttrSkipped != c.Skipped {
			add("junit.xml", []string{fmt.Sprintf("junitparser counts %d tests, %d failures, %d errors, %d skipped; the suites say %d, %d, %d, %d",
				c.Tests, c.Failures, c.Errors, c.Skipped, c.AttrTests, c.AttrFailures, c.AttrErrors, c.AttrSkipped)})
		}
	} else {
		add("junit.xml", []string{"missing"})
	}
	if p := filepath.Join(dir, "kcidb.json"); exists(p) {
		add("kcidb.json", KCIDB(t, p))
	} else {
		add("kcidb.json", []string{"missing"})
	}
	consoles, _ := filepath.Glob(filepath.Join(dir, "console-*.log"))
	for _, p := range consoles {
		if r := KTAP(t, tree, p); r.Status == "FAILURE_TO_PARSE_TESTS" || r.Status == "NO_TESTS" {
			add(filepath.Base(p), []string{"kunit_parser: " + r.Status + "\n" + r.Output})
		}
	}
	builds, _ := filepath.Glob(filepath.Join(dir, "build-*.json"))
	for _, p := range builds {
		data, _ := os.ReadFile(p)
		var doc map[string]map[string]any
		if err := json.Unmarshal(data, &doc); err != nil || doc["build"] == nil || doc["results"] == nil {
			add(filepath.Base(p), []string{fmt.Sprintf("not tuxmake's metadata (two levels, build and results always there): %v", err)})
		}
	}
	return problems
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
