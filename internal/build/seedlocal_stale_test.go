package build

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/tree"
)

// addPinned adds files to the fixture's pinned tree (src) and to its
// pinned build folder (folder), with the fixture's old time; "{src}" in
// a folder file's content is the pinned work tree.
func (f *seedLocalFixture) addPinned(t *testing.T, src, folder map[string]string) {
	t.Helper()
	old := time.Now().Add(-48 * time.Hour)
	for p, s := range src {
		writeAt(t, filepath.Join(f.pristine, p), s, old)
	}
	for p, s := range folder {
		writeAt(t, filepath.Join(f.folder, p), strings.ReplaceAll(s, "{src}", f.pinnedSrc), old)
	}
}

// rewrite replaces the local tree's file rel (a hard link to the pinned
// tree's: replaced, never written through) by content with a time older
// than the pinned objects, so make's times alone would not redo anything.
func rewrite(t *testing.T, dir, rel, content string) {
	t.Helper()
	os.Remove(filepath.Join(dir, rel))
	writeAt(t, filepath.Join(dir, rel), content, time.Now().Add(-72*time.Hour))
}

func seedOnce(t *testing.T, f *seedLocalFixture, k *tree.Kernel, wt *tree.WorkTree, dir string) {
	t.Helper()
	if err := seedLocal(context.Background(), &tree.Cache{Dir: f.cache}, k, wt, dir, nil); err != nil {
		t.Fatalf("%s: %v", k.Name, err)
	}
}

func lexists(p string) bool { _, err := os.Lstat(p); return err == nil }

// TestSeedLocalCommaHeader: kbuild's dependency lists name headers whose
// names hold a comma (include/dt-bindings/*/vendor,chip.h, included by
// drivers x86 configurations build); a change to one, older than the
// objects, must remove the objects that read it.
func TestSeedLocalCommaHeader(t *testing.T) {
	f := newSeedLocalFixture(t)
	const h = "include/dt-bindings/regulator/richtek,rt5190a-regulator.h"
	f.addPinned(t, map[string]string{
		h:                                       "#define RT5190A_OPMODE_AUTO 0\n",
		"drivers/regulator/rt5190a-regulator.c": "#include <dt-bindings/regulator/richtek,rt5190a-regulator.h>\n",
	}, map[string]string{
		"drivers/regulator/.rt5190a-regulator.o.cmd": "savedcmd_drivers/regulator/rt5190a-regulator.o := gcc -c -o drivers/regulator/rt5190a-regulator.o {src}/drivers/regulator/rt5190a-regulator.c\n\n" +
			"source_drivers/regulator/rt5190a-regulator.o := ../src/drivers/regulator/rt5190a-regulator.c\n\n" +
			"deps_drivers/regulator/rt5190a-regulator.o := \\\n  ../src/" + h + " \\\n\n" +
			"drivers/regulator/rt5190a-regulator.o: $(deps_drivers/regulator/rt5190a-regulator.o)\n\n$(deps_drivers/regulator/rt5190a-regulator.o):\n",
		"drivers/regulator/rt5190a-regulator.o": "obj",
	})
	k, wt, dir := f.local(t, "comma", func(d string) { rewrite(t, d, h, "#define RT5190A_OPMODE_AUTO 1\n") })
	seedOnce(t, f, k, wt, dir)
	if lexists(dir) && lexists(filepath.Join(dir, "drivers/regulator/rt5190a-regulator.o")) {
		t.Errorf("rt5190a-regulator.o kept though %s, which its record lists, changed", h)
	}
}

