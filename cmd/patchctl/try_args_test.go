package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/testenv/mkthread"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// try's RANGE -N after --git DIR is an argument, not a flag, wherever it
// stands (issue 31, finding 14: "try --git DIR -1" failed with "unknown
// shorthand flag"); a flag's value that looks like -N stays its value;
// real unknown flags stay usage errors.
func TestTryArgsRange(t *testing.T) {
	for _, c := range []struct {
		args      []string
		git, out  string
		kernels   []string
		pos       []string
		wantErr   bool
		wantHelp  bool
		transport string
	}{
		{args: []string{"--git", "D", "-1"}, git: "D", pos: []string{"-1"}},
		{args: []string{"--git=D", "-3"}, git: "D", pos: []string{"-3"}},
		{args: []string{"--git", "D", "--", "-1"}, git: "D", pos: []string{"-1"}},
		{args: []string{"-1", "--git", "D"}, git: "D", pos: []string{"-1"}},
		{args: []string{"--git", "D", "-12", "--kernel", testkernel.Default, "--transport", "rxe"}, git: "D", pos: []string{"-12"}, kernels: []string{testkernel.Default}, transport: "rxe"},
		{args: []string{"--out", "-1", "--git", "D", "-2"}, git: "D", out: "-1", pos: []string{"-2"}},
		{args: []string{"--root", "R", "--git", "D", "-1"}, git: "D", pos: []string{"-1"}},
		{args: []string{"--git", "D", "HEAD~2..HEAD"}, git: "D", pos: []string{"HEAD~2..HEAD"}},
		{args: []string{"a.patch", "b.mbox"}, pos: []string{"a.patch", "b.mbox"}},
		{args: []string{"--git", "D", "-x"}, wantErr: true},
		{args: []string{"--git", "D", "-1x"}, wantErr: true},
		{args: []string{"--help"}, wantHelp: true},
	} {
		root := newRootCmd(&IOStreams{In: strings.NewReader(""), Out: &strings.Builder{}, ErrOut: &strings.Builder{}})
		cmd, _, err := root.Find([]string{"try"})
		if err != nil {
			t.Fatal(err)
		}
		cmd.InitDefaultHelpFlag()
		pos, help, err := parseTryArgs(cmd, c.args)
		if c.wantErr {
			if !errors.Is(err, errs.ErrUsage) {
				t.Errorf("%q: %v, want a usage error", c.args, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		git, _ := cmd.Flags().GetString("git")
		out, _ := cmd.Flags().GetString("out")
		kernels, _ := cmd.Flags().GetStringSlice("kernel")
		transport, _ := cmd.Flags().GetString("transport")
		if c.transport == "" {
			c.transport = "all"
		}
		if help != c.wantHelp || git != c.git || out != c.out || !slices.Equal(pos, c.pos) || !slices.Equal(kernels, c.kernels) || transport != c.transport {
			t.Errorf("%q: git %q out %q kernels %q transport %q args %q help %v; want %q %q %q %q %q %v",
				c.args, git, out, kernels, transport, pos, help, c.git, c.out, c.kernels, c.transport, c.pos, c.wantHelp)
		}
	}
}

// Through the command line: "try --git DIR -1" gets past flag parsing
// (here to the --transport check, which stops it before any work), and
// the commits of -1 are read from a repository, a bare one too; -1
// without --git is a usage error that says so.
func TestTryGitCountRange(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	code, _, stderr := run(t, "try", "--git", t.TempDir(), "-1", "--transport", "nosuch")
	if code != errs.ExitInput || strings.Contains(stderr, "shorthand") || !strings.Contains(stderr, "transport") {
		t.Errorf("try --git DIR -1: exit %d: %s", code, stderr)
	}
	dir := t.TempDir()
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=Pat Developer", "-c", "user.email=pat@example.org", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(dir, "init", "-q")
	for i, content := range []string{"a\n", "a\nb\n", "a\nb\nc\n"} {
		os.WriteFile(filepath.Join(dir, "f.c"), []byte(content), 0o644)
		git(dir, "add", "f.c")
		git(dir, "commit", "-q", "-m", "change "+string(rune('1'+i)))
	}
	bare := filepath.Join(t.TempDir(), "bare.git")
	git(dir, "clone", "-q", "--bare", dir, bare)
	for _, repo := range []string{dir, bare} {
		for rng, want := range map[string]int{"-1": 1, "-2": 2} {
			in, err := readTryInput(context.Background(), &TryOptions{IO: &IOStreams{ErrOut: &strings.Builder{}}, Git: repo, Sources: []string{rng}})
			if err != nil || len(in.Patches) != want {
				t.Errorf("--git %s %s: %v, %d patches, want %d", repo, rng, err, len(in.Patches), want)
			}
		}
	}
	if _, err := readTryInput(context.Background(), &TryOptions{IO: &IOStreams{ErrOut: &strings.Builder{}}, Sources: []string{"-1"}}); !errors.Is(err, errs.ErrUsage) || !strings.Contains(err.Error(), "--git") {
		t.Errorf("-1 without --git: %v", err)
	}
}

// try on a thread whose older revision is damaged takes the newest and
// prints the damaged one as not read, not a failure (issue 24, 2b).
func TestTryDamagedOldRevision(t *testing.T) {
	diff := func(path string, n int) string {
		return mkthread.InsertAfter(path, []byte("a\nb\nc\nd\ne\nf\ng\nh\n"), n, "x in "+path)
	}
	msgs := mkthread.Series([2]string{"foo: one", "foo: two"}, [2]string{diff("a.c", 2), diff("b.c", 2)}, [2]string{diff("a.c", 3), diff("b.c", 3)})
	for i := range msgs {
		if msgs[i].ID == "v1-2@example.org" {
			msgs[i].Body = strings.Replace(msgs[i].Body, " @@\n ", " @@\nX", 1) // a garbage line in its hunk
		}
	}
	f := filepath.Join(t.TempDir(), "t.mbox")
	os.WriteFile(f, mkthread.Mbox(msgs), 0o644)
	in, err := readTryInput(context.Background(), &TryOptions{IO: &IOStreams{ErrOut: &strings.Builder{}}, Sources: []string{f}})
	if err != nil {
		t.Fatalf("a damaged v1 sank the thread: %v", err)
	}
	if len(in.Patches) != 2 || in.Patches[0].Version != 2 {
		t.Fatalf("took %d patches of v%d", len(in.Patches), in.Patches[0].Version)
	}
	var out strings.Builder
	printThreads(&out, in.Threads)
	if !strings.Contains(out.String(), "skipped v1") || !strings.Contains(out.String(), "does not read (not taken, so not a failure): [PATCH 2/2] foo: two") {
		t.Errorf("the damaged revision is not reported:\n%s", out.String())
	}
}
