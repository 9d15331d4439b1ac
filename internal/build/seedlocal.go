package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchctl/patchctl/internal/cachelock"
	"github.com/patchctl/patchctl/internal/progress"
	"github.com/patchctl/patchctl/internal/tree"
)

// seedLocal makes dir, a local tree's baseline folder of a configuration
// (build/local-X/H), when absent, a copy of the completed folder of the
// same configuration of a pinned kernel whose pristine tree states the
// same release: a copy of a kernel tree at another path (a user's
// --tree, a test's local tree) then costs what differs, not a build of
// the whole tree from ccache.
//
// The copy is what an incremental build of the pinned folder would see
// after the files that differ were edited:
//   - the command records name this tree and this folder (relocate);
//   - every target whose record lists a file that differs among the
//     files it was made from (kbuild's fixdep lists: the source and each
//     header read) is removed, so make makes it again; a file that
//     exists only in the pinned tree is such a file too;
//   - the modules' link products are left out (linkProduct), as for a
//     copy from another configuration.
//
// It declines (dir starts empty, as before) when make could not tell
// from the records what a difference reaches: a Makefile, Kbuild,
// Kconfig or configs file, a script or a tool's source that differs; a
// C or assembly file or header only this tree has (an include could
// find it before the file the copied objects read); or a target made by
// a rule that records no list of what it read (its command names a file
// that differs). The pinned kernel's folder is copied under its work
// lock and its tree compared under its tree lock, each taken only if
// free: a build or a prepare of it under way is not waited for.
func seedLocal(ctx context.Context, c *tree.Cache, k *tree.Kernel, wt *tree.WorkTree, dir string, p *progress.Reporter) error {
	if !k.IsLocal() {
		return nil
	}
	if _, err := os.Lstat(dir); err == nil {
		return nil
	}
	name, from := pinnedFolder(c, k, filepath.Base(dir))
	if from == "" {
		return nil
	}
	release, ok, err := cachelock.TryTake(c.Dir, "work-"+name)
	if err != nil || !ok {
		return nil // a build of it holds it: the seed is not worth a wait
	}
	defer release()
	// Its pristine tree is compared under its lock too: a prepare of it
	// (a re-pin) under way is not waited for either, and one that ended
	// since pinnedFolder looked shows in a second look (which also
	// finds the folder's build complete).
	releaseTree, ok, err := cachelock.TryTake(c.Dir, "tree-"+name)
	if err != nil || !ok {
		return nil
	}
	defer releaseTree()
	if again, at := pinnedFolder(c, k, filepath.Base(dir)); again != name || at != from {
		return nil
	}
	// The work tree the pinned folder's objects were compiled in, as
	// kbuild named it in the records (the folder's source link).
	pinnedSrc, err := os.Readlink(filepath.Join(from, "source"))
	if err != nil || !filepath.IsAbs(pinnedSrc) {
		return nil
	}
	// The seed only saves time: a tree it cannot compare (a file that
	// cannot be read, which the build may never read either) is built
	// as before, not refused.
	diff, err := treeDiff(c.PristineDir(&tree.Kernel{Name: name}), wt.Pristine)
	if err != nil {
		p.Note("%s: not seeded from the objects of %s: comparing the trees: %v", filepath.Base(dir), name, err)
		return nil
	}
	if why := unseedable(diff); why != "" {
		p.Note("%s: not seeded from the objects of %s: %s", filepath.Base(dir), name, why)
		return nil
	}
	why, err := makefileNamed(wt.Pristine, diff)
	if err != nil {
		why = fmt.Sprintf("reading the makefiles of %s: %v", wt.Pristine, err)
	}
	if why != "" {
		p.Note("%s: not seeded from the objects of %s: %s", filepath.Base(dir), name, why)
		return nil
	}
	spec := copySpec{
		drop:  linkProduct,
		moves: [][2]string{{from, dir}, {pinnedSrc, wt.Dir}},
		fix: func(tmp string) error {
			n, err := dropStale(tmp, dir, wt.Dir, diff)
			if err != nil {
				return err
			}
			if n > 0 {
				p.Note("%s: %d targets of the copy made again (%d files differ from %s)", filepath.Base(dir), n, len(diff), name)
			}
			return os.WriteFile(filepath.Join(tmp, ".patchctl-kernel"), []byte(k.Key()+"\n"), 0o644)
		},
	}
	what := fmt.Sprintf("seed %s/%s from the objects of %s (%d files differ)", k.Name, filepath.Base(dir), name, len(diff))
	return copyFolderWith(ctx, from, dir, what, spec, p)
}

