package tree

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// fmtSeal is the seal as first written, with fmt: the faster one must
// give the same digest for every manifest already on disk.
func fmtSeal(m *manifest) string {
	paths := make([]string, 0, len(m.Files))
	for p := range m.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	fmt.Fprintf(h, "patchctl tree manifest 1\x00%s\x00%d\n", m.Key, len(paths))
	for _, p := range paths {
		e := m.Files[p]
		fmt.Fprintf(h, "%s\x00%d\x00%s\x00%s\n", p, e.Size, e.SHA256, e.Link)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestSealSameBytesAsFmt(t *testing.T) {
	m := &manifest{Key: "k\x00y", Files: map[string]fileEntry{
		"a/b.c":        {Size: 12345, SHA256: "ab"},
		"empty":        {Size: 0, SHA256: "e3"},
		"link":         {Link: "../x y"},
		"ünïcode/%d.h": {Size: -1, SHA256: "%s"},
	}}
	if got, want := m.seal(), fmtSeal(m); got != want {
		t.Fatalf("seal %s, want %s (the digest of manifests already written)", got, want)
	}
	if got, want := (&manifest{}).seal(), fmtSeal(&manifest{}); got != want {
		t.Fatalf("empty manifest: seal %s, want %s", got, want)
	}
}

// A manifest is decoded once per process while its file stays the same,
// and read again when the file is rewritten (tree prepare --force) or
// damaged: the memo never hides a change.
func TestReadManifestMemo(t *testing.T) {
	p := filepath.Join(t.TempDir(), "k.manifest.json.gz")
	m := &manifest{Key: "k1", Files: map[string]fileEntry{"a.c": {Size: 1, SHA256: "aa"}}}
	if err := writeManifest(p, m); err != nil {
		t.Fatal(err)
	}
	a, err := readManifest(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := readManifest(p)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatal("the same manifest file was decoded twice")
	}
	m2 := &manifest{Key: "k2", Files: map[string]fileEntry{"a.c": {Size: 2, SHA256: "bb"}}}
	if err := writeManifest(p, m2); err != nil {
		t.Fatal(err)
	}
	c, err := readManifest(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.Key != "k2" || c.Files["a.c"].Size != 2 {
		t.Fatalf("a rewritten manifest read as the old one: %+v", c)
	}
	// Damaged in place, same inode: another size or time, read again
	// and refused.
	if err := os.WriteFile(p, []byte("not gzip"), 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(p, future, future); err != nil {
		t.Fatal(err)
	}
	if _, err := readManifest(p); err == nil {
		t.Fatal("a damaged manifest was taken from the memo")
	}
}
