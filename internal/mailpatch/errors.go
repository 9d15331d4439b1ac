package mailpatch

import (
	"fmt"

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
	s := loc + ": " + e.Msg
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

func (e *InputError) Unwrap() error { return errs.ErrInput }
