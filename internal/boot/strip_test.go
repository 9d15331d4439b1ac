package boot

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestGuestModuleStripsDWARF: a module object with DWARF goes into the
// initramfs without it and with every section the loader reads, byte
// for byte; one without DWARF and a signed one go in as they are.
func TestGuestModuleStripsDWARF(t *testing.T) {
	for _, tool := range []string{"gcc", "objcopy"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "m.c")
	os.WriteFile(src, []byte("struct s { int a; long b; };\nint v = 7;\nint f(struct s *p) { return p->a + v; }\n"), 0o644)
	obj := func(name string, flags ...string) string {
		t.Helper()
		out := filepath.Join(dir, name)
		if b, err := exec.Command("gcc", append(append([]string{"-c", "-o", out}, flags...), src)...).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, b)
		}
		return out
	}
	withDWARF, plain := obj("g.ko", "-g"), obj("p.ko")
	orig, _ := os.ReadFile(withDWARF)
	if !hasDWARF(orig) {
		t.Fatal("gcc -g made no .debug_ sections")
	}
	got, err := guestModule(withDWARF, dir)
	if err != nil {
		t.Fatal(err)
	}
	if hasDWARF(got) || len(got) >= len(orig) {
		t.Errorf("the module kept its DWARF (%d bytes, was %d)", len(got), len(orig))
	}
	// What the loader reads is what was built: the allocated sections'
	// bytes, the symbols other than the debug sections', and every
	// relocation of a loaded section, by offset, type, symbol and addend
	// (objcopy renumbers the symbol table, so indexes differ).
	if a, b := loaded(t, orig), loaded(t, got); a != b {
		t.Errorf("the loaded image changed:\n%s\nstripped:\n%s", a, b)
	}
	if b, _ := guestModule(plain, dir); !bytes.Equal(b, mustRead(t, plain)) {
		t.Error("a module without DWARF was changed")
	}
	signed := filepath.Join(dir, "s.ko")
	os.WriteFile(signed, append(append([]byte{}, orig...), append([]byte("sig"), moduleSigMarker...)...), 0o644)
	if b, _ := guestModule(signed, dir); !bytes.Equal(b, mustRead(t, signed)) {
		t.Error("a signed module was changed (objcopy would drop its signature)")
	}
	if ents, _ := filepath.Glob(filepath.Join(dir, ".module-*")); len(ents) > 0 {
		t.Errorf("left behind: %v", ents)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loaded describes what a module loader reads of the ELF object b.
func loaded(t *testing.T, b []byte) string {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	symName := func(i uint32) string {
		if i == 0 || int(i) > len(syms) {
			return fmt.Sprint(i)
		}
		s := syms[i-1]
		if elf.ST_TYPE(s.Info) == elf.STT_SECTION && int(s.Section) < len(f.Sections) {
			return "section " + f.Sections[s.Section].Name
		}
		return s.Name
	}
	var out []string
	for _, s := range syms {
		// Section and file symbols: the loader's symbol table keeps
		// neither (kernel/module/kallsyms.c, SHN_ABS is past the
		// section count).
		if elf.ST_TYPE(s.Info) == elf.STT_SECTION || elf.ST_TYPE(s.Info) == elf.STT_FILE {
			continue
		}
		sec := ""
		if int(s.Section) < len(f.Sections) {
			sec = f.Sections[s.Section].Name
		}
		out = append(out, fmt.Sprintf("sym %s %d %d %s", s.Name, s.Value, s.Info, sec))
	}
	for _, s := range f.Sections {
		switch {
		case s.Flags&elf.SHF_ALLOC != 0:
			d, _ := s.Data()
			out = append(out, fmt.Sprintf("section %s %x", s.Name, sha256.Sum256(d)))
		case s.Type == elf.SHT_RELA && f.Sections[s.Info].Flags&elf.SHF_ALLOC != 0: //nolint:misspell // ELF's name

			d, _ := s.Data()
			for i := 0; i+24 <= len(d); i += 24 {
				off, info, add := binary.LittleEndian.Uint64(d[i:]), binary.LittleEndian.Uint64(d[i+8:]), int64(binary.LittleEndian.Uint64(d[i+16:]))
				out = append(out, fmt.Sprintf("reloc %s %d %d %s %d", s.Name, off, info&0xffffffff, symName(uint32(info>>32)), add))
			}
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
