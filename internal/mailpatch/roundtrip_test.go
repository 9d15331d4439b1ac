package mailpatch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The round-trip property (issue 27): every patch file import writes is
// one message for git mailsplit, and git am applies it, with its author
// and subject, on a tree it was made for (here: a repository holding
// each file as the patch's own context and removed lines have it).
// importString runs it on every patch the class and damage tests import;
// the differential test runs it on its generated mails against the tree
// they were made for.

// outputFromLines lists the lines of an output after its first that git
// mailsplit would start a new message at.
func outputFromLines(out []byte) []string {
	var bad []string
	for i, l := range strings.Split(string(out), "\n") {
		if i > 0 && isMboxFromLine(l) {
			bad = append(bad, l)
		}
	}
	return bad
}

func checkRoundTrip(t *testing.T, ps []*Patch) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		return
	}
	for _, p := range ps {
		out := p.Format()
		d := t.TempDir()
		mbox := filepath.Join(d, "out.patch")
		if err := os.WriteFile(mbox, out, 0o644); err != nil {
			t.Fatal(err)
		}
		split := filepath.Join(d, "split")
		os.Mkdir(split, 0o755)
		if n := strings.TrimSpace(git(t, d, "mailsplit", "-o"+split, mbox)); n != "1" {
			t.Errorf("git mailsplit cuts the output into %s messages:\n%s", n, out)
			continue
		}
		repo := filepath.Join(d, "repo")
		os.Mkdir(repo, 0o755)
		git(t, repo, "init", "-q")
		applicable := true
		for _, f := range p.Files {
			if f.IsBinary {
				applicable = false
				break
			}
			if f.IsNew {
				continue
			}
			path := filepath.Join(repo, filepath.FromSlash(f.OldName))
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, preimage(f), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if !applicable {
			continue
		}
		os.WriteFile(filepath.Join(repo, ".keep"), nil, 0o644)
		git(t, repo, "add", "-A")
		git(t, repo, "-c", "user.name=base", "-c", "user.email=base@patchctl.invalid", "commit", "-q", "-m", "base")
		git(t, repo, "am", "-q", mbox)
		got := strings.Split(git(t, repo, "log", "-1", "--format=%an%x00%ae%x00%s"), "\x00")
		if len(got) != 3 || got[0] != p.Author.Name || got[1] != p.Author.Address || strings.TrimSpace(got[2]) != p.Subject {
			t.Errorf("git am of the output made %q, import read %q <%s> %q", got, p.Author.Name, p.Author.Address, p.Subject)
		}
	}
}
