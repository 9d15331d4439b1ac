package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	iktap "github.com/patchctl/patchctl/internal/ktap"
	"github.com/patchctl/patchctl/internal/report/reportcheck"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// console writes what the agent prints for a run: an abort before any
// test, or transports whose tests pass, fail or are cut short.
func console(abort string, failing, crash bool) string {
	var b bytes.Buffer
	b.WriteString("[    1.600000] Run /init as init process\n")
	k := &ktap{out: &b}
	if abort != "" {
		k.abort(abort)
		return b.String()
	}
	k.header("", 2)
	for i, tr := range []string{"rxe", "siw"} {
		begin := time.Now()
		s := k.sub()
		s.header(tr, 3)
		s.result(true, "link", "")
		if crash && tr == "rxe" {
			finishParent(s, i+1, tr, false, begin) // what a crash leaves: no more results
			continue
		}
		ok := !(failing && tr == "siw")
		if !ok {
			s.diag("write_read_16k: %v", errors.New("data mismatch at byte 4096"))
		}
		s.result(ok, "write_read_16k", "")
		s.result(true, "inline_evidence", "no kprobe events")
		finishParent(s, i+1, tr, ok, begin)
	}
	return b.String()
}

// TestKTAPForKunitParser: the kernel's own parser reads every console the
// agent writes, an abort included, with the counts patchctl's parser
// reads; no bare "Bail out!" is ever printed.
func TestKTAPForKunitParser(t *testing.T) {
	_, tree := testenv.Kernel(t, testkernel.Default)
	for name, c := range map[string]struct {
		text                  string
		pass, fail, skip, crs int
		status                string
	}{
		"pass":    {console("", false, false), 4, 0, 2, 0, "SUCCESS"},
		"failing": {console("", true, false), 3, 1, 2, 0, "FAILURE"},
		"crash":   {console("", false, true), 3, 0, 1, 2, "TEST_CRASHED"}, // the missing results are crashed
		"abort":   {console("network: no eth0", false, false), 0, 1, 0, 0, "FAILURE"},
	} {
		t.Run(name, func(t *testing.T) {
			if strings.Contains(c.text, "Bail out!") {
				t.Fatalf("a bail-out line:\n%s", c.text)
			}
			p := filepath.Join(t.TempDir(), "console.log")
			os.WriteFile(p, []byte(c.text), 0o644)
			got := reportcheck.KTAP(t, tree, p)
			if got.Passed != c.pass || got.Failed != c.fail || got.Skipped != c.skip || got.Crashed != c.crs || got.Status != c.status {
				t.Errorf("kunit_parser: %s, passed %d failed %d skipped %d crashed %d errors %d; want %s %d/%d\n%s\n%s", got.Status, got.Passed, got.Failed, got.Skipped, got.Crashed, got.Errors, c.status, c.pass, c.fail, c.text, got.Output)
			}
			doc := iktap.Parse(c.text)
			if doc == nil {
				t.Fatal("patchctl's parser finds no KTAP")
			}
			n := doc.Count()
			// kunit_parser counts a SKIP as skipped only with "ok"; the
			// agent marks its informational results "ok # SKIP" too.
			if name != "abort" && (n.Pass+n.Skip != got.Passed+got.Skipped || n.Fail != got.Failed) {
				t.Errorf("patchctl's parser counts %+v", n)
			}
			if name == "abort" && doc.Bail != "network: no eth0" {
				t.Errorf("the abort is not the run's error: %q", doc.Bail)
			}
			if name == "crash" && doc.Complete() {
				t.Error("a cut-short run is complete")
			}
			if !strings.Contains(c.text, "# duration: ") && name != "abort" {
				t.Error("no durations")
			}
		})
	}
}
