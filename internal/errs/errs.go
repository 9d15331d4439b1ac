// Package errs holds the sentinel errors that decide patchctl's exit status.
//
// Stage packages wrap their errors with these sentinels (fmt.Errorf("...: %w",
// errs.ErrInput)); cmd/patchctl maps them to exit codes in one place:
//
//	0 ok
//	1 findings or failed tests (the patch or the kernel under test is at fault)
//	2 usage or input error (the command line or a file given to patchctl)
//	3 the environment cannot run this (a missing tool, a full disk, no
//	  network for a download, an interrupted run, a harness fault)
package errs

import (
	"errors"
	"fmt"
	"strings"
)

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
	// ErrEnv marks a machine that cannot run the step: a tool not
	// installed, no space, no network, a harness that could not finish.
	// Exit status 3.
	ErrEnv = errors.New("environment error")
)

// Exit codes.
const (
	ExitOK       = 0
	ExitFindings = 1
	ExitInput    = 2
	ExitEnv      = 3
)

// Code returns the process exit status for err. An error that carries no
// sentinel is a fault of the environment (an I/O error, say), not of the
// input: exit 3.
func Code(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ErrFindings):
		return ExitFindings
	case errors.Is(err, ErrInput), errors.Is(err, ErrUsage):
		return ExitInput
	default:
		return ExitEnv
	}
}

// IsEnv reports whether err is an environment error.
func IsEnv(err error) bool { return errors.Is(err, ErrEnv) }

// Message is err's text as patchctl prints it, each thing said once: a
// sentinel's text that an error carries more than once (a stage wrapped
// an error that already had it: "environment error: environment error")
// is kept only where it comes last, and the trailing ": findings" of
// ErrFindings, which the exit status already says (and which made
// "1 findings: findings"), goes.
func Message(err error) string {
	segs := strings.Split(err.Error(), ": ")
	last := map[string]int{}
	for i, g := range segs {
		if isSentinelText(g) {
			last[g] = i
		}
	}
	kept := segs[:0:0]
	for i, g := range segs {
		if !isSentinelText(g) || last[g] == i {
			kept = append(kept, g)
		}
	}
	s := strings.Join(kept, ": ")
	if errors.Is(err, ErrFindings) {
		if t, ok := strings.CutSuffix(s, ": "+ErrFindings.Error()); ok && t != "" {
			return t
		}
	}
	return s
}

func isSentinelText(s string) bool {
	for _, e := range []error{ErrInput, ErrUsage, ErrFindings, ErrEnv} {
		if s == e.Error() {
			return true
		}
	}
	return false
}

// Count is n and the noun, singular or plural: "1 finding", "2 errors".
func Count(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
