package reportcheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/testenv"
	"gopkg.in/yaml.v3"
)

// currentMajors are the actions' majors that run on Node 24 (the Node 20
// ones are deprecated on GitHub's runners).
var currentMajors = map[string]string{"actions/checkout": "v7", "actions/setup-go": "v7", "actions/cache": "v5", "actions/cache/restore": "v5",
	"actions/cache/save": "v5", "actions/upload-artifact": "v7", "github/codeql-action/upload-sarif": "v4"}

func TestWorkflow(t *testing.T) {
	path := filepath.Join(testenv.RepoRoot(t), ".github", "workflows", "patchctl.yml")
	if errs := Actionlint(t, path); len(errs) > 0 {
		t.Errorf("actionlint:\n%s", strings.Join(errs, "\n"))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Permissions map[string]string
		Jobs        map[string]struct {
			If          string
			Container   any
			Permissions any
			Steps       []struct {
				Uses string
				Run  string
				With map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	if wf.Permissions["contents"] != "read" {
		t.Errorf("top-level permissions %v: want contents: read", wf.Permissions)
	}
	k := wf.Jobs["kernel"]
	// KVM: a job container with --device /dev/kvm is never created on a
	// runner without it; scripts/ci/container passes the device only
	// when the host has it.
	if k.Container != nil {
		t.Errorf("the kernel job runs in a job container (%v): on a runner without /dev/kvm --device fails; scripts/ci/container decides", k.Container)
	}
	started := false
	for _, s := range k.Steps {
		started = started || strings.Contains(s.Run, "scripts/ci/container start")
	}
	if !started {
		t.Error("the kernel job does not start its container with scripts/ci/container")
	}
	// The kernel job's runner host has the checkout, Go and docker, no
	// Debian packages (python3-junitparser, QEMU, the compiler): every
	// run step goes through the container.
	for _, s := range k.Steps {
		if s.Run != "" && !strings.HasPrefix(s.Run, "scripts/ci/container ") {
			t.Errorf("the kernel job runs %q on the runner host: run it with scripts/ci/container exec (the host has none of the job's packages)", s.Run)
		}
	}
	// Jobs are thin calls of scripts/ci/<job>: every run step is one
	// (the bootstrap apt-get for actions/checkout's git and the JUnit
	// summary aside).
	for name, j := range wf.Jobs {
		calls := false
		for _, s := range j.Steps {
			if s.Run == "" {
				continue
			}
			calls = calls || strings.Contains(s.Run, "scripts/ci/"+name)
			if !strings.Contains(s.Run, "scripts/ci/") && !strings.HasPrefix(s.Run, "apt-get update && apt-get install -y --no-install-recommends git ca-certificates") && !strings.Contains(s.Run, "junit-summary") {
				t.Errorf("job %s runs %q: want a call of a script in scripts/ci/", name, s.Run)
			}
		}
		if !calls {
			t.Errorf("job %s does not call scripts/ci/%s", name, name)
		}
	}
	if p, _ := k.Permissions.(map[string]any); p["security-events"] != "write" {
		t.Errorf("the kernel job cannot upload SARIF: permissions %v", k.Permissions)
	}
	uses := regexp.MustCompile(`^([^@]+)@(v\d+)$`)
	var restoreKeys, summary, saveAlways bool
	for name, j := range wf.Jobs {
		for _, s := range j.Steps {
			if s.Uses == "" {
				if strings.Contains(s.Run, "GITHUB_STEP_SUMMARY") && strings.Contains(s.Run, "junit") {
					summary = true
				}
				continue
			}
			m := uses.FindStringSubmatch(s.Uses)
			if m == nil || currentMajors[m[1]] == "" || currentMajors[m[1]] != m[2] {
				t.Errorf("job %s uses %s: want one of %v", name, s.Uses, currentMajors)
			}
			if m != nil && m[1] == "actions/cache/restore" {
				restoreKeys = s.With["restore-keys"] != "" && strings.Contains(s.With["path"], "ccache") && strings.Contains(s.With["path"], "patchctl/build")
			}
			if m != nil && strings.HasPrefix(m[1], "actions/cache") {
				// keyed by what changes the content, never by the run
				key := s.With["key"]
				for _, part := range []string{"matrix.kernel", "outputs.pin", "outputs.compiler", "kconfig/"} {
					if !strings.Contains(key, part) {
						t.Errorf("job %s: cache key %q lacks %s", name, key, part)
					}
				}
				if strings.Contains(key, "github.run") || strings.Contains(key, "github.sha") {
					t.Errorf("job %s: cache key %q changes every run: entries evict each other", name, key)
				}
			}
			if m != nil && m[1] == "actions/cache/save" {
				saveAlways = true
			}
		}
	}
	// The scheduled pin check (issue 16): on schedule only, and the kernel
	// builds not on schedule.
	pin := false
	for _, s := range wf.Jobs["pins"].Steps {
		pin = pin || strings.Contains(s.Run, "scripts/ci/pins")
	}
	script, _ := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "scripts", "ci", "pins"))
	pin = pin && strings.Contains(string(script), "patchctl tree pin --check")
	if !pin || !strings.Contains(wf.Jobs["pins"].If, "schedule") || !strings.Contains(wf.Jobs["matrix"].If, "!= 'schedule'") {
		t.Errorf("no scheduled `patchctl tree pin --check` job (pins: %+v, matrix if %q)", wf.Jobs["pins"], wf.Jobs["matrix"].If)
	}
	if !restoreKeys || !saveAlways || !summary {
		t.Errorf("cache restore-keys with ccache and build folders %v, saved on every run %v, JUnit job summary %v", restoreKeys, saveAlways, summary)
	}
	// actionlint rejects a broken workflow
	broken := filepath.Join(t.TempDir(), "broken.yml")
	os.WriteFile(broken, []byte(strings.Replace(string(data), "${{ matrix.kernel }}", "${{ matrix.kernel ", 1)), 0o644)
	if errs := Actionlint(t, broken); len(errs) == 0 {
		t.Error("actionlint accepts an unclosed expression")
	}
	broken2 := filepath.Join(t.TempDir(), "broken2.yml")
	os.WriteFile(broken2, []byte(strings.Replace(string(data), "runs-on: ubuntu-latest", "runs-on: ubuntu-latest\n    timeout-minutes: soon", 1)), 0o644)
	if errs := Actionlint(t, broken2); len(errs) == 0 {
		t.Error("actionlint accepts timeout-minutes: soon")
	}
}
