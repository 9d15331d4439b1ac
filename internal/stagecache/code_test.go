package stagecache

import (
	"runtime/debug"
	"strings"
	"testing"
	"testing/fstest"
)

// buildInfo is a program's build information as patchctl's own build
// writes it (go build in a checkout: a version control stamp).
func buildInfo() *debug.BuildInfo {
	return &debug.BuildInfo{
		Path: "github.com/patchctl/patchctl/cmd/patchctl",
		Main: debug.Module{Path: "github.com/patchctl/patchctl", Version: "(devel)"},
		Deps: []*debug.Module{
			{Path: "github.com/spf13/cobra", Version: "v1.10.1", Sum: "h1:aaa="},
			{Path: "golang.org/x/sys", Version: "v0.38.0", Sum: "h1:bbb="},
		},
		Settings: []debug.BuildSetting{
			{Key: "-buildmode", Value: "exe"},
			{Key: "-compiler", Value: "gc"},
			{Key: "CGO_ENABLED", Value: "1"},
			{Key: "GOARCH", Value: "amd64"},
			{Key: "GOOS", Value: "linux"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "caf537f"},
			{Key: "vcs.modified", Value: "false"},
		},
	}
}

func sources() fstest.MapFS {
	return fstest.MapFS{
		"go.mod":                        {Data: []byte("module github.com/patchctl/patchctl\n")},
		"internal/build/build.go":       {Data: []byte("package build\n")},
		"internal/build/build_test.go":  {Data: []byte("package build\n\nfunc TestX() {}\n")},
		"qemu/harness/dma-faithful/a.p": {Data: []byte("--- a\n+++ b\n")},
	}
}

// TestSourceKeyNamesTheCode: the key changes with what changes the code
// (any source's content or name, a file more, a dependency's sum, a
// build setting, a linker flag that sets a variable) and with nothing
// else (the commit's stamp, the linker's -s and -w).
func TestSourceKeyNamesTheCode(t *testing.T) {
	base, err := sourceKey(buildInfo(), sources())
	if err != nil || len(base) != 64 {
		t.Fatalf("sourceKey = %q, %v", base, err)
	}
	same := map[string]func(*debug.BuildInfo, fstest.MapFS){
		"another commit": func(bi *debug.BuildInfo, _ fstest.MapFS) {
			for i := range bi.Settings {
				if strings.HasPrefix(bi.Settings[i].Key, "vcs.") {
					bi.Settings[i].Value = "changed"
				}
			}
		},
		"no version control stamp": func(bi *debug.BuildInfo, _ fstest.MapFS) { bi.Settings = bi.Settings[:5] },
		"the test binary of a command, linked with -w": func(bi *debug.BuildInfo, _ fstest.MapFS) {
			bi.Path += ".test"
			bi.Settings = append(bi.Settings[:5:5], debug.BuildSetting{Key: "-ldflags", Value: "-w"})
		},
		"linked with -s -w": func(bi *debug.BuildInfo, _ fstest.MapFS) {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "-ldflags", Value: "-s  -w"})
		},
	}
	for name, change := range same {
		bi, src := buildInfo(), sources()
		change(bi, src)
		if k, err := sourceKey(bi, src); err != nil || k != base {
			t.Errorf("%s: the key changed (%v)", name, err)
		}
	}
	other := map[string]func(*debug.BuildInfo, fstest.MapFS){
		"a source's content": func(_ *debug.BuildInfo, src fstest.MapFS) {
			src["internal/build/build.go"] = &fstest.MapFile{Data: []byte("package build\n\n")}
		},
		"a test's content": func(_ *debug.BuildInfo, src fstest.MapFS) {
			src["internal/build/build_test.go"] = &fstest.MapFile{Data: []byte("package build\n")}
		},
		"an embedded file's content": func(_ *debug.BuildInfo, src fstest.MapFS) {
			src["qemu/harness/dma-faithful/a.p"] = &fstest.MapFile{Data: []byte("--- a\n+++ c\n")}
		},
		"a file renamed": func(_ *debug.BuildInfo, src fstest.MapFS) {
			src["internal/build/build2.go"] = src["internal/build/build.go"]
			delete(src, "internal/build/build.go")
		},
		"a file more": func(_ *debug.BuildInfo, src fstest.MapFS) {
			src["internal/build/more.go"] = &fstest.MapFile{Data: []byte("package build\n")}
		},
		"an empty file more": func(_ *debug.BuildInfo, src fstest.MapFS) {
			src["internal/build/empty.go"] = &fstest.MapFile{}
		},
		"contents moved between files": func(_ *debug.BuildInfo, src fstest.MapFS) {
			src["go.mod"] = &fstest.MapFile{Data: []byte("module github.com/patchctl/patchctl\npackage build\n")}
			src["internal/build/build.go"] = &fstest.MapFile{}
		},
		"a dependency's sum": func(bi *debug.BuildInfo, _ fstest.MapFS) { bi.Deps[0].Sum = "h1:ccc=" },
		"a dependency's version": func(bi *debug.BuildInfo, _ fstest.MapFS) {
			bi.Deps[1].Version = "v0.39.0"
		},
		"a dependency replaced": func(bi *debug.BuildInfo, _ fstest.MapFS) {
			bi.Deps[0].Replace = &debug.Module{Path: "example.org/cobra", Version: "v1.0.0", Sum: "h1:ddd="}
		},
		"build tags": func(bi *debug.BuildInfo, _ fstest.MapFS) {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "-tags", Value: "netgo"})
		},
		"cgo off": func(bi *debug.BuildInfo, _ fstest.MapFS) { bi.Settings[2].Value = "0" },
		"a variable set by the linker": func(bi *debug.BuildInfo, _ fstest.MapFS) {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "-ldflags", Value: "-w -X main.version=1.0"})
		},
		"the race detector": func(bi *debug.BuildInfo, _ fstest.MapFS) {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "-race", Value: "true"})
		},
	}
	for name, change := range other {
		bi, src := buildInfo(), sources()
		change(bi, src)
		if k, err := sourceKey(bi, src); err != nil || k == base {
			t.Errorf("%s: the key stayed (%v)", name, err)
		}
	}
	refused := map[string]func(*debug.BuildInfo){
		"a program of another module": func(bi *debug.BuildInfo) { bi.Main.Path = "example.org/tool" },
		"a dependency without a sum":  func(bi *debug.BuildInfo) { bi.Deps[1].Sum = "" },
		"a dependency replaced by a local folder": func(bi *debug.BuildInfo) {
			bi.Deps[0].Replace = &debug.Module{Path: "../cobra"}
		},
	}
	for name, change := range refused {
		bi := buildInfo()
		change(bi)
		if k, err := sourceKey(bi, sources()); err == nil {
			t.Errorf("%s: keyed %s, want an error", name, k)
		}
	}
}

