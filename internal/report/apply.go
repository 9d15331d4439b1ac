package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/patchctl/patchctl/internal/apply"
	"github.com/patchctl/patchctl/internal/series"
)

// Apply is what patchctl apply reports (its --json document).
type Apply struct {
	Kernel   string          `json:"kernel"`
	Source   string          `json:"source"`
	WorkTree string          `json:"work_tree,omitempty"`
	Patches  []*apply.Result `json:"patches"`
	Changed  []string        `json:"changed_files"`
	Written  bool            `json:"written"`
}

// ApplyText writes apply's report for people: each patch's disposition
// against the manifest's (manifest, a path under root), its hunks (where
// each landed, or why it failed), the names it introduces when it is
// upstream or conflicts, and the totals.
func ApplyText(w io.Writer, rep *Apply, manifest, root string) {
	rel, err := filepath.Rel(root, manifest)
	if err != nil {
		rel = manifest
	}
	fmt.Fprintf(w, "kernel %s: %s\n\n", rep.Kernel, rep.Source)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PATCH\tDISPOSITION\tEXPECTED\t")
	for _, r := range rep.Patches {
		verdict := "ok"
		if !r.Match {
			verdict = "MISMATCH"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", strings.TrimPrefix(r.Source, "patches/"), r.Disposition, r.Expected, verdict)
	}
	tw.Flush()
	for _, r := range rep.Patches {
		fmt.Fprintf(w, "\n%s\n  %s\n", strings.TrimPrefix(r.Source, "patches/"), r.Subject)
		if len(r.Hunks) > 0 && r.Disposition != series.AlreadyUpstream {
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "  \tFILE\tHUNK\tSTATED\tLANDED\tOFFSET\tFUZZ\t\t")
			for _, h := range r.Hunks {
				switch {
				case h.Applied && h.ReversedAt > 0:
					fmt.Fprintf(tw, "  \t%s\t%d\t%d\t%d\t%+d\t%d\t\t  its reverse matches at %d: check it is not applied twice\n", h.File, h.Index, h.Stated, h.Landed, h.Offset, h.Fuzz, h.ReversedAt)
				case h.Applied:
					fmt.Fprintf(tw, "  \t%s\t%d\t%d\t%d\t%+d\t%d\t\t\n", h.File, h.Index, h.Stated, h.Landed, h.Offset, h.Fuzz)
				case h.Reversed && h.Landed > 0:
					fmt.Fprintf(tw, "  \t%s\t%d\t%d\t%d\t%+d\t%d\t\t  REVERSED: previously applied (the reverse applies here)\n", h.File, h.Index, h.Stated, h.Landed, h.Offset, h.Fuzz)
				case h.Reversed:
					fmt.Fprintf(tw, "  \t%s\t%d\t%d\t-\t-\t-\t\t  REVERSED: previously applied (%s)\n", h.File, h.Index, h.Stated, map[bool]string{true: "the file is gone", false: "the file is there"}[h.MissingFile])
				default:
					near := fmt.Sprintf("closest at %d: %d of %d lines", h.Nearest, h.NearMatched, h.NearTotal)
					if h.MissingFile {
						near = "file missing"
					}
					if h.Why != "" {
						near = h.Why
					}
					fmt.Fprintf(tw, "  \t%s\t%d\t%d\t-\t-\t-\t\t  FAILED, %s\n", h.File, h.Index, h.Stated, near)
				}
			}
			tw.Flush()
		}
		for _, l := range r.Explain() {
			fmt.Fprintf(w, "  %s\n", l)
		}
		if u := r.Upstream; u != nil && (r.Disposition == series.AlreadyUpstream || r.Disposition == series.Conflict) {
			applyNames(w, u)
		}
		if r.Disposition == series.Conflict {
			for _, h := range r.Hunks {
				if !h.Applied {
					fmt.Fprintf(w, "  first failing hunk (%s hunk %d):\n", h.File, h.Index)
					for _, l := range strings.Split(strings.TrimRight(h.Text, "\n"), "\n") {
						fmt.Fprintf(w, "    %s\n", l)
					}
					break
				}
			}
		}
		if r.Reason != "" {
			fmt.Fprintf(w, "  reason: %s\n", r.Reason)
		}
	}
	fmt.Fprintln(w)
	applied := 0
	for _, r := range rep.Patches {
		if series.IsApplied(r.Disposition) {
			applied++
		}
	}
	switch {
	case rep.Written:
		fmt.Fprintf(w, "%d of %d patches applied to %s (files changed: %d); dispositions match %s\n", applied, len(rep.Patches), rep.WorkTree, len(rep.Changed), rel)
	default:
		fmt.Fprintf(w, "%d of %d patches apply; work tree not written\n", applied, len(rep.Patches))
	}
}

// applyNames says which names the patch introduces are in the tree and
// where, which are not, and which it only uses (its pre-image has them).
func applyNames(w io.Writer, u *apply.UpstreamMatch) {
	list := func(ns []apply.NameAt) string {
		var out []string
		for _, n := range ns {
			out = append(out, n.String())
		}
		return strings.Join(out, ", ")
	}
	if len(u.NamesFound) > 0 {
		fmt.Fprintf(w, "  names it introduces found in the tree: %s\n", list(u.NamesFound))
	}
	if len(u.NamesMissing) > 0 {
		fmt.Fprintf(w, "  names it introduces not in the tree: %s\n", strings.Join(u.NamesMissing, ", "))
	}
	if len(u.NamesInPreimage) > 0 {
		fmt.Fprintf(w, "  names it adds that the touched files already use (not evidence): %s\n", list(u.NamesInPreimage))
	}
}
