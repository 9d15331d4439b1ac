package checks

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
//
// Both compare the findings' Subject (the request, the SGE, the defect,
// the address's origin, set where the rule makes the finding), never
// their messages: rewording a message changes nothing here.

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
		if f.Rule != RuleInlineSGE || f.Severity != SevError || f.Subject == nil || f.Subject.WR == "" {
			continue
		}
		k := lineKey{postKey{f.File, f.Function, f.Subject.WR}, f.Line}
		if _, ok := firstErr[k]; !ok {
			firstErr[k] = i
		}
	}
	for i, f := range fs {
		if f.Rule != RuleInlineSGE || f.Severity != SevWarning || f.Subject == nil || f.Subject.WR == "" {
			continue
		}
		if j, ok := firstErr[lineKey{postKey{f.File, f.Function, f.Subject.WR}, f.Line}]; ok {
			drop[i] = true
			fs[j].Evidence = append(fs[j].Evidence, Evidence{File: f.File, Line: f.Line, Message: "also, on another path: " + f.Message})
		}
	}
	// A helper's exit restated at a caller's post.
	for i, f := range fs {
		s := f.Subject
		if drop[i] || f.Rule != RuleInlineSGE || s == nil || !s.Exit || s.SGE < 0 || s.Addr == nil {
			continue
		}
		for j, p := range fs {
			ps := p.Subject
			if j == i || drop[j] || p.Rule != f.Rule || p.Severity != f.Severity || ps == nil || ps.Exit || p.Function == f.Function || ps.SGE != s.SGE || ps.Addr == nil || *ps.Addr != *s.Addr {
				continue
			}
			drop[i] = true
			fs[j].Evidence = append(fs[j].Evidence, Evidence{File: f.File, Line: f.Line, Message: "the request is built by " + f.Function + "(), which leaves it here"})
			break
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
