package apply

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/patchctl/patchctl/internal/mailpatch"
)

// blobID is git's object id of a blob with content, abbreviated as the
// kernel abbreviates (12 hex digits).
func blobID(content []byte, exists bool) string {
	if !exists {
		return strings.Repeat("0", 12)
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// regenerate rewrites p for the tree it was just applied to: each hunk at
// the line where it landed, its context lines as the file has them (so
// fuzz is gone), new line numbers following, index lines of the real
// blobs. The header, message and trailers stay.
func regenerate(p *mailpatch.Patch, fos []fileOutcome) (*mailpatch.Patch, error) {
	q := *p
	q.Files = nil
	q.Notes = ""
	q.Repairs, q.Warnings = nil, nil
	var diff strings.Builder
	for i, fo := range fos {
		orig := p.Files[i]
		f := *orig
		f.TextFragments = nil
		lines := splitLines(fo.before)
		for _, h := range fo.hunks {
			f.TextFragments = append(f.TextFragments, regenFragment(h, lines))
		}
		f.TextFragments = mergeOverlapping(f.TextFragments)
		f.OldOIDPrefix = blobID(fo.before, !orig.IsNew)
		f.NewOIDPrefix = blobID(fo.content, fo.exists)
		if f.OldMode == 0 && f.NewMode == 0 && !f.IsNew && !f.IsDelete {
			f.OldMode = 0o100644
		}
		for _, fr := range f.TextFragments {
			if err := fr.Validate(); err != nil {
				return nil, fmt.Errorf("regenerating %s: %w", f.NewName, err)
			}
		}
		q.Files = append(q.Files, &f)
		diff.WriteString(f.String())
	}
	q.Diff = diff.String()
	return &q, nil
}

// regenFragment rebuilds one located hunk against the file's own lines.
func regenFragment(h Hunk, lines []string) *gitdiff.TextFragment {
	fr, pl := h.fragment, h.placement
	out := &gitdiff.TextFragment{Comment: fr.Comment}
	k := pl.pos - pl.dropL // file index of the hunk's first old line
	first := int64(-1)
	for _, l := range fr.Lines {
		if l.Old() {
			if k < 0 || k >= len(lines) {
				k++
				continue // dropped context beyond the file's ends
			}
			if first < 0 {
				first = int64(k)
			}
			if l.Op == gitdiff.OpContext {
				l.Line = lines[k]
			}
			k++
		}
		out.Lines = append(out.Lines, l)
	}
	recount(out)
	if first < 0 {
		// Nothing old: an insertion after line pos (0: at the top).
		out.OldPosition = int64(pl.pos)
	} else {
		out.OldPosition = first + 1
	}
	out.NewPosition = out.OldPosition + h.newPosOffset
	if out.NewLines == 0 {
		out.NewPosition--
	}
	if out.OldLines == 0 && first < 0 && fr.OldPosition == 0 {
		out.OldPosition, out.NewPosition = 0, 1
	}
	return out
}

// recount sets a fragment's line counts and context sizes from its lines.
func recount(out *gitdiff.TextFragment) {
	out.OldLines, out.NewLines, out.LinesAdded, out.LinesDeleted = 0, 0, 0, 0
	out.LeadingContext, out.TrailingContext = 0, 0
	adds, dels := false, false
	for _, l := range out.Lines {
		switch l.Op {
		case gitdiff.OpContext:
			out.OldLines++
			out.NewLines++
			if !adds && !dels {
				out.LeadingContext++
			} else {
				out.TrailingContext++
			}
		case gitdiff.OpAdd:
			out.NewLines++
			out.LinesAdded++
			adds, out.TrailingContext = true, 0
		case gitdiff.OpDelete:
			out.OldLines++
			out.LinesDeleted++
			dels, out.TrailingContext = true, 0
		}
	}
}

// mergeOverlapping joins hunks whose context overlaps (GNU patch lets a
// hunk's leading context reach back over the trailing context of the
// hunk before; git apply refuses to match lines an earlier hunk
// produced): one hunk, as diff would have written it.
func mergeOverlapping(frags []*gitdiff.TextFragment) []*gitdiff.TextFragment {
	var out []*gitdiff.TextFragment
	for _, fr := range frags {
		if n := len(out); n > 0 {
			prev := out[n-1]
			if prev.OldLines > 0 && fr.OldLines > 0 && fr.OldPosition < prev.OldPosition+prev.OldLines {
				m := &gitdiff.TextFragment{Comment: prev.Comment, OldPosition: prev.OldPosition, NewPosition: prev.NewPosition}
				k := prev.OldPosition
				for _, l := range prev.Lines {
					if l.Old() {
						if k >= fr.OldPosition {
							break // trailing context the next hunk has too
						}
						k++
					}
					m.Lines = append(m.Lines, l)
				}
				m.Lines = append(m.Lines, fr.Lines...)
				recount(m)
				out[n-1] = m
				continue
			}
		}
		out = append(out, fr)
	}
	return out
}
