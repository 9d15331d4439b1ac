package patchsource_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/patchsource"
	"github.com/patchctl/patchctl/internal/testenv/mkthread"
)

// silentServer listens on loopback and, per connection, does what stall
// says and then holds the connection open without a word until the test
// ends: a server that accepts and never answers (or stops half way).
func silentServer(t *testing.T, stall func(c net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("loopback: %v", err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() {
				buf := make([]byte, 4096)
				c.Read(buf) // the request
				stall(c)
				<-done
			}()
		}
	}()
	t.Cleanup(func() {
		close(done)
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return "http://" + l.Addr().String() + "/all"
}

// --lore against a server that accepts and never answers, and one that
// sends its headers and a piece of the body and stops: each call ends
// with an environment error that says the server did not answer in time
// (issue 31, finding 9: it hung until a signal). The timeouts are short
// here; the test does not time anything, the timeouts end it.
func TestLoreTimeouts(t *testing.T) {
	quick := patchsource.NewHTTPClient(patchsource.Timeouts{Connect: time.Second, Read: 100 * time.Millisecond, Overall: 5 * time.Second})
	gz := mkthread.Gzip(mkthread.Mbox(series()))
	for name, stall := range map[string]func(net.Conn){
		"no answer":          func(net.Conn) {},
		"headers, then none": func(c net.Conn) { c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")) },
		"half a body": func(c net.Conn) {
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"))
			c.Write(gz[:len(gz)/2])
		},
	} {
		url := silentServer(t, stall)
		_, err := patchsource.Lore(context.Background(), quick, url, mkthread.Cover)
		if !errors.Is(err, errs.ErrEnv) || !strings.Contains(err.Error(), "did not answer in time") {
			t.Errorf("%s: %v, want an environment error saying the server did not answer in time", name, err)
		}
	}
	// An interrupt is said as one.
	url := silentServer(t, func(net.Conn) {})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	slow := patchsource.NewHTTPClient(patchsource.DefaultTimeouts)
	if _, err := patchsource.Lore(ctx, slow, url, mkthread.Cover); !errors.Is(err, errs.ErrEnv) || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("interrupted: %v", err)
	}
}

// The client --lore uses by default has every timeout set.
func TestDefaultHTTPClientBounded(t *testing.T) {
	c := patchsource.NewHTTPClient(patchsource.DefaultTimeouts)
	tr, ok := c.Transport.(*http.Transport)
	if c.Timeout <= 0 || !ok || tr.ResponseHeaderTimeout <= 0 || tr.TLSHandshakeTimeout <= 0 || tr.DialContext == nil {
		t.Errorf("default client %+v, transport %+v: a timeout is missing", c, tr)
	}
	d := patchsource.DefaultTimeouts
	if d.Connect <= 0 || d.Read <= 0 || d.Overall <= 0 {
		t.Errorf("default timeouts %+v", d)
	}
}

// A folder with a FIFO, a socket and a link to a device gives its
// patch and a note per skipped file; a FIFO given itself is refused as
// one, at once (issue 31, finding 11: open blocked for ever).
func TestFilesNonRegular(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "0001-one.patch"), series()[0].Bytes(), 0o644); err != nil {
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
	defer l.Close()
	os.Symlink("/dev/zero", filepath.Join(dir, "0004-zero.patch"))
	// Release a reader left blocked in open (the bug) so the test ends
	// either way; the assertions say which way it went.
	unblock := func(call func()) {
		done := make(chan struct{})
		go func() { call(); close(done) }()
		for {
			select {
			case <-done:
				return
			default:
			}
			if fd, err := syscall.Open(fifo, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				syscall.Close(fd)
			}
			runtime.Gosched()
		}
	}
	unblock(func() {
		ins, notes, err := patchsource.Files(dir)
		if err != nil || len(ins) != 1 || len(notes) != 3 {
			t.Errorf("folder: %d inputs, notes %q, %v; want the patch and three notes", len(ins), notes, err)
		}
	})
	// Given by name: a FIFO without a writer is empty (not waited for in
	// open), /dev/zero meets the size cap, a socket is refused.
	unblock(func() {
		if ins, _, err := patchsource.Files(fifo); err != nil || len(ins) != 1 || len(ins[0].Data) != 0 {
			t.Errorf("FIFO without a writer: %v", err)
		}
	})
	for f, want := range map[string]string{filepath.Join(dir, "0004-zero.patch"): "cap", filepath.Join(dir, "0003-socket.patch"): "a socket, not a file"} {
		if _, _, err := patchsource.Files(f); !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an input error saying %q", filepath.Base(f), err, want)
		}
	}
}
