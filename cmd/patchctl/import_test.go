package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = execute(args, &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

func TestImportSeedsJSON(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := run(t, "import", "--json", "--out", out,
		"../../patches/nvme-rdma-inline-capsule", "../../patches/mlx5-umr-inline-reg-wr", "../../patches/nvmet-rdma-inline-16k")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Patches []struct {
			Series, Output, Subject, Author string
			Repairs                         []struct{ Kind, Before, After string }
		}
		Warnings []struct{ Message string }
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, stdout)
	}
	if len(rep.Patches) != 3 {
		t.Fatalf("%d patches, want 3", len(rep.Patches))
	}
	for _, p := range rep.Patches {
		if _, err := os.Stat(p.Output); err != nil {
			t.Errorf("output %s not written: %v", p.Output, err)
		}
		if len(p.Repairs) == 0 {
			t.Errorf("%s: no repairs listed", p.Series)
		}
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0].Message, "2/2 missing") {
		t.Errorf("want the 2/2 warning, got %+v", rep.Warnings)
	}
}

func TestImportBadInputWritesNothing(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.patch")
	os.WriteFile(bad, []byte("[PATCH] x: y\n\nFrom: A <a@b.org>\n\nbody\n---\ndiff --git a/../x b/../x\n--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n"), 0o644)
	out := filepath.Join(dir, "out")
	// A good series first: nothing of it may be written either.
	code, _, stderr := run(t, "import", "--out", out, "../../patches/nvme-rdma-inline-capsule", bad)
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(stderr, "bad.patch") || !strings.Contains(stderr, "unsafe path") {
		t.Errorf("message does not name the file and the problem: %s", stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output folder was created for a refused import")
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"import"}, {"import", "--no-such-flag", "x"}, {"no-such-verb"}} {
		if code, _, _ := run(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, out, _ := run(t, "--version"); code != 0 || !strings.Contains(out, "patchctl version") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	if code, out, _ := run(t, "completion", "bash"); code != 0 || !strings.Contains(out, "bash completion") {
		t.Errorf("completion bash: exit %d", code)
	}
}
