package mailpatch

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/patchctl/patchctl/internal/errs"
)

// smallPatch is a one-patch message with the given subject.
func smallPatch(subject string) string {
	return "From: Jane Doe <jane@example.org>\nSubject: " + subject + "\n\nA change.\n\nSigned-off-by: Jane Doe <jane@example.org>\n---\n" +
		fooDiff(" \tfoo_init(f);\n", "\tfoo_more(f);")
}

// snapshot records every file and folder under root with its content.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		b, _ := os.ReadFile(p)
		out[rel] = string(b)
		return nil
	})
	return out
}

// importInto imports the inputs and writes them under out, as the CLI does.
func importInto(out string, inputs ...string) error {
	res, err := Import(inputs, Options{})
	if err != nil {
		return err
	}
	_, err = res.Write(out)
	return err
}

// TestWriteKeepsUsersFiles is issue 11's finding: a subject with no ASCII
// letters made the series name "" and the writer removed --out with the
// user's file in it; "import ." and "import .." named the series "." and
// "..".
func TestWriteKeepsUsersFiles(t *testing.T) {
	root := t.TempDir()
	keep := filepath.Join(root, "keep")
	os.MkdirAll(keep, 0o755)
	os.WriteFile(filepath.Join(keep, "mine.txt"), []byte("the user's file\n"), 0o644)
	os.WriteFile(filepath.Join(root, "beside.txt"), []byte("next to --out\n"), 0o644)
	u := filepath.Join(root, "u.txt")
	os.WriteFile(u, []byte(smallPatch("[PATCH 1/1] 修正")), 0o644)
	before := snapshot(t, root)

	if err := importInto(keep, u); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, root)
	for p, c := range before {
		if after[p] != c {
			t.Errorf("%s changed or removed by import", p)
		}
	}
	if _, ok := after["keep/u/0001-patch.patch"]; !ok {
		t.Errorf("series not written as keep/u/0001-patch.patch: %v", keys(after))
	}
	// Importing again replaces the series folder import wrote, and only it.
	if err := importInto(keep, u); err != nil {
		t.Fatalf("re-import: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(keep, "mine.txt")); string(b) != "the user's file\n" {
		t.Error("user's file lost on re-import")
	}

	// "import ." and "import .." from inside a series folder.
	series := filepath.Join(root, "work", "my-series")
	os.MkdirAll(series, 0o755)
	os.WriteFile(filepath.Join(series, "001.txt"), []byte(smallPatch("[PATCH] foo: one")), 0o644)
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(series)
	for _, in := range []string{".", "./", "../my-series/."} {
		if err := importInto(filepath.Join(root, "keep"), in); err != nil {
			t.Fatalf("import %s: %v", in, err)
		}
		if _, err := os.Stat(filepath.Join(keep, "my-series", "0001-foo-one.patch")); err != nil {
			t.Errorf("import %s: series not named after the folder: %v", in, err)
		}
	}
	os.Chdir(filepath.Join(root, "work"))
	os.WriteFile(filepath.Join(root, "work", "x.txt"), []byte("not a patch folder's file\n"), 0o644)
	if err := importInto(filepath.Join(root, "keep"), ".."); err == nil {
		t.Log("import .. accepted") // the folder holds no patch: refused is fine too
	}
	after = snapshot(t, root)
	for p, c := range before {
		if p == "keep/u/" || strings.HasPrefix(p, "keep/u/") {
			continue
		}
		if after[p] != c {
			t.Errorf("%s changed or removed", p)
		}
	}
}

