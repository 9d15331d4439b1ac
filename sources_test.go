package patchctl

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSourcesHoldEveryBuildInput: every file a build of a package of the
// module reads (go list: Go files with cgo's and the tests', assembly, C
// and headers, system objects, embedded files; those excluded by build
// constraints too) is in Sources, with the content it has here, and so
// are go.mod and go.sum. A package at a depth or a kind of file the
// patterns miss fails here, not as a stage reused across code that
// differs.
func TestSourcesHoldEveryBuildInput(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool")
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "-e", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	type pkg struct {
		ImportPath, Dir                                      string
		GoFiles, CgoFiles, IgnoredGoFiles, IgnoredOtherFiles []string
		SFiles, CFiles, HFiles, CXXFiles, SysoFiles          []string
		TestGoFiles, XTestGoFiles, EmbedFiles                []string
		TestEmbedFiles, XTestEmbedFiles                      []string
	}
	want := []string{"go.mod", "go.sum"}
	dec := json.NewDecoder(bytes.NewReader(out))
	packages := 0
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		packages++
		rel, err := filepath.Rel(root, p.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, list := range [][]string{p.GoFiles, p.CgoFiles, p.IgnoredGoFiles, p.IgnoredOtherFiles, p.SFiles, p.CFiles, p.HFiles, p.CXXFiles, p.SysoFiles, p.TestGoFiles, p.XTestGoFiles, p.EmbedFiles, p.TestEmbedFiles, p.XTestEmbedFiles} {
			for _, f := range list {
				want = append(want, filepath.ToSlash(filepath.Join(rel, f)))
			}
		}
	}
	if packages < 30 || len(want) < 200 {
		t.Fatalf("go list named %d packages and %d files: not the module's", packages, len(want))
	}
	for _, f := range want {
		got, err := fs.ReadFile(Sources, f)
		if err != nil {
			t.Errorf("%s is not in Sources: add a pattern to sources.go's //go:embed lines", f)
			continue
		}
		disk, err := os.ReadFile(filepath.FromSlash(f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, disk) {
			t.Errorf("%s in Sources differs from the file: the test binary is older than the checkout", f)
		}
	}
}
