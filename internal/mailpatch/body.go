package mailpatch

import (
	"fmt"
	"strings"
)

// bodyReader replays git mailinfo's handle_body on a message body: the
// multipart boundaries as a stack, each part's headers, its transfer
// encoding undone line by line (a decoded partial line waits for the
// next), format=flowed undone with git's one pending buffer, and the
// text handed on as git hands it to the message and the patch (a
// pending piece without its line end runs into what follows). Its quirks
// are git's, kept so that import reads every mail as git am does:
//
//   - the line after a part's headers is text even when it is a boundary
//     (an empty part swallows the next part's headers and body);
//   - every closing boundary hands on one line end;
//   - a part without Content-Type keeps format=flowed and DelSp of the
//     last Content-Type, its charset and transfer encoding are reset;
//   - soft line breaks that end an encoded line are joined before the
//     next line is unstuffed (its stuffing space stays).
//
// Parts that cannot be text (images, audio, video, signatures) are
// skipped, unlike git: their bytes are no part of a patch.
type bodyReader struct {
	m     *message
	lines []string // the input lines of the body
	first int      // input line of lines[0]
	i     int

	stack []string // "--boundary" of the open multiparts, innermost last
	ci    contentInfo
	skip  bool // the current part is skipped

	prev   []byte // git's prev: flowed text, then a decoded partial line
	open   []byte // a body line without its line end yet (appended to in place)
	isOpen bool
	openCS string // the charset the open line started in
	soft   int    // soft line breaks joined in the current part
	flows  map[int]bool
}

func (r *bodyReader) isBoundary(l string) bool {
	l = strings.TrimSuffix(l, "\r")
	return len(r.stack) > 0 && strings.HasPrefix(l, r.stack[len(r.stack)-1])
}

func (r *bodyReader) isEnd(l string) bool {
	l = strings.TrimSuffix(l, "\r")
	top := r.stack[len(r.stack)-1]
	return len(l) >= len(top)+2 && l[len(top):len(top)+2] == "--"
}

// emit appends decoded text to the body; text without a final line end
// stays open and the next text continues its line.
func (r *bodyReader) emit(text string) {
	if r.skip {
		return
	}
	m := r.m
	for text != "" {
		j := strings.IndexByte(text, '\n')
		if j < 0 {
			if !r.isOpen {
				r.isOpen, r.openCS = true, r.ci.charset
			}
			r.open = append(r.open, text...)
			return
		}
		if r.isOpen {
			m.Body = append(m.Body, string(append(r.open, text[:j]...)))
			m.BodyCharset = append(m.BodyCharset, r.openCS)
			r.open, r.isOpen = r.open[:0], false
		} else {
			m.Body = append(m.Body, text[:j])
			m.BodyCharset = append(m.BodyCharset, r.ci.charset)
		}
		text = text[j+1:]
	}
}

// flushOpen ends the body: an open last line is a line.
func (r *bodyReader) flushOpen() {
	if r.isOpen {
		r.m.Body = append(r.m.Body, string(r.open))
		r.m.BodyCharset = append(r.m.BodyCharset, r.openCS)
		r.open, r.isOpen = nil, false
	}
}

// pushType takes a Content-Type's effect on the reader: a boundary
// attribute opens a multipart (whatever the media type, as in git).
func (r *bodyReader) pushType(ci contentInfo) {
	if ci.boundary != "" {
		r.stack = append(r.stack, "--"+ci.boundary)
	}
}

// findBoundary skips to the next line that starts the innermost
// multipart's boundary; false at the end of the body.
func (r *bodyReader) findBoundary() bool {
	for ; r.i < len(r.lines); r.i++ {
		if r.isBoundary(r.lines[r.i]) {
			return true
		}
	}
	return false
}

// boundary handles the boundary line at r.i; false when the body ends.
// On true, r.i is the part's first text line.
func (r *bodyReader) boundary() bool {
	for r.isEnd(r.lines[r.i]) {
		r.stack = r.stack[:len(r.stack)-1]
		r.skip = false
		r.emit("\n")
		r.i++
		if len(r.stack) == 0 || !r.findBoundary() {
			r.i = len(r.lines)
			return false
		}
	}
	// A part: its headers, then (git's "replenish") the next line is text.
	r.finishPart()
	r.ci.cte, r.ci.charset = "", ""
	r.i++
	hs, next := readHeaders(r.lines, r.i, r.first)
	if next < len(r.lines) && (next == r.i || strings.TrimRight(r.lines[next-1], " \t\r\n\v\f") != "") {
		next++ // a line that is neither header nor empty ends the headers and is lost, as in git
	}
	skip := false
	for _, h := range hs {
		before := r.ci
		r.ci.take(h)
		if r.ci.hasType && r.ci.line != before.line {
			r.pushType(r.ci)
			media := r.ci.media
			skip = strings.HasPrefix(media, "image/") || strings.HasPrefix(media, "audio/") || strings.HasPrefix(media, "video/") || strings.HasSuffix(media, "-signature")
		}
	}
	r.skip = skip
	r.i = next
	return r.i < len(r.lines)
}

