package distro

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
)

// Makefile is what a kbuild directory's Makefile says about its modules.
type Makefile struct {
	// Objects maps each top-level object (nvme-rdma.o) to the config
	// symbol that builds it ("" for obj-y: always built in).
	Objects map[string]string
	// Parts maps a composite object (nvme-rdma.o) to its parts, each with
	// the symbol it needs ("" for <name>-y and <name>-objs).
	Parts map[string][]Part
	// Rest is every line that is not an obj-... assignment, continuation
	// lines joined: the flags and composite definitions a generated
	// Kbuild keeps.
	Rest []string
}

// Part is one object of a composite module.
type Part struct {
	Object string
	Symbol string
}

var (
	objLine  = regexp.MustCompile(`^obj-(y|m|\$\(CONFIG_([A-Za-z0-9_]+)\))\s*[:+]?=\s*(.*)$`)
	partLine = regexp.MustCompile(`^([A-Za-z0-9_.-]+?)-(y|objs|\$\(CONFIG_([A-Za-z0-9_]+)\))\s*[:+]?=\s*(.*)$`)
)

// ParseMakefile reads a kbuild Makefile (or Kbuild file).
func ParseMakefile(text string) *Makefile {
	mk := &Makefile{Objects: map[string]string{}, Parts: map[string][]Part{}}
	var lines []string
	cur := ""
	for _, l := range strings.Split(text, "\n") {
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		lines = append(lines, cur+l)
		cur = ""
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	// obj-$(CONFIG_X) += $(list-y): a list defined by list-$(CONFIG_Y)
	// := a.o (drivers/infiniband/core), expanded once all are read.
	type ref struct{ list, sym string }
	var refs []ref
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if c := strings.Index(t, "#"); c >= 0 {
			t = strings.TrimSpace(t[:c])
		}
		if m := objLine.FindStringSubmatch(t); m != nil {
			sym := m[2]
			if m[1] == "m" {
				sym = "=m"
			}
			for _, o := range strings.Fields(m[3]) {
				switch {
				case strings.HasSuffix(o, ".o"):
					mk.Objects[o] = sym
				case strings.HasPrefix(o, "$(") && strings.HasSuffix(o, "-y)"):
					refs = append(refs, ref{strings.TrimSuffix(strings.TrimPrefix(o, "$("), "-y)"), sym})
				}
			}
			continue
		}
		if m := partLine.FindStringSubmatch(t); m != nil && !strings.HasPrefix(m[1], "ccflags") && !strings.HasPrefix(m[1], "subdir") &&
			!strings.HasPrefix(m[1], "asflags") && !strings.HasPrefix(m[1], "ldflags") {
			for _, o := range strings.Fields(m[4]) {
				if strings.HasSuffix(o, ".o") {
					mk.Parts[m[1]+".o"] = append(mk.Parts[m[1]+".o"], Part{Object: o, Symbol: m[3]})
				}
			}
		}
		mk.Rest = append(mk.Rest, l)
	}
	for _, r := range refs {
		for _, p := range mk.Parts[r.list+".o"] {
			mk.Objects[p.Object] = r.sym
		}
	}
	return mk
}

// Config answers a config symbol's value ("y", "m" or "").
type Config interface{ Value(sym string) string }

// Module is a module to rebuild: its directory (repository-relative), its
// object name (nvme-rdma), and the touched files that made it one.
type Module struct {
	Dir    string   `json:"dir"`
	Name   string   `json:"name"`
	Symbol string   `json:"symbol"`
	Files  []string `json:"files"`
}

// RefusedError is a touched file that a module build cannot test.
type RefusedError struct {
	File   string
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s: %s; test it with --kernel-from source", e.File, e.Reason)
}

func (e *RefusedError) Unwrap() error { return errs.ErrInput }

// Plan finds the modules that the touched files (repository-relative)
// belong to in the distro configuration cfg, reading each directory's
// Makefile under src. A C file built in, not built at all, or not found in
// its Makefile is refused, as are headers outside a module directory and
// changed Makefiles or Kconfig (the binary kernel's configuration is fixed).
// Files that are not sources (documentation) do not matter.
func Plan(src string, touched []string, cfg Config) ([]Module, error) {
	pl := &planner{src: src, cfg: cfg, mods: map[string]*Module{}}
	for _, f := range touched {
		pl.file(f)
	}
	if len(pl.refused) > 0 {
		return nil, refusals(pl.refused)
	}
	var out []Module
	for _, k := range sortedKeys(pl.mods) {
		out = append(out, *pl.mods[k])
	}
	return out, nil
}

// planner gathers Plan's modules (by directory and object) and the
// touched files it refuses.
type planner struct {
	src     string
	cfg     Config
	mods    map[string]*Module
	refused []error
}

func (pl *planner) add(dir, obj, sym, file string) {
	key := dir + "/" + obj
	m := pl.mods[key]
	if m == nil {
		m = &Module{Dir: dir, Name: strings.TrimSuffix(obj, ".o"), Symbol: sym}
		pl.mods[key] = m
	}
	m.Files = append(m.Files, file)
}

func (pl *planner) refuse(file, reason string) {
	pl.refused = append(pl.refused, &RefusedError{file, reason})
}

