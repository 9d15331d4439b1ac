package kconfig

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

func mustParse(t *testing.T, name, s string) *Config {
	t.Helper()
	c, err := Parse(name, strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParseAndWrite(t *testing.T) {
	c := mustParse(t, "x", "# comment\nCONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"str\"\nCONFIG_D=0x10\n\n")
	for sym, want := range map[string]string{"A": "y", "B": "n", "C": `"str"`, "D": "0x10", "E": "n"} {
		if got := c.Value(sym); got != want {
			t.Errorf("%s = %q, want %q", sym, got, want)
		}
	}
	var b bytes.Buffer
	c.Write(&b)
	if b.String() != "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"str\"\nCONFIG_D=0x10\n" {
		t.Errorf("written:\n%s", b.String())
	}
	if _, err := Parse("bad.config", strings.NewReader("CONFIG_A=y\nA=y\n")); !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "bad.config:2") {
		t.Errorf("bad line: %v", err)
	}
}

func TestMergeLaterWins(t *testing.T) {
	base := mustParse(t, "tinyconfig", "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=y\n")
	f1 := mustParse(t, "f1", "CONFIG_B=y\nCONFIG_D=y\n")
	f2 := mustParse(t, "f2", "# CONFIG_D is not set\nCONFIG_E=m\n")
	m, ov := Merge(base, f1, f2)
	for sym, want := range map[string]string{"A": "y", "B": "y", "C": "y", "D": "n", "E": "m"} {
		if got := m.Value(sym); got != want {
			t.Errorf("%s = %q, want %q", sym, got, want)
		}
	}
	if len(ov) != 1 || ov[0].Symbol != "D" || ov[0].By != "f2" {
		t.Errorf("overrides %+v, want D redefined by f2", ov)
	}
	if r := Requested(f1, f2); r["D"] != "n" || r["B"] != "y" || len(r) != 3 {
		t.Errorf("requested %v", r)
	}
}

func TestVerifyExplainsMisses(t *testing.T) {
	db := &DB{Symbols: map[string]*Symbol{
		"TMPFS": {Name: "TMPFS", File: "fs/Kconfig", Line: 10, Depends: []string{"SHMEM", "MMU"}},
		"A":     {Name: "A", File: "x/Kconfig", Line: 1},
	}}
	final := mustParse(t, ".config", "CONFIG_MMU=y\nCONFIG_A=y\n")
	miss := Verify(map[string]string{"TMPFS": "y", "A": "y", "NOPE": "y", "GONE": "n"}, final, db)
	if len(miss) != 2 {
		t.Fatalf("misses %+v", miss)
	}
	if miss[0].Symbol != "NOPE" || miss[0].Known || !strings.Contains(miss[0].String(), "no such symbol") {
		t.Errorf("NOPE: %+v", miss[0])
	}
	if m := miss[1]; m.Symbol != "TMPFS" || len(m.Unmet) != 1 || m.Unmet[0] != "SHMEM=n" || !strings.Contains(m.String(), "depends on SHMEM && MMU (SHMEM=n) [fs/Kconfig:10]") {
		t.Errorf("TMPFS: %s", m)
	}
}

// TestRealKconfig reads the 6.12 tree's Kconfig files.
func TestRealKconfig(t *testing.T) {
	_, dir := testenv.Kernel(t, testkernel.Default)
	db, err := LoadDB(dir, "x86")
	if err != nil {
		t.Fatal(err)
	}
	for sym, dep := range map[string]string{"TMPFS": "SHMEM", "NVME_RDMA": "INFINIBAND", "RDMA_RXE": "INET", "KPROBE_EVENTS": "KPROBES", "MLX5_INFINIBAND": "MLX5_CORE"} {
		s, ok := db.Symbols[sym]
		if !ok {
			t.Errorf("%s not found", sym)
			continue
		}
		if !strings.Contains(s.DependsOn(), dep) {
			t.Errorf("%s depends on %q, want it to name %s (%s:%d)", sym, s.DependsOn(), dep, s.File, s.Line)
		}
	}
}
