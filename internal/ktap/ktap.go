// Package ktap parses KTAP version 1, the kernel's test result format
// (Documentation/dev-tools/ktap.rst), out of a console log: lines that are
// not KTAP (kernel messages between them) are skipped.
package ktap

import (
	"regexp"
	"strconv"
	"strings"
)

// Test is a test line, or a list of them (the root and nested subtests).
type Test struct {
	Name        string   `json:"name"`
	Number      int      `json:"number,omitempty"`
	OK          bool     `json:"ok"`
	Skip        bool     `json:"skip,omitempty"`
	Directive   string   `json:"directive,omitempty"`
	Diagnostics []string `json:"diagnostics,omitempty"`
	Plan        int      `json:"plan,omitempty"`
	Subtests    []*Test  `json:"subtests,omitempty"`
	Bail        string   `json:"bail,omitempty"` // the run was abandoned: a top-level ERROR result, or a TAP "Bail out!"
}

var (
	versionRe = regexp.MustCompile(`^( *)KTAP version 1\s*$`)
	planRe    = regexp.MustCompile(`^( *)1\.\.(\d+)\s*$`)
	resultRe  = regexp.MustCompile(`^( *)(ok|not ok) (\d+)(?: (?:- )?([^#]*?))?\s*(?:#\s*(\S+)\s*(.*))?$`)
	subtestRe = regexp.MustCompile(`^( *)# Subtest: (.*)$`)
	diagRe    = regexp.MustCompile(`^( *)# ?(.*)$`)
	bailRe    = regexp.MustCompile(`^( *)Bail out!\s*(.*)$`)
)

// Parse reads the first KTAP document in text. It returns nil when there
// is none.
func Parse(text string) *Test {
	var root *Test
	var levels []*Test
	pending := map[int][]string{}
	depthOf := func(indent string) int { return len(indent) / 4 }
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if m := versionRe.FindStringSubmatch(line); m != nil {
			d := depthOf(m[1])
			if d == 0 && root != nil {
				break // a second document
			}
			if d > len(levels) {
				continue
			}
			levels = append(levels[:d], &Test{})
			if d == 0 {
				root = levels[0]
			}
			continue
		}
		if root == nil {
			continue
		}
		if m := bailRe.FindStringSubmatch(line); m != nil {
			root.Bail = m[2]
			continue
		}
		if m := planRe.FindStringSubmatch(line); m != nil {
			if d := depthOf(m[1]); d < len(levels) {
				levels[d].Plan, _ = strconv.Atoi(m[2])
			}
			continue
		}
		if m := subtestRe.FindStringSubmatch(line); m != nil {
			if d := depthOf(m[1]); d < len(levels) {
				levels[d].Name = m[2]
			}
			continue
		}
		if m := resultRe.FindStringSubmatch(line); m != nil {
			d := depthOf(m[1])
			if d >= len(levels) {
				continue
			}
			var t *Test
			if d+1 < len(levels) {
				t = levels[d+1] // the end of a nested subtest
				levels = levels[:d+1]
			} else {
				t = &Test{}
			}
			t.OK = m[2] == "ok"
			t.Number, _ = strconv.Atoi(m[3])
			if name := strings.TrimSpace(m[4]); name != "" {
				t.Name = name
			}
			if m[5] != "" {
				t.Directive = strings.ToUpper(m[5])
				t.Skip = t.Directive == "SKIP"
				if m[6] != "" {
					t.Diagnostics = append(t.Diagnostics, m[6])
				}
			}
			t.Diagnostics = append(pending[d], t.Diagnostics...)
			delete(pending, d)
			if d == 0 && t.Directive == "ERROR" && !t.OK {
				// the run itself could not go on (ktap.rst's ERROR
				// directive on a top-level test)
				root.Bail = strings.TrimSpace(m[6])
				if root.Bail == "" {
					root.Bail = t.Name
				}
			}
			levels[d].Subtests = append(levels[d].Subtests, t)
			continue
		}
		if m := diagRe.FindStringSubmatch(line); m != nil {
			d := depthOf(m[1])
			if d < len(levels) {
				pending[d] = append(pending[d], m[2])
			}
		}
	}
	return root
}

// Counts are the leaf results under t.
type Counts struct {
	Pass, Fail, Skip int
}

// Count counts t's leaf tests; a nil t (a guest that printed no KTAP:
// it never got to its tests) has none.
func (t *Test) Count() Counts {
	var c Counts
	if t == nil {
		return c
	}
	var walk func(*Test)
	walk = func(x *Test) {
		if len(x.Subtests) == 0 {
			switch {
			case x.Skip:
				c.Skip++
			case x.OK:
				c.Pass++
			default:
				c.Fail++
			}
			return
		}
		for _, s := range x.Subtests {
			walk(s)
		}
	}
	for _, s := range t.Subtests {
		walk(s)
	}
	return c
}

// Complete reports whether every list has as many results as its plan;
// a nil t (no KTAP at all) is not complete.
func (t *Test) Complete() bool {
	if t == nil {
		return false
	}
	if t.Plan > 0 && len(t.Subtests) != t.Plan {
		return false
	}
	for _, s := range t.Subtests {
		if len(s.Subtests) > 0 && !s.Complete() {
			return false
		}
	}
	return true
}

// Find returns the subtest with the given name (nil on a nil t).
func (t *Test) Find(name string) *Test {
	if t == nil {
		return nil
	}
	for _, s := range t.Subtests {
		if s.Name == name {
			return s
		}
	}
	return nil
}
