package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/patchctl/patchctl/internal/guestconf"
	"golang.org/x/sys/unix"
)

// shellSetup is --shell: the first transport's link, target and connect,
// as KTAP results, then an interactive shell on the console with the
// controller connected. When the shell exits the VM ends (or, with Keep,
// stays up until QEMU is quit).
func shellSetup(k *ktap, cfg *Config) {
	tr := cfg.Transports[0]
	k.header("", 1)
	s := k.sub()
	s.header(tr, 3)
	begin := time.Now()
	ok := true
	step := func(name string, err error) bool {
		if err != nil {
			s.diag("%s: %v", name, err)
			ok = false
		}
		s.result(err == nil, name, "")
		return err == nil
	}
	addr := strings.Split(cfg.Address, "/")[0]
	dev := ""
	if step("link", addRDMALink(tr)) {
		notes, err := setupTarget(cfg.NQN, addr, cfg.InlineDataSize)
		for _, n := range notes {
			s.diag("%s", n)
		}
		if step("target", err) {
			ctrl, d, err := connect(cfg.NQN, addr)
			if err == nil {
				s.diag("connected %s as %s", ctrl, d)
				dev = d
			}
			step("connect", err)
		} else {
			s.result(true, "connect", "not set up")
		}
	} else {
		s.result(true, "target", "no RDMA link")
		s.result(true, "connect", "no RDMA link")
	}
	finishParent(s, 1, tr, ok, begin)
	fmt.Fprintf(os.Stdout, "%s on %s (namespace %s, target %s): exit the shell to end the VM, or quit QEMU with Ctrl-A x\n",
		guestconf.ShellLine, tr, dev, cfg.NQN)
	if err := interactiveShell(); err != nil {
		fmt.Fprintf(os.Stdout, "patchctl-agent: shell: %v\n", err)
	}
}

// interactiveShell runs /bin/sh -i on the console and waits for it. The
// shell gets its own session with the console as controlling terminal,
// so that job control and Ctrl-C work.
func interactiveShell() error {
	if _, err := os.Stat(guestconf.ShellPath); err != nil {
		return fmt.Errorf("no %s in the initramfs (boot with --shell or --keep)", guestconf.ShellPath)
	}
	env := []string{"PATH=/bin:/sbin:/usr/bin:/usr/sbin", "HOME=/", "TERM=linux", "PS1=patchctl-vm# "}
	argv := []string{"sh", "-i"}
	var p *os.Process
	// The serial port itself can be a controlling terminal (/dev/console
	// cannot): job control and Ctrl-C then work.
	tty, err := os.OpenFile("/dev/ttyS0", os.O_RDWR, 0)
	if err == nil {
		defer tty.Close()
		p, err = os.StartProcess(guestconf.ShellPath, argv, &os.ProcAttr{Dir: "/", Env: env, Files: []*os.File{tty, tty, tty},
			Sys: &unix.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}})
	}
	if err != nil {
		p, err = os.StartProcess(guestconf.ShellPath, argv, &os.ProcAttr{Dir: "/", Env: env, Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
			Sys: &unix.SysProcAttr{Setsid: true}})
	}
	if err != nil {
		return err
	}
	_, err = p.Wait()
	return err
}

// keep is --keep: the guest stays up, with a shell when the initramfs
// has one, until the user quits QEMU.
func keep() {
	fmt.Fprintf(os.Stdout, "%s: the VM stays up until you quit QEMU (Ctrl-A x)\n", guestconf.KeepLine)
	if _, err := os.Stat(guestconf.ShellPath); err == nil {
		if err := interactiveShell(); err != nil {
			fmt.Fprintf(os.Stdout, "patchctl-agent: shell: %v\n", err)
		}
		fmt.Fprintf(os.Stdout, "%s: the shell ended; the VM stays up until you quit QEMU (Ctrl-A x)\n", guestconf.KeepLine)
	}
	for {
		time.Sleep(time.Hour)
	}
}
