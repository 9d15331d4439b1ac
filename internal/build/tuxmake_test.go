package build

import (
	"bytes"
	"encoding/json"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tuxmakeGroups are the groups tuxmake's documentation
// (https://tuxmake.org/metadata/) defines, plus patchctl's own.
var tuxmakeGroups = map[string]bool{"artifacts": true, "build": true, "ccache": true, "compiler": true, "git": true, "hardware": true, "os": true,
	"resources": true, "results": true, "sccache": true, "source": true, "system_map": true, "tools": true, "uname": true, "vmlinux": true,
	"runtime": true, "patchctl": true}

func TestTuxmakeShape(t *testing.T) {
	dir := t.TempDir()
	vdir := filepath.Join(dir, "build", testkernel.Default, "abc", "variants", "patched")
	os.MkdirAll(vdir, 0o755)
	smap := filepath.Join(vdir, "System.map")
	os.WriteFile(smap, []byte("0000000000000000 A __per_cpu_start\nffffffff81000000 T _text\nffffffff81000000 T _stext\n"), 0o644)
	exe, _ := os.Executable() // an ELF file with .text, .data, .bss
	// 6.12 itself: a fixture with its release
	m := &Metadata{Kernel: "6.12", Variant: "patched", Status: "PASS", KernelRelease: "6.12.117", Compiler: "gcc (Debian 12.2.0-14) 12.2.0", Fragments: []string{"base"},
		Jobs: 2, Ccache: true, Duration: 481.7, Warnings: 3, Verified: 40, BuildDir: filepath.Join(dir, "build"), VariantDir: vdir, SourceDir: filepath.Join(dir, "work"),
		Log: filepath.Join(vdir, "build.log"), Artifacts: map[string]string{"bzImage": filepath.Join(vdir, "bzImage"), "config": filepath.Join(vdir, ".config"), "System.map": smap, "vmlinux": exe}}
	var b bytes.Buffer
	if err := m.WriteTuxmake(&b); err != nil {
		t.Fatal(err)
	}
	var doc map[string]map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not two levels of objects: %v", err)
	}
	for g := range doc {
		if !tuxmakeGroups[g] {
			t.Errorf("group %q is not tuxmake's", g)
		}
	}
	want := map[string][]string{
		"build":      {"targets", "target_arch", "toolchain", "wrapper", "environment", "kconfig", "kconfig_add", "jobs", "reproducer_cmdline", "runtime", "verbose"},
		"compiler":   {"name", "version", "version_full"},
		"results":    {"status", "targets", "artifacts", "errors", "warnings"},
		"source":     {"kernelrelease", "kernelversion"},
		"system_map": {"text_offset"},
		"vmlinux":    {"text_size", "data_size", "bss_size", "file_size"},
		"uname":      {"kernel", "kernel_release", "kernel_version", "machine", "operating_system"},
		"hardware":   {"cores", "ram"},
		"os":         {"name", "version"},
	}
	n := 0
	for g, items := range want {
		for _, it := range items {
			if _, ok := doc[g][it]; !ok {
				t.Errorf("%s.%s missing", g, it)
			}
			n++
		}
	}
	if doc["compiler"]["version"] != "12.2.0" || doc["build"]["toolchain"] != "gcc-12" || doc["build"]["wrapper"] != "ccache" || doc["source"]["kernelversion"] != "6.12.117" ||
		doc["system_map"]["text_offset"] != "0xffffffff81000000" {
		t.Errorf("values: %s", b.String())
	}
	if len(doc["tools"]) == 0 {
		t.Error("no tools")
	}
	if strings.Contains(b.String(), dir) {
		t.Errorf("host paths in the metadata:\n%s", b.String())
	}
	t.Logf("%d of tuxmake's documented fields present", n+len(doc["tools"]))
}
