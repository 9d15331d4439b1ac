package boot

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/guestconf"

	"github.com/u-root/u-root/pkg/cpio"
)

// File is a file put into the initramfs (a kernel module).
type File struct {
	Path string // absolute, in the initramfs
	Data []byte
}

// Initramfs writes a newc cpio archive holding the agent as /init, its
// configuration, the nodes the kernel needs before devtmpfs is mounted
// (/dev/console), and the extra files (modules).
func Initramfs(path string, agent []byte, cfg any, files ...File) error {
	return initramfs(path, agent, cfg, nil, files...)
}

// Busybox is a static busybox binary and its applets' paths (bin/sh,
// usr/bin/awk, ...), for the initramfs of --shell and --keep.
type Busybox struct {
	Binary  []byte
	Applets []string
}

// DefaultBusybox is where Debian's busybox-static installs it.
const DefaultBusybox = "/bin/busybox"

// LoadBusybox reads a static busybox and asks it for its applets. A
// missing one is the environment's (install busybox-static).
func LoadBusybox(ctx context.Context, path string) (*Busybox, error) {
	if path == "" {
		path = DefaultBusybox
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the guest shell needs a static busybox at %s: install busybox-static (scripts/deps.sh): %w", path, errs.ErrEnv)
	}
	out, err := (&command.Cmd{Name: path, Args: []string{"--list-full"}}).Output(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing busybox's applets: %w: %w", err, errs.ErrEnv)
	}
	bb := &Busybox{Binary: b}
	for _, a := range strings.Fields(string(out)) {
		a = strings.TrimPrefix(a, "/")
		if a != "" && a != "bin/busybox" && !strings.Contains(a, "..") {
			bb.Applets = append(bb.Applets, a)
		}
	}
	if len(bb.Applets) == 0 {
		return nil, fmt.Errorf("%s lists no applets: is it busybox? %w", path, errs.ErrEnv)
	}
	return bb, nil
}

func initramfs(path string, agent []byte, cfg any, bb *Busybox, files ...File) error {
	conf, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	records := []cpio.Record{
		cpio.Directory("dev", 0o755),
		cpio.CharDev("dev/console", 0o600, 5, 1),
		cpio.Directory("proc", 0o755),
		cpio.Directory("sys", 0o755),
		cpio.Directory("tmp", 0o1777),
		cpio.StaticFile("init", string(agent), 0o755),
		cpio.StaticFile(strings.TrimPrefix(guestconf.Path, "/"), string(conf), 0o644),
	}
	for _, f := range files {
		records = append(records, cpio.StaticFile(strings.TrimPrefix(f.Path, "/"), string(f.Data), 0o644))
	}
	if bb != nil {
		records = append(records, cpio.StaticFile("bin/busybox", string(bb.Binary), 0o755))
		for _, a := range bb.Applets {
			records = append(records, cpio.Symlink(a, "/bin/busybox"))
		}
	}
	err = fsutil.Write(path, 0o644, func(f io.Writer) error {
		w := cpio.Newc.Writer(f)
		if err := cpio.WriteRecordsAndDirs(w, records); err != nil {
			return err
		}
		return cpio.WriteTrailer(w)
	})
	if err != nil {
		return fmt.Errorf("writing the initramfs: %w", err)
	}
	return nil
}
