package mailpatch

import (
	"bytes"
	"context"
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
	// Malformed are its messages that do not read as patches, each
	// "subject: why". A revision not taken is reported, never a failure.
	Malformed []string `json:"malformed,omitempty"`
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
	file       string
	line       int // input line where the message starts
	patch      *Patch
	// bad is why a message that is no reply does not read as a patch;
	// badVersion the revision its subject names. It fails the thread
	// only when that revision is the one taken.
	bad        error
	badVersion int
	note       *Warning // said about the message when read
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

// oneTrailer is a review trailer's value as it must be: one name and one
// address. "A <a@b> Signed-off-by: X <x@y>" (two trailers run into one
// line) is not.
var oneTrailer = regexp.MustCompile(`^[^<>:]*<[^<>@\s]+@[^<>\s]+>$`)

// wellFormedTrailer reports whether tr ("Reviewed-by: value") names one
// person.
func wellFormedTrailer(tr string) bool {
	_, v, ok := strings.Cut(tr, ": ")
	return ok && oneTrailer.MatchString(v)
}

var msgIDs = regexp.MustCompile(`<[^<>\s]+>`)

// trailerNames spells the trailers as the kernel does.
var trailerNames = map[string]string{"reviewed-by": "Reviewed-by", "acked-by": "Acked-by", "tested-by": "Tested-by", "reported-by": "Reported-by"}

// ReadThreadContext reads the inputs as one thread (an mbox of a whole
// thread, a folder of messages, a single patch): patches, cover letters
// and replies in any order. It takes the newest revision's patches
// ([PATCH vN n/m]), numbers them in order, and adds to each the
// Reviewed-by, Acked-by, Tested-by and Reported-by trailers of the
// replies to it (all patches get those of replies to the cover letter).
// Replies are never refused; a thread with no patch is.
//
// It stops, returning ctx's error, soon after ctx ends (the reading polls
// it as it goes). Reading takes time linear in the input: folded headers,
// reply chains and trailers alike.
func ReadThreadContext(ctx context.Context, inputs []Input, series string, opts Options) (*Thread, error) {
	t := &Thread{byID: map[string]*threadMsg{}}
	var msgs []*threadMsg
	name := ""
	for _, in := range inputs {
		if name == "" {
			name = in.Name
		}
		ms, err := readThreadInput(ctx, in, opts)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, ms...)
	}
	msgs = t.collapse(msgs)
	for _, m := range msgs {
		if m.note != nil {
			t.Warn = append(t.Warn, *m.note)
		}
	}
	newest := newestVersion(msgs)
	if newest == 0 {
		return nil, &InputError{File: name, Msg: "not a patch: no message of the thread carries a diff",
			Hint: "give the thread's mbox (or the Message-ID of one of its messages) with the patches in it"}
	}
	t.Version = newest
	order, err := t.takeRevision(ctx, msgs)
	if err != nil {
		return nil, err
	}
	if err := t.addTrailers(ctx, msgs, order); err != nil {
		return nil, err
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

// newestVersion is the newest revision of the thread's patches (those
// that read and those that do not); 0: none. With no patch at all, the
// patches are in replies (git am reads a "Re: [PATCH]" mail as a patch
// too), which then become the patches.
func newestVersion(msgs []*threadMsg) int {
	newest := 0
	for _, m := range msgs {
		switch {
		case m.patch != nil:
			newest = max(newest, version(m.patch.Version))
		case m.bad != nil:
			newest = max(newest, m.badVersion)
		}
	}
	if newest == 0 {
		for _, m := range msgs {
			if m.replyPatch != nil {
				m.patch, m.trailers = m.replyPatch, nil
				newest = max(newest, version(m.patch.Version))
			}
		}
	}
	return newest
}

// takeRevision takes the patches and cover letter of revision t.Version
// and returns the patches in order (a number sent twice: the first one,
// with a warning); it notes the other revisions as skipped, the numbers
// missing, and counts the replies. A patch of the revision taken that
// does not read is the failure.
func (t *Thread) takeRevision(ctx context.Context, msgs []*threadMsg) ([]*threadMsg, error) {
	newest := t.Version
	byNumber := map[int]*threadMsg{}
	var order []*threadMsg
	skipped := map[int]*Revision{}
	skip := func(v int) *Revision {
		if skipped[v] == nil {
			skipped[v] = &Revision{Version: v}
		}
		return skipped[v]
	}
	total := 0
	for i, m := range msgs {
		if i%pollEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		switch {
		case m.bad != nil && m.badVersion == newest:
			// The revision taken does not read: that is the failure.
			return nil, m.bad
		case m.bad != nil:
			r := skip(m.badVersion)
			r.Patches = append(r.Patches, m.subject)
			r.Malformed = append(r.Malformed, m.subject+": "+m.bad.Error())
		case m.cover != nil && m.cover.Version == newest && t.Cover == nil:
			t.Cover = m.cover
		case m.patch != nil && version(m.patch.Version) != newest:
			r := skip(version(m.patch.Version))
			r.Patches = append(r.Patches, m.patch.SubjectLine())
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
	return order, nil
}

// addTrailers gives each reply's trailers to the patch (or cover letter:
// all patches) it answers, up the chain of replies, in the order they
// were sent; order is the patches taken. What is added or not, and why,
// is recorded in t.Added and t.Ignored.
func (t *Thread) addTrailers(ctx context.Context, msgs, order []*threadMsg) error {
	taken := map[*threadMsg]bool{}
	for _, m := range order {
		taken[m] = true
	}
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
	adders := map[*Patch]*trailerAdder{}
	add := func(p *Patch, tr string) bool {
		a := adders[p]
		if a == nil {
			a = newTrailerAdder(p)
			adders[p] = a
		}
		return a.add(tr)
	}
	answered := t.answerer()
	for i, m := range replies {
		if i%pollEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if len(m.trailers) == 0 {
			continue
		}
		target := answered(m)
		for _, tr := range m.trailers {
			rec := Trailer{Line: tr, From: m.id}
			switch {
			case !wellFormedTrailer(tr):
				rec.To = "nothing: the line is not one trailer (one name and one address)"
				t.Ignored = append(t.Ignored, rec)
			case target == nil:
				rec.To = "no message of the thread"
				t.Ignored = append(t.Ignored, rec)
			case target.cover != nil && target.cover.Version == t.Version:
				rec.To = "all patches"
				added := false
				for _, o := range order {
					added = add(o.patch, tr) || added
				}
				if added {
					t.Added = append(t.Added, rec)
				}
			case target.patch != nil && taken[target]:
				rec.To = target.patch.SubjectLine()
				if add(target.patch, tr) {
					t.Added = append(t.Added, rec)
				}
			default:
				rec.To = target.subject + " (a revision not taken)"
				t.Ignored = append(t.Ignored, rec)
			}
		}
	}
	for _, a := range adders {
		a.flush()
	}
	return nil
}

// pollEvery is how many messages are read between two looks at the
// context; pollLines how many lines of a header block.
const (
	pollEvery = 1024
	pollLines = 1 << 16
)

// collapse keeps the first copy of each Message-ID, as b4 does: an
// archive (or a user's mbox of two fetches) may hold a message twice,
// the copies differing at most in the headers an archive adds. Messages
// without a Message-ID are all kept. It fills t.byID.
func (t *Thread) collapse(msgs []*threadMsg) []*threadMsg {
	out := msgs[:0:0]
	dups := map[string]int{}
	var order []*threadMsg
	for _, m := range msgs {
		if m.id == "" {
			out = append(out, m)
			continue
		}
		if first, dup := t.byID[m.id]; dup {
			if dups[m.id] == 0 {
				order = append(order, first)
			}
			dups[m.id]++
			continue
		}
		t.byID[m.id] = m
		out = append(out, m)
	}
	for _, m := range order {
		t.Warn = append(t.Warn, Warning{File: m.file, Line: m.line,
			Message: fmt.Sprintf("message %s appears %d times; the first copy is read, the others are left out (as b4 does)", m.id, dups[m.id]+1)})
	}
	return out
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

// answerer returns a function giving the patch or cover letter a message
// answers: its parent, or the parent's, up the chain (nil when the chain
// leaves the thread or loops). Each message's answer is found once, so a
// thread of n messages takes time linear in n whatever its chains.
func (t *Thread) answerer() func(*threadMsg) *threadMsg {
	memo := map[*threadMsg]*threadMsg{}
	done := map[*threadMsg]bool{}
	return func(m *threadMsg) *threadMsg {
		path := []*threadMsg{m}
		onPath := map[*threadMsg]bool{m: true}
		var res *threadMsg
		for cur := m; ; {
			if cur != m && done[cur] {
				res = memo[cur]
				break
			}
			p := t.byID[cur.parent]
			if p == nil || onPath[p] {
				break
			}
			if p.patch != nil || p.cover != nil {
				res = p
				break
			}
			path = append(path, p)
			onPath[p] = true
			cur = p
		}
		for _, x := range path {
			memo[x], done[x] = res, true
		}
		return res
	}
}

// AddTrailer appends a trailer to the patch's message (after its trailer
// block) unless it is there already (in any case); it reports whether it
// added it.
func (p *Patch) AddTrailer(tr string) bool {
	a := newTrailerAdder(p)
	if !a.add(tr) {
		return false
	}
	a.flush()
	return true
}

// trailerAdder adds trailers to one patch: each once, however many,
// in time linear in the message and the trailers.
type trailerAdder struct {
	p    *Patch
	have map[string]bool
	add1 []string
}

func newTrailerAdder(p *Patch) *trailerAdder {
	a := &trailerAdder{p: p, have: map[string]bool{}}
	for _, l := range strings.Split(p.Message, "\n") {
		a.have[strings.ToLower(strings.TrimSpace(l))] = true
	}
	return a
}

func (a *trailerAdder) add(tr string) bool {
	k := strings.ToLower(tr)
	if a.have[k] {
		return false
	}
	a.have[k] = true
	a.add1 = append(a.add1, tr)
	return true
}

// flush writes the trailers added: after the message's trailer block, or
// as a new one after a blank line.
func (a *trailerAdder) flush() {
	if len(a.add1) == 0 {
		return
	}
	p := a.p
	last := p.Message[strings.LastIndexByte(p.Message, '\n')+1:]
	if p.Message != "" && trailerLine.MatchString(last) {
		p.Message += "\n" + strings.Join(a.add1, "\n")
	} else {
		if p.Message != "" {
			p.Message += "\n"
		}
		p.Message += "\n" + strings.Join(a.add1, "\n")
		p.Message = strings.TrimLeft(p.Message, "\n")
	}
	a.add1 = nil
}

// readThreadInput cuts one input into messages and reads each. A message
// that does not read is kept with why (bad): whether that fails the
// thread depends on the revision taken.
func readThreadInput(ctx context.Context, in Input, opts Options) ([]*threadMsg, error) {
	if int64(len(in.Data)) > opts.maxInput() {
		return nil, &InputError{File: in.Name, Msg: fmt.Sprintf("input is larger than the %d MiB cap on one input file", opts.maxInput()>>20)}
	}
	if hasNUL(in.Data) {
		return nil, &InputError{File: in.Name, Msg: "binary file (NUL bytes), not a patch message"}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	raws, err := splitFile(in.Name, in.Data)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	starts := lineStarts(in.Data)
	var out []*threadMsg
	for i, raw := range raws {
		// Messages are polled each; a big one also by its lines (a
		// header folded a million times reads in well under a second).
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		begin := 0
		if raw.Format == FormatMbox || raw.Format == FormatMboxrd {
			begin = starts[max(raw.StartLine-2, 0)] // the "From " line
		}
		end := len(in.Data)
		if i+1 < len(raws) {
			end = starts[max(raws[i+1].StartLine-2, 0)]
		}
		raw.ctx = ctx
		m, err := readMessage(raw)
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		if err != nil {
			out = append(out, unreadable(raw, in.Data[begin:end], err))
			continue
		}
		tm := &threadMsg{id: firstID(m.MessageID), raw: in.Data[begin:end], subject: m.Subject, file: in.Name, line: raw.StartLine}
		tm.date, _ = parseGitDate(m.Date)
		tm.parent = parentID(m.InReplyTo, m.References)
		out = append(out, tm)
		tm.classify(m, opts, in, i == len(raws)-1)
	}
	return out, nil
}

// classify says what a message of a thread is: a reply (its trailers,
// and its patch when it carries one), a follow-up, a patch that does not
// read, a cover letter, or a patch; last: the input's last message.
func (tm *threadMsg) classify(m *message, opts Options, in Input, last bool) {
	p, err := buildPatch(m, "", opts)
	if replySubject.MatchString(m.Subject) {
		// A reply; one that carries a diff is kept as a candidate: it
		// is the patch when the thread has no other (a patch sent as
		// "Re:"), else a reviewer's suggestion, not part of the series.
		tm.trailers = replyTrailers(m.Body)
		if err == nil && p != nil {
			tm.replyPatch = p
		}
		return
	}
	var ie *InputError
	switch {
	case err != nil && errors.As(err, &ie) && ie.Msg == msgNoDiff:
		// Not a patch: a follow-up without "Re:" (or a note).
		tm.trailers = replyTrailers(m.Body)
		return
	case err != nil:
		var c Patch
		c.parseSubject(m.Subject)
		tm.subject = c.SubjectLine()
		tm.bad, tm.badVersion = err, version(c.Version)
		return
	case p == nil:
		var c Patch
		c.parseSubject(m.Subject)
		tm.cover = &Cover{Subject: c.SubjectLine(), title: c.Subject, MessageID: tm.id, Version: version(c.Version)}
		return
	}
	if last && len(in.Data) > 0 && in.Data[len(in.Data)-1] != '\n' {
		lines := bytes.Count(in.Data, []byte("\n")) + 1
		tail := string(in.Data[bytes.LastIndexByte(in.Data, '\n')+1:])
		p.Repairs = append(p.Repairs, Repair{Kind: KindFinalNewline, File: in.Name, Line: lines,
			Before: tail, After: tail + "\\n",
			Why: "every line of a patch ends in a newline; without one the last line reads as \"\\ No newline at end of file\""})
	}
	tm.patch = p
}

// unreadable is a message whose headers or body encoding do not read:
// its subject, Message-ID and threading headers as they stand, undecoded.
// A reply that does not read is a reply without trailers (and a warning);
// any other message is a patch that does not read, of the revision its
// subject names.
func unreadable(raw rawMessage, data []byte, err error) *threadMsg {
	tm := &threadMsg{raw: data, file: raw.File, line: raw.StartLine}
	subject, inReplyTo, refs := "", "", ""
	if raw.Format == FormatBare {
		if len(raw.Lines) > 0 {
			subject = strings.TrimSpace(raw.Lines[0])
		}
	} else {
		hs, _ := readHeaders(raw.Lines, 0, raw.StartLine)
		for _, h := range hs {
			if v, ok := headerValue(h.text, "Subject"); ok {
				subject = strings.TrimSpace(v)
				if d, derr := decodeWords(v); derr == nil {
					subject = strings.TrimSpace(d)
				}
			}
			if v, ok := headerValue(h.text, "Message-Id"); ok {
				tm.id = firstID(strings.TrimSpace(v))
			}
			if v, ok := headerValue(h.text, "In-Reply-To"); ok {
				inReplyTo = v
			}
			if v, ok := headerValue(h.text, "References"); ok {
				refs = v
			}
		}
	}
	tm.parent = parentID(inReplyTo, refs)
	if replySubject.MatchString(subject) {
		tm.subject = subject
		tm.note = &Warning{File: raw.File, Line: raw.StartLine, Message: "a reply that does not read is left out (its trailers, if any, are not added): " + err.Error()}
		return tm
	}
	var c Patch
	c.parseSubject(subject)
	tm.subject = c.SubjectLine()
	if c.Total > 0 && c.Number == 0 {
		// A cover letter ([PATCH vN 0/M]) carries no patch: one that
		// does not read is said, and the series is read without it.
		tm.note = &Warning{File: raw.File, Line: raw.StartLine, Message: "the cover letter " + tm.subject + " does not read and is left out: " + err.Error()}
		return tm
	}
	tm.bad, tm.badVersion = err, version(c.Version)
	return tm
}

// parentID is the message a message answers: In-Reply-To's first
// Message-ID, else References' last (the parent, as References lists the
// ancestors oldest first). It scans References from its end, so a
// References header of a million IDs costs one pass and no list.
func parentID(inReplyTo, references string) string {
	if id := msgIDs.FindString(inReplyTo); id != "" {
		return id
	}
	return lastID(references)
}

// lastID is the last match of msgIDs in s: a '<', one or more characters
// that are neither '<', '>' nor white space, and a '>'.
func lastID(s string) string {
	for j := len(s) - 1; j > 0; j-- {
		if s[j] != '>' {
			continue
		}
		k := j - 1
		for k >= 0 && !strings.ContainsRune("<>\t\n\f\r ", rune(s[k])) {
			k--
		}
		if k >= 0 && k < j-1 && s[k] == '<' {
			return s[k : j+1]
		}
		j = k + 1 // s[k] stops every match that ends at or before j
	}
	return ""
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
