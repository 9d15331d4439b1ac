package pipeline

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/patchctl/patchctl/internal/fsutil"
)

// WriteMutateTable prints the kill table: per mutant its id, operator,
// file:line, what each oracle said and the verdict; then the scores and
// the surviving mutants with their diff.
func WriteMutateTable(w io.Writer, r *MutateReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tOPERATOR\tFILE:LINE\tSTATIC\tCOMPILER\tRUNTIME\tVERDICT")
	for _, m := range r.Mutants {
		comp, rt := "-", "-"
		if !r.StaticOnly {
			comp, rt = word(m.Compiler), word(m.Runtime)
			if m.Compiler {
				rt = "unbuilt"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s:%d\t%s\t%s\t%s\t%s\n", m.ID, m.Operator, m.File, m.Line, word(m.Static), comp, rt, m.Verdict)
	}
	tw.Flush()
	n := len(r.Mutants)
	fmt.Fprintf(w, "\nmutation score over %d mutants (killed/judged):\n", n)
	count := func(f func(*MutantResult) bool) int {
		c := 0
		for _, m := range r.Mutants {
			if f(m) {
				c++
			}
		}
		return c
	}
	line := func(name string, k int, na bool) {
		if na {
			fmt.Fprintf(w, "  %-22s n/a (--static-only)\n", name)
			return
		}
		fmt.Fprintf(w, "  %-22s %d/%d %s\n", name, k, n, pct(k, n))
	}
	line("static (check)", count(func(m *MutantResult) bool { return m.Static }), false)
	line("compiler", count(func(m *MutantResult) bool { return m.Compiler }), r.StaticOnly)
	line("runtime (boot)", count(func(m *MutantResult) bool { return m.Runtime }), r.StaticOnly)
	line("build and boot", count(func(m *MutantResult) bool { return m.Runtime || m.Compiler }), r.StaticOnly)
	line("all oracles", count(func(m *MutantResult) bool { return m.Verdict != Survived }), false)
	if r.Reference != nil {
		fmt.Fprintf(w, "unmutated series: %s; its check: %d errors or warnings\n", r.Reference.Summary(), r.ReferenceFindings)
	}
	if s := r.Survivors(); len(s) > 0 {
		fmt.Fprintf(w, "\n%d surviving mutants (no oracle saw them):\n", len(s))
		for _, m := range s {
			fmt.Fprintf(w, "%s %s: %s\n%s", m.ID, m.Operator, m.Why, m.Diff)
		}
	}
	if r.Generated > n {
		fmt.Fprintf(w, "\n%d of %d mutants judged (--max); the rest were not run\n", n, r.Generated)
	}
}

func word(killed bool) string {
	if killed {
		return "killed"
	}
	return "-"
}

func pct(k, n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("(%.0f %%)", 100*float64(k)/float64(n))
}

// WriteMutateReport writes mutate.json and mutate.txt (the table) into
// dir.
func WriteMutateReport(dir string, r *MutateReport) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := fsutil.WriteFile(filepath.Join(dir, "mutate.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the mutation report: %w", err)
	}
	var t strings.Builder
	WriteMutateTable(&t, r)
	if err := fsutil.WriteFile(filepath.Join(dir, "mutate.txt"), []byte(t.String()), 0o644); err != nil {
		return fmt.Errorf("writing the mutation table: %w", err)
	}
	return nil
}