// TestSeedLocalMakefileInput: kbuild makes some files by rules that keep
// no command record ($(call cmd,...)), from source files only a makefile
// names: arch/x86/lib/inat-tables.c from x86-opcode-map.txt,
// lib/oid_registry_data.c from include/linux/oid_registry.h. A change to
// such a source, older than the copy, must not leave the generated file
// (and what is compiled from it) as the pinned tree made it.
func TestSeedLocalMakefileInput(t *testing.T) {
	f := newSeedLocalFixture(t)
	f.addPinned(t, map[string]string{
		"arch/x86/lib/Makefile":           "inat_tables_maps = $(srctree)/arch/x86/lib/x86-opcode-map.txt\n$(obj)/inat-tables.c: $(inat_tables_script) $(inat_tables_maps)\n\t$(call cmd,inat_tables)\n",
		"arch/x86/lib/x86-opcode-map.txt": "00: ADD Eb,Gb\n",
		"arch/x86/lib/inat.c":             "#include \"inat-tables.c\"\n",
		"lib/Makefile":                    "$(obj)/oid_registry_data.c: $(srctree)/include/linux/oid_registry.h \\\n\t\t\t$(src)/build_OID_registry\n\t$(call cmd,build_OID_registry)\n",
		"include/linux/oid_registry.h":    "OID_id_dsa = 1\n",
		"lib/oid_registry.c":              "#include <linux/oid_registry.h>\n#include \"oid_registry_data.c\"\n",
	}, map[string]string{
		"arch/x86/lib/inat-tables.c": "tables",
		"arch/x86/lib/.inat.o.cmd": "savedcmd_arch/x86/lib/inat.o := gcc -c -o arch/x86/lib/inat.o {src}/arch/x86/lib/inat.c\n\nsource_arch/x86/lib/inat.o := ../src/arch/x86/lib/inat.c\n\n" +
			"deps_arch/x86/lib/inat.o := \\\n  arch/x86/lib/inat-tables.c \\\n\narch/x86/lib/inat.o: $(deps_arch/x86/lib/inat.o)\n\n$(deps_arch/x86/lib/inat.o):\n",
		"arch/x86/lib/inat.o":     "inat",
		"lib/oid_registry_data.c": "data",
		"lib/.oid_registry.o.cmd": "savedcmd_lib/oid_registry.o := gcc -c -o lib/oid_registry.o {src}/lib/oid_registry.c\n\nsource_lib/oid_registry.o := ../src/lib/oid_registry.c\n\n" +
			"deps_lib/oid_registry.o := \\\n  ../src/include/linux/oid_registry.h \\\n  lib/oid_registry_data.c \\\n\nlib/oid_registry.o: $(deps_lib/oid_registry.o)\n\n$(deps_lib/oid_registry.o):\n",
		"lib/oid_registry.o": "oid",
	})
	for _, c := range []struct{ name, rel, content, generated string }{
		{"opcode-map", "arch/x86/lib/x86-opcode-map.txt", "00: ADD Eb,Gv\n", "arch/x86/lib/inat-tables.c"},
		{"oid-registry", "include/linux/oid_registry.h", "OID_id_dsa = 2\n", "lib/oid_registry_data.c"},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, wt, dir := f.local(t, c.name, func(d string) { rewrite(t, d, c.rel, c.content) })
			seedOnce(t, f, k, wt, dir)
			if lexists(dir) && lexists(filepath.Join(dir, c.generated)) {
				t.Errorf("%s kept though %s, which a makefile rule without a record makes it from, changed", c.generated, c.rel)
			}
		})
	}
}

// TestTreeDiffExecBit: a file whose executable bit differs (a script
// kbuild runs directly) is a difference.
func TestTreeDiffExecBit(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	now := time.Now()
	writeAt(t, filepath.Join(a, "scripts/x.sh"), "#!/bin/sh\n", now)
	writeAt(t, filepath.Join(b, "scripts/x.sh"), "#!/bin/sh\n", now)
	os.Chmod(filepath.Join(a, "scripts/x.sh"), 0o755)
	got, err := treeDiff(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if got["scripts/x.sh"] != diffChanged {
		t.Errorf("treeDiff = %v, want scripts/x.sh changed (mode 0755 vs 0644)", got)
	}
}
