package pipeline

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/tree"
)

// Where to test a patch: the kernel its base-commit (b4's trailer) is in,
// placed among the pinned kernels by their upstream versions.

// Upstream is a kernel version as upstream tags it: v6.12, v6.12.117
// (stable), v7.3-rc7.
type Upstream struct {
	Major, Minor, Sub int
	RC                int // 0: a release
}

var upstreamRe = regexp.MustCompile(`^v?(\d+)\.(\d+)(?:\.(\d+))?(?:-rc(\d+))?$`)

// ParseUpstream reads a tag-like version: v6.12, 6.12.117, v7.3-rc7.
func ParseUpstream(s string) (Upstream, bool) {
	m := upstreamRe.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return Upstream{}, false
	}
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	u := Upstream{Major: n(m[1]), Minor: n(m[2]), Sub: n(m[3]), RC: n(m[4])}
	if u.Sub > 0 && u.RC > 0 {
		return Upstream{}, false // no stable release candidates are tagged
	}
	return u, true
}

func (u Upstream) String() string {
	s := fmt.Sprintf("v%d.%d", u.Major, u.Minor)
	if u.Sub > 0 {
		s += fmt.Sprintf(".%d", u.Sub)
	}
	if u.RC > 0 {
		s += fmt.Sprintf("-rc%d", u.RC)
	}
	return s
}

// line is (major, minor) as one comparable number.
func (u Upstream) line() int { return u.Major*1000 + u.Minor }

// debianUpstream is the upstream part of a Debian version: 6.12.117-1~deb12u1, 7.3~rc7-1~exp1.
var debianUpstream = regexp.MustCompile(`^(\d+\.\d+(?:\.\d+)?)(?:~rc(\d+))?-`)

// PinUpstream is the upstream version a pinned kernel's source is:
// from the Debian version, or the git tag.
func PinUpstream(k *tree.Kernel) (Upstream, bool) {
	switch {
	case k.Debian != nil:
		m := debianUpstream.FindStringSubmatch(k.Debian.Version)
		if m == nil {
			return Upstream{}, false
		}
		s := m[1]
		if m[2] != "" {
			s += "-rc" + m[2]
		}
		return ParseUpstream(s)
	case k.Git != nil && k.Git.Tag != "":
		return ParseUpstream(k.Git.Tag)
	}
	return Upstream{}, false
}

// Contains reports whether a kernel at pin has everything of base: a
// stable release X.Y.Z has mainline vX.Y and before and its own line's
// X.Y.z up to Z; a release candidate or release of mainline has the
// mainline tags up to itself, no stable release.
func Contains(pin, base Upstream) bool {
	mainlineLE := func(a, b Upstream) bool { // a <= b, both mainline
		if a.line() != b.line() {
			return a.line() < b.line()
		}
		ra, rb := a.RC, b.RC
		if ra == 0 {
			ra = 1 << 20
		}
		if rb == 0 {
			rb = 1 << 20
		}
		return ra <= rb
	}
	if base.Sub > 0 { // a stable release: only its own line, later
		return pin.line() == base.line() && pin.Sub >= base.Sub
	}
	if pin.Sub > 0 { // a stable kernel has its mainline release and before
		return mainlineLE(base, Upstream{Major: pin.Major, Minor: pin.Minor})
	}
	return mainlineLE(base, pin)
}

// Placement is where a base-commit puts a patch.
type Placement struct {
	Base string       // as the trailer gave it
	Tag  string       // the tag it was placed by ("" when not placed)
	Pin  *tree.Kernel // the pinned kernel that contains it, closest to it (nil: none)
	// Why says how, in a sentence for the report.
	Why string
}

// BaseCommit finds b4's (git format-patch --base's) "base-commit: X"
// line in the messages, "" when there is none.
func BaseCommit(msgs ...[]byte) string {
	for _, m := range msgs {
		for _, l := range strings.Split(string(m), "\n") {
			if v, ok := strings.CutPrefix(strings.TrimRight(l, "\r "), "base-commit:"); ok {
				if v = strings.TrimSpace(v); v != "" {
					return v
				}
			}
		}
	}
	return ""
}

