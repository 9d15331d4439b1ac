package build

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"testing"
)

// TestTuxmakeTargetsAndTypes: every target of results.targets has a
// status and a numeric duration, build.targets names compile-test when
// the build compile-tested, results has the build's duration, tools has
// perl's version (its --version starts with an empty line), and fields
// have tuxmake's JSON types.
func TestTuxmakeTargetsAndTypes(t *testing.T) {
	for _, timed := range []bool{true, false} {
		// 6.12 itself: a fixture with its release
		m := &Metadata{Kernel: "6.12", Variant: "patched", Status: "PASS", KernelRelease: "6.12.117", Compiler: "gcc (Debian 12.2.0-14) 12.2.0",
			Jobs: 2, Duration: 481.7, Verified: 40, CompileTested: []string{"drivers/nvme/host/rdma.o"}}
		if timed {
			m.TargetDurations = map[string]float64{"config": 2.5, "kernel": 470.25, "compile-test": 8.5}
		}
		var b bytes.Buffer
		if err := m.WriteTuxmake(&b); err != nil {
			t.Fatal(err)
		}
		var doc map[string]map[string]any
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		targets, _ := doc["results"]["targets"].(map[string]any)
		for _, name := range []string{"config", "kernel", "compile-test"} {
			tg, _ := targets[name].(map[string]any)
			if _, ok := tg["duration"].(float64); !ok {
				t.Errorf("timed %v: results.targets.%s.duration %v (%T)", timed, name, tg["duration"], tg["duration"])
			}
			if s, _ := tg["status"].(string); s != "PASS" {
				t.Errorf("timed %v: results.targets.%s.status %q", timed, name, s)
			}
		}
		if timed && targets["kernel"].(map[string]any)["duration"] != 470.25 {
			t.Errorf("kernel duration %v, want the measured 470.25", targets["kernel"])
		}
		var names []string
		for _, x := range doc["build"]["targets"].([]any) {
			names = append(names, x.(string))
		}
		if len(names) != 3 || names[2] != "compile-test" {
			t.Errorf("build.targets %v, want config, kernel, compile-test", names)
		}
		if d, ok := doc["results"]["duration"].(float64); !ok || d != 481.7 {
			t.Errorf("results.duration %v", doc["results"]["duration"])
		}
		types := map[string]string{"build.jobs": "number", "build.verbose": "bool", "build.environment": "object", "build.kconfig_add": "array",
			"build.reproducer_cmdline": "array", "results.errors": "number", "results.warnings": "number", "results.artifacts": "object",
			"hardware.cores": "number", "hardware.ram": "number"}
		for k, want := range types {
			var g, f string
			for i := range k {
				if k[i] == '.' {
					g, f = k[:i], k[i+1:]
					break
				}
			}
			got := "missing"
			switch doc[g][f].(type) {
			case float64:
				got = "number"
			case bool:
				got = "bool"
			case map[string]any:
				got = "object"
			case []any:
				got = "array"
			case string:
				got = "string"
			}
			if got != want {
				t.Errorf("%s is %s, want %s", k, got, want)
			}
		}
		if _, err := exec.LookPath("perl"); err == nil {
			if p, _ := doc["tools"]["perl"].(string); p == "" {
				t.Errorf("tools.perl is empty: %v", doc["tools"])
			}
		}
	}
}
