package mailpatch_test

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/testenv/mkthread"
)

// unblocking runs call while releasing any reader it leaves blocked in
// opening the FIFO (by opening and closing a writer): the test ends
// whether or not call blocks, and the assertions say whether it did.
func unblocking[T any](fifos []string, call func() T) T {
	done := make(chan T, 1)
	go func() { done <- call() }()
	for {
		select {
		case r := <-done:
			return r
		default:
		}
		for _, f := range fifos {
			if fd, err := syscall.Open(f, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				syscall.Close(fd)
			}
		}
		runtime.Gosched()
	}
}

// NonRegularFolder makes a series folder with one patch and, beside it,
// every kind of file that is not a regular file: a FIFO, a socket, a
// symbolic link to a FIFO, one to a character device and a dangling one.
// It returns the folder and the FIFOs.
func nonRegularFolder(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	one := mkthread.Msg{ID: "one@example.org", From: "A <a@example.org>", Subject: "[PATCH] foo: one", Date: mkthread.Series([2]string{"a", "b"}, [2]string{}, [2]string{})[0].Date,
		Body: mkthread.Patch("One.", "A <a@example.org>", diffOf("a.c", 2))}
	if err := os.WriteFile(filepath.Join(dir, "0001-one.patch"), one.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "0002-fifo.patch")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, "0003-socket.patch"))
	if err != nil {
		t.Skipf("unix socket: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	os.Symlink(fifo, filepath.Join(dir, "0004-link-to-fifo.patch"))
	os.Symlink("/dev/null", filepath.Join(dir, "0005-device.patch"))
	os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "0006-dangling.patch"))
	return dir, []string{fifo}
}

// A folder with FIFOs, sockets and devices in it imports its patch and
// skips the rest with a note naming each; a FIFO given as the input is
// refused as one at once (issue 31, finding 11: it blocked in open).
func TestImportSkipsNonRegularFiles(t *testing.T) {
	dir, fifos := nonRegularFolder(t)
	type result struct {
		res *mailpatch.Result
		err error
	}
	r := unblocking(fifos, func() result {
		res, err := mailpatch.Import([]string{dir}, mailpatch.Options{})
		return result{res, err}
	})
	if r.err != nil {
		t.Fatalf("folder: %v", r.err)
	}
	if len(r.res.Patches) != 1 {
		t.Errorf("folder: %d patches, want the one", len(r.res.Patches))
	}
	var said []string
	for _, w := range r.res.Warnings {
		said = append(said, filepath.Base(w.File)+": "+w.Message)
	}
	for _, want := range []string{"0002-fifo.patch: skipped: a FIFO", "0003-socket.patch: skipped: a socket", "0004-link-to-fifo.patch: skipped: a FIFO",
		"0005-device.patch: skipped: a character device", "0006-dangling.patch: skipped: a dangling symbolic link"} {
		if !strings.Contains(strings.Join(said, "\n"), want) {
			t.Errorf("folder: no note %q in %q", want, said)
		}
	}
	// Given by name, a FIFO (a shell's <(...)) is read, not waited for
	// in open: without a writer it is empty; a socket is refused.
	for _, f := range append(fifos, filepath.Join(dir, "0004-link-to-fifo.patch"), filepath.Join(dir, "0003-socket.patch")) {
		r := unblocking(fifos, func() result {
			res, err := mailpatch.Import([]string{f}, mailpatch.Options{})
			return result{res, err}
		})
		want := "empty file"
		if strings.Contains(f, "socket") {
			want = "a socket, not a file"
		}
		if r.err == nil || !strings.Contains(r.err.Error(), want) {
			t.Errorf("%s given: %v, want %q", filepath.Base(f), r.err, want)
		}
	}
}
