package mailpatch

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// Input is one input file's bytes and the name to report it by.
type Input struct {
	Name string
	Data []byte
}

// Thread is a mail thread read the way b4 reads one: the newest revision's
// patches, in order, with the review trailers that replies gave; what was
// left out and why.
type Thread struct {
	Series  string   `json:"series"`
	Patches []*Patch `json:"-"`
	// Raw holds each patch's message as received (the bytes of its mbox
	// entry or file, escaping and all), for patches/<series>/.
	Raw [][]byte `json:"-"`
	// Version is the revision taken (1 when no [PATCH vN] said otherwise).
	Version int    `json:"version"`
	Cover   *Cover `json:"cover,omitempty"`
	// Skipped are the older (or other) revisions not taken.
	Skipped []Revision `json:"skipped,omitempty"`
	// Missing are the numbers of the taken revision not in the thread ("2/3").
	Missing []string `json:"missing,omitempty"`
	// Added are the trailers from replies added to the patches; Ignored
	// those from replies to a revision not taken.
	Added   []Trailer `json:"trailers,omitempty"`
	Ignored []Trailer `json:"trailers_not_added,omitempty"`
	// Replies counts the messages that are neither patches nor cover letters.
	Replies int       `json:"replies"`
	Warn    []Warning `json:"warnings,omitempty"`
	byID    map[string]*threadMsg
}

// Cover is a series' cover letter ([PATCH vN 0/M]).
type Cover struct {
	Subject   string `json:"subject"` // with its prefix
	title     string // without
	MessageID string `json:"message_id,omitempty"`
	Version   int    `json:"version"`
}

// Revision is a revision of the series that was not taken.
type Revision struct {
	Version int      `json:"version"`
	Patches []string `json:"patches"` // subject lines
}

// Trailer is one trailer a reply gave.
type Trailer struct {
	Line string `json:"trailer"` // "Reviewed-by: A U Thor <a@example.org>"
	From string `json:"from"`    // the reply's Message-ID
	// To is the subject line of the patch it went to, or "all patches"
	// for a reply to the cover letter.
	To string `json:"to"`
}

type threadMsg struct {
	id, parent string
	subject    string
	patch      *Patch
	raw        []byte
	cover      *Cover
	trailers   []string
	replyPatch *Patch    // a reply's diff, when it has one
	date       time.Time // zero when the message has none that parses
	seq        int       // archive order
}

// replySubject is a reply's subject: "Re:" and its translations.
var replySubject = regexp.MustCompile(`(?i)^\s*(re|aw|sv|antw|vs|odp)\s*:`)

// reviewTrailer is a trailer a reviewer gives in a reply.
var reviewTrailer = regexp.MustCompile(`^(?i:(reviewed-by|acked-by|tested-by|reported-by)):\s*(\S.*<[^<>@\s]+@[^<>\s]+>)\s*$`)

var msgIDs = regexp.MustCompile(`<[^<>\s]+>`)

// trailerNames spells the trailers as the kernel does.
var trailerNames = map[string]string{"reviewed-by": "Reviewed-by", "acked-by": "Acked-by", "tested-by": "Tested-by", "reported-by": "Reported-by"}

