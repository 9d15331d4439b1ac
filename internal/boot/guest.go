package boot

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchctl/patchctl/internal/dwarflayout"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/kconfig"
	"github.com/patchctl/patchctl/internal/vocab"
)

// GuestConfig is the agent's configuration.
type GuestConfig = guestconf.Config

// postFunctions are the providers' post_send entry points the kprobe
// watches.
var postFunctions = map[string]string{vocab.RXE: "rxe_post_send", vocab.SIW: "siw_post_send"}

// checkKernel refuses a kernel built without what the tests need, naming
// the symbol. With modules (a distro kernel), a symbol may be a module
// when its module is among them, and a transport whose provider the
// config lacks is returned as unavailable (reported, not failed).
func checkKernel(buildDir string, transports []string, modules []string) (map[string]string, error) {
	cfg, err := kconfig.Load(filepath.Join(buildDir, ".config"))
	if err != nil {
		return nil, fmt.Errorf("reading the build's .config: %w: %w", err, errs.ErrInput)
	}
	have := map[string]bool{}
	for _, m := range modules {
		have[moduleName(m)] = true
	}
	unavailable := map[string]string{}
	req := guestconf.RequiredConfig(transports)
	if len(modules) > 0 {
		req = guestconf.ModuleConfig(transports)
		for _, t := range transports {
			if sym := guestconf.TransportConfig[t]; sym != "" && cfg.Value(sym) != "y" && cfg.Value(sym) != "m" {
				unavailable[t] = fmt.Sprintf("not available on this kernel (CONFIG_%s is not set)", sym)
			}
		}
	}
	var missing []string
	for _, s := range req {
		v := cfg.Value(s)
		switch {
		case v == "y":
		case len(modules) > 0 && v == "m" && have[guestconf.ConfigModules[s]]:
		case len(modules) > 0 && v == "m":
			missing = append(missing, fmt.Sprintf("CONFIG_%s=m without its module %s", s, guestconf.ConfigModules[s]))
		case len(modules) > 0 && unavailableSym(unavailable, s):
		default:
			missing = append(missing, "CONFIG_"+s)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the kernel in %s was built without %v, which the boot test needs (build with the rdma-loopback fragment): %w", buildDir, missing, errs.ErrInput)
	}
	if len(unavailable) == 0 {
		unavailable = nil
	}
	return unavailable, nil
}

func unavailableSym(unavailable map[string]string, sym string) bool {
	for t := range unavailable {
		if guestconf.TransportConfig[t] == sym {
			return true
		}
	}
	return false
}

// moduleName is a module file's name as the kernel knows it.
func moduleName(path string) string {
	n := strings.TrimSuffix(filepath.Base(path), ".ko")
	return strings.ReplaceAll(n, "-", "_")
}

// wrLayout reads ib_send_wr's offsets and the verbs enum values from the
// build's objects (DWARF), and sizeof(struct nvme_command).
func wrLayout(buildDir string, g *GuestConfig) error {
	var r *dwarflayout.Reader
	var err error
	for _, obj := range []string{"drivers/infiniband/sw/rxe/rxe_verbs.o", "drivers/infiniband/sw/siw/siw_verbs.o", "drivers/nvme/host/rdma.o"} {
		if r, err = dwarflayout.Open(filepath.Join(buildDir, obj)); err == nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("no object with ib_send_wr's layout: %w: %w", err, errs.ErrInput)
	}
	wr, err := r.Struct("ib_send_wr")
	if err != nil {
		return err
	}
	sge, err := r.Struct("ib_sge")
	if err != nil {
		return err
	}
	g.WR = map[string]int{}
	for _, m := range []string{"next", "sg_list", "num_sge", "opcode", "send_flags"} {
		off, ok := wr.Members[m]
		if !ok {
			return fmt.Errorf("struct ib_send_wr has no member %s in this build", m)
		}
		g.WR[m] = int(off)
	}
	g.WR["sge_length"] = int(sge.Members["length"])
	en, err := r.Enumerators("IB_WR_SEND", "IB_WR_REG_MR", "IB_WR_LOCAL_INV", "IB_WR_RDMA_WRITE", "IB_WR_RDMA_READ")
	if err != nil {
		return err
	}
	// Every opcode and send flag the build knows, so that the evidence
	// names what it saw (reserved values name nothing).
	g.Opcodes, err = enumNames(r, "IB_WR_")
	if err != nil {
		return err
	}
	for n, v := range en {
		g.Opcodes[strings.TrimPrefix(n, "IB_WR_")] = int(v)
	}
	if g.Flags, err = enumNames(r, "IB_SEND_"); err != nil {
		return err
	}
	fl, err := r.Enumerators("IB_SEND_INLINE", "IB_SEND_SIGNALED")
	if err != nil {
		return err
	}
	g.Flags["INLINE"], g.Flags["SIGNALED"] = int(fl["IB_SEND_INLINE"]), int(fl["IB_SEND_SIGNALED"])
	g.CapsuleSize = 64
	if hr, err := dwarflayout.Open(filepath.Join(buildDir, "drivers/nvme/host/rdma.o")); err == nil {
		if s, err := hr.Struct("nvme_command"); err == nil && s.Size > 0 {
			g.CapsuleSize = int(s.Size)
		}
	}
	g.Probes = postFunctions
	return nil
}

// enumNames reads the enumerators named prefix*, without the prefix and
// without the reserved ones.
func enumNames(r *dwarflayout.Reader, prefix string) (map[string]int, error) {
	all, err := r.EnumeratorsWithPrefix(prefix)
	if err != nil {
		return nil, fmt.Errorf("reading %s* from the build's DWARF: %w", prefix, err)
	}
	out := map[string]int{}
	for n, v := range all {
		short := strings.TrimPrefix(n, prefix)
		if strings.Contains(short, "RESERVED") || strings.HasSuffix(short, "_START") || strings.HasSuffix(short, "_END") {
			continue
		}
		out[short] = int(v)
	}
	return out, nil
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