// pinnedFolder is a pinned kernel's completed build folder of
// configuration hash (12 hex digits) whose pristine tree states k's
// release, and that kernel's name; "" when there is none. Among several,
// the first by name.
func pinnedFolder(c *tree.Cache, k *tree.Kernel, hash string) (name, dir string) {
	ents, err := os.ReadDir(filepath.Join(c.Dir, "build"))
	if err != nil {
		return "", ""
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() && e.Name() != k.Name && !strings.HasPrefix(e.Name(), "local-") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		d := filepath.Join(c.Dir, "build", n, hash)
		key, err := os.ReadFile(filepath.Join(d, ".patchctl-kernel"))
		if err != nil || !completeBuild(d) {
			continue
		}
		pk := &tree.Kernel{Name: n}
		// The pristine tree is the source the folder was built from.
		marker, err := os.ReadFile(filepath.Join(c.Dir, "trees", n+".prepared"))
		if err != nil || strings.TrimSpace(string(marker)) != strings.TrimSpace(string(key)) {
			continue
		}
		if rel, _, err := tree.MakefileRelease(c.PristineDir(pk)); err != nil || rel != k.Local.Release {
			continue
		}
		return n, d
	}
	return "", ""
}

// Kinds of difference between two trees (treeDiff).
const (
	diffChanged = "changed" // in both, another content or type
	diffAdded   = "added"   // only in the second tree
	diffRemoved = "removed" // only in the first tree
)

// treeDiff lists the files (regular files and symlinks, by slash path
// relative to the roots) that differ between the trees a and b, with how.
// A file both trees link to (one inode) is the same without a read; the
// rest are compared by size, then content. A top-level .git is not part
// of a tree.
func treeDiff(a, b string) (map[string]string, error) {
	type entry struct {
		fi   fs.FileInfo
		seen bool
	}
	inA := map[string]*entry{}
	err := filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		inA[filepath.ToSlash(rel)] = &entry{fi: fi}
		return nil
	})
	if err != nil {
		return nil, err
	}
	diff := map[string]string{}
	err = filepath.WalkDir(b, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(b, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		e := inA[rel]
		if e == nil {
			diff[rel] = diffAdded
			return nil
		}
		e.seen = true
		same, err := sameFile(filepath.Join(a, filepath.FromSlash(rel)), p, e.fi, fi)
		if err != nil {
			return err
		}
		if !same {
			diff[rel] = diffChanged
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for rel, e := range inA {
		if !e.seen {
			diff[rel] = diffRemoved
		}
	}
	return diff, nil
}

// sameFile says whether the files pa and pb (lstat'd as a and b) have one
// type and content: both symlinks to one target, or both regular files
// with the same bytes and the same executable bits.
func sameFile(pa, pb string, a, b fs.FileInfo) (bool, error) {
	switch {
	case os.SameFile(a, b):
		return true, nil
	case a.Mode().Type() != b.Mode().Type():
		return false, nil
	case a.Mode()&fs.ModeSymlink != 0:
		ta, err := os.Readlink(pa)
		if err != nil {
			return false, err
		}
		tb, err := os.Readlink(pb)
		return err == nil && ta == tb, err
	case !a.Mode().IsRegular():
		return true, nil // neither a file nor a link: nothing a build reads
	case a.Mode()&0o111 != b.Mode()&0o111:
		return false, nil // a script kbuild runs directly, executable or not
	case a.Size() != b.Size():
		return false, nil
	}
	x, err := os.ReadFile(pa)
	if err != nil {
		return false, err
	}
	y, err := os.ReadFile(pb)
	if err != nil {
		return false, err
	}
	return bytes.Equal(x, y), nil
}

// unseedable says why a copy of a folder built from the first tree of
// diff cannot be made right for the second by its records alone, or "".
func unseedable(diff map[string]string) string {
	rels := make([]string, 0, len(diff))
	for rel := range diff {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		base := path.Base(rel)
		switch {
		case strings.HasPrefix(base, "Makefile") || strings.HasPrefix(base, "Kbuild") || strings.HasPrefix(base, "Kconfig") ||
			strings.HasSuffix(base, ".mk") || strings.HasSuffix(base, ".config") || strings.Contains(rel, "/configs/") ||
			strings.HasPrefix(rel, "scripts/") || strings.HasPrefix(rel, "tools/"):
			return fmt.Sprintf("%s %s, a file of the build itself", rel, diff[rel])
		case diff[rel] == diffAdded && isCompiled(base):
			return fmt.Sprintf("%s is added, and an include could find it before a file the copied objects read", rel)
		}
	}
	return ""
}

// isCompiled says whether a file of that name is C, assembly or a header
// (or included like one).
func isCompiled(base string) bool {
	if strings.HasSuffix(base, "_shipped") {
		return true // a generated file kept in the tree (x.c_shipped, x.h_shipped)
	}
	switch path.Ext(base) {
	case ".c", ".h", ".S", ".s", ".inc", ".lds", ".tbl", ".asn1", ".y", ".l":
		return true
	}
	return false
}

// dropStale removes from the copied folder tmp (to be renamed to dir)
// every target whose command record (.NAME.cmd beside it) names a file
// of diff in the work tree src: a record with kbuild's list of what the
// target read (deps_) is made again; a record without one (a rule whose
// inputs only its makefile knows) declines the seed (errNoSeed). A
// record names a file by absolute path or relative to the folder, where
// make runs (kbuild's dependency lists say ../src/drivers/x/./y.h), so
// each is resolved before it is looked up. It returns how many targets
// it removed.
func dropStale(tmp, dir, src string, diff map[string]string) (int, error) {
	stale, bases := map[string]bool{}, map[string]bool{}
	for rel, kind := range diff {
		if kind != diffAdded {
			stale[rel] = true
			bases[path.Base(rel)] = true
		}
	}
	if len(stale) == 0 {
		return 0, nil
	}
	prefix := src + "/"
	// named is the file of stale a token of a record names, or "".
	named := func(tok []byte) string {
		if !bases[string(tok[bytes.LastIndexByte(tok, '/')+1:])] {
			return "" // not a stale file's name: no path to resolve
		}
		p := string(tok)
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		p = filepath.Clean(p)
		if rel, ok := strings.CutPrefix(p, prefix); ok && stale[rel] {
			return rel
		}
		return ""
	}
	n := 0
	err := filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if !d.Type().IsRegular() || !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".cmd") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		hit := ""
		for _, field := range bytes.FieldsFunc(b, func(r rune) bool {
			return r == ' ' || r == '\t' || r == '\n' || r == '\\' || r == '\'' || r == '"' || r == ';' || r == '(' || r == ')'
		}) {
			// A path may hold a comma, an equals sign or a colon
			// (include/dt-bindings/regulator/richtek,rt5190a-regulator.h),
			// and a field may join a path to an option by one
			// (-Wp,-MMD,x.d; --script=x.lds) or end in one (a rule's
			// "x.o:"): each part from the field's start or after one of
			// them, without the ones it ends in, may be the path.
			for from := 0; from < len(field) && hit == ""; from++ {
				if from > 0 && !isSoftSep(field[from-1]) {
					continue
				}
				tok := bytes.TrimRightFunc(field[from:], func(r rune) bool { return r < 128 && isSoftSep(byte(r)) })
				if len(tok) > 0 {
					hit = named(tok)
				}
			}
			if hit != "" {
				break
			}
		}
		if hit == "" {
			return nil
		}
		target := filepath.Join(filepath.Dir(p), strings.TrimSuffix(strings.TrimPrefix(name, "."), ".cmd"))
		rel, _ := filepath.Rel(tmp, target)
		if !bytes.Contains(b, []byte("\ndeps_")) && !bytes.HasPrefix(b, []byte("deps_")) {
			return fmt.Errorf("%w: %s is made from %s by a rule that records no list of what it read", errNoSeed, rel, hit)
		}
		if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		n++
		return nil
	})
	return n, err
}

