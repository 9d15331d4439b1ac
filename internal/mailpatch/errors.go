package mailpatch

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/patchctl/patchctl/internal/errs"
)

// InputError is a refusal of bad input. It names where the problem is and,
// when there is one, how to fix it. It wraps errs.ErrInput.
type InputError struct {
	File string // input file
	Line int    // 1-based line in File, 0 when not known
	Msg  string // what is wrong
	Hint string // how to fix it, may be empty
}

func (e *InputError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	// Messages quote input through excerpt; this is the backstop, so no
	// input, however long its lines, makes a long error.
	s := loc + ": " + clip(e.Msg, maxMessage)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// maxMessage bounds an error message; maxExcerpt a quoted piece of input.
const (
	maxMessage = 600
	maxExcerpt = 80
)

// excerpt quotes at most maxExcerpt bytes of input for a message, saying
// how long the whole was when it is cut.
func excerpt(s string) string {
	if len(s) <= maxExcerpt {
		return strconv.Quote(s)
	}
	cut := maxExcerpt
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("... (%d bytes)", len(s))
}

// clip cuts s to n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("... (%d bytes cut)", len(s)-n)
}

func (e *InputError) Unwrap() error { return errs.ErrInput }
