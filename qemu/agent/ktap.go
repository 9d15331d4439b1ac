package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// ktap writes KTAP version 1 (the kernel's test output format), nested
// subtests indented by four spaces.
type ktap struct {
	out    io.Writer
	indent string
	n      int
	last   time.Time // when the current test began: the header or the previous result
}

// header starts a (sub)test list: version, the subtest's name when it is
// nested, the plan.
func (k *ktap) header(name string, total int) {
	fmt.Fprintf(k.out, "%sKTAP version 1\n", k.indent)
	if name != "" {
		fmt.Fprintf(k.out, "%s# Subtest: %s\n", k.indent, name)
	}
	fmt.Fprintf(k.out, "%s1..%d\n", k.indent, total)
	k.last = time.Now()
}

func (k *ktap) sub() *ktap { return &ktap{out: k.out, indent: k.indent + "    ", last: time.Now()} }

func (k *ktap) diag(format string, args ...any) {
	for _, l := range strings.Split(fmt.Sprintf(format, args...), "\n") {
		fmt.Fprintf(k.out, "%s# %s\n", k.indent, l)
	}
}

// result prints one test line; skip is a SKIP directive's reason. A
// diagnostic line before it says how long the test took (KTAP has no
// field for it; the host's reports read "duration: S s").
func (k *ktap) result(ok bool, name, skip string) {
	k.n++
	if !k.last.IsZero() {
		fmt.Fprintf(k.out, "%s# duration: %.3f s\n", k.indent, time.Since(k.last).Seconds())
	}
	k.last = time.Now()
	s := "ok"
	if !ok {
		s = "not ok"
	}
	line := fmt.Sprintf("%s%s %d %s", k.indent, s, k.n, name)
	if skip != "" {
		line += " # SKIP " + skip
	}
	fmt.Fprintln(k.out, line)
}

// abort ends a run that could not start its tests (a mount, the
// configuration, the network): a complete KTAP document with one test
// that failed with the ERROR directive. KTAP (ktap.rst) has no bail-out
// line; the kernel's kunit_parser finds no results in a bare "Bail out!".
func (k *ktap) abort(reason string) {
	k.header("", 1)
	reason = strings.ReplaceAll(reason, "\n", " ")
	fmt.Fprintf(k.out, "%snot ok 1 agent_setup # ERROR %s\n", k.indent, reason)
}