// finishPart hands on a part's pending text and notes its flowed repair.
func (r *bodyReader) finishPart() {
	if len(r.prev) > 0 {
		r.emit(string(r.prev))
		r.prev = r.prev[:0]
	}
	if r.ci.flowed && !r.skip && !r.flows[r.ci.line] {
		r.flows[r.ci.line] = true
		how := "DelSp=no: the soft break's space stays"
		if r.ci.delsp {
			how = "DelSp=yes: the soft break's space goes"
		}
		r.m.Repairs = append(r.m.Repairs, Repair{Kind: KindFlowed, File: r.m.File, Line: r.ci.line,
			Before: fmt.Sprintf("format=flowed body, %d soft line breaks", r.soft), After: "fixed lines",
			Why: "RFC 3676: the mail client wrapped lines ending in a space and space-stuffed lines starting with one; the receiver joins and unstuffs them (" + how + "), as git am does"})
	}
	r.soft = 0
}

// flowed is git's handle_filter_flowed on one decoded line (with its
// line end, if it has one).
func (r *bodyReader) flowed(line string) {
	if !r.ci.flowed {
		r.emit(line)
		return
	}
	n := len(line)
	if strings.HasSuffix(line, "\n") {
		n--
		if n > 0 && line[n-1] == '\r' {
			n--
		}
	}
	if line[:n] == "-- " {
		if len(r.prev) > 0 {
			r.emit(string(r.prev))
			r.prev = r.prev[:0]
		}
		r.emit(line)
		return
	}
	if n > 0 && line[0] == ' ' {
		line = line[1:]
		n--
	}
	if n > 0 && line[n-1] == ' ' {
		if r.ci.delsp {
			n--
		}
		r.prev = append(r.prev, line[:n]...)
		r.soft++
		return
	}
	if len(r.prev) > 0 {
		line = string(r.prev) + line
		r.prev = r.prev[:0]
	}
	r.emit(line)
}

// flowedJoined is flowed on the line prefix+rest (rest ends the line),
// without copying a long prefix more than once.
func (r *bodyReader) flowedJoined(prefix []byte, rest string) {
	if len(prefix) == 0 {
		r.flowed(rest)
		return
	}
	if !r.ci.flowed {
		r.emit(string(prefix))
		r.emit(rest)
		return
	}
	body := strings.TrimSuffix(rest, "\n")
	body = strings.TrimSuffix(body, "\r")
	if len(prefix)+len(body) == 3 && string(prefix)+body == "-- " {
		r.emit(string(prefix) + rest)
		return
	}
	if prefix[0] == ' ' {
		prefix = prefix[1:]
	}
	last := byte(0)
	switch {
	case body != "":
		last = body[len(body)-1]
	case len(prefix) > 0:
		last = prefix[len(prefix)-1]
	}
	if last == ' ' {
		if r.ci.delsp {
			if body != "" {
				body = body[:len(body)-1]
			} else {
				prefix = prefix[:len(prefix)-1]
			}
		}
		r.prev = append(prefix, body...)
		r.soft++
		return
	}
	r.emit(string(prefix))
	r.emit(rest)
}

// text handles one line of a part's body.
func (r *bodyReader) text(l string) {
	switch r.ci.cte {
	case "quoted-printable", "base64":
		cr := strings.HasSuffix(l, "\r")
		l = strings.TrimSuffix(l, "\r")
		var d string
		if r.ci.cte == "base64" {
			d = string(decodeB(l))
		} else {
			d = string(decodeQ(l+"\n", false))
			if cr && strings.HasSuffix(d, "\n") {
				d = d[:len(d)-1] + "\r\n" // the transport's CRLF, repaired later
			}
		}
		// The decoded text joins what waits in prev (git inserts prev
		// before it and takes the first line whole); prev is handed on
		// without copying it for each encoded line.
		old := r.prev
		r.prev = nil
		j := strings.IndexByte(d, '\n')
		if j < 0 {
			r.prev = append(old, d...) // a partial line waits for the next, after any flowed text
			return
		}
		r.flowedJoined(old, d[:j+1])
		d = d[j+1:]
		for d != "" {
			j := strings.IndexByte(d, '\n')
			if j < 0 {
				r.prev = append(r.prev, d...)
				return
			}
			r.flowed(d[:j+1])
			d = d[j+1:]
		}
	default:
		r.flowed(l + "\n")
	}
}

// readBody reads a message body (lines, the first at input line first)
// whose headers said ci, as git mailinfo does.
func (m *message) readBody(lines []string, first int, ci contentInfo) error {
	r := &bodyReader{m: m, lines: lines, first: first, ci: ci, flows: map[int]bool{}}
	r.pushType(ci)
	if len(r.stack) > 0 {
		if !r.findBoundary() {
			return &InputError{File: m.File, Line: first, Msg: fmt.Sprintf("multipart body has no part (boundary %s not found)", excerpt(ci.boundary))}
		}
		if !r.boundary() {
			r.finishPart()
			r.flushOpen()
			return nil
		}
	}
	for r.i < len(r.lines) {
		r.text(r.lines[r.i])
		r.i++
		if r.i >= len(r.lines) {
			break
		}
		if r.isBoundary(r.lines[r.i]) {
			if !r.boundary() {
				break
			}
		}
	}
	r.finishPart()
	r.flushOpen()
	return nil
}
