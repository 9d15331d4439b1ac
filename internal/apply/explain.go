package apply

import (
	"fmt"
	"strings"

	"github.com/patchctl/patchctl/internal/series"
)

// Explain says, one line each, why a patch does not apply: for every hunk
// that failed, its file and header, the nearest place and the first line
// that differs there, the fuzz tried, and where its reverse matches if it
// does (that part is already there); for a patch previously applied or
// already upstream, where the tree has it. Nothing for a patch that
// applies.
func (r *Result) Explain() []string {
	if series.IsApplied(r.Disposition) {
		return nil
	}
	var out []string
	if r.Strip != nil {
		out = append(out, fmt.Sprintf("plain diff (no \"diff --git\" lines): file names read as patch -p%d", *r.Strip))
	}
	if u := r.Upstream; u != nil && r.Disposition == series.AlreadyUpstream {
		var where []string
		for _, f := range u.Files {
			where = append(where, f.String())
		}
		out = append(out, fmt.Sprintf("already upstream: %d of %d added lines are in the tree: %s", u.Found, u.Total, strings.Join(where, ", ")))
		return out
	}
	for _, h := range r.Hunks {
		if h.Applied {
			continue
		}
		out = append(out, h.explain())
	}
	return out
}

// header is the hunk's "@@ ... @@" line.
func (h Hunk) header() string {
	if i := strings.IndexByte(h.Text, '\n'); i > 0 {
		return h.Text[:i]
	}
	if h.fragment != nil {
		return strings.TrimRight(strings.SplitN(h.fragment.String(), "\n", 2)[0], "\n")
	}
	return ""
}

func (h Hunk) explain() string {
	what := fmt.Sprintf("%s hunk %d", h.File, h.Index)
	if hd := h.header(); hd != "" {
		what += " (" + hd + ")"
	}
	switch {
	case h.Why != "":
		return fmt.Sprintf("%s: %s", what, h.Why)
	case h.Reversed && h.located:
		fz := ""
		if h.Fuzz > 0 {
			fz = fmt.Sprintf(" with fuzz %d (GNU patch -R -F0 does not find it)", h.Fuzz)
		}
		return fmt.Sprintf("%s: previously applied: its reverse matches at line %d (offset %+d)%s", what, h.Landed, h.Offset, fz)
	case h.Reversed && h.MissingFile:
		return fmt.Sprintf("%s: previously applied: the file it deletes is gone", what)
	case h.MissingFile:
		return fmt.Sprintf("%s: FAILED: no such file in the tree", what)
	}
	s := fmt.Sprintf("%s: FAILED: not found at line %d or near it with fuzz 0-%d", what, h.Stated, h.FuzzTried)
	if h.Nearest > 0 {
		s += fmt.Sprintf("; nearest at line %d (%d of %d lines match)", h.Nearest, h.NearMatched, h.NearTotal)
		if h.NearWant != "" {
			s += fmt.Sprintf(", first difference: the hunk has %q, the file %q", clip(h.NearWant), clip(h.NearHave))
		}
	}
	if h.ReversedAt > 0 {
		s += fmt.Sprintf("; its reverse matches at line %d (already there)", h.ReversedAt)
	}
	return s
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 72 {
		return s[:69] + "..."
	}
	return s
}