// ReadThread reads the inputs as one thread (an mbox of a whole thread, a
// folder of messages, a single patch): patches, cover letters and replies
// in any order. It takes the newest revision's patches ([PATCH vN n/m]),
// numbers them in order, and adds to each the Reviewed-by, Acked-by,
// Tested-by and Reported-by trailers of the replies to it (all patches get
// those of replies to the cover letter). Replies are never refused; a
// thread with no patch is.
func ReadThread(inputs []Input, series string, opts Options) (*Thread, error) {
	t := &Thread{byID: map[string]*threadMsg{}}
	var msgs []*threadMsg
	name := ""
	for _, in := range inputs {
		if name == "" {
			name = in.Name
		}
		ms, err := readThreadInput(in, opts)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, ms...)
	}
	for _, m := range msgs {
		if m.id == "" {
			continue
		}
		if _, dup := t.byID[m.id]; !dup {
			t.byID[m.id] = m
		}
	}
	newest := 0
	for _, m := range msgs {
		if m.patch != nil {
			newest = max(newest, version(m.patch.Version))
		}
	}
	if newest == 0 {
		// No patch but in replies: those are the patches (git am reads a
		// "Re: [PATCH]" mail as a patch too).
		for _, m := range msgs {
			if m.replyPatch != nil {
				m.patch, m.trailers = m.replyPatch, nil
				newest = max(newest, version(m.patch.Version))
			}
		}
	}
	if newest == 0 {
		return nil, &InputError{File: name, Msg: "not a patch: no message of the thread carries a diff",
			Hint: "give the thread's mbox (or the Message-ID of one of its messages) with the patches in it"}
	}
	t.Version = newest
	byNumber := map[int]*threadMsg{}
	var order []*threadMsg
	skipped := map[int]*Revision{}
	total := 0
	for _, m := range msgs {
		switch {
		case m.cover != nil && m.cover.Version == newest && t.Cover == nil:
			t.Cover = m.cover
		case m.patch != nil && version(m.patch.Version) != newest:
			v := version(m.patch.Version)
			if skipped[v] == nil {
				skipped[v] = &Revision{Version: v}
			}
			skipped[v].Patches = append(skipped[v].Patches, m.patch.SubjectLine())
		case m.patch != nil:
			p := m.patch
			if p.Total > 0 {
				if prev := byNumber[p.Number]; prev != nil {
					t.Warn = append(t.Warn, Warning{File: p.Source, Line: p.Line,
						Message: fmt.Sprintf("%s appears twice in the thread; the first one is taken", p.Prefix())})
					continue
				}
				byNumber[p.Number] = m
				total = max(total, p.Total)
			}
			order = append(order, m)
		case m.patch == nil && m.cover == nil:
			t.Replies++
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].patch.Number < order[j].patch.Number })
	for n := 1; n <= total; n++ {
		if byNumber[n] == nil {
			t.Missing = append(t.Missing, fmt.Sprintf("%d/%d", n, total))
		}
	}
	for _, v := range sortedKeys(skipped) {
		t.Skipped = append(t.Skipped, *skipped[v])
	}
	taken := map[*threadMsg]bool{}
	for _, m := range order {
		taken[m] = true
	}
	// Trailers: each reply's go to the patch (or cover letter) it answers,
	// up the chain of replies, in the order they were sent.
	for i, m := range msgs {
		m.seq = i
	}
	replies := slices.Clone(msgs)
	sort.SliceStable(replies, func(i, j int) bool {
		a, b := replies[i], replies[j]
		if !a.date.Equal(b.date) && !a.date.IsZero() && !b.date.IsZero() {
			return a.date.Before(b.date)
		}
		return a.seq < b.seq
	})
	for _, m := range replies {
		if len(m.trailers) == 0 {
			continue
		}
		target := t.answered(m)
		for _, tr := range m.trailers {
			rec := Trailer{Line: tr, From: m.id}
			switch {
			case target == nil:
				rec.To = "no message of the thread"
				t.Ignored = append(t.Ignored, rec)
			case target.cover != nil && target.cover.Version == newest:
				rec.To = "all patches"
				added := false
				for _, o := range order {
					added = o.patch.AddTrailer(tr) || added
				}
				if added {
					t.Added = append(t.Added, rec)
				}
			case target.patch != nil && taken[target]:
				rec.To = target.patch.SubjectLine()
				if target.patch.AddTrailer(tr) {
					t.Added = append(t.Added, rec)
				}
			default:
				rec.To = target.subject + " (a revision not taken)"
				t.Ignored = append(t.Ignored, rec)
			}
		}
	}
	subject := ""
	if t.Cover != nil {
		subject = t.Cover.title
	} else if len(order) > 0 {
		subject = order[0].patch.Subject
	}
	t.Series = SeriesName(series, subject, name)
	for _, m := range order {
		m.patch.Series = t.Series
		t.Patches = append(t.Patches, m.patch)
		t.Raw = append(t.Raw, m.raw)
	}
	return t, nil
}

func version(v int) int { return max(v, 1) }

func sortedKeys(m map[int]*Revision) []int {
	var k []int
	for v := range m {
		k = append(k, v)
	}
	sort.Ints(k)
	return k
}

// answered is the patch or cover letter m answers: its parent, or the
// parent's, up the chain.
func (t *Thread) answered(m *threadMsg) *threadMsg {
	seen := map[*threadMsg]bool{m: true}
	for cur := m; ; {
		p := t.byID[cur.parent]
		if p == nil || seen[p] {
			return nil
		}
		if p.patch != nil || p.cover != nil {
			return p
		}
		seen[p] = true
		cur = p
	}
}

