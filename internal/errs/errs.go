// Package errs holds the sentinel errors that decide patchctl's exit status.
//
// Stage packages wrap their errors with these sentinels (fmt.Errorf("...: %w",
// errs.ErrInput)); cmd/patchctl maps them to exit codes in one place:
// 0 ok, 1 findings or failed tests, 2 usage or input error.
package errs

import "errors"

var (
	// ErrInput marks bad input: a file that is not a patch, a damaged hunk,
	// an unknown kernel name. Exit status 2.
	ErrInput = errors.New("input error")
	// ErrUsage marks a command line that is wrong. Exit status 2.
	ErrUsage = errors.New("usage error")
	// ErrFindings marks a run that worked but found problems: check
	// findings, a disposition that differs from the manifest, a failed test.
	// Exit status 1.
	ErrFindings = errors.New("findings")
)

// Exit codes.
const (
	ExitOK       = 0
	ExitFindings = 1
	ExitInput    = 2
)

// Code returns the process exit status for err.
func Code(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ErrFindings):
		return ExitFindings
	case errors.Is(err, ErrInput), errors.Is(err, ErrUsage):
		return ExitInput
	default:
		// Anything else is an environment fault (disk, tools): the
		// harness could not do its job, which is not a finding.
		return ExitInput
	}
}
