// Command agent is the guest's PID 1 for patchctl boot tests. It only
// orchestrates: mounts (a table), the NIC and a soft-RoCE or soft-iWARP
// link (netlink), a memory-backed null_blk namespace exported by nvmet over
// RDMA (configfs), the host connected to it (/dev/nvme-fabrics), then the
// tests, whose results it prints on the console as KTAP. It needs nothing
// else in the initramfs: no shell, no nvme-cli, no iproute2. Only for
// patchctl boot --shell (the setup, then a shell on the console) and
// --keep (the VM stays up after the tests) does the host add a static
// busybox, which the agent starts as /bin/sh.
//
// For patchctl bench (guestconf.Bench in the configuration) it runs the
// benchmark workloads instead of the tests: QD1 latency and the in-capsule
// sweep, timed in the guest, each measurement a KTAP diagnostic.
//
// Its configuration is /patchctl.json, written by the host (internal/boot).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/patchctl/patchctl/internal/guestconf"
	"golang.org/x/sys/unix"
)

// Config is the host's configuration (internal/guestconf).
type Config = guestconf.Config

// mounts is what the agent mounts, in order.
var mounts = []struct {
	source, target, fstype string
	optional               bool
	// late: mounted after the modules are loaded (configfs may be one).
	late bool
}{
	{"proc", "/proc", "proc", false, false},
	{"sysfs", "/sys", "sysfs", false, false},
	{"devtmpfs", "/dev", "devtmpfs", false, false},
	{"tmpfs", "/tmp", "tmpfs", true, false},
	{"debugfs", "/sys/kernel/debug", "debugfs", true, false},
	{"tracefs", "/sys/kernel/tracing", "tracefs", true, false},
	{"configfs", "/sys/kernel/config", "configfs", false, true},
}

// mountAll mounts the early or the late entries of the table.
func mountAll(late bool) error {
	for _, m := range mounts {
		if m.late != late {
			continue
		}
		_ = os.MkdirAll(m.target, 0o755) // the mount below says what fails
		if err := unix.Mount(m.source, m.target, m.fstype, 0, ""); err != nil && err != unix.EBUSY {
			if m.optional {
				continue
			}
			return fmt.Errorf("mount %s on %s: %w", m.fstype, m.target, err)
		}
	}
	return nil
}

func main() {
	start := time.Now()
	k := &ktap{out: os.Stdout}
	if err := mountAll(false); err != nil {
		k.abort(err.Error())
		halt()
	}
	b, err := os.ReadFile(guestconf.Path)
	var cfg Config
	if err == nil {
		err = json.Unmarshal(b, &cfg)
	}
	if err != nil {
		k.abort("reading /patchctl.json: " + err.Error())
		halt()
	}
	loaded := time.Now()
	if err := loadModules(cfg.Modules); err != nil {
		k.abort("modules: " + err.Error())
		halt()
	}
	if len(cfg.Modules) > 0 {
		fmt.Fprintf(os.Stdout, "patchctl-agent: %d modules loaded in %s, tainted %s\n", len(cfg.Modules), time.Since(loaded).Round(time.Millisecond), tainted())
	}
	if err := mountAll(true); err != nil {
		k.abort(err.Error())
		halt()
	}
	fmt.Fprintf(os.Stdout, "\n"+guestconf.StartedLine+" after %s, transports %s\n", time.Since(start).Round(time.Millisecond), strings.Join(cfg.Transports, ","))
	if cl, err := os.ReadFile("/proc/cmdline"); err == nil {
		for _, f := range strings.Fields(string(cl)) {
			if v, ok := strings.CutPrefix(f, "patchctl.stop="); ok {
				cfg.Stop = v
			}
		}
	}
	if cfg.Stop == "before-tests" {
		// patchctl.stop=before-tests on the kernel command line: a guest
		// that stops in init, to see the host's timeout kill it. (A bare
		// select{} would trip Go's deadlock detector and panic instead.)
		for {
			time.Sleep(time.Hour)
		}
	}
	if err := setupNetwork(cfg.Address); err != nil {
		k.abort("network: " + err.Error())
		halt()
	}
	switch {
	case cfg.Shell:
		shellSetup(k, &cfg)
	case cfg.Bench != nil && len(cfg.Transports) > 0:
		// patchctl bench: the workloads on the first transport.
		k.header("", 1)
		benchRun(k.sub(), 1, cfg.Transports[0], &cfg)
	default:
		repro := reproTransport(&cfg)
		total := len(cfg.Transports)
		if cfg.Reproduce != "" {
			total++
		}
		k.header("", total)
		for i, tr := range cfg.Transports {
			if why, ok := cfg.Unavailable[tr]; ok {
				(&ktap{out: k.out, indent: k.indent, n: i, last: time.Now()}).result(true, tr, why)
				continue
			}
			runTransport(k.sub(), i+1, tr, &cfg)
		}
		if cfg.Reproduce != "" {
			// After every transport's tests and dmesg gate: what it
			// makes the kernel report is its outcome only.
			if repro == "" {
				(&ktap{out: k.out, indent: k.indent, n: total - 1, last: time.Now()}).result(true, guestconf.ReproTest, "no transport available")
			} else {
				runRepro(k, total, repro, &cfg)
			}
		}
	}
	fmt.Fprintf(os.Stdout, "%s after %s\n", guestconf.DoneLine, time.Since(start).Round(time.Millisecond))
	if cfg.Keep {
		keep()
	}
	halt()
}

// reproTransport is the transport the reproducer runs over: the first
// available one ("" none).
func reproTransport(cfg *Config) string {
	for _, tr := range cfg.Transports {
		if _, ok := cfg.Unavailable[tr]; !ok {
			return tr
		}
	}
	return ""
}

// halt ends the VM: QEMU runs with -no-reboot, so a restart exits it.
func halt() {
	unix.Sync()
	// The console's last lines (the done line the host waits for) leave
	// the serial port before the restart: tcdrain, or a pause where the
	// console is no terminal.
	if unix.IoctlSetInt(int(os.Stdout.Fd()), unix.TCSBRK, 1) != nil {
		time.Sleep(100 * time.Millisecond)
	}
	unix.Reboot(unix.LINUX_REBOOT_CMD_RESTART)
	for {
		time.Sleep(time.Hour)
	}
}
