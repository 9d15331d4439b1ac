package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// cliImports are the module's packages every file of the CLI may import:
// the verbs call the pipeline's steps and never sequence stages
// themselves (issue 30).
var cliImports = map[string]string{
	"internal/pipeline": "the only orchestrator: target resolution, apply, check, build, boot, compare, record",
	"internal/vocab":    "the shared words: statuses, variants, transports, kernel-from, accel, and their parsers",
	"internal/report":   "what the verbs print and write: summary, reports, --url-base's check",
	"internal/errs":     "sentinel errors → exit codes, for the CLI's own usage errors",
	"internal/progress": "the CLI's progress lines",
}

// TestCLIImportsOnlyPipeline keeps cmd/patchctl from reaching past the
// pipeline: each file imports the module's packages only from
// cliImports (.golangci.yml's depguard rule cmd-only-through-pipeline
// says the same to make lint).
func TestCLIImportsOnlyPipeline(t *testing.T) {
	const module = "github.com/patchctl/patchctl/"
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(fset, f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, is := range af.Imports {
			p, err := strconv.Unquote(is.Path.Value)
			if err != nil || !strings.HasPrefix(p, module) {
				continue
			}
			p = strings.TrimPrefix(p, module)
			if _, ok := cliImports[p]; !ok {
				t.Errorf("%s imports %s: the CLI reaches the stages through internal/pipeline (add a pipeline step), not past it", f, p)
			}
		}
	}
}
