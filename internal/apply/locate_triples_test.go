package apply

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/series"
)

// TestLocateTriples applies each testdata/locate/X.patch to X.src (as
// drivers/x.c) and compares with X.out, which GNU patch made; where GNU
// patch is installed it is run again to keep the triple honest. A triple
// whose .out equals its .src is a patch already in the file.
func TestLocateTriples(t *testing.T) {
	patches, _ := filepath.Glob("testdata/locate/*.patch")
	if len(patches) == 0 {
		t.Fatal("no triples")
	}
	for _, pp := range patches {
		name := strings.TrimSuffix(filepath.Base(pp), ".patch")
		t.Run(name, func(t *testing.T) {
			src, _ := os.ReadFile(strings.TrimSuffix(pp, ".patch") + ".src")
			want, _ := os.ReadFile(strings.TrimSuffix(pp, ".patch") + ".out")
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "drivers"), 0o755)
			os.WriteFile(filepath.Join(dir, "drivers/x.c"), src, 0o644)
			if _, err := exec.LookPath("patch"); err == nil {
				gnu := t.TempDir()
				os.MkdirAll(filepath.Join(gnu, "drivers"), 0o755)
				os.WriteFile(filepath.Join(gnu, "drivers/x.c"), src, 0o644)
				abs, _ := filepath.Abs(pp)
				out, _ := exec.Command("patch", "-p1", "--forward", "--no-backup-if-mismatch", "-r", "-", "-d", gnu, "-i", abs).CombinedOutput()
				got, _ := os.ReadFile(filepath.Join(gnu, "drivers/x.c"))
				if string(got) != string(want) {
					t.Fatalf("GNU patch no longer gives %s.out:\n%s", name, out)
				}
			}
			b, _ := os.ReadFile(pp)
			ps, err := mailpatch.ImportBytes(pp, b, "locate", mailpatch.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := Series(DirTree(dir), []series.Entry{{Source: "patches/locate/" + name + ".patch", Expect: series.Applies}}, ps)
			if err != nil {
				t.Fatal(err)
			}
			r := res.Results[0]
			if string(want) == string(src) {
				if r.Disposition != series.AlreadyApplied {
					t.Errorf("a patch already in the file is %s", r.Disposition)
				}
				return
			}
			if !series.IsApplied(r.Disposition) {
				t.Fatalf("disposition %s, hunks %+v", r.Disposition, r.Hunks)
			}
			if got := string(res.Files["drivers/x.c"]); got != string(want) {
				t.Errorf("result differs from GNU patch's")
			}
		})
	}
}
