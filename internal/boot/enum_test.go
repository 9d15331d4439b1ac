package boot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// TestRealEnumNames reads the verbs enums from the 6.12 build's DWARF:
// every opcode and send flag is there by name, without reserved values,
// and the flags the evidence prints decompose into the build's names.
func TestRealEnumNames(t *testing.T) {
	k, _ := testenv.Kernel(t, testkernel.Default)
	root := testenv.RepoRoot(t)
	dir, err := build.Locate(root, testenv.Cache(), k, nil, nil) // no patch changes mlx5 on 6.12: the selection the run makes
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "drivers/infiniband/sw/rxe/rxe_verbs.o")); err != nil {
		testenv.Unavailable(t, "6.12 not built (patchctl build --kernel 6.12)")
	}
	var g GuestConfig
	if err := wrLayout(dir, &g); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"RDMA_WRITE": 0, "SEND": 2, "RDMA_READ": 4, "LOCAL_INV": 7, "SEND_WITH_INV": 9, "REG_MR": 0x20}
	for n, v := range want {
		if got, ok := g.Opcodes[n]; !ok || got != v {
			t.Errorf("opcode %s: got %d (%v), want %d", n, got, ok, v)
		}
	}
	for n := range g.Opcodes {
		if n == "" || n[0] == '_' || len(n) > 40 {
			t.Errorf("odd opcode name %q", n)
		}
	}
	if s := guestconf.FlagNames(g.Flags["SIGNALED"]|g.Flags["INLINE"], g.Flags); s != "IB_SEND_SIGNALED|IB_SEND_INLINE" {
		t.Errorf("flags: %s (%v)", s, g.Flags)
	}
	if s := guestconf.FlagNames(1<<30, g.Flags); s != "0x40000000" {
		t.Errorf("an unnamed bit: %s", s)
	}
}
