package stagecache

import (
	"fmt"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestKeyCoversContentNotFolders(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		os.WriteFile(filepath.Join(d, "base.config"), []byte("CONFIG_A=y\n"), 0o644)
	}
	ka, err := NewKey("build").File(filepath.Join(a, "base.config")).Sum()
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := NewKey("build").File(filepath.Join(b, "base.config")).Sum()
	if ka != kb {
		t.Error("the same file in another folder gives another key")
	}
	os.WriteFile(filepath.Join(b, "base.config"), []byte("CONFIG_A=n\n"), 0o644)
	if kc, _ := NewKey("build").File(filepath.Join(b, "base.config")).Sum(); kc == ka {
		t.Error("another content gives the same key")
	}
	if kd, _ := NewKey("boot").File(filepath.Join(a, "base.config")).Sum(); kd == ka {
		t.Error("another stage gives the same key")
	}
	if k1, _ := NewKey("x").Add("a", "b", "c").Sum(); k1 == func() string { k, _ := NewKey("x").Add("a", "bc").Sum(); return k }() {
		t.Error("values run together")
	}
	self, err := Self()
	if err != nil || len(self) != 64 {
		t.Errorf("Self() = %q, %v", self, err)
	}
	if kc, _ := NewKey("build").Code().File(filepath.Join(a, "base.config")).Sum(); kc == ka {
		t.Error("the program's code is not in the key")
	}
}

// TestStoreReusesOnlyWhatIsProvably the record: a record is reused only
// under its key and while its artifacts hash as they did when made.
func TestStoreReusesOnlyWhatIsProvably(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	img := filepath.Join(t.TempDir(), "bzImage")
	os.WriteFile(img, []byte("baseline kernel"), 0o644)
	arts, err := Artifacts(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(testkernel.Default, "build-baseline", "k1", map[string]string{"image": img}, arts); err != nil {
		t.Fatal(err)
	}
	var out map[string]string
	if ok, why := s.Load(testkernel.Default, "build-baseline", "k1", &out); !ok || out["image"] != img {
		t.Fatalf("not reused: %s", why)
	}
	if ok, why := s.Load(testkernel.Default, "build-baseline", "k2", &out); ok || why != "inputs changed" {
		t.Errorf("another key reused: %v %s", ok, why)
	}
	// Another process rewrote the snapshot: not what was recorded.
	os.WriteFile(img, []byte("patched kernel!"), 0o644)
	if ok, why := s.Load(testkernel.Default, "build-baseline", "k1", &out); ok || !strings.Contains(why, "changed since it was made") {
		t.Errorf("a changed artifact reused: %v %s", ok, why)
	}
	os.Remove(img)
	if ok, _ := s.Load(testkernel.Default, "build-baseline", "k1", &out); ok {
		t.Error("a missing artifact reused")
	}
	if _, err := Artifacts(img); err == nil {
		t.Error("a missing artifact recorded")
	}
	if err := s.Forget(testkernel.Default, "build-baseline", "k1"); err != nil {
		t.Fatal(err)
	}
	if ok, why := s.Load(testkernel.Default, "build-baseline", "k1", &out); ok || why != "not run before" {
		t.Errorf("after forget: %v %s", ok, why)
	}
}

// TestStoreKeepsRecordsOfOtherInputs: a run with other inputs (another
// program's code, another series) records beside the first instead of
// evicting it, so both are reused afterwards; the oldest records beyond
// the limit go.
func TestStoreKeepsRecordsOfOtherInputs(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	var out map[string]int
	for i := 0; i < maxRecords+3; i++ {
		if err := s.Save(testkernel.Default, "boot-baseline", fmt.Sprintf("%064x", i), map[string]int{"run": i}, nil); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(time.Duration(i-100) * time.Second)
		os.Chtimes(s.path(testkernel.Default, "boot-baseline", fmt.Sprintf("%064x", i)), when, when)
	}
	// Records 3 to 10 are left; 3, the oldest, is reused and so
	// outlives 4 when the next save prunes.
	if ok, why := s.Load(testkernel.Default, "boot-baseline", fmt.Sprintf("%064x", 3), &out); !ok {
		t.Fatalf("record 3 not reused: %s", why)
	}
	if err := s.Save(testkernel.Default, "boot-baseline", fmt.Sprintf("%064x", maxRecords+3), map[string]int{"run": maxRecords + 3}, nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= maxRecords+3; i++ {
		ok, why := s.Load(testkernel.Default, "boot-baseline", fmt.Sprintf("%064x", i), &out)
		if kept := i == 3 || i > 4; ok != kept || (ok && out["run"] != i) {
			t.Errorf("record %d: reused %v (%s), want %v", i, ok, why, kept)
		} else if !ok && why != "inputs changed" {
			t.Errorf("record %d dropped: why %q, want inputs changed", i, why)
		}
	}
}

// TestSelfIsTheRunningProgram: a program whose file is replaced by
// another build while it runs (a rebuild during a run) still names its
// own code, not the new build's. A copy of this test binary replaces its
// own file, then asks Self.
func TestSelfIsTheRunningProgram(t *testing.T) {
	if p := os.Getenv("STAGECACHE_SELF_HELPER"); p != "" {
		orig, err := fsutil.HashFile(p)
		if err != nil {
			t.Fatal(err)
		}
		tmp := p + ".new"
		if err := os.WriteFile(tmp, []byte("another build"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, p); err != nil {
			t.Fatal(err)
		}
		got, err := Self()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("SELF %s %s\n", orig, got)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("the running file is found through /proc on Linux only")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(prog, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog, "-test.run=^TestSelfIsTheRunningProgram$", "-test.count=1")
	cmd.Env = append(os.Environ(), "STAGECACHE_SELF_HELPER="+prog)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	var orig, got string
	for _, l := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(l, "SELF "); ok {
			orig, got, _ = strings.Cut(rest, " ")
		}
	}
	if orig == "" || got != orig {
		t.Errorf("the program's file replaced while it ran: Self %q, its own code %q\n%s", got, orig, out)
	}
}
