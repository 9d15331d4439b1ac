package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
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

// cliTODO are the imports past the pipeline that verbs still have, per
// file: each a verb not yet behind internal/pipeline. The list only
// shrinks: an entry a file no longer needs fails the test too.
var cliTODO = map[string][]string{
	// TODO(apply): the apply verb writes the work tree and series/ itself.
	"apply.go": {"internal/apply", "internal/series"},
	// TODO(b4-check): per-patch checks run checks directly.
	"b4check.go": {"checks"},
	// TODO(bench): the workload's flags, bench.Run and bench.Text are
	// called here (the images and boots are pipeline.BenchBoots).
	"bench.go": {"internal/bench"},
	// TODO(check): the check verb runs checks' stage itself (its glue
	// is moving to the pipeline) and checks paths with fsutil.
	"check.go": {"checks", "internal/fsutil"},
	// TODO(global): GlobalOptions hand out *tree.Lock and *tree.Cache.
	"global.go": {"internal/tree"},
	// Not a TODO: main's exit kills every child process group the
	// stages started (run.KillAll), a CLI need.
	"root.go": {"internal/run"},
	// TODO(tree): tree list/prepare/pin/verify call tree (and debian for pins) directly.
	"tree.go": {"internal/tree", "internal/debian"},
	// TODO(try): reading the input (source, mailpatch), --record's
	// name check and try.json (fsutil) are still the verb's.
	"try.go": {"internal/fsutil", "internal/mailpatch", "internal/source", "internal/tree"},
	// TODO(try): the where-to-test logic (base-commit, elsewhere)
	// reads manifests and trees and applies on its own.
	"trywhere.go": {"internal/apply", "internal/series", "internal/tree"},
}

// TestCLIImportsOnlyPipeline keeps cmd/patchctl from reaching past the
// pipeline: each file imports the module's packages only from
// cliImports, or from its own cliTODO entry.
func TestCLIImportsOnlyPipeline(t *testing.T) {
	const module = "github.com/patchctl/patchctl/"
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]map[string]bool{}
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
		seen[f] = map[string]bool{}
		for _, is := range af.Imports {
			p, err := strconv.Unquote(is.Path.Value)
			if err != nil || !strings.HasPrefix(p, module) {
				continue
			}
			p = strings.TrimPrefix(p, module)
			seen[f][p] = true
			if _, ok := cliImports[p]; ok {
				continue
			}
			allowed := false
			for _, q := range cliTODO[f] {
				allowed = allowed || q == p
			}
			if !allowed {
				t.Errorf("%s imports %s: the CLI reaches the stages through internal/pipeline (add a pipeline step), not past it", f, p)
			}
		}
	}
	var names []string
	for f := range cliTODO {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		for _, p := range cliTODO[f] {
			if !seen[f][p] {
				t.Errorf("cliTODO lets %s import %s, which it no longer does: drop the entry", f, p)
			}
		}
	}
}
