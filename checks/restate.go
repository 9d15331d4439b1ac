package checks

import (
	"regexp"
	"strings"
)

// One defect, one report. The address rule judges every path to a post
// (and to the exit of a function that leaves a request in an object),
// so one wrong request can be stated several times; dropRestatements
// keeps the statement that names the defect where it happens:
//
//   - At one post (or exit) of one request, an error (an SGE holds a DMA
//     address, num_sge is not bounded) makes the post wrong; a warning
//     about the same request there ("cannot show this SGE holds a kernel
//     virtual address", another path) restates that the post is not
//     shown right. It becomes evidence of the error.
//   - A helper that leaves an inline request with a DMA SGE in its
//     caller's object is reported at its exit; when a caller's post of
//     that request is reported for the same SGE and the same address
//     (the same line it came from), the post is where the defect is, and
//     the helper's exit becomes evidence of it.

var inlineWRRe = regexp.MustCompile(`of inline work request (\S+?)(?::| holds| \()`)

// sgeOf is the "SGE k" a message is about ("" for the others).
func sgeOf(msg string) string {
	if !strings.HasPrefix(msg, "SGE ") {
		return ""
	}
	if i := strings.Index(msg, " ("); i > 0 {
		return msg[:i]
	}
	return ""
}

func addressEvidence(f Finding) []Evidence {
	var out []Evidence
	for _, e := range f.Evidence {
		if strings.HasPrefix(e.Message, "address from ") {
			out = append(out, e)
		}
	}
	return out
}

func atExit(f Finding) bool {
	return len(f.Evidence) > 0 && strings.Contains(f.Evidence[0].Message, exitWhere)
}

func dropRestatements(fs []Finding) []Finding {
	type postKey struct{ file, fn, wr string }
	type lineKey struct {
		postKey
		line int
	}
	drop := make([]bool, len(fs))
	// Warnings folded into an error on the same request at the same
	// post.
	firstErr := map[lineKey]int{}
	for i, f := range fs {
		if f.Rule != RuleInlineSGE || f.Severity != SevError {
			continue
		}
		m := inlineWRRe.FindStringSubmatch(f.Message)
		if m == nil {
			continue
		}
		k := lineKey{postKey{f.File, f.Function, m[1]}, f.Line}
		if _, ok := firstErr[k]; !ok {
			firstErr[k] = i
		}
	}
	for i, f := range fs {
		if f.Rule != RuleInlineSGE || f.Severity != SevWarning {
			continue
		}
		m := inlineWRRe.FindStringSubmatch(f.Message)
		if m == nil {
			continue
		}
		if j, ok := firstErr[lineKey{postKey{f.File, f.Function, m[1]}, f.Line}]; ok {
			drop[i] = true
			fs[j].Evidence = append(fs[j].Evidence, Evidence{File: f.File, Line: f.Line, Message: "also, on another path: " + f.Message})
		}
	}
	// A helper's exit restated at a caller's post.
	for i, f := range fs {
		if drop[i] || f.Rule != RuleInlineSGE || !atExit(f) {
			continue
		}
		sge, addr := sgeOf(f.Message), addressEvidence(f)
		if sge == "" || len(addr) == 0 {
			continue
		}
		for j, p := range fs {
			if j == i || drop[j] || p.Rule != f.Rule || p.Severity != f.Severity || atExit(p) || p.Function == f.Function || sgeOf(p.Message) != sge {
				continue
			}
			same := false
			for _, a := range addressEvidence(p) {
				for _, b := range addr {
					same = same || a == b
				}
			}
			if same {
				drop[i] = true
				fs[j].Evidence = append(fs[j].Evidence, Evidence{File: f.File, Line: f.Line, Message: "the request is built by " + f.Function + "(), which leaves it here"})
				break
			}
		}
	}
	var out []Finding
	for i, f := range fs {
		if !drop[i] {
			out = append(out, f)
		}
	}
	return out
}