// AddTrailer appends a trailer to the patch's message (after its trailer
// block) unless it is there already (in any case); it reports whether it
// added it.
func (p *Patch) AddTrailer(tr string) bool {
	for _, l := range strings.Split(p.Message, "\n") {
		if strings.EqualFold(strings.TrimSpace(l), tr) {
			return false
		}
	}
	lines := strings.Split(p.Message, "\n")
	last := lines[len(lines)-1]
	if p.Message == "" || !trailerLine.MatchString(last) {
		if p.Message != "" {
			p.Message += "\n"
		}
		p.Message += "\n" + tr
		p.Message = strings.TrimLeft(p.Message, "\n")
		return true
	}
	p.Message += "\n" + tr
	return true
}

// readThreadInput cuts one input into messages and reads each.
func readThreadInput(in Input, opts Options) ([]*threadMsg, error) {
	if int64(len(in.Data)) > opts.maxInput() {
		return nil, &InputError{File: in.Name, Msg: fmt.Sprintf("input is larger than the %d MiB cap on one input file", opts.maxInput()>>20)}
	}
	if hasNUL(in.Data) {
		return nil, &InputError{File: in.Name, Msg: "binary file (NUL bytes), not a patch message"}
	}
	raws, err := splitFile(in.Name, in.Data)
	if err != nil {
		return nil, err
	}
	starts := lineStarts(in.Data)
	var out []*threadMsg
	for i, raw := range raws {
		begin := 0
		if raw.Format == FormatMbox || raw.Format == FormatMboxrd {
			begin = starts[max(raw.StartLine-2, 0)] // the "From " line
		}
		end := len(in.Data)
		if i+1 < len(raws) {
			end = starts[max(raws[i+1].StartLine-2, 0)]
		}
		m, err := readMessage(raw)
		if err != nil {
			return nil, err
		}
		tm := &threadMsg{id: firstID(m.MessageID), raw: in.Data[begin:end], subject: m.Subject}
		tm.date, _ = parseGitDate(m.Date)
		if ids := msgIDs.FindAllString(m.InReplyTo, -1); len(ids) > 0 {
			tm.parent = ids[0]
		} else if ids := msgIDs.FindAllString(m.References, -1); len(ids) > 0 {
			tm.parent = ids[len(ids)-1]
		}
		out = append(out, tm)
		p, err := buildPatch(m, "", opts)
		if replySubject.MatchString(m.Subject) {
			// A reply; one that carries a diff is kept as a candidate: it
			// is the patch when the thread has no other (a patch sent as
			// "Re:"), else a reviewer's suggestion, not part of the series.
			tm.trailers = replyTrailers(m.Body)
			if err == nil && p != nil {
				tm.replyPatch = p
			}
			continue
		}
		var ie *InputError
		switch {
		case err != nil && errors.As(err, &ie) && ie.Msg == msgNoDiff:
			// Not a patch: a follow-up without "Re:" (or a note).
			tm.trailers = replyTrailers(m.Body)
			continue
		case err != nil:
			return nil, err
		case p == nil:
			var c Patch
			c.parseSubject(m.Subject)
			tm.cover = &Cover{Subject: c.SubjectLine(), title: c.Subject, MessageID: tm.id, Version: version(c.Version)}
			continue
		}
		if i == len(raws)-1 && len(in.Data) > 0 && in.Data[len(in.Data)-1] != '\n' {
			lines := bytes.Count(in.Data, []byte("\n")) + 1
			tail := string(in.Data[bytes.LastIndexByte(in.Data, '\n')+1:])
			p.Repairs = append(p.Repairs, Repair{Kind: KindFinalNewline, File: in.Name, Line: lines,
				Before: tail, After: tail + "\\n",
				Why: "every line of a patch ends in a newline; without one the last line reads as \"\\ No newline at end of file\""})
		}
		tm.patch = p
	}
	return out, nil
}

func firstID(s string) string {
	if id := msgIDs.FindString(s); id != "" {
		return id
	}
	return strings.TrimSpace(s)
}

// lineStarts[i] is the byte offset of line i (0-based); one more entry
// for the end.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// replyTrailers are the review trailers of a reply: its own lines (not
// quoted, before the signature).
func replyTrailers(body []string) []string {
	var out []string
	for _, l := range body {
		l = strings.TrimRight(l, "\r")
		if l == "-- " {
			break
		}
		m := reviewTrailer.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil || strings.HasPrefix(strings.TrimSpace(l), ">") {
			continue
		}
		out = append(out, trailerNames[strings.ToLower(m[1])]+": "+strings.TrimSpace(m[2]))
	}
	return out
}