// TestWriteRefusesForeignFolder: a folder in --out that import did not
// write, or that holds a file it did not write, is never replaced.
func TestWriteRefusesForeignFolder(t *testing.T) {
	out := t.TempDir()
	in := filepath.Join(t.TempDir(), "p.txt")
	os.WriteFile(in, []byte(smallPatch("[PATCH] foo: one")), 0o644)
	os.MkdirAll(filepath.Join(out, "foo-one"), 0o755)
	os.WriteFile(filepath.Join(out, "foo-one", "notes.md"), []byte("mine\n"), 0o644)
	err := importInto(out, in)
	if err == nil || !strings.Contains(err.Error(), "not written by patchctl import") {
		t.Fatalf("want a refusal, got %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "foo-one", "notes.md")); string(b) != "mine\n" {
		t.Fatal("the user's folder was touched")
	}
	// A folder import wrote, with a user's file added since: refused too.
	os.RemoveAll(filepath.Join(out, "foo-one"))
	if err := importInto(out, in); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(out, "foo-one", "review.txt"), []byte("mine\n"), 0o644)
	if err := importInto(out, in); err == nil || !strings.Contains(err.Error(), "review.txt") {
		t.Fatalf("want a refusal naming review.txt, got %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "foo-one", "review.txt")); err != nil {
		t.Fatal("the user's file was removed")
	}
}

// nameAlphabet is what generated names are made of: separators, dots,
// unicode letters, controls, spaces.
var nameAlphabet = []string{".", "..", "/", "\\", "", " ", "-", "_", "a", "Z", "9", "修正", "é", "\u202e", "\x00", "\t", "~", "$", ":", "*", "../", "./"}

func genName(r *rand.Rand) string {
	var b strings.Builder
	for n := r.Intn(5); n >= 0; n-- {
		b.WriteString(nameAlphabet[r.Intn(len(nameAlphabet))])
	}
	return b.String()
}

// checkNames runs one import whose names come from input (the given
// series name, the subject, the input file's name) and asserts that the
// only change under root is a new series folder inside out.
func checkNames(t *testing.T, given, subject, fileName string) {
	root := t.TempDir()
	out := filepath.Join(root, "a", "out")
	os.MkdirAll(out, 0o755)
	os.WriteFile(filepath.Join(out, "user.txt"), []byte("u\n"), 0o644)
	os.WriteFile(filepath.Join(root, "a", "parent.txt"), []byte("p\n"), 0o644)
	before := snapshot(t, root)
	name := filepath.Join(t.TempDir(), "in.txt")
	if fileName != "" && !strings.ContainsAny(fileName, "/\x00") && fileName != "." && fileName != ".." {
		name = filepath.Join(filepath.Dir(name), fileName)
	}
	ps, err := ImportBytes(name, []byte(smallPatch(subject)), given, Options{})
	if err != nil {
		return // refused input writes nothing
	}
	for _, p := range ps {
		if s := safeName(p.Series); s != p.Series || s == "" || s == "." || s == ".." || strings.ContainsAny(s, `/\`) {
			t.Fatalf("unsafe series name %q from given=%q subject=%q", p.Series, given, subject)
		}
		if fn := p.FileName(1); strings.ContainsAny(fn, `/\`) || strings.HasPrefix(fn, ".") {
			t.Fatalf("unsafe file name %q", fn)
		}
	}
	res := &Result{Patches: ps}
	outputs, err := res.Write(out)
	if err != nil {
		t.Fatalf("write: %v", err)
	}
	for _, o := range outputs {
		rel, err := filepath.Rel(out, o)
		if err != nil || strings.HasPrefix(rel, "..") || !strings.Contains(rel, string(filepath.Separator)) {
			t.Fatalf("output %s is not in a series folder inside %s", o, out)
		}
	}
	after := snapshot(t, root)
	for p, c := range before {
		if after[p] != c {
			t.Fatalf("given=%q subject=%q: %s changed or removed", given, subject, p)
		}
	}
	for p := range after {
		if _, ok := before[p]; ok {
			continue
		}
		if !strings.HasPrefix(p, "a/out/"+ps[0].Series+"/") && p != "a/out/"+ps[0].Series+"/" {
			t.Fatalf("given=%q: %s created outside the series folder", given, p)
		}
	}
}

// TestNamesProperty feeds generated names (unicode, ".", "..",
// separators, empty) through every place import turns input into a path.
func TestNamesProperty(t *testing.T) {
	seed := int64(1)
	r := rand.New(rand.NewSource(seed))
	fixed := []string{"", ".", "..", "/", "\\", "../..", "a/../..", "修正", "\u202e", " ", "-", ".hidden", "..."}
	for _, g := range fixed {
		checkNames(t, g, "[PATCH 1/1] "+g, g)
	}
	for i := 0; i < 300; i++ {
		checkNames(t, genName(r), "[PATCH] "+genName(r), genName(r))
	}
}

// FuzzSeriesNames is the same property under the fuzzer.
func FuzzSeriesNames(f *testing.F) {
	for _, s := range []string{"", ".", "..", "a/b", "修正", "..\\x"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, given, subject string) {
		if !utf8.ValidString(subject) || strings.ContainsAny(subject, "\r\n") {
			return
		}
		checkNames(t, given, "[PATCH] "+subject, "")
	})
}

// TestInputCap: an endless input is refused by the size cap, and a huge
// header line gives a short message.
func TestInputCap(t *testing.T) {
	_, err := ImportFile("/dev/zero", "", Options{MaxInputSize: 1 << 20})
	if err == nil || !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "cap") {
		t.Fatalf("want the size cap, got %v", err)
	}
	if _, err := ImportFile("/dev/zero", "", Options{}); err == nil || !strings.Contains(err.Error(), "64 MiB") {
		t.Fatalf("default cap: %v", err)
	}
	long := "X-Long: " + strings.Repeat("y", 8<<20) + "\n"
	for _, text := range []string{
		"From: Jane <jane@example.org>\nSubject: [PATCH] x\n" + long + "\nbody\n",
		"From: Jane <jane@example.org>\nDate: " + strings.Repeat("y", 8<<20) + "\nSubject: [PATCH] x\n\nbody\n---\n" + fooDiff(" \tfoo_init(f);\n", "\tx();"),
		"From: " + strings.Repeat("<", 8<<20) + "\nSubject: [PATCH] x\n\nbody\n---\n" + fooDiff(" \tfoo_init(f);\n", "\tx();"),
	} {
		_, err := ImportBytes("big.txt", []byte(text), "s", Options{})
		if err == nil {
			continue
		}
		if len(err.Error()) > 1000 {
			t.Errorf("error is %d bytes long: %.200s", len(err.Error()), err.Error())
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

var _ = bytes.Equal

// TestDiffHeadersSkipHunkBodies: a hunk that removes "-- a" and adds
// "++ b" right before the next hunk header reads like a plain file
// header ("--- a", "+++ b", "@@ -"); hunk bodies are skipped by their
// counts, so the diff has the headers it has, with their names as
// written (timestamps, /dev/null and quoting undone).
func TestDiffHeadersSkipHunkBodies(t *testing.T) {
	diff := "diff -u -p a/lib/x.c b/lib/x.c\n--- a/lib/x.c\t2026-06-01 10:00:00.000000000 +0000\n+++ b/lib/x.c\t2026-06-02 10:00:00.000000000 +0000\n" +
		"@@ -1,2 +1,2 @@\n x\n--- a\n+++ b\n@@ -10 +10 @@\n-y\n+z\n" +
		"diff --git a/lib/g.c b/lib/g.c\n--- a/lib/g.c\n+++ b/lib/g.c\n@@ -1 +1 @@\n-1\n+2\n" +
		"Index: new.c\n===\n--- /dev/null\n+++ \"linux-6.12/new file.c\"\n@@ -0,0 +1 @@\n+n\n"
	got := DiffHeaders(diff)
	want := []DiffHeader{{Old: "a/lib/x.c", New: "b/lib/x.c"}, {Git: true}, {New: "linux-6.12/new file.c", Index: "new.c"}}
	if len(got) != len(want) {
		t.Fatalf("headers %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("header %d: %+v, want %+v", i+1, got[i], want[i])
		}
	}
	for _, c := range []struct {
		in   string
		n    int
		want string
		ok   bool
	}{{"a/drivers/x.c", 1, "drivers/x.c", true}, {"x.c", 1, "", false}, {"a//b/c", 1, "b/c", true}, {"a/b/c", 0, "a/b/c", true}} {
		if got, ok := StripName(c.in, c.n); got != c.want || ok != c.ok {
			t.Errorf("StripName(%q, %d) = %q %v, want %q %v", c.in, c.n, got, ok, c.want, c.ok)
		}
	}
}
