package main

import (
	"fmt"
	"io"
	"strings"
)

// ktap writes KTAP version 1 (the kernel's test output format), nested
// subtests indented by four spaces.
type ktap struct {
	out    io.Writer
	indent string
	n      int
}

// header starts a (sub)test list: version, the subtest's name when it is
// nested, the plan.
func (k *ktap) header(name string, total int) {
	fmt.Fprintf(k.out, "%sKTAP version 1\n", k.indent)
	if name != "" {
		fmt.Fprintf(k.out, "%s# Subtest: %s\n", k.indent, name)
	}
	fmt.Fprintf(k.out, "%s1..%d\n", k.indent, total)
}

func (k *ktap) sub() *ktap { return &ktap{out: k.out, indent: k.indent + "    "} }

func (k *ktap) diag(format string, args ...any) {
	for _, l := range strings.Split(fmt.Sprintf(format, args...), "\n") {
		fmt.Fprintf(k.out, "%s# %s\n", k.indent, l)
	}
}

// result prints one test line; skip is a SKIP directive's reason.
func (k *ktap) result(ok bool, name, skip string) {
	k.n++
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

func (k *ktap) bail(reason string) {
	fmt.Fprintf(k.out, "%sBail out! %s\n", k.indent, reason)
}
