package boot

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/internal/guestconf"

	"github.com/u-root/u-root/pkg/cpio"
)

// BuildAgent compiles qemu/agent as a static Linux binary.
func BuildAgent(ctx context.Context, root, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./qemu/agent")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the guest agent: %v\n%s", err, b)
	}
	return nil
}

// Initramfs writes a newc cpio archive holding the agent as /init, its
// configuration, and the nodes the kernel needs before devtmpfs is
// mounted (/dev/console).
func Initramfs(path string, agent []byte, cfg any) error {
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
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := cpio.Newc.Writer(f)
	if err := cpio.WriteRecordsAndDirs(w, records); err == nil {
		err = cpio.WriteTrailer(w)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", filepath.Base(path), err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
