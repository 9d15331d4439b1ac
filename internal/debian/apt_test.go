package debian_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/patchctl/patchctl/internal/debian"
)

func TestFindMirrors(t *testing.T) {
	etc := t.TempDir()
	os.MkdirAll(filepath.Join(etc, "sources.list.d"), 0o755)
	os.WriteFile(filepath.Join(etc, "sources.list"), []byte("# deb http://commented.example/debian bookworm main\ndeb-src http://src.example/debian bookworm main\ndeb [arch=amd64 signed-by=/k.gpg] http://one.example/debian/ bookworm main\n"), 0o644)
	os.WriteFile(filepath.Join(etc, "sources.list.d", "sec.sources"), []byte("Types: deb\nURIs: http://two.example/debian-security\nSuites: bookworm-security\n\nTypes: deb\nURIs: http://off.example/debian\nEnabled: no\n"), 0o644)
	m := debian.FindMirrors(etc)
	if m.Debian != "http://one.example/debian" || m.Security != "http://two.example/debian-security" {
		t.Errorf("mirrors %+v", m)
	}
	if m := debian.FindMirrors(t.TempDir()); m.Debian != "http://deb.debian.org/debian" || m.Security != "http://deb.debian.org/debian-security" {
		t.Errorf("fallback mirrors %+v", m)
	}
}

func TestSuiteNames(t *testing.T) {
	for _, s := range []string{"bullseye", "bookworm-security", "sid", "experimental"} {
		if err := debian.ValidSuite(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	for _, s := range []string{"", "../x", "Sid", "a b", "x/y"} {
		if debian.ValidSuite(s) == nil {
			t.Errorf("%q accepted", s)
		}
	}
}
