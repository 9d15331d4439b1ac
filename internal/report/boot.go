package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/patchctl/patchctl/internal/boot"
	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/ktap"
	"github.com/patchctl/patchctl/internal/vocab"
)

// Boot prints a boot's result for people: the QEMU command, the KTAP
// tests with their evidence, the kernel's splats, the console's tail on
// a failure and the verdict (patchctl boot).
func Boot(w io.Writer, r *boot.Result) {
	fmt.Fprintf(w, "qemu (%s): %s\n", r.Accel, command.Quote(r.Command))
	if r.KTAP != nil {
		for _, t := range r.KTAP.Subtests {
			ktapText(w, t, "")
		}
	}
	for _, s := range r.Splats {
		fmt.Fprintf(w, "kernel splat %q at console line %d:\n    %s\n", s.Kind, s.Line, strings.Join(s.Excerpt, "\n    "))
	}
	if r.Verdict != vocab.Pass && len(r.Tail) > 0 {
		fmt.Fprintf(w, "console tail:\n    %s\n", strings.Join(r.Tail, "\n    "))
	}
	fmt.Fprintf(w, "%s %s: %s: %s (%.1fs, console %s)\n", r.Kernel, r.Variant, r.Verdict, r.Reason, r.Duration, r.ConsoleLog)
}

// ktapText prints a KTAP test and its subtests, indented.
func ktapText(w io.Writer, t *ktap.Test, indent string) {
	status := "ok"
	switch {
	case t.Skip:
		status = "skip"
	case !t.OK:
		status = vocab.Fail
	}
	fmt.Fprintf(w, "%s%-4s %s\n", indent, status, t.Name)
	for _, d := range t.Diagnostics {
		if e, ok := guestconf.ParseEvidence(d); ok {
			fmt.Fprintf(w, "%s       # capsule SENDs without in-capsule data: %d inline, %d by reference\n", indent, e.Inline, e.ByRef)
			continue
		}
		if strings.HasPrefix(d, "wr ") || !t.OK {
			fmt.Fprintf(w, "%s       # %s\n", indent, d)
		}
	}
	for _, s := range t.Subtests {
		ktapText(w, s, indent+"  ")
	}
}