// isSoftSep says whether c, in a field of a command record, may join a
// path to an option (or end a rule's target) or be part of the path.
func isSoftSep(c byte) bool { return c == ',' || c == '=' || c == ':' }

// makefileNamed says which file of diff that the trees both hold (changed
// or removed) a makefile of the tree root names, or "". kbuild makes some
// files by rules that keep no command record ($(call cmd,...)) from
// sources only their makefile names: arch/x86/lib/inat-tables.c from
// x86-opcode-map.txt, lib/oid_registry_data.c from
// include/linux/oid_registry.h, security/apparmor's tables from uapi
// headers, drivers/tty/vt's from cp437.uni. Only make's times would
// redo them, and a file of another tree can be older than the copy:
// a difference a makefile names (by its file name, wherever in the
// makefile) declines the seed. A rule matching a pattern (%.uni) names
// no file, and stays unseen.
func makefileNamed(root string, diff map[string]string) (string, error) {
	want := map[string][]string{}
	for rel, kind := range diff {
		if kind != diffAdded {
			want[path.Base(rel)] = append(want[path.Base(rel)], rel)
		}
	}
	if len(want) == 0 {
		return "", nil
	}
	found := ""
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			// tools/ is built by its own makefiles, from its own
			// files (a difference there declines: unseedable).
			if rel, _ := filepath.Rel(root, p); rel == ".git" || rel == "tools" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !(strings.HasPrefix(name, "Makefile") || strings.HasPrefix(name, "Kbuild") || strings.HasSuffix(name, ".mk")) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, w := range bytes.FieldsFunc(b, func(r rune) bool {
			return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '.' || r == '-' || r == '+' || r == ',')
		}) {
			for _, part := range append(bytes.Split(w, []byte(",")), w) {
				if rels := want[string(part)]; len(rels) > 0 {
					sort.Strings(rels)
					rel, _ := filepath.Rel(root, p)
					found = fmt.Sprintf("%s %s, and %s names a file of that name (a rule without a record may read it)", rels[0], diff[rels[0]], filepath.ToSlash(rel))
					return filepath.SkipAll
				}
			}
		}
		return nil
	})
	return found, err
}
