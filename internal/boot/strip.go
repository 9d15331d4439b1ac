package boot

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// moduleSigMarker ends a signed module (scripts/sign-file appends the
// signature after the ELF image): objcopy would drop it.
var moduleSigMarker = []byte("~Module signature appended~\n")

// guestModule is module file m as the initramfs carries it: without its
// DWARF when it has some (the build gives module objects debug info for
// the host's layout readers: rdma_rxe.ko is 9 MB with it, under 1 MB
// without, and a TCG guest spent about 0.35 s unpacking 19 MB of them
// before init). The loader never reads debug sections, so the module
// the guest loads is the same code and data. A signed module, or one
// objcopy cannot read, goes in as it is. tmpDir holds objcopy's output
// while it runs.
func guestModule(m, tmpDir string) ([]byte, error) {
	b, err := os.ReadFile(m)
	if err != nil {
		return nil, fmt.Errorf("reading module %s: %w", m, err)
	}
	if bytes.HasSuffix(b, moduleSigMarker) || !hasDWARF(b) {
		return b, nil
	}
	tmp, err := os.CreateTemp(tmpDir, ".module-*.ko")
	if err != nil {
		return b, nil
	}
	out := tmp.Name()
	tmp.Close()
	defer os.Remove(out)
	if err := exec.Command("objcopy", "--strip-debug", m, out).Run(); err != nil {
		return b, nil
	}
	s, err := os.ReadFile(out)
	if err != nil || hasDWARF(s) {
		return b, nil
	}
	return s, nil
}

// hasDWARF says whether the ELF image b has .debug_ sections.
func hasDWARF(b []byte) bool {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return false
	}
	defer f.Close()
	for _, s := range f.Sections {
		if strings.HasPrefix(s.Name, ".debug_") {
			return true
		}
	}
	return false
}
