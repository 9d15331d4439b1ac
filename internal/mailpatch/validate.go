package mailpatch

import (
	"fmt"
	"path"
	"strings"
)

// bidiControls are the Unicode bidirectional controls that can make code
// read differently from how it compiles (CVE-2021-42574, "Trojan Source").
var bidiControls = map[rune]string{
	'\u061C': "ARABIC LETTER MARK",
	'\u200E': "LEFT-TO-RIGHT MARK",
	'\u200F': "RIGHT-TO-LEFT MARK",
	'\u202A': "LEFT-TO-RIGHT EMBEDDING",
	'\u202B': "RIGHT-TO-LEFT EMBEDDING",
	'\u202C': "POP DIRECTIONAL FORMATTING",
	'\u202D': "LEFT-TO-RIGHT OVERRIDE",
	'\u202E': "RIGHT-TO-LEFT OVERRIDE",
	'\u2066': "LEFT-TO-RIGHT ISOLATE",
	'\u2067': "RIGHT-TO-LEFT ISOLATE",
	'\u2068': "FIRST STRONG ISOLATE",
	'\u2069': "POP DIRECTIONAL ISOLATE",
}

// checkControl refuses bidirectional control characters anywhere in the
// message unless the user allowed them.
func checkControl(m *message, body []string, allow bool) error {
	if allow {
		return nil
	}
	check := func(s string, line int) error {
		for col, r := range s {
			if name, bad := bidiControls[r]; bad {
				return &InputError{File: m.File, Line: line,
					Msg:  fmt.Sprintf("Unicode bidirectional control U+%04X %s at column %d: code can read differently from how it compiles (Trojan Source)", r, name, col+1),
					Hint: "remove it, or pass --allow-unicode-control if it is intended"}
			}
		}
		return nil
	}
	if err := check(m.Subject, m.StartLine); err != nil {
		return err
	}
	for i, l := range body {
		if err := check(l, m.line(i)); err != nil {
			return err
		}
	}
	return nil
}

// checkFiles refuses paths that leave the tree and binary changes whose
// data is missing.
func checkFiles(m *message, p *Patch, diffAt int) error {
	for _, f := range p.Files {
		for _, name := range []string{f.OldName, f.NewName} {
			if name == "" {
				continue
			}
			if err := checkPath(name); err != nil {
				return &InputError{File: m.File, Line: m.line(diffAt), Msg: fmt.Sprintf("unsafe path %q: %v", name, err),
					Hint: "a kernel patch names files relative to the top of the tree"}
			}
		}
		if f.IsBinary && f.BinaryFragment == nil {
			return &InputError{File: m.File, Line: m.line(diffAt),
				Msg:  fmt.Sprintf("binary change to %s carries no data (\"Binary files differ\")", firstNonEmpty(f.NewName, f.OldName)),
				Hint: "regenerate the patch with git format-patch --binary"}
		}
		if f.NewMode == 0o120000 {
			return &InputError{File: m.File, Line: m.line(diffAt),
				Msg: fmt.Sprintf("%s is created as a symbolic link, which can point out of the tree", f.NewName)}
		}
	}
	return nil
}

// checkPath accepts a relative, clean path that stays inside the tree.
func checkPath(name string) error {
	switch {
	case strings.HasPrefix(name, "/"):
		return fmt.Errorf("absolute path")
	case strings.ContainsAny(name, "\\\x00"):
		return fmt.Errorf("backslash or NUL in path")
	}
	for _, c := range strings.Split(name, "/") {
		switch c {
		case "..":
			return fmt.Errorf("\"..\" would leave the tree")
		case ".git":
			return fmt.Errorf("writes into git metadata")
		}
	}
	if path.Clean(name) != name {
		return fmt.Errorf("path is not clean (%q)", path.Clean(name))
	}
	return nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
