package command

import (
	"os"
	"regexp"
	"strings"
)

// makeflagsDropped are the flags of an inherited MAKEFLAGS (a make that
// ran patchctl: make run, make test, a user's own Makefile) that a make
// patchctl runs does not get: the parent's jobserver (its pipe or fifo is
// not passed on, so make warned and reset it, and the build counted the
// warning as its own), its number of jobs (patchctl gives its own where it
// wants more than one), and the flags that change only what make prints:
// -s, which silences kbuild's "CC foo.o" lines a build counts its work by,
// -w, --no-print-directory, -O, and make's own tracing and warnings (-d,
// --debug, --trace, -p: the database of every sub-make in the build's
// log; --warn-undefined-variables, counted as the build's warnings). None of
// them is an input of what make builds (internal/build's proof leaves them
// out: with them in it, a build run by make test after one run from a
// shell ran make again for nothing, 21 CPU-s on 6.12). Every child gets
// MAKEFLAGS without them, whether it is make or runs make (a script), and
// none gets a descriptor of the parent's jobserver.
var makeflagsDropped = regexp.MustCompile(`^(--jobserver-(auth|fds)=.*|-j\d*|--jobs(=\d*)?|-s|--silent|--quiet|--no-silent|-w|--print-directory|--no-print-directory|-O.*|--output-sync(=.*)?|-d|--debug(=.*)?|--trace|-p|--print-data-base|--warn-undefined-variables)$`)

// droppedShort are the single-letter flags of makeflagsDropped, as they
// stand in the first word.
var droppedShort = strings.NewReplacer("s", "", "w", "", "d", "", "p", "")

// shortFlags is the first word of MAKEFLAGS (make's single-letter flags,
// "ks") or of MFLAGS (the same with a dash, "-ks"). make writes a flag
// that takes an argument as a word of its own, which can be first and
// all letters too ("make -I scripts": MAKEFLAGS " -Iscripts", MFLAGS
// "-Iscripts"): a word that starts with one of those letters is not the
// group.
var shortFlags = regexp.MustCompile(`^-?[A-Za-z]+$`)

// argFlags are make's single-letter flags that take an argument.
const argFlags = "CEfIjlOoW"

// CleanMakeflags is an inherited MAKEFLAGS (or MFLAGS) without the flags
// of makeflagsDropped. Its first word, when it is make's single-letter
// flags, loses s, w, d and p; what follows "--" (the variables given on make's
// command line) is kept as it is.
func CleanMakeflags(val string) string {
	fields := strings.Fields(val)
	var kept []string
	for i, f := range fields {
		if f == "--" {
			kept = append(kept, fields[i:]...)
			break
		}
		if makeflagsDropped.MatchString(f) {
			continue
		}
		if i == 0 && shortFlags.MatchString(f) && !strings.ContainsAny(strings.TrimPrefix(f, "-")[:1], argFlags) {
			if f = droppedShort.Replace(f); f == "" || f == "-" {
				continue
			}
		}
		kept = append(kept, f)
	}
	return strings.Join(kept, " ")
}

// IsMakeflags: the variables that hold make's flags for a make below.
func IsMakeflags(name string) bool {
	return strings.HasSuffix(name, "MAKEFLAGS") || name == "MFLAGS"
}

// MakeflagsEnv is what every child's environment adds to patchctl's own,
// before the command's Env: each inherited MAKEFLAGS and MFLAGS cleaned
// (CleanMakeflags), where cleaning changes it. internal/build's proof that
// a folder is up to date hashes the same cleaned value.
func MakeflagsEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, val, _ := strings.Cut(kv, "=")
		if IsMakeflags(name) {
			if c := CleanMakeflags(val); c != val {
				env = append(env, name+"="+c)
			}
		}
	}
	return env
}
