package build

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/fsutil"
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
			if err != nil {
				return err
			}
			fi, err := e.Info()
			if err != nil {
				return err
			}
			old := fi.ModTime().Add(-time.Minute)
			if e.Type()&fs.ModeSymlink != 0 {
				tv := unix.NsecToTimeval(old.UnixNano())
				return unix.Lutimes(p, []unix.Timeval{tv, tv})
			}
			return os.Chtimes(p, old, old)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// fakeBuilds builds the fake kernel's baseline, each call failing the
// test unless make ran (and the build was not proved) as wantMake says.
func fakeBuilds(t *testing.T) func(wantMake bool) *Metadata {
	o, _ := fakeKernel(t)
	runner := &countMakes{}
	o.Variant, o.Runner = vocab.Baseline, runner
	return func(wantMake bool) *Metadata {
		t.Helper()
		before := runner.n
		md, err := Build(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if ran := runner.n > before; ran != wantMake || md.Proved == wantMake {
			t.Fatalf("make ran %v (proved %v), want %v", ran, md.Proved, wantMake)
		}
		return md
	}
}

// TestProvedUpToDateSkipsMake: a build whose folder and sources are as
// its last complete make left them runs no make and is up to date, with
// the same image; each change make would see (a source's time, a new
// file in the tree, an object removed, a flag kbuild reads from the
// environment) runs make again, and a folder changed too recently to be
// told apart from a later change gets no proof.
func TestProvedUpToDateSkipsMake(t *testing.T) {
	build := fakeBuilds(t)
	first := build(true)
	src, obj := first.SourceDir, first.BuildDir
	proof := filepath.Join(obj, upToDateFile)
	// settle: the folder aged, one make (a no-op) writes the proof, and
	// the next build runs none.
	settle := func() *Metadata {
		t.Helper()
		age(t, src, obj)
		if md := build(true); !md.UpToDate {
			t.Fatalf("make after aging the folder did work:\n%s", mustRead(t, md.Log))
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

// TestInheritedMakeflags: patchctl run by make (make run, make test, a
// user's Makefile) inherits MAKEFLAGS. Its -s would silence the lines a
// build counts its work by, its jobserver is not passed on (make warned,
// and the warning counted as the build's), and neither they nor the
// output flags are inputs: a folder proved up to date under one stays so
// under the other. Flags that change what make does stay inputs.
func TestInheritedMakeflags(t *testing.T) {
	build := fakeBuilds(t)
	t.Setenv("MAKEFLAGS", "s") // make -s run
	first := build(true)
	if first.UpToDate || first.Warnings != 0 {
		t.Fatalf("the first build under make -s: up to date %v, %d warnings:\n%s", first.UpToDate, first.Warnings, mustRead(t, first.Log))
	}
	src, obj := first.SourceDir, first.BuildDir
	age(t, src, obj)
	build(true) // writes the proof
	// make test's recipe under make -j4, and a shell: still proved.
	t.Setenv("MAKEFLAGS", " -j4 --jobserver-auth=3,4 --no-print-directory")
	t.Setenv("MFLAGS", "-j4 --jobserver-auth=3,4 --no-print-directory")
	build(false)
	os.Unsetenv("MAKEFLAGS")
	os.Unsetenv("MFLAGS")
	build(false)
	// A change make sees, under a parent's jobserver: make runs, with no
	// warning of its own about the jobserver.
	t.Setenv("MAKEFLAGS", " -j4 --jobserver-auth=3,4 --no-print-directory")
	now := time.Now()
	os.Chtimes(filepath.Join(src, "main.c"), now, now)
	if md := build(true); md.UpToDate || md.Warnings != 0 {
		t.Errorf("a touched source under make -j4: up to date %v, %d warnings:\n%s", md.UpToDate, md.Warnings, mustRead(t, md.Log))
	}
	// make -k (keep going) is an input: make runs.
	age(t, src, obj)
	build(true)
	t.Setenv("MAKEFLAGS", "k")
	build(true)
}

// TestRacyStamp: a file changed less than racyWindow before the stamp
// (or dated ahead of the clock) makes it racy, and then recordUpToDate
// writes no proof; older files do not.
func TestRacyStamp(t *testing.T) {
	src, obj := t.TempDir(), t.TempDir()
	f := filepath.Join(src, "a.c")
	os.WriteFile(f, []byte("int a;\n"), 0o644)
	inputs, _ := makeInputs([]string{"x"}, nil)
	for _, c := range []struct {
		at   time.Duration
		racy bool
	}{{-time.Minute, false}, {-racyWindow / 4, true}, {time.Minute, true}} {
		at := time.Now().Add(c.at)
		os.Chtimes(f, at, at)
		st, err := treeStamp(src, sourceEntry, nil, []string{src, obj}, false, time.Now())
		if err != nil || st.racy != c.racy {
			t.Errorf("a file %v from now: racy %v (%v), want %v", c.at, st.racy, err, c.racy)
		}
		os.Remove(filepath.Join(obj, upToDateFile))
		if err := recordUpToDate(src, obj, inputs, nil, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(obj, upToDateFile)); (err == nil) == c.racy {
			t.Errorf("a file %v from now: proof written %v", c.at, err == nil)
		}
	}
}

// TestMakeInputs: make's arguments (not -j) and the environment kbuild
// reads are inputs; other variables and make's jobserver are not; other
// tools or make -e allow no proof.
func TestMakeInputs(t *testing.T) {
	in := func(args []string, env ...string) string {
		t.Helper()
		s, ok := makeInputs(args, env)
		if !ok {
			t.Fatalf("%v %v: no proof possible", args, env)
		}
		return s
	}
	base := in([]string{"-j2", "bzImage"})
	if in([]string{"-j2", "modules"}) == base {
		t.Error("the targets are not an input")
	}
	if in([]string{"-j8", "bzImage"}) != base {
		t.Error("the number of jobs changes the inputs")
	}
	if in([]string{"-j2", "bzImage"}, "CCACHE_BASEDIR=/x") != base {
		t.Error("ccache's settings change the inputs")
	}
	for _, kv := range []string{"KCFLAGS=-O0", "KBUILD_BUILD_USER=x", "HOSTCFLAGS=-g", "ARCH=i386", "PATH=/opt/bin", "MAKEFLAGS=KCFLAGS=-O0", "LOCALVERSION=-x",
		"MAKEFLAGS=k", "MAKEFLAGS=i --no-print-directory", "MAKEFLAGS=s -- KCFLAGS=-O0"} {
		if in([]string{"-j2", "bzImage"}, kv) == base {
			t.Errorf("%s is not an input", kv)
		}
	}
	// A folder named again later in PATH changes no lookup; any other
	// change of PATH, its order included, is an input.
	path := in([]string{"bzImage"}, "PATH=/a:/b::/c")
	if in([]string{"bzImage"}, "PATH=/a:/b:/a::/c:/b:") != path {
		t.Error("a repeated PATH folder changes the inputs")
	}
	for _, p := range []string{"PATH=/b:/a::/c", "PATH=/a:/b:/c", "PATH=/a:/b::/c:/d", "PATH=/a/:/b::/c"} {
		if in([]string{"bzImage"}, p) == path {
			t.Errorf("%s: same inputs as PATH=/a:/b::/c", p)
		}
	}
	for _, kv := range []string{"TERM=dumb", "HOME=/x", "SSH_TTY=/dev/pts/1", "CROSS_COMPILE=", "MAKEFLAGS= -j2 --jobserver-auth=fifo:/tmp/GMfifo1",
		"MAKEFLAGS=s", "MAKEFLAGS= -j4 --jobserver-auth=3,4 --no-print-directory", "MFLAGS=-w", "MAKEFLAGS=p --trace"} {
		if in([]string{"-j2", "bzImage"}, kv) != base {
			t.Errorf("%s is an input", kv)
		}
	}
	for _, kv := range []string{"CROSS_COMPILE=aarch64-linux-gnu-", "LLVM=1", "MAKEFILES=/x.mk", "MAKEFLAGS=e -- CC=clang", "MAKEFLAGS=se", "MAKEFLAGS= -e", "MAKEFLAGS=--environment-overrides"} {
		if _, ok := makeInputs([]string{"bzImage"}, []string{kv}); ok {
			t.Errorf("%s: a proof is possible", kv)
		}
	}
	for _, kv := range []string{"MAKEFLAGS=s -- KCFLAGS=-Werror", "MAKEFLAGS=rR"} {
		if _, ok := makeInputs([]string{"bzImage"}, []string{kv}); !ok {
			t.Errorf("%s: no proof possible", kv)
		}
	}
}

// TestProofOutsideTheTrees: a file outside both trees that a command
// record names (a host header objtool includes) is part of the proof; a
// link out of the source tree, a .git in it or CROSS_COMPILE allow none;
// the harness's files count by content, not inode.
func TestProofOutsideTheTrees(t *testing.T) {
	build := fakeBuilds(t)
	first := build(true)
	src, obj := first.SourceDir, first.BuildDir
	proof := filepath.Join(obj, upToDateFile)
	settle := func() {
		t.Helper()
		age(t, src, obj)
		build(true)
		if _, err := os.Stat(proof); err != nil {
			t.Fatalf("no proof: %v", err)
		}
		build(false)
	}
	outside := filepath.Join(t.TempDir(), "stdio.h")
	os.WriteFile(outside, []byte("int x;\n"), 0o644)
	os.WriteFile(filepath.Join(obj, ".main.o.cmd"), []byte("savedcmd_main.o := gcc -c main.c\n\ndeps_main.o := \\\n  main.c \\\n  "+outside+" \\\n\n"), 0o644)
	settle()
	old := time.Now().Add(-time.Hour)
	os.Chtimes(outside, old, old)
	build(true)
	settle()
	// The same named by a dependency file (*.d) deeper in the folder,
	// and a file that is gone.
	other := filepath.Join(t.TempDir(), "limits.h")
	os.WriteFile(other, []byte("int y;\n"), 0o644)
	os.MkdirAll(filepath.Join(obj, "usr"), 0o755)
	os.WriteFile(filepath.Join(obj, "usr", ".x.cpio.d"), []byte("usr/x.cpio: "+other+"\n"), 0o644)
	settle()
	os.Remove(other)
	build(true)
	settle()

	// The harness's files: the same content under a new inode keeps the
	// proof (stamped by content), other content does not.
	main := filepath.Join(src, "main.c")
	byContent := map[string]bool{"main.c": true}
	b, _ := os.ReadFile(main)
	st, _ := os.Stat(main)
	inputs, _ := makeInputs([]string{"x"}, nil)
	if err := recordUpToDate(src, obj, inputs, byContent, nil); err != nil {
		t.Fatal(err)
	}
	if !provedUpToDate(src, obj, inputs, byContent) {
		t.Fatal("no proof of an aged folder")
	}
	os.Remove(main)
	os.WriteFile(main, b, st.Mode())
	os.Chtimes(main, st.ModTime(), st.ModTime())
	if !provedUpToDate(src, obj, inputs, byContent) {
		t.Error("a harness file rewritten with the same content and time broke the proof")
	}
	// The harness writes the pristine file's time, or now where the
	// content changed since the folder's last build: the time is not
	// what the proof holds of it.
	os.Chtimes(main, st.ModTime().Add(-time.Hour), st.ModTime().Add(-time.Hour))
	if !provedUpToDate(src, obj, inputs, byContent) {
		t.Error("a harness file with the same content at another time broke the proof")
	}
	os.Chtimes(main, st.ModTime(), st.ModTime())
	if provedUpToDate(src, obj, inputs, nil) {
		t.Error("a file rewritten (new inode) kept the proof")
	}
	os.WriteFile(main, append([]byte("/* */"), b[5:]...), st.Mode())
	os.Chtimes(main, st.ModTime(), st.ModTime())
	if provedUpToDate(src, obj, inputs, byContent) {
		t.Error("a harness file with other content, same size and time, kept the proof")
	}
	os.WriteFile(main, b, st.Mode())
	settle()

	// No proof: a link out of the tree, a .git, another compiler.
	for _, c := range []struct {
		name        string
		make, clean func()
	}{
		{"link out", func() { os.Symlink(t.TempDir(), filepath.Join(src, "ext")) }, func() { os.Remove(filepath.Join(src, "ext")) }},
		// Relative, climbing out from a folder deeper in the tree.
		{"relative link out", func() {
			os.MkdirAll(filepath.Join(src, "inc", "sub"), 0o755)
			os.Symlink("../../../..", filepath.Join(src, "inc", "sub", "up"))
		}, func() { os.RemoveAll(filepath.Join(src, "inc")) }},
		{".git", func() { os.WriteFile(filepath.Join(src, ".git"), []byte("gitdir: /x\n"), 0o644) }, func() { os.Remove(filepath.Join(src, ".git")) }},
		{"CROSS_COMPILE", func() { os.Setenv("CROSS_COMPILE", "x86_64-linux-gnu-") }, func() { os.Unsetenv("CROSS_COMPILE") }},
	} {
		c.make()
		age(t, src, obj)
		build(true)
		if _, err := os.Stat(proof); err == nil {
			t.Errorf("%s: a proof was written", c.name)
		}
		build(true)
		c.clean()
		settle()
	}
}

// TestSourceStampBesideMake: the work tree stamped while make runs
// (sourceBeside) makes the same proof as a stamp after it; a source
// written after that stamp (while make still ran) leaves no proof that
// stands; a stamp that found a racy file, or never started (make ended
// first), is taken again after make; and the stamp never outlives the
// build (result waits for it, however often called).
func TestSourceStampBesideMake(t *testing.T) {
	src, obj := t.TempDir(), t.TempDir()
	main := filepath.Join(src, "main.c")
	old := time.Now().Add(-time.Hour)
	write := func(p, body string, at time.Time) {
		t.Helper()
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, at, at)
	}
	write(main, "int main;\n", old)
	write(filepath.Join(obj, "main.o"), "obj", old)
	inputs, _ := makeInputs([]string{"x"}, nil)
	afterStamp := func() stamp {
		st, err := treeStamp(src, sourceEntry, nil, []string{src, obj}, false, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return st
	}

	// Make outlasts the delay: the stamp beside it is the one after it.
	b := sourceBeside(src, obj, nil)
	time.Sleep(besideMakeDelay)
	<-b.done
	st, ok := b.result()
	if !ok || st.digest != afterStamp().digest {
		t.Fatalf("the stamp beside make (ok %v) differs from the one after it", ok)
	}
	b.result() // again: no second close, no wait
	if err := recordUpToDate(src, obj, inputs, nil, b); err != nil {
		t.Fatal(err)
	}
	if !provedUpToDate(src, obj, inputs, nil) {
		t.Fatal("no proof from the stamp beside make")
	}

	// A source written after the stamp beside make, make still running:
	// the proof holds what the stamp saw, and the change breaks it.
	b = sourceBeside(src, obj, nil)
	<-b.done
	write(main, "int main2;\n", old.Add(time.Minute))
	if err := recordUpToDate(src, obj, inputs, nil, b); err != nil {
		t.Fatal(err)
	}
	if provedUpToDate(src, obj, inputs, nil) {
		t.Error("a source written while make ran, after the stamp beside it, is proved up to date")
	}

	// A file written just before the stamp read it: racy, so stamped
	// again after make (still racy here: no proof).
	write(main, "int main3;\n", time.Now().Add(besideMakeDelay))
	b = sourceBeside(src, obj, nil)
	<-b.done
	if _, ok := b.result(); ok {
		t.Error("a racy stamp beside make was taken")
	}
	os.Remove(filepath.Join(obj, upToDateFile))
	if err := recordUpToDate(src, obj, inputs, nil, b); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(obj, upToDateFile)); err == nil {
		t.Error("a proof was written over a racy source")
	}

	// Make ended before the delay: no stamp beside it, the one after
	// it makes the proof.
	write(main, "int main4;\n", old.Add(2*time.Minute))
	b = sourceBeside(src, obj, nil)
	if _, ok := b.result(); ok {
		t.Error("a stamp stopped before its delay was taken")
	}
	if err := recordUpToDate(src, obj, inputs, nil, b); err != nil {
		t.Fatal(err)
	}
	if !provedUpToDate(src, obj, inputs, nil) {
		t.Error("no proof after a make shorter than the delay")
	}
}

// TestFolderEntryLeavesOutPatchctlsFiles: the proof covers make's files
// in a build folder, not patchctl's records, their files being written
// (fsutil.Write's temporary names: the proof is stamped while the
// sources record is written) or the snapshots.
func TestFolderEntryLeavesOutPatchctlsFiles(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, ".patchctl-sources.json")
	var tmp string
	err := fsutil.Write(rec, 0o644, func(w io.Writer) error {
		names, _ := os.ReadDir(dir)
		for _, n := range names {
			tmp = n.Name()
		}
		_, err := io.WriteString(w, "{}")
		return err
	})
	if err != nil || tmp == "" {
		t.Fatalf("no file being written seen: %v", err)
	}
	for _, c := range []struct {
		rel  string
		keep bool
	}{{tmp, false}, {".patchctl-sources.json", false}, {upToDateFile, false}, {"variants/patched-1/bzImage", false},
		{"vmlinux", true}, {".vmlinux.cmd", true}, {"drivers/.patchctl-x", true}, {"..config.tmp", true}} {
		if got := folderEntry(c.rel); got != c.keep {
			t.Errorf("folderEntry(%q) = %v, want %v", c.rel, got, c.keep)
		}
	}
}
