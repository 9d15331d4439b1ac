package debian

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestSourceURIs: the deb entries' URIs of both sources formats: options
// in brackets (spaced or not) skipped, deb-src and comments ignored; in
// deb822, every URI of a stanza whose Types include deb, the last stanza
// without a closing blank line too, none of a disabled or deb-src-only
// stanza.
func TestSourceURIs(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]struct {
		text string
		want []string
	}{
		"a.list": {"deb http://a/debian sid main\n#deb http://x/debian sid main\ndeb-src http://y/debian sid main\n" +
			"deb [ arch=amd64 signed-by=/k.gpg ] http://b/debian sid main\ndeb [trusted=yes] http://c/debian sid main\ndeb http://short\n",
			[]string{"http://a/debian", "http://b/debian", "http://c/debian"}},
		"b.sources": {"Types: deb deb-src\nURIs: http://d/debian http://e/debian\nSuites: sid\n\n" +
			"Types: deb-src\nURIs: http://f/debian\n\n# Types: deb\nTypes: deb\nURIs: http://g/debian\nEnabled: no\n\n" +
			"URIs: http://h/debian\nTypes: deb\n",
			[]string{"http://d/debian", "http://e/debian", "http://h/debian"}},
	}
	for name, c := range cases {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := sourceURIs(p); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
	if got := sourceURIs(filepath.Join(dir, "missing.list")); got != nil {
		t.Errorf("missing file: %q", got)
	}
}
