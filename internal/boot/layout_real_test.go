package boot

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/tree"
)

// headerVerbs reads, from a kernel tree's headers (not from a build), the
// verbs values the kprobe evidence needs: the opcodes (IB_WR_X =
// IB_UVERBS_WR_Y resolved through the uapi header, or a literal) and the
// send flags ((1<<n)).
func headerVerbs(t *testing.T, tree string) (map[string]int, map[string]int) {
	t.Helper()
	uapi, err := os.ReadFile(filepath.Join(tree, "include/uapi/rdma/ib_user_verbs.h"))
	if err != nil {
		t.Fatal(err)
	}
	verbs, err := os.ReadFile(filepath.Join(tree, "include/rdma/ib_verbs.h"))
	if err != nil {
		t.Fatal(err)
	}
	uv := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^\s*(IB_UVERBS_WR_\w+) = (\d+),`).FindAllStringSubmatch(string(uapi), -1) {
		uv[m[1]], _ = strconv.Atoi(m[2])
	}
	op := map[string]int{}
	for _, name := range []string{"SEND", "REG_MR", "LOCAL_INV", "RDMA_WRITE", "RDMA_READ"} {
		m := regexp.MustCompile(`(?m)^\s*IB_WR_` + name + ` = (\w+),`).FindStringSubmatch(string(verbs))
		if m == nil {
			t.Fatalf("%s: no IB_WR_%s in ib_verbs.h", tree, name)
		}
		if v, ok := uv[m[1]]; ok {
			op[name] = v
		} else if v, err := strconv.ParseInt(m[1], 0, 32); err == nil {
			op[name] = int(v)
		} else {
			t.Fatalf("%s: IB_WR_%s = %s", tree, name, m[1])
		}
	}
	fl := map[string]int{}
	for _, name := range []string{"INLINE", "SIGNALED"} {
		m := regexp.MustCompile(`(?m)^\s*IB_SEND_` + name + `\s*= \(1<<(\d+)\),`).FindStringSubmatch(string(verbs))
		if m == nil {
			t.Fatalf("%s: no IB_SEND_%s", tree, name)
		}
		n, _ := strconv.Atoi(m[1])
		fl[name] = 1 << n
	}
	return op, fl
}

// wrPrefix is struct ib_send_wr's declaration up to send_flags in every
// pinned kernel: on x86_64 (LP64) next is at 0, the wr_id/wr_cqe union at
// 8, sg_list at 16, num_sge at 24, opcode at 28, send_flags at 32.
var wrPrefix = regexp.MustCompile(`struct ib_send_wr \{\s+struct ib_send_wr\s+\*next;\s+union \{\s+u64\s+wr_id;\s+struct ib_cqe\s+\*wr_cqe;\s+\};\s+struct ib_sge\s+\*sg_list;\s+int\s+num_sge;\s+enum ib_wr_opcode\s+opcode;\s+int\s+send_flags;`)

// TestWRLayoutFromDWARFEveryKernel: for every pinned kernel that has a
// build in the cache, the offsets and enum values the guest's kprobe uses
// (read from the build's DWARF) are what that kernel's own headers say.
// 5.10 and 7.3 declare the same layout as 6.12; the test proves the
// reading, not the assumption.
func TestWRLayoutFromDWARFEveryKernel(t *testing.T) {
	root := testenv.RepoRoot(t)
	lock, err := tree.LoadLock(filepath.Join(root, "series", "kernels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c := testenv.Cache()
	checked := 0
	for i := range lock.Kernels {
		k := &lock.Kernels[i]
		if !c.Prepared(k) {
			continue
		}
		src := c.PristineDir(k)
		objs, _ := filepath.Glob(filepath.Join(c.Dir, "build", k.Name, "*", "drivers/infiniband/sw/rxe/rxe_verbs.o"))
		if len(objs) == 0 {
			continue
		}
		t.Run(k.Name, func(t *testing.T) {
			verbs, _ := os.ReadFile(filepath.Join(src, "include/rdma/ib_verbs.h"))
			if !wrPrefix.Match(verbs) {
				t.Fatalf("%s declares struct ib_send_wr differently: update the expected offsets", k.Name)
			}
			op, fl := headerVerbs(t, src)
			for _, obj := range objs {
				var g GuestConfig
				if err := wrLayout(strings.TrimSuffix(obj, "/drivers/infiniband/sw/rxe/rxe_verbs.o"), &g); err != nil {
					t.Fatalf("%s: %v", obj, err)
				}
				want := map[string]int{"next": 0, "sg_list": 16, "num_sge": 24, "opcode": 28, "send_flags": 32, "sge_length": 8}
				for m, off := range want {
					if g.WR[m] != off {
						t.Errorf("%s: DWARF offset of %s is %d, the header's layout %d", k.Name, m, g.WR[m], off)
					}
				}
				for n, v := range op {
					if g.Opcodes[n] != v {
						t.Errorf("%s: IB_WR_%s is %d in DWARF, %d in the headers", k.Name, n, g.Opcodes[n], v)
					}
				}
				for n, v := range fl {
					if g.Flags[n] != v {
						t.Errorf("%s: IB_SEND_%s is %d in DWARF, %d in the headers", k.Name, n, g.Flags[n], v)
					}
				}
				if g.CapsuleSize != 64 {
					t.Errorf("%s: sizeof(struct nvme_command) %d", k.Name, g.CapsuleSize)
				}
				t.Logf("%s: %s offsets %v opcodes %v flags %v", k.Name, strings.TrimPrefix(obj, c.Dir), g.WR, g.Opcodes, g.Flags)
			}
		})
		checked++
	}
	if checked == 0 {
		t.Skip("no kernel built in the cache")
	}
}