// file plans the touched file f: a C file or a local header is read
// against its directory's Makefile; a build file or a shared header is
// refused; anything else (documentation, scripts) builds nothing.
func (pl *planner) file(f string) {
	base := path.Base(f)
	dir := path.Dir(f)
	switch {
	case base == "Makefile" || base == "Kbuild" || strings.HasPrefix(base, "Kconfig"):
		pl.refuse(f, "changes the build's configuration, which Debian's binary kernel fixes")
		return
	case strings.HasSuffix(f, ".c"):
	case strings.HasSuffix(f, ".h"):
		if strings.HasPrefix(f, "include/") || strings.HasPrefix(f, "arch/") {
			pl.refuse(f, "a shared header: the built-in kernel may include it, and modules build against Debian's copy")
			return
		}
	default:
		return
	}
	mk, err := readMakefile(pl.src, dir)
	if err != nil {
		pl.refuse(f, err.Error())
		return
	}
	if strings.HasSuffix(f, ".h") {
		pl.header(f, dir, mk)
		return
	}
	pl.source(f, dir, strings.TrimSuffix(base, ".c")+".o", mk)
}

// header plans a local header f: every module of its directory may
// include it, so each is rebuilt; one built in refuses it.
func (pl *planner) header(f, dir string, mk *Makefile) {
	n, builtin := 0, false
	for _, obj := range sortedKeys(mk.Objects) {
		sym := mk.Objects[obj]
		switch v := symValue(pl.cfg, sym); v {
		case "m":
			pl.add(dir, obj, sym, f)
			n++
		case "y":
			pl.refuse(f, fmt.Sprintf("a header of %s, whose %s is built in (%s)", dir, obj, describe(sym)))
			builtin = true
		}
	}
	if n == 0 && !builtin {
		pl.refuse(f, "no module of "+dir+" is built in this configuration")
	}
}

// source plans the C file f (object obj): the module that links it must
// be built as a module by the distro configuration, and so must the part
// it belongs to when the Makefile makes it conditional.
func (pl *planner) source(f, dir, obj string, mk *Makefile) {
	top, sym, partSym, ok := owner(mk, obj)
	if !ok {
		pl.refuse(f, fmt.Sprintf("%s/Makefile builds no %s", dir, obj))
		return
	}
	switch v := symValue(pl.cfg, sym); {
	case v == "y":
		pl.refuse(f, fmt.Sprintf("built into the distro kernel (%s), not a module", describe(sym)))
		return
	case v != "m":
		pl.refuse(f, fmt.Sprintf("not built in the distro configuration (%s is not set)", describe(sym)))
		return
	}
	if partSym != "" && pl.cfg.Value(partSym) != "y" && pl.cfg.Value(partSym) != "m" {
		pl.refuse(f, fmt.Sprintf("part of %s only with CONFIG_%s, which the distro configuration does not set", top, partSym))
		return
	}
	pl.add(dir, top, sym, f)
}

func refusals(errList []error) error {
	if len(errList) == 1 {
		return errList[0]
	}
	var msgs []string
	for _, e := range errList {
		msgs = append(msgs, e.Error())
	}
	return fmt.Errorf("%d touched files cannot be tested on the distro kernel:\n  %s: %w", len(errList), strings.Join(msgs, "\n  "), errs.ErrInput)
}

func describe(sym string) string {
	switch sym {
	case "":
		return "obj-y"
	case "=m":
		return "obj-m"
	}
	return "CONFIG_" + sym
}

func symValue(cfg Config, sym string) string {
	switch sym {
	case "":
		return "y"
	case "=m":
		return "m"
	}
	return cfg.Value(sym)
}

// owner finds the top-level object that builds obj: obj itself, or the
// composite that lists it (with the symbol its part needs).
func owner(mk *Makefile, obj string) (top, sym, partSym string, ok bool) {
	if s, ok := mk.Objects[obj]; ok {
		if _, composite := mk.Parts[obj]; !composite {
			return obj, s, "", true
		}
	}
	for _, c := range sortedKeys(mk.Parts) {
		s, isTop := mk.Objects[c]
		if !isTop {
			continue
		}
		for _, p := range mk.Parts[c] {
			if p.Object == obj {
				return c, s, p.Symbol, true
			}
		}
	}
	return "", "", "", false
}

func readMakefile(src, dir string) (*Makefile, error) {
	for _, n := range []string{"Kbuild", "Makefile"} {
		b, err := os.ReadFile(filepath.Join(src, dir, n))
		if err == nil {
			return ParseMakefile(string(b)), nil
		}
	}
	return nil, fmt.Errorf("%s has no Makefile or Kbuild: not a kbuild directory", dir)
}

// Kbuild is the generated Kbuild of a directory's modules: the directory's
// own flags and composite definitions, and obj-m for the named objects
// only. include is added to the include path (the work tree's copy of the
// directory, for includes such as "../host/fabrics.h").
func Kbuild(mk *Makefile, objects []string, include string) string {
	var b strings.Builder
	b.WriteString("# generated by patchctl (--kernel-from distro): the touched modules only\n")
	for _, l := range mk.Rest {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if include != "" {
		fmt.Fprintf(&b, "ccflags-y += -I%s\n", include)
	}
	for _, o := range objects {
		fmt.Fprintf(&b, "obj-m += %s\n", o)
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
