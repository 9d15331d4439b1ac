package boot

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/vocab"
	"github.com/u-root/u-root/pkg/cpio"
)

// TestCommandPastesIntoAShell: the printed command line, read back by a
// POSIX shell, is the same arguments (the -append value quoted).
func TestCommandPastesIntoAShell(t *testing.T) {
	o := &Options{QEMU: "qemu-system-x86_64", Memory: "1G", CPUs: 2, BzImage: "/tmp/a dir/bzImage",
		Cmdline: `patchctl.stop=before-tests dyndbg="file rdma.c +p" it's`}
	args := Command(o, "kvm", "/tmp/x/initramfs.cpio")
	line := command.Quote(args)
	if !strings.Contains(line, "-append 'console=ttyS0 ") {
		t.Errorf("-append not quoted: %s", line)
	}
	out, err := (&command.Cmd{Name: "sh", Args: []string{"-c", `for a in ` + line + `; do printf '%s\n' "$a"; done`}}).Output(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"); strings.Join(got, "\x00") != strings.Join(args, "\x00") {
		t.Errorf("the shell read back\n%q\nwant\n%q", got, args)
	}
}

// TestTCGOneHostThread: a tcg boot runs its vCPUs on one host thread
// (AccelArg), tcg-multi on a thread each; KVM's command is unchanged.
// That QEMU accepts it (it refuses an unknown thread= value at start) is
// what every real boot of the tests shows.
func TestTCGOneHostThread(t *testing.T) {
	o := &Options{QEMU: "qemu-system-x86_64", Memory: "1G", CPUs: 2, BzImage: "/tmp/bzImage"}
	for accel, want := range map[string]string{vocab.AccelTCG: "tcg,thread=single", vocab.AccelTCGMulti: "tcg,thread=multi", vocab.AccelKVM: "kvm"} {
		args := Command(o, accel, "/tmp/initramfs.cpio")
		i := slices.Index(args, "-accel")
		if i < 0 || i+1 >= len(args) || args[i+1] != want {
			t.Errorf("%s: -accel in %q, want %s", accel, args, want)
		}
	}
}

// TestStripEscapes: the firmware's and consoles' terminal sequences are
// not in the saved log; text is.
func TestStripEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"\x1b[2J\x1b[01;01H\x1b[=3h\x1b[2J\x1b[01;01HSeaBIOS (version 1.16.2)": "SeaBIOS (version 1.16.2)",
		"\x1bc\x1b[?7l\x1b[2J\x1b[0mBooting from ROM..":                        "Booting from ROM..",
		"\x1b]0;title\x07patchctl-vm# ls":                                      "patchctl-vm# ls",
		"\x1b(Bok 1 link\x1b[K":                                                "ok 1 link",
		"plain\ttext [    1.0] x":                                              "plain\ttext [    1.0] x",
		"bell\x07 and nul\x00":                                                 "bell and nul",
	} {
		if got := StripEscapes(in); got != want {
			t.Errorf("StripEscapes(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestExitNote: the normal end reads as one; a cut-short run says so.
func TestExitNote(t *testing.T) {
	for _, c := range []struct {
		res  Result
		want string
	}{
		{Result{Phase: "shutdown"}, "the guest finished and powered off after 5s"},
		{Result{Phase: "tests"}, "qemu exited after 5s in phase tests, before the guest finished"},
		{Result{Phase: "tests", TimedOut: true}, "qemu killed after 5s in phase tests"},
		{Result{Phase: "shell"}, "the interactive VM ended after 5s"},
	} {
		if got := exitNote(&c.res, 5*time.Second); got != c.want {
			t.Errorf("%+v: %q, want %q", c.res, got, c.want)
		}
	}
}

// TestShellRun (a QEMU stand-in): --shell puts busybox and its applet
// links in the initramfs and asks the agent for a shell; what is written
// to Stdin reaches the console; the console's bytes stream to Console;
// no test timeout applies once a person has the shell.
func TestShellRun(t *testing.T) {
	bb := filepath.Join(t.TempDir(), "busybox")
	os.WriteFile(bb, []byte("#!/bin/sh\nprintf 'bin/sh\\nusr/bin/awk\\nsbin/ip\\n'\n"), 0o755)
	script := fakeQEMU(t, strings.ReplaceAll(passingRun, "patchctl-agent: done after 2s", "patchctl-agent: shell on rxe"))
	// after the results: a "shell" that answers one line, slower than the test timeout
	b, _ := os.ReadFile(script)
	os.WriteFile(script, append(b, []byte("sleep 2; read line; echo \"got $line\"; echo 'patchctl-agent: done after 9s'\n")...), 0o755)
	o := opts(t, script)
	o.Shell, o.Busybox = true, bb
	o.TestTimeout = time.Second
	inR, inW := io.Pipe()
	var console bytes.Buffer
	o.Stdin, o.Console = inR, &console
	go io.WriteString(inW, "ls /dev/nvme0n1\n")
	res, err := Run(context.Background(), o)
	inW.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res.TimedOut || res.Verdict != "PASS" || !strings.Contains(console.String(), "got ls /dev/nvme0n1") {
		t.Errorf("verdict %s %s timed out %v; console:\n%s", res.Verdict, res.Reason, res.TimedOut, console.String())
	}
	f, err := os.Open(filepath.Join(o.OutDir, "initramfs.cpio"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]cpio.Record{}
	rr := cpio.Newc.Reader(f)
	for {
		r, err := rr.ReadRecord()
		if err != nil {
			break
		}
		got[r.Name] = r
	}
	if got["bin/busybox"].Mode&0o111 == 0 {
		t.Error("no executable bin/busybox")
	}
	for _, a := range []string{"bin/sh", "usr/bin/awk", "sbin/ip"} {
		r, ok := got[a]
		if !ok || r.Mode&cpio.S_IFMT != cpio.S_IFLNK {
			t.Errorf("%s is not a link to busybox: %+v", a, r.Info)
			continue
		}
		target := make([]byte, r.FileSize)
		r.ReadAt(target, 0)
		if string(target) != "/bin/busybox" {
			t.Errorf("%s -> %s", a, target)
		}
	}
	conf := make([]byte, got["patchctl.json"].FileSize)
	got["patchctl.json"].ReadAt(conf, 0)
	if !strings.Contains(string(conf), `"shell": true`) {
		t.Errorf("the agent is not asked for a shell:\n%s", conf)
	}
	// Without --shell or --keep the initramfs has no shell.
	o2 := opts(t, fakeQEMU(t, passingRun))
	p, err := Prepare(context.Background(), o2)
	if err != nil || p.bb != nil {
		t.Errorf("a busybox without being asked: %v", err)
	}
}

// TestShellNeedsBusybox: no busybox is the environment's, naming the
// package.
func TestShellNeedsBusybox(t *testing.T) {
	o := opts(t, fakeQEMU(t, passingRun))
	o.Keep, o.Busybox = true, filepath.Join(t.TempDir(), "none")
	_, err := Prepare(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "install busybox-static") {
		t.Errorf("error %v", err)
	}
}