var tagInDescribe = regexp.MustCompile(`^(v\d+\.\d+(?:\.\d+)?(?:-rc\d+)?)(?:[~^].*)?$`)

// PlaceBase maps a base (a tag-like version, or a commit that one of the
// git repositories repos holds) to the pinned kernel closest to it that
// contains it. It says plainly when it cannot: no repository knows the
// commit, no tag contains it yet, or no pinned kernel has it.
func PlaceBase(ctx context.Context, base string, repos []string, pins []*tree.Kernel) *Placement {
	p := &Placement{Base: base}
	u, ok := ParseUpstream(base)
	if ok {
		p.Tag = u.String()
	} else {
		var notes []string
		for _, r := range repos {
			if _, err := command.Command("git", "-C", r, "cat-file", "-e", base+"^{commit}").Output(ctx); err != nil {
				notes = append(notes, fmt.Sprintf("%s does not have it", r))
				continue
			}
			out, err := command.Command("git", "-C", r, "describe", "--contains", "--match", "v[0-9]*", base).Output(ctx)
			if err != nil || strings.TrimSpace(string(out)) == "" {
				after := ""
				if o, err := command.Command("git", "-C", r, "describe", "--tags", "--abbrev=0", "--match", "v[0-9]*", base).Output(ctx); err == nil {
					after = ", after " + strings.TrimSpace(string(o))
				}
				notes = append(notes, fmt.Sprintf("%s has it%s, but no tag contains it yet", r, after))
				continue
			}
			m := tagInDescribe.FindStringSubmatch(strings.TrimSpace(string(out)))
			if m == nil {
				notes = append(notes, fmt.Sprintf("%s places it at %s, not a kernel version tag", r, strings.TrimSpace(string(out))))
				continue
			}
			u, _ = ParseUpstream(m[1])
			p.Tag, ok = u.String(), true
			break
		}
		if !ok {
			if len(repos) == 0 {
				notes = append(notes, "no git repository to look it up in (pass --tree or --git with a kernel repository)")
			}
			p.Why = fmt.Sprintf("base-commit %s cannot be placed: %s", base, strings.Join(notes, "; "))
			return p
		}
	}
	type cand struct {
		k *tree.Kernel
		u Upstream
	}
	var cs []cand
	for _, k := range pins {
		if pu, ok := PinUpstream(k); ok && Contains(pu, u) {
			cs = append(cs, cand{k, pu})
		}
	}
	if len(cs) == 0 {
		p.Why = fmt.Sprintf("base-commit %s (%s) is in no pinned kernel", base, p.Tag)
		return p
	}
	// The closest: the oldest kernel that has it.
	sort.Slice(cs, func(i, j int) bool { return newer(cs[j].u, cs[i].u) })
	p.Pin = cs[0].k
	p.Why = fmt.Sprintf("base-commit %s (%s) is in %s (%s), the pinned kernel closest to it", base, p.Tag, cs[0].k.Name, cs[0].u)
	return p
}

// Newest is the pinned kernel with the newest upstream version.
func Newest(pins []*tree.Kernel) *tree.Kernel {
	var best *tree.Kernel
	var bu Upstream
	for _, k := range pins {
		u, ok := PinUpstream(k)
		if !ok {
			continue
		}
		if best == nil || newer(u, bu) {
			best, bu = k, u
		}
	}
	return best
}

// Newer reports whether u is a newer version than v.
func (u Upstream) Newer(v Upstream) bool { return newer(u, v) }

// newer orders by line, then release after its candidates, then stable.
func newer(a, b Upstream) bool {
	if a.line() != b.line() {
		return a.line() > b.line()
	}
	ra, rb := a.RC, b.RC
	if ra == 0 {
		ra = 1 << 20
	}
	if rb == 0 {
		rb = 1 << 20
	}
	if ra != rb {
		return ra > rb
	}
	return a.Sub > b.Sub
}
