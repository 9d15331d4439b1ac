package mailpatch

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// preimage rebuilds, from a patch's own context and removed lines, a file
// on which the patch applies exactly: each hunk's old lines at the stated
// position, filler lines between.
func preimage(f *gitdiff.File) []byte {
	var lines []string
	for _, fr := range f.TextFragments {
		for int64(len(lines)) < fr.OldPosition-1 {
			lines = append(lines, fmt.Sprintf("/* filler %d */\n", len(lines)+1))
		}
		for _, l := range fr.Lines {
			if l.Old() {
				lines = append(lines, l.Line)
			}
		}
	}
	for i := 0; i < 5; i++ {
		lines = append(lines, "/* tail */\n")
	}
	return []byte(strings.Join(lines, ""))
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
		"GIT_COMMITTER_NAME=patchctl test", "GIT_COMMITTER_EMAIL=test@patchctl.invalid")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestGitAm applies each normalized seed with git am to a fixture
// repository made from the patch's preimage: the author, the subject and
// the change survive.
func TestGitAm(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, s := range seedSeries {
		t.Run(s, func(t *testing.T) {
			res, err := Import([]string{seedDir(s)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkRoundTrip(t, res.Patches)
			p := res.Patches[0]
			repo := t.TempDir()
			git(t, repo, "init", "-q")
			for _, f := range p.Files {
				path := filepath.Join(repo, filepath.FromSlash(f.OldName))
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, preimage(f), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			git(t, repo, "add", "-A")
			git(t, repo, "-c", "user.name=base", "-c", "user.email=base@patchctl.invalid", "commit", "-q", "-m", "base")
			mbox := filepath.Join(t.TempDir(), "p.patch")
			os.WriteFile(mbox, p.Format(), 0o644)
			git(t, repo, "am", "-q", mbox)

			got := git(t, repo, "log", "-1", "--format=%an <%ae>%n%s%n%ad", "--date=rfc")
			lines := strings.Split(got, "\n")
			if want := formatAddress(p.Author.Name, p.Author.Address); lines[0] != want {
				t.Errorf("author %q, want %q", lines[0], want)
			}
			if lines[1] != p.Subject {
				t.Errorf("subject %q, want %q", lines[1], p.Subject)
			}
			if !p.Date.IsZero() && lines[2] != p.Date.Format("Mon, 2 Jan 2006 15:04:05 -0700") {
				t.Errorf("date %q, want %v", lines[2], p.Date)
			}
			body := git(t, repo, "log", "-1", "--format=%b")
			if strings.TrimSpace(body) != strings.TrimSpace(p.Message) {
				t.Errorf("commit message differs:\n%s", firstDiff(p.Message, body))
			}
			for _, f := range p.Files {
				var want bytes.Buffer
				if err := gitdiff.Apply(&want, bytes.NewReader(preimage(f)), f); err != nil {
					t.Fatal(err)
				}
				got, _ := os.ReadFile(filepath.Join(repo, filepath.FromSlash(f.NewName)))
				if !bytes.Equal(got, want.Bytes()) {
					t.Errorf("%s after git am differs from the patch's postimage", f.NewName)
				}
			}
		})
	}
}
