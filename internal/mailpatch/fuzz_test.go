package mailpatch

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzImport feeds arbitrary bytes to the reader with the seeds as corpus.
// Import must never panic, and whatever it accepts must format to one
// patch for git mailsplit that imports again to the same diff, author and
// subject with no repair.
func FuzzImport(f *testing.F) {
	for _, s := range seedSeries {
		files, _ := filepath.Glob(filepath.Join(seedDir(s), "*"))
		for _, name := range files {
			if data, err := os.ReadFile(name); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := ImportBytes("fuzz", data, "fuzz", Options{})
		if err != nil {
			return
		}
		for _, p := range ps {
			out := p.Format()
			if bad := outputFromLines(out); len(bad) > 0 {
				t.Fatalf("git mailsplit would cut the output at %q\n%s", bad[0], out)
			}
			again, err := ImportBytes("again", out, "fuzz", Options{})
			if err != nil {
				t.Fatalf("normalized output does not import: %v\n%s", err, out)
			}
			q := again[0]
			if q.Diff != p.Diff || q.Author != p.Author || q.SubjectLine() != p.SubjectLine() {
				t.Fatalf("normalized output imports differently\n%s", out)
			}
		}
	})
}
