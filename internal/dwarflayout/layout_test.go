package dwarflayout

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFromCompiledObject compiles a small C file with -g and reads it back.
func TestFromCompiledObject(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "x.c")
	os.WriteFile(src, []byte(`
enum wr_opcode { WR_WRITE, WR_SEND = 2, WR_REG_MR = 0x20 };
enum send_flags { SEND_SIGNALED = 1 << 1, SEND_INLINE = 1 << 3 };
struct sge { unsigned long long addr; unsigned int length; unsigned int lkey; };
struct send_wr { struct send_wr *next; unsigned long long id; struct sge *sg_list; int num_sge; enum wr_opcode opcode; int send_flags; };
struct send_wr w;
int flags(void) { return SEND_INLINE | SEND_SIGNALED; }
`), 0o644)
	obj := filepath.Join(dir, "x.o")
	if out, err := exec.Command("gcc", "-g", "-c", src, "-o", obj).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, out)
	}
	r, err := Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Struct("send_wr")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"next": 0, "sg_list": 16, "num_sge": 24, "opcode": 28, "send_flags": 32}
	for m, off := range want {
		if s.Members[m] != off {
			t.Errorf("%s at %d, want %d", m, s.Members[m], off)
		}
	}
	if s.Size != 40 {
		t.Errorf("size %d, want 40", s.Size)
	}
	e, err := r.Enumerators("WR_SEND", "WR_REG_MR", "SEND_INLINE")
	if err != nil || e["WR_SEND"] != 2 || e["WR_REG_MR"] != 32 || e["SEND_INLINE"] != 8 {
		t.Errorf("enumerators %v %v", e, err)
	}
	if _, err := r.Struct("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing struct: %v", err)
	}
	// The same object read into memory reads the same; bytes that are no
	// ELF object are an error naming the file.
	b, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := FromBytes(obj, b)
	if err != nil {
		t.Fatal(err)
	}
	if sb, err := rb.Struct("send_wr"); err != nil || sb.Size != s.Size || len(sb.Members) != len(s.Members) || sb.Members["send_flags"] != s.Members["send_flags"] {
		t.Errorf("from bytes: %+v %v, from the file: %+v", sb, err, s)
	}
	if _, err := FromBytes(obj, b[:len(b)/3]); err == nil {
		t.Error("a truncated object read without an error")
	}
	if _, err := FromBytes("not.o", []byte("not an object")); err == nil || !strings.Contains(err.Error(), "not.o") {
		t.Errorf("not an object: %v", err)
	}
}
