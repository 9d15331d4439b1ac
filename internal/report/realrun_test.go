package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/report/reportcheck"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// TestRealRun runs every reference tool on the reports of a real run
// (`make run`'s out/run of the repository, or the folder of
// $PATCHCTL_RUN_RESULT): on the folder itself, and on the reports
// written again from its result.json (whose ${repo}, ${cache} and ${out}
// name where the run's files are). A folder from before these reports
// (host paths in result.json) is only written again. It skips when no
// run is there.
func TestRealRun(t *testing.T) {
	root := testenv.RepoRoot(t)
	path := os.Getenv("PATCHCTL_RUN_RESULT")
	if path == "" {
		path = filepath.Join(root, "out", "run", "result.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no run's result.json (%v): run make run, or set PATCHCTL_RUN_RESULT", err)
	}
	_, tree := testenv.Kernel(t, testkernel.Default)
	runDir := filepath.Dir(path)
	current := strings.Contains(string(data), "${")
	if current {
		// written by these reports: check the folder itself, then find
		// the run's files through the named bases
		if p := reportcheck.Folder(t, runDir, tree); len(p) > 0 {
			t.Errorf("the reference tools reject the reports in %s:\n%s", runDir, strings.Join(p, "\n"))
		}
		cache := os.Getenv("PATCHCTL_CACHE")
		if cache == "" {
			cache = testenv.Cache().Dir
		}
		data = []byte(strings.NewReplacer("${repo}", root, "${cache}", cache, "${out}", runDir).Replace(string(data)))
	}
	var res pipeline.Result
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(res.Kernels) == 0 || len(res.Kernels[0].Patches) == 0 {
		t.Skipf("%s has no kernel with patches", path)
	}
	dir := filepath.Join(t.TempDir(), "out")
	if _, err := WriteWith(dir, &res, Options{Version: "test", Root: repoAbove(res.Kernels[0].Patches[0]), URLBase: "https://ci.example.org/runs/1"}); err != nil {
		t.Fatal(err)
	}
	if p := reportcheck.Folder(t, dir, tree); len(p) > 0 {
		t.Errorf("the reference tools reject the reports of %s:\n%s", path, strings.Join(p, "\n"))
	}
	got := reportcheck.JUnitRead(t, filepath.Join(dir, "junit.xml"))
	tests, failures, errors, skipped := expectedCases(&res)
	if got.Tests != tests || got.Failures != failures || got.Errors != errors || got.Skipped != skipped {
		t.Errorf("junitparser read %d tests, %d failures, %d errors, %d skipped; the run has %d, %d, %d, %d", got.Tests, got.Failures, got.Errors, got.Skipped, tests, failures, errors, skipped)
	}
	for _, k := range res.Kernels {
		for v, b := range k.Boots {
			r := reportcheck.KTAP(t, tree, filepath.Join(dir, "console-"+k.Name+"-"+v+".log"))
			c := b.KTAP.Count()
			if r.Passed+r.Skipped != c.Pass+c.Skip || r.Failed != c.Fail {
				t.Errorf("%s %s: kunit_parser counts %d passed, %d skipped, %d failed; patchctl %+v", k.Name, v, r.Passed, r.Skipped, r.Failed, c)
			}
		}
	}
	var hosts []string
	for _, k := range res.Kernels {
		if b := k.Builds["patched"]; b != nil {
			hosts = append(hosts, b.BuildDir, b.SourceDir)
		}
	}
	noHostPaths(t, dir, append(hosts, root)...)
}
