package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestApplyHostileLocalTree: `apply --tree` of a local tree with a symbolic
// link to a folder outside it, and patches that write through it, into
// .patchctl, below a file, through a link inside the tree or with a
// 300-byte name: each is an input error (exit 2) that names the path, and
// nothing outside the work tree changes (finding 3 wrote the outside file
// and exited 0).
func TestApplyHostileLocalTree(t *testing.T) {
	long := strings.Repeat("n", 300) + ".c"
	cases := []struct {
		name, path string
		create     bool
		want       string
	}{
		{"through a link out", "outside/target.txt", false, "symbolic link"},
		{"new file through a link out", "outside/new.txt", true, "symbolic link"},
		{"through a link in", "lnk/new.c", true, "symbolic link"},
		{"journal", ".patchctl/journal.json", true, ".patchctl"},
		{"meta as a file", ".patchctl", true, ".patchctl"},
		{"below a file", "Makefile/foo", true, "not a folder"},
		{"a 300-byte name", "drivers/" + long, true, "255"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			outside := t.TempDir()
			target := filepath.Join(outside, "target.txt")
			os.WriteFile(target, []byte("outside\n"), 0o644)
			local := t.TempDir()
			os.WriteFile(filepath.Join(local, "Makefile"), []byte("VERSION = 9\nPATCHLEVEL = 9\nSUBLEVEL = 0\nEXTRAVERSION =\n"), 0o644)
			os.MkdirAll(filepath.Join(local, "drivers"), 0o755)
			os.WriteFile(filepath.Join(local, "drivers", "a.c"), []byte("int a;\n"), 0o644)
			os.Symlink(outside, filepath.Join(local, "outside"))
			os.Symlink("drivers", filepath.Join(local, "lnk"))
			r := fixtureRepo(t)
			os.MkdirAll(filepath.Join(r, "series", "9.9"), 0o755)
			os.MkdirAll(filepath.Join(r, "patches", "h"), 0o755)
			os.WriteFile(filepath.Join(r, "series", "9.9", "manifest.yaml"), []byte("kernel: \"9.9\"\npatches:\n  - source: patches/h/0001.patch\n    expect: applies\n"), 0o644)
			diff := fmt.Sprintf("diff --git a/%[1]s b/%[1]s\nindex 1111111..2222222 100644\n--- a/%[1]s\n+++ b/%[1]s\n@@ -1 +1 @@\n-outside\n+owned\n", tc.path)
			if tc.create {
				diff = fmt.Sprintf("diff --git a/%[1]s b/%[1]s\nnew file mode 100644\nindex 0000000..2222222\n--- /dev/null\n+++ b/%[1]s\n@@ -0,0 +1 @@\n+owned\n", tc.path)
			}
			mail := "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\nFrom: A U Thor <a@example.org>\nDate: Mon, 1 Dec 2025 00:00:00 +0000\nSubject: [PATCH] h: write a file\n\nWrite it.\n\nSigned-off-by: A U Thor <a@example.org>\n---\n" + diff + "-- \n2.39.5\n\n"
			os.WriteFile(filepath.Join(r, "patches", "h", "0001.patch"), []byte(mail), 0o644)
			code, out, errOut := run(t, "--root", r, "--cache", t.TempDir(), "--offline", "apply", "--tree", local)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("%s: exit %d, want 2 saying %q\n%s%s", tc.path, code, tc.want, out, errOut)
			}
			if b, _ := os.ReadFile(target); string(b) != "outside\n" {
				t.Errorf("the file outside the tree changed: %q", b)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 1 {
				t.Errorf("a file was made outside the tree: %v", ents)
			}
			if _, err := os.Lstat(filepath.Join(local, "drivers", long)); err == nil {
				t.Error("the local tree was written")
			}
		})
	}
}
