package series

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
)

func TestRealManifests(t *testing.T) {
	// 6.12 itself: every pin
	for _, k := range []string{"5.10", "6.1", "6.12", "7.2", "7.3"} {
		m, err := Load(ManifestPath(filepath.Join("..", ".."), k))
		if err != nil {
			t.Fatal(err)
		}
		if m.Kernel != k || len(m.Patches) != 3 {
			t.Errorf("%s: kernel %q with %d patches", k, m.Kernel, len(m.Patches))
		}
		for _, e := range m.Patches {
			if _, err := os.Stat(filepath.Join("..", "..", e.Source)); err != nil {
				t.Errorf("%s: %s does not exist", k, e.Source)
			}
		}
		if es, err := m.Filter("mlx5-umr-inline-reg-wr"); err != nil || len(es) != 1 || es[0].Expect != AlreadyUpstream {
			t.Errorf("%s: filter: %v %+v", k, err, es)
		}
		if _, err := m.Filter("nope"); err == nil || !strings.Contains(err.Error(), "nvme-rdma-inline-capsule") {
			t.Errorf("unknown series error does not list the known ones: %v", err)
		}
	}
}

func TestBadManifests(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"unknown disposition": "kernel: x\npatches:\n  - source: patches/a/b\n    expect: maybe\n",
		"no reason":           "kernel: x\npatches:\n  - source: patches/a/b\n    expect: conflict\n",
		"no source":           "kernel: x\npatches:\n  - expect: applies\n",
		"not yaml":            "kernel: [\n",
		"typo'd field":        "kernel: x\npatches:\n  - source: patches/a/b\n    expcet: applies\n",
		"source above":        "kernel: x\npatches:\n  - source: ../../etc/passwd\n    expect: applies\n",
		"source absolute":     "kernel: x\npatches:\n  - source: /etc/passwd\n    expect: applies\n",
		"source dot-dot":      "kernel: x\npatches:\n  - source: patches/../../x\n    expect: applies\n",
		"source not a series": "kernel: x\npatches:\n  - source: patches/x.patch\n    expect: applies\n",
	} {
		p := filepath.Join(dir, "m.yaml")
		os.WriteFile(p, []byte(text), 0o644)
		_, err := Load(p)
		if !errors.Is(err, errs.ErrInput) {
			t.Errorf("%s: error %v, want an input error", name, err)
		}
		if name != "not yaml" && name != "typo'd field" && !strings.Contains(fmt.Sprint(err), p+":3:") {
			t.Errorf("%s: the error does not name the line: %v", name, err)
		}
	}
}
