package series

import (
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Record appends a series' entries to a manifest, replaces them when
// recorded again, and keeps every other line as written.
func TestRecord(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("..", "..", "series", testkernel.Default, "manifest.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, start := range []string{string(orig), "kernel: \"9.9\"\npatches: []\n", "kernel: \"9.9\"\n# no patches yet\n"} {
		path := filepath.Join(t.TempDir(), "manifest.yaml")
		os.WriteFile(path, []byte(start), 0o644)
		before, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		first := []Entry{
			{Source: "patches/mine/0001-a.mbox", Expect: AppliesOffset, Trailers: []string{"Reviewed-by: Rita Reviewer <rita@example.org>"}},
			{Source: "patches/mine/0002-b.mbox", Expect: Conflict, Reason: "recorded: \"quoted\" and: colons"},
		}
		if err := Record(path, "mine", first); err != nil {
			t.Fatal(err)
		}
		m, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Patches) != len(before.Patches)+2 || m.Patches[len(m.Patches)-2].Trailers[0] != first[0].Trailers[0] || m.Patches[len(m.Patches)-1].Reason != first[1].Reason {
			t.Fatalf("after record: %+v", m.Patches)
		}
		if m.Boot.InlineDataSize != before.Boot.InlineDataSize || len(m.Boot.ExpectInline) != len(before.Boot.ExpectInline) {
			t.Errorf("boot changed: %+v, was %+v", m.Boot, before.Boot)
		}
		// Every line of the original is still there.
		got, _ := os.ReadFile(path)
		for _, l := range strings.Split(start, "\n") {
			if l != "" && l != "patches: []" && !strings.Contains(string(got), l) {
				t.Errorf("line %q lost:\n%s", l, got)
			}
		}
		// Again, with one entry: replaced, not added.
		if err := Record(path, "mine", first[:1]); err != nil {
			t.Fatal(err)
		}
		m, err = Load(path)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range m.Patches {
			if e.Series() == "mine" {
				n++
			}
		}
		if n != 1 || len(m.Patches) != len(before.Patches)+1 {
			t.Errorf("re-record: %d of series mine, %d in all", n, len(m.Patches))
		}
	}
	// What would not load is refused and the file left as it was.
	path := filepath.Join(t.TempDir(), "manifest.yaml")
	os.WriteFile(path, orig, 0o644)
	if err := Record(path, "mine", []Entry{{Source: "patches/mine/x", Expect: "maybe"}}); err == nil {
		t.Error("an entry with a bad disposition was recorded")
	}
	if err := Record(path, "mine", []Entry{{Source: "patches/mine/x", Expect: Applies, Trailers: []string{"not a trailer"}}}); err == nil {
		t.Error("a bad trailer was recorded")
	}
	if got, _ := os.ReadFile(path); string(got) != string(orig) {
		t.Error("a refused record changed the file")
	}
}
