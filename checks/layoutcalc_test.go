package checks

import (
	"testing"

	"github.com/patchctl/patchctl/checks/engine"
	"github.com/patchctl/patchctl/internal/testenv"
)

func TestLayoutFixture(t *testing.T) {
	db := &engine.LayoutDB{Defs: map[string]*engine.AggDef{}, Constants: map[string]int64{}}
	db.Add(engine.Parse("x.h", engine.ExpandStructGroups([]byte(`
#define N 3
struct a { char c; int i; };                 /* 8: padding after c */
struct b { char c; long l; char d; };        /* 24 */
union u { char c[5]; int i; };               /* 8 */
struct p { char c; int i; } __packed;        /* 5 */
struct g { __u8 op; struct_group(cdws, __le32 x; __le32 y;); __le16 z[N]; }; /* 4+8+6 = 18 -> 20 */
struct n { struct a a; union { __le64 q; __u8 b[12]; }; void *p; }; /* 8 + 16 + 8 = 32 */
`))))
	for typ, want := range map[string]int64{"struct a": 8, "struct b": 24, "union u": 8, "struct p": 5, "struct g": 20, "struct n": 32} {
		got, _, err := db.Sizeof(typ, 0)
		if err != nil || got != want {
			t.Errorf("sizeof(%s) = %d (%v), want %d", typ, got, err, want)
		}
	}
}

// TestNvmeCommandFromHeaders computes sizeof(struct nvme_command) from
// 6.1's and 6.12's include/linux/nvme.h.
func TestNvmeCommandFromHeaders(t *testing.T) {
	// 6.12 itself: these two trees' own layouts
	for _, k := range []string{"6.12", "6.1"} {
		t.Run(k, func(t *testing.T) {
			_, dir := testenv.KernelIfTested(t, k)
			db, err := engine.LoadLayouts(dir, []string{"include/linux", "include/uapi/linux"}, "nvme_command")
			if err != nil {
				t.Fatal(err)
			}
			s, _, err := db.Sizeof("struct nvme_command", 0)
			if err != nil || s != 64 {
				t.Errorf("%s: sizeof(struct nvme_command) = %d (%v), want 64", k, s, err)
			}
		})
	}
}
