package build

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/vocab"
)

// countMakes runs commands for real and counts the makes of a kernel's
// targets (configure's are not counted).
type countMakes struct {
	command.Exec
	n int
}

func (c *countMakes) Start(ctx context.Context, cmd *command.Cmd) (*command.Process, error) {
	if cmd.Name == "make" && !slices.ContainsFunc(cmd.Args, func(a string) bool { return strings.HasSuffix(a, "config") }) {
		c.n++
	}
	return c.Exec.Start(ctx, cmd)
}

// age moves every time under dirs a minute back, keeping their order (as
// make compares them): what the file system holds then is no longer racy.
func age(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.Type()&fs.ModeSymlink != 0 {
				return err
			}
			fi, err := e.Info()
			if err != nil {
				return err
			}
			old := fi.ModTime().Add(-time.Minute)
			return os.Chtimes(p, old, old)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestProvedUpToDateSkipsMake: a build whose folder and sources are as
// its last complete make left them runs no make and is up to date, with
// the same image; each change make would see (a source's time, a new
// file in the tree, an object removed, a flag kbuild reads from the
// environment) runs make again, and a folder changed too recently to be
// told apart from a later change gets no proof.
func TestProvedUpToDateSkipsMake(t *testing.T) {
	o, _ := fakeKernel(t)
	ctx := context.Background()
	runner := &countMakes{}
	o.Variant, o.Runner = vocab.Baseline, runner
	build := func(wantMake bool) *Metadata {
		t.Helper()
		before := runner.n
		md, err := Build(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if ran := runner.n > before; ran != wantMake || md.Proved == wantMake {
			t.Fatalf("make ran %v (proved %v), want %v", ran, md.Proved, wantMake)
		}
		return md
	}
	first := build(true)
	src, obj := first.SourceDir, first.BuildDir
	proof := filepath.Join(obj, upToDateFile)
	// Just built: main.o and bzImage are a moment old, so no proof.
	if _, err := os.Stat(proof); err == nil {
		t.Fatal("a proof was written with files changed a moment before")
	}
	// settle: the folder aged, one make (a no-op) writes the proof, and
	// the next build runs none.
	settle := func() *Metadata {
		t.Helper()
		age(t, src, obj)
		if md := build(true); !md.UpToDate {
			t.Fatalf("make after aging the folder did work")
		}
		if _, err := os.Stat(proof); err != nil {
			t.Fatalf("no proof after a make of an aged folder: %v", err)
		}
		return build(false)
	}
	md := settle()
	if !md.UpToDate || md.SHA256["bzImage"] != first.SHA256["bzImage"] {
		t.Errorf("proved build: up to date %v, image %s, first %s", md.UpToDate, md.SHA256["bzImage"], first.SHA256["bzImage"])
	}

	// A source newer than its object.
	now := time.Now()
	os.Chtimes(filepath.Join(src, "main.c"), now, now)
	if md := build(true); md.UpToDate {
		t.Error("a touched source compiled nothing")
	}
	settle()

	// A new file in the tree (a header that could shadow another).
	os.WriteFile(filepath.Join(src, "new.h"), []byte("#define X 1\n"), 0o644)
	build(true)
	os.Remove(filepath.Join(src, "new.h"))
	settle()

	// An object removed from the folder.
	os.Remove(filepath.Join(obj, "main.o"))
	if md := build(true); md.UpToDate {
		t.Error("a removed object was not made again")
	}
	settle()

	// A flag kbuild reads from the environment.
	t.Setenv("KCFLAGS", "-O0")
	build(true)
	settle()

	// patchctl's own files and the snapshots are not make's: changing
	// them keeps the proof.
	os.WriteFile(filepath.Join(obj, "variants", "stray"), []byte("x"), 0o644)
	build(false)
}

// TestMakeInputs: make's arguments and the environment kbuild reads are
// inputs; other variables and make's jobserver are not.
func TestMakeInputs(t *testing.T) {
	ctx := context.Background()
	base := makeInputs(ctx, []string{"bzImage"}, nil)
	if makeInputs(ctx, []string{"modules"}, nil) == base {
		t.Error("the targets are not an input")
	}
	if makeInputs(ctx, []string{"bzImage"}, []string{"CCACHE_BASEDIR=/x"}) != base {
		t.Error("ccache's settings change the inputs")
	}
	for _, kv := range []string{"KCFLAGS=-O0", "KBUILD_BUILD_USER=x", "HOSTCFLAGS=-g", "ARCH=i386", "CROSS_COMPILE=x-", "LLVM=1", "PATH=/opt/bin", "MAKEFLAGS=KCFLAGS=-O0"} {
		if makeInputs(ctx, []string{"bzImage"}, []string{kv}) == base {
			t.Errorf("%s is not an input", kv)
		}
	}
	for _, kv := range []string{"TERM=dumb", "HOME=/x", "SSH_TTY=/dev/pts/1"} {
		if makeInputs(ctx, []string{"bzImage"}, []string{kv}) != base {
			t.Errorf("%s is an input", kv)
		}
	}
	a := makeInputs(ctx, []string{"bzImage"}, []string{"MAKEFLAGS= -j2 --jobserver-auth=fifo:/tmp/GMfifo1"})
	b := makeInputs(ctx, []string{"bzImage"}, []string{"MAKEFLAGS= -j2 --jobserver-auth=fifo:/tmp/GMfifo2"})
	if a != b {
		t.Error("make's jobserver changes the inputs")
	}
}