// TestMayShare: patchctl's programs share the sources' key; a test binary
// only when it tests a command and says its tests changed nothing.
func TestMayShare(t *testing.T) {
	const mod = "github.com/patchctl/patchctl"
	yes, no := func() bool { return true }, func() bool { return false }
	cases := []struct {
		path      string
		test      bool
		unchanged func() bool
		want      bool
	}{
		{mod + "/cmd/patchctl", false, nil, true},
		// A command's test binary has the command's path.
		{mod + "/cmd/patchctl", true, yes, true},
		{mod + "/cmd/patchctl", true, no, false},
		{mod + "/cmd/patchctl", true, nil, false},
		{mod + "/cmd/patchctl.test", true, yes, true},
		{mod + "/cmd/patchctl.test", false, no, false},
		{mod + "/internal/build.test", true, yes, false},
		{mod + "/internal/pipeline.test", true, yes, false},
		{mod + "/checks.test", true, yes, false},
		{mod + ".test", true, yes, false},
		{"command-line-arguments", false, nil, false},
		{"command-line-arguments.test", true, yes, false},
		{mod + "x/cmd/patchctl", false, nil, false},
		{"example.org/tool", false, nil, false},
	}
	for _, c := range cases {
		if got := mayShare(c.path, mod, c.test, c.unchanged); got != c.want {
			t.Errorf("mayShare(%q, test %v, unchanged %v) = %v, want %v", c.path, c.test, c.unchanged != nil && c.unchanged(), got, c.want)
		}
	}
}

// TestCodeKeyOfThisTestBinary: this binary tests a stage's package, whose
// state its tests may set: its stages are keyed by the binary itself,
// even when told its tests changed nothing. Its sources' key is a key all
// the same.
func TestCodeKeyOfThisTestBinary(t *testing.T) {
	ShareCodeInTests(func() bool { return true })
	t.Cleanup(func() { ShareCodeInTests(nil) })
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	code, err := CodeKey()
	if err != nil || code != self {
		t.Errorf("CodeKey() = %q, %v; want the binary's hash %s", code, err, self)
	}
	src, err := SourceKey()
	if err != nil || len(src) != 64 || src == self {
		t.Errorf("SourceKey() = %q, %v", src, err)
	}
}
