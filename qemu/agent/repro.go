package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/patchctl/patchctl/internal/guestconf"
	"golang.org/x/sys/unix"
)

// reproWait bounds the wait for the reproducer's write: a target that
// faulted in its receive path never completes it (the host's I/O
// timeout is 30 s), and the verdict comes from the log, not the write.
const reproWait = 20 * time.Second

// runRepro runs the in-capsule bounds reproducer (guestconf.Repro) over
// transport as the top-level test n, between the console markers the
// host reads: link, target, connect, arm the host driver's switch, one
// 4 KiB O_DIRECT write, then the log since the switch decides. After a
// reported fault nothing is torn down (a faulted target's queue may
// never drain); the VM ends next.
func runRepro(k *ktap, n int, transport string, cfg *Config) {
	fmt.Fprintf(os.Stdout, "%s %s over %s\n", guestconf.ReproBeginLine, cfg.Reproduce, transport)
	defer fmt.Fprintf(os.Stdout, "%s\n", guestconf.ReproEndLine)
	t := &ktap{out: k.out, indent: k.indent, n: n - 1, last: time.Now()}
	fail := func(format string, args ...any) {
		t.diag(format, args...)
		t.result(false, guestconf.ReproTest, "")
	}
	if err := addRDMALink(transport); err != nil {
		fail("link: %v", err)
		return
	}
	addr := strings.Split(cfg.Address, "/")[0]
	if _, err := setupTarget(cfg.NQN, addr, cfg.InlineDataSize); err != nil {
		fail("target: %v", err)
		return
	}
	ctrl, dev, err := connect(cfg.NQN, addr)
	if err != nil {
		fail("connect: %v", err)
		return
	}
	marker := fmt.Sprintf("patchctl: reproducer %s %d", cfg.Reproduce, time.Now().UnixNano())
	_ = writeFile("/dev/kmsg", marker)
	if err := writeFile(guestconf.ReproParam, "1"); err != nil {
		fail("arming %s (is the incapsule-wrap harness in this kernel?): %v", guestconf.ReproParam, err)
		return
	}
	werr := make(chan error, 1)
	go func() { werr <- writeOneBlock(dev, 4096) }()
	writeErr := ""
	select {
	case err := <-werr:
		if err != nil {
			writeErr = err.Error()
		}
	case <-time.After(reproWait):
		writeErr = fmt.Sprintf("no completion within %s", reproWait)
	}
	time.Sleep(time.Second) // the target's report follows the host's line
	r := guestconf.JudgeRepro(logSince(marker), writeErr)
	r.Transport = transport
	t.diag("%s", r.Line())
	switch r.Outcome {
	case guestconf.ReproShown:
		t.diag("known pre-existing defect shown: %s", guestconf.ReproDefect)
	case guestconf.ReproRejected:
		t.diag("the target rejected the wrapping offset (%s): the bounds check holds", r.Write)
	default:
		t.diag("the reproducer did not test the check: host sent the offset: %v, write: %s", r.Sent, r.Write)
	}
	t.result(r.OK(), guestconf.ReproTest, "")
	if r.Outcome == guestconf.ReproShown {
		return
	}
	_ = disconnect(ctrl)
	_ = teardownTarget(cfg.NQN)
	_ = delRDMALink(transport)
}

// writeOneBlock writes size bytes at offset 0 of dev with O_DIRECT.
func writeOneBlock(dev string, size int) error {
	fd, err := unix.Open(dev, unix.O_WRONLY|unix.O_DIRECT|unix.O_SYNC, 0)
	if err != nil {
		return fmt.Errorf("open %s O_DIRECT: %w", dev, err)
	}
	defer unix.Close(fd)
	buf, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return err
	}
	defer unix.Munmap(buf)
	for i := range buf {
		buf[i] = byte(i)
	}
	if n, err := unix.Pwrite(fd, buf, 0); err != nil || n != size {
		return fmt.Errorf("write %d bytes: n=%d %v", size, n, err)
	}
	return nil
}

// logSince returns the kernel log's lines after marker.
func logSince(marker string) []string {
	buf := make([]byte, 1<<20)
	n, err := unix.Klogctl(unix.SYSLOG_ACTION_READ_ALL, buf)
	if err != nil {
		return nil
	}
	log := buf[:n]
	if i := bytes.Index(log, []byte(marker)); i >= 0 {
		log = log[i:]
	}
	return strings.Split(string(log), "\n")
}
