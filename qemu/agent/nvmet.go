package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	nvmetDir  = "/sys/kernel/config/nvmet"
	nullBlk   = "/dev/nullb0"
	nullbCfg  = "/sys/kernel/config/nullb"
	nullbMem  = "/sys/module/null_blk/parameters/memory_backed"
	portID    = "1"
	trsvcid   = "4420"
	fabricDev = "/dev/nvme-fabrics"
)

func writeFile(path, value string) error {
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		return fmt.Errorf("writing %q to %s: %w", value, path, err)
	}
	return nil
}

// targetStep is one configfs action, in blktests' order.
type targetStep struct {
	what string
	do   func() error
}

// setupTarget exports null_blk as namespace 1 of nqn on an RDMA port at
// addr. param_inline_data_size is written before the subsystem is linked
// to the port: once the port is enabled the attribute refuses writes.
func setupTarget(nqn, addr string, inline int) ([]string, error) {
	return setupTargetAt(nqn, addr, portID, trsvcid, inline)
}

// setupTargetAt is setupTarget on nvmet port id, listening on svcid: the
// bench exports one subsystem per in-capsule size, each on its own port,
// all on the one null_blk device.
func setupTargetAt(nqn, addr, id, svcid string, inline int) ([]string, error) {
	subsys := filepath.Join(nvmetDir, "subsystems", nqn)
	port := filepath.Join(nvmetDir, "ports", id)
	var notes []string
	dev := nullBlk
	steps := []targetStep{
		{"wait for " + nullBlk, func() error { return waitFor(nullBlk, 5*time.Second) }},
		{"memory-backed null_blk", func() error {
			d, note, err := memoryBacked()
			if note != "" {
				notes = append(notes, note)
			}
			dev = d
			return err
		}},
		{"subsystem", func() error { return os.Mkdir(subsys, 0o755) }},
		{"allow any host", func() error { return writeFile(filepath.Join(subsys, "attr_allow_any_host"), "1") }},
		{"namespace", func() error { return os.Mkdir(filepath.Join(subsys, "namespaces", "1"), 0o755) }},
		{"device path", func() error { return writeFile(filepath.Join(subsys, "namespaces", "1", "device_path"), dev) }},
		{"enable namespace", func() error { return writeFile(filepath.Join(subsys, "namespaces", "1", "enable"), "1") }},
		{"port", func() error { return os.Mkdir(port, 0o755) }},
		{"trtype", func() error { return writeFile(filepath.Join(port, "addr_trtype"), "rdma") }},
		{"adrfam", func() error { return writeFile(filepath.Join(port, "addr_adrfam"), "ipv4") }},
		{"traddr", func() error { return writeFile(filepath.Join(port, "addr_traddr"), addr) }},
		{"trsvcid", func() error { return writeFile(filepath.Join(port, "addr_trsvcid"), svcid) }},
		{"inline data size", func() error {
			p := filepath.Join(port, "param_inline_data_size")
			if _, err := os.Stat(p); err != nil {
				notes = append(notes, "this kernel has no param_inline_data_size: in-capsule size is the transport's default")
				return nil
			}
			if inline <= 0 {
				return nil
			}
			if err := writeFile(p, fmt.Sprint(inline)); err != nil {
				return err
			}
			got, _ := os.ReadFile(p)
			notes = append(notes, fmt.Sprintf("port param_inline_data_size=%s", strings.TrimSpace(string(got))))
			return nil
		}},
		{"link subsystem to port", func() error {
			return os.Symlink(subsys, filepath.Join(port, "subsystems", nqn))
		}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			return notes, fmt.Errorf("nvmet %s: %w", s.what, err)
		}
	}
	return notes, nil
}

// backing is the memory-backed null_blk disk of this boot, once made.
var backing string

