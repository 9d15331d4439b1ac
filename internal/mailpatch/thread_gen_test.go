package mailpatch

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// ReadThread reads every generated mail of the git differential test as
// import does: the same patch, or the same refusal.
func TestReadThreadGeneratedLikeImport(t *testing.T) {
	seed := genSeed(t)
	t.Logf("seed %d (PATCHCTL_GEN_SEED=%d to repeat)", seed, seed)
	if binaryDiffText == "" {
		repo := newGitRepo(t)
		os.WriteFile(filepath.Join(repo.dir, "fw.bin"), []byte("NEW\x00BIN\n"), 0o644)
		bd, err := repo.git(nil, "diff", "--binary", "--full-index", "fw.bin")
		if err != nil {
			t.Fatal(err)
		}
		binaryDiffText = bd
		repo.git(nil, "checkout", "-q", "--", "fw.bin")
	}
	g := &mailGen{r: rand.New(rand.NewSource(seed))}
	for i := range 300 {
		gm := g.gen()
		want, werr := ImportBytes("gen.mbox", gm.text, "", Options{})
		th, err := ReadThread([]Input{{Name: "gen.mbox", Data: gm.text}}, "", Options{})
		switch {
		case werr != nil && err == nil:
			t.Errorf("mail %d (%v): import refuses it (%v), ReadThread reads it", i, gm.what, werr)
		case werr == nil && err != nil:
			t.Errorf("mail %d (%v): import reads it, ReadThread refuses it: %v", i, gm.what, err)
		case werr == nil:
			if len(th.Patches) != len(want) {
				t.Errorf("mail %d: %d patches, import %d", i, len(th.Patches), len(want))
				continue
			}
			for j := range want {
				if string(th.Patches[j].Format()) != string(want[j].Format()) {
					t.Errorf("mail %d (%v): differs from import:\n%s\nimport:\n%s", i, gm.what, th.Patches[j].Format(), want[j].Format())
				}
			}
		}
	}
}
