package boot_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/boot"

	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/kbuild"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/vocab"
)

// console is the guest's console as a pipe, driven by the test: what the
// test writes reaches QEMU's stdin, what the guest prints comes back.
type console struct {
	in  *io.PipeWriter
	out *bufio.Reader
	got strings.Builder
}

func newConsole(o *boot.Options) *console {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	o.Stdin, o.Console = inR, outW
	c := &console{in: inW, out: bufio.NewReader(outR)}
	return c
}

// waitFor reads the console until it has printed s (the prompt has no
// newline, so it reads bytes, not lines).
func (c *console) waitFor(t *testing.T, s string) {
	t.Helper()
	for !strings.Contains(c.got.String(), s) {
		b, err := c.out.ReadByte()
		if err != nil {
			t.Fatalf("the console ended before %q: %v\n%s", s, err, c.got.String())
		}
		c.got.WriteByte(b)
	}
}

func (c *console) send(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(c.in, s); err != nil {
		t.Fatalf("writing %q to the console: %v", s, err)
	}
}

// drain keeps reading the console so that QEMU never blocks on it.
func (c *console) drain() { go io.Copy(io.Discard, c.out) }

func interactive(t *testing.T) (boot.Options, *console) {
	// No kbuild.Exclusive: the build is a no-op on a warm cache, and its
	// own lock keeps a concurrent build out while it checks.
	md := kbuild.Build(t, testkernel.Default, vocab.Patched)
	o := realOptions(t, md, true)
	o.Transports = []string{"rxe"}
	if _, err := os.Stat(boot.DefaultBusybox); err != nil {
		testenv.Unavailable(t, "busybox-static not installed (scripts/deps.sh)")
	}
	c := newConsole(&o)
	closer, _ := o.Console.(io.Closer)
	t.Cleanup(func() { c.in.Close(); closer.Close() })
	return o, c
}

// TestRealShell: boot --shell sets up rxe (link, target, connect), gives
// a prompt, runs what the test types on the console, and the VM ends when
// the shell exits.
func TestRealShell(t *testing.T) {
	o, c := interactive(t)
	o.Shell = true
	type ran struct {
		res *boot.Result
		err error
	}
	done := make(chan ran, 1)
	go func() { r, err := boot.Run(context.Background(), o); done <- ran{r, err} }()
	c.waitFor(t, "patchctl-vm# ")
	c.send(t, "echo answer-$((6*7)); cat /sys/class/nvme/nvme0/transport; ls /dev/nvme0n1\n")
	c.waitFor(t, "answer-42")
	c.waitFor(t, "rdma")
	c.waitFor(t, "/dev/nvme0n1")
	c.send(t, "exit\n")
	c.drain()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	res := r.res
	if res.Verdict != "PASS" || res.Phase != "shutdown" || res.KTAP == nil || res.KTAP.Count().Pass != 3 {
		t.Errorf("verdict %s (%s), phase %s, ktap %+v", res.Verdict, res.Reason, res.Phase, res.KTAP)
	}
	log, err := os.ReadFile(res.ConsoleLog)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "answer-42") || strings.ContainsRune(string(log), '\x1b') {
		t.Errorf("console log: want the command's output and no escape codes:\n%q", log)
	}
}

// TestRealKeep: boot --keep runs the tests, then the guest stays up until
// QEMU's quit (Ctrl-A x on -nographic's console).
func TestRealKeep(t *testing.T) {
	o, c := interactive(t)
	o.Keep = true
	type ran struct {
		res *boot.Result
		err error
	}
	done := make(chan ran, 1)
	go func() { r, err := boot.Run(context.Background(), o); done <- ran{r, err} }()
	c.waitFor(t, "patchctl-agent: done")
	c.waitFor(t, "patchctl-agent: keep")
	c.waitFor(t, "patchctl-vm# ")
	c.send(t, "echo still-$((1+1))-up\n")
	c.waitFor(t, "still-2-up")
	c.send(t, "\x01x")
	c.drain()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.Verdict != "PASS" || r.res.Phase != "kept" || r.res.TimedOut {
		t.Errorf("verdict %s (%s), phase %s, timed out %v", r.res.Verdict, r.res.Reason, r.res.Phase, r.res.TimedOut)
	}
}
