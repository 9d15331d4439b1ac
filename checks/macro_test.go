package checks

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/checks/engine"
)

// A finding on a line that expands a macro of the module names the
// macro's definition as related location.
func TestMacroEvidence(t *testing.T) {
	_, _, rep := runCase(t, filepath.Join("testdata", "macro_flag_bug.c"))
	for _, f := range rep.Findings {
		for _, e := range f.Evidence {
			if e.Line == 4 && strings.Contains(e.Message, "expands macro TC_GO_INLINE") {
				return
			}
		}
	}
	t.Errorf("no evidence at the macro's definition (line 4): %v", rep.Findings)
}

// Expansion keeps every line where it was (uses spanning lines are
// padded), leaves directives, comments, strings and other macros alone.
func TestExpandMacrosKeepsLines(t *testing.T) {
	src := []byte("#define SETF(w) ((w)->send_flags |= IB_SEND_INLINE)\n" +
		"#define N 4\n" +
		"void f(struct ib_send_wr *wr)\n{\n" +
		"\tSETF(\n\t\twr);\n" +
		"\tpr_info(\"SETF(x)\"); /* SETF(y) */\n" +
		"\tg(N);\n}\n")
	out, uses := engine.ExpandMacros(t.TempDir(), "x.c", src)
	if got, want := bytes.Count(out, []byte("\n")), bytes.Count(src, []byte("\n")); got != want {
		t.Fatalf("%d lines, want %d:\n%s", got, want, out)
	}
	lines := strings.Split(string(out), "\n")
	if !strings.Contains(lines[4], "((wr)->send_flags |= IB_SEND_INLINE)") {
		t.Errorf("line 5 not expanded: %q", lines[4])
	}
	if !strings.Contains(lines[6], `"SETF(x)"`) || !strings.Contains(lines[6], "/* SETF(y) */") || !strings.Contains(lines[7], "g(N)") {
		t.Errorf("a literal, a comment or a constant was expanded: %q %q", lines[6], lines[7])
	}
	if u, ok := uses[5]; !ok || u.Name != "SETF" || u.Line != 1 {
		t.Errorf("uses = %v", uses)
	}
}