// memoryBacked returns a null_blk disk that keeps what is written to it,
// so the data-verified tests mean something. Where null_blk has the
// memory_backed module parameter (set on the command line and at load),
// that is /dev/nullb0. Older kernels (5.10) have memory_backed only as a
// configfs attribute and ignore the parameter: there a 1 GiB disk is made
// through /sys/kernel/config/nullb, once per boot, and named in the note.
func memoryBacked() (dev, note string, err error) {
	if backing != "" {
		return backing, "", nil
	}
	if _, err := os.Stat(nullbMem); err == nil {
		backing = nullBlk
		return backing, "", nil
	}
	if _, err := os.Stat(nullbCfg); err != nil {
		return "", "", fmt.Errorf("this null_blk has neither the memory_backed parameter (%s) nor configfs devices (%s): its disk would not keep data", nullbMem, nullbCfg)
	}
	before, err := blockDevices()
	if err != nil {
		return "", "", err
	}
	d := filepath.Join(nullbCfg, "patchctl")
	if err := os.Mkdir(d, 0o755); err != nil {
		return "", "", fmt.Errorf("making a configfs null_blk: %w", err)
	}
	for _, a := range [][2]string{{"size", "1024"}, {"memory_backed", "1"}, {"power", "1"}} {
		if err := writeFile(filepath.Join(d, a[0]), a[1]); err != nil {
			return "", "", err
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		after, err := blockDevices()
		if err != nil {
			return "", "", err
		}
		if n := newDevice(before, after); n != "" {
			backing = "/dev/" + n
			if err := waitFor(backing, 5*time.Second); err != nil {
				return "", "", err
			}
			return backing, fmt.Sprintf("null_blk has no memory_backed parameter here: namespace 1 is %s, made through configfs with memory_backed=1", backing), nil
		}
		if time.Now().After(deadline) {
			return "", "", fmt.Errorf("the configfs null_blk %s was powered on but no new disk appeared in /sys/block", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// blockDevices lists /sys/block.
func blockDevices() (map[string]bool, error) {
	ents, err := os.ReadDir("/sys/block")
	if err != nil {
		return nil, fmt.Errorf("listing disks: %w", err)
	}
	out := map[string]bool{}
	for _, e := range ents {
		out[e.Name()] = true
	}
	return out, nil
}

// newDevice is the one null_blk disk in after that is not in before ("" if
// none): 5.10 names it nullb<N>, later kernels after its configfs folder.
func newDevice(before, after map[string]bool) string {
	var found []string
	for n := range after {
		if !before[n] && (strings.HasPrefix(n, "nullb") || n == "patchctl") {
			found = append(found, n)
		}
	}
	if len(found) != 1 {
		return ""
	}
	return found[0]
}

// teardownTarget undoes setupTarget; it goes on past errors and reports
// the first.
func teardownTarget(nqn string) error { return teardownTargetAt(nqn, portID) }

// teardownTargetAt undoes setupTargetAt.
func teardownTargetAt(nqn, id string) error {
	subsys := filepath.Join(nvmetDir, "subsystems", nqn)
	port := filepath.Join(nvmetDir, "ports", id)
	var first error
	try := func(err error) {
		if err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = err
		}
	}
	try(os.Remove(filepath.Join(port, "subsystems", nqn)))
	try(os.Remove(port))
	if _, err := os.Stat(filepath.Join(subsys, "namespaces", "1")); err == nil {
		try(writeFile(filepath.Join(subsys, "namespaces", "1", "enable"), "0"))
		try(os.Remove(filepath.Join(subsys, "namespaces", "1")))
	}
	try(os.Remove(subsys))
	return first
}

// connect asks the host driver for a controller through /dev/nvme-fabrics,
// as nvme-cli does, and returns the namespace's block device.
func connect(nqn, addr string) (ctrl, dev string, err error) { return connectAt(nqn, addr, trsvcid) }

// connectAt is connect to the port listening on svcid.
func connectAt(nqn, addr, svcid string) (ctrl, dev string, err error) {
	f, err := os.OpenFile(fabricDev, os.O_RDWR, 0)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	opts := fmt.Sprintf("transport=rdma,traddr=%s,trsvcid=%s,nqn=%s", addr, svcid, nqn)
	if _, err := f.Write([]byte(opts)); err != nil {
		return "", "", fmt.Errorf("connect %s: %w", opts, err)
	}
	buf := make([]byte, 256)
	n, err := f.Read(buf)
	if err != nil {
		return "", "", fmt.Errorf("reading the connect answer: %w", err)
	}
	var instance, cntlid int
	if _, err := fmt.Sscanf(strings.TrimSpace(string(buf[:n])), "instance=%d,cntlid=%d", &instance, &cntlid); err != nil {
		return "", "", fmt.Errorf("connect answered %q", buf[:n])
	}
	ctrl = fmt.Sprintf("nvme%d", instance)
	dev = fmt.Sprintf("/dev/nvme%dn1", instance)
	if err := waitFor(dev, 10*time.Second); err != nil {
		return ctrl, dev, err
	}
	return ctrl, dev, waitReady(dev, 10*time.Second)
}

// waitReady waits until the namespace's disk can be opened and has a
// size: devtmpfs creates the node before the namespace scan has made the
// disk live, and an open in between fails with ENXIO.
func waitReady(dev string, d time.Duration) error {
	size := filepath.Join("/sys/block", filepath.Base(dev), "size")
	deadline := time.Now().Add(d)
	for {
		b, err := os.ReadFile(size)
		if err == nil && strings.TrimSpace(string(b)) != "0" {
			f, err := os.OpenFile(dev, os.O_RDONLY, 0)
			if err == nil {
				f.Close()
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not become ready within %s (size %q, %v)", dev, d, strings.TrimSpace(string(b)), err)
		}
		time.Sleep(pollEvery)
	}
}

// disconnect deletes the host's controller, as nvme-cli's disconnect
// does, and returns once its sysfs entry is gone.
func disconnect(ctrl string) error {
	dir := filepath.Join("/sys/class/nvme", ctrl)
	if err := writeFile(filepath.Join(dir, "delete_controller"), "1"); err != nil {
		return err
	}
	return waitGone(dir, 10*time.Second)
}

// pollEvery is how often a wait looks again. Every wait is on each
// boot's path, and what it waits for takes the guest milliseconds.
const pollEvery = 10 * time.Millisecond

// until asks done every pollEvery until it says true, for at most d; it
// reports whether done said true.
func until(d time.Duration, done func() bool) bool {
	deadline := time.Now().Add(d)
	for !done() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
	return true
}

func waitFor(path string, d time.Duration) error {
	if !until(d, func() bool { _, err := os.Stat(path); return err == nil }) {
		return fmt.Errorf("%s did not appear within %s", path, d)
	}
	return nil
}

// waitGone waits until path no longer exists (a controller being deleted).
func waitGone(path string, d time.Duration) error {
	if !until(d, func() bool { _, err := os.Stat(path); return os.IsNotExist(err) }) {
		return fmt.Errorf("%s still there after %s", path, d)
	}
	return nil
}

// settled waits at most d for a teardown to leave nothing behind and
// returns what is still there.
func settled(d time.Duration) []string {
	var left []string
	until(d, func() bool { left = leftovers(); return len(left) == 0 })
	return left
}

// leftovers lists what a teardown left behind.
func leftovers() []string {
	var out []string
	for _, d := range []string{filepath.Join(nvmetDir, "subsystems"), filepath.Join(nvmetDir, "ports"), "/sys/class/infiniband"} {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			out = append(out, filepath.Join(d, e.Name()))
		}
	}
	ents, _ := os.ReadDir("/sys/class/nvme")
	for _, e := range ents {
		out = append(out, "/sys/class/nvme/"+e.Name())
	}
	return out
}
