// Package guestconf is the boot test's configuration as the host writes
// it into the initramfs (/patchctl.json) and the guest agent reads it.
package guestconf

import "github.com/patchctl/patchctl/internal/vocab"

// Path is where the configuration lives in the initramfs.
const Path = "/patchctl.json"

// Config is /patchctl.json.
type Config struct {
	Transports     []string `json:"transports"`
	InlineDataSize int      `json:"inline_data_size"`        // NVMe-oF in-capsule data on the nvmet port
	ExpectInline   Expect   `json:"expect_inline,omitempty"` // IB_SEND_INLINE on the host's capsule SENDs: judged or only reported
	Sizes          []int    `json:"sizes"`
	Iterations     int      `json:"iterations"`
	Seed           int64    `json:"seed"`
	Address        string   `json:"address"` // CIDR for eth0
	NQN            string   `json:"nqn"`
	CapsuleSize    int      `json:"capsule_size"`
	// WR holds ib_send_wr's and ib_sge's member offsets from the build's
	// DWARF (next, sg_list, num_sge, opcode, send_flags, sge_length).
	WR      map[string]int    `json:"wr"`
	Opcodes map[string]int    `json:"opcodes"` // IB_WR_* values
	Flags   map[string]int    `json:"flags"`   // IB_SEND_* values
	Probes  map[string]string `json:"probes"`  // transport -> provider post function
	Stop    string            `json:"stop,omitempty"`
	// Shell: set up the first transport (link, target, connect) and run
	// an interactive shell on the console instead of the tests.
	Shell bool `json:"shell,omitempty"`
	// Keep: after the tests (or the shell), the guest stays up until
	// the user quits QEMU.
	Keep bool `json:"keep,omitempty"`
	// Modules are loaded in order (finit_module) before configfs is
	// mounted: a kernel whose test drivers are modules (--kernel-from
	// distro). Empty for a kernel with everything built in.
	Modules []Module `json:"modules,omitempty"`
	// Unavailable names transports this kernel cannot run, with the
	// reason: reported as skipped, not failed.
	Unavailable map[string]string `json:"unavailable,omitempty"`
	// Bench: run patchctl bench's workloads on the first transport
	// instead of the tests (see Bench).
	Bench *Bench `json:"bench,omitempty"`
	// Harness names the harness patches the kernel carries
	// ("dma-faithful/ib_virt_dma_to_ptr", ...; qemu/harness), as its
	// build recorded them.
	Harness []string `json:"harness,omitempty"`
	// Reproduce names the reproducer the agent runs after the tests
	// (vocab.ReproIncapsule; see Repro).
	Reproduce string `json:"reproduce,omitempty"`
	// Known are the kernel reports known as pre-existing defects of this
	// kernel: the dmesg gate reports them and does not fail on them.
	Known []KnownReport `json:"known,omitempty"`
}

// Module is a kernel module in the initramfs.
type Module struct {
	Name   string `json:"name"`
	Path   string `json:"path"`             // in the initramfs
	Params string `json:"params,omitempty"` // e.g. "memory_backed=1 gb=1"
}

// ModuleDir is where the initramfs holds the modules.
const ModuleDir = "/lib/modules"

// ConfigModules names the module that provides a config symbol when the
// kernel builds it as a module (=m).
var ConfigModules = map[string]string{
	"CONFIGFS_FS": "configfs", "VIRTIO_NET": "virtio_net", "VIRTIO_PCI": "virtio_pci", "INFINIBAND": "ib_core",
	"NVME_CORE": "nvme_core", "NVME_FABRICS": "nvme_fabrics", "NVME_RDMA": "nvme_rdma", "NVME_TARGET": "nvmet",
	"NVME_TARGET_RDMA": "nvmet_rdma", "BLK_DEV_NULL_BLK": "null_blk", "RDMA_RXE": "rdma_rxe", "RDMA_SIW": "siw",
	"CRYPTO_CRC32": "crc32_generic",
}

// ModuleParams are the parameters a module is loaded with (what the
// kernel command line gives a built-in one: null_blk.memory_backed=1).
var ModuleParams = map[string]string{"null_blk": "memory_backed=1 gb=1"}

// TransportConfig is the symbol a transport's provider needs.
var TransportConfig = map[string]string{vocab.RXE: "RDMA_RXE", vocab.SIW: "RDMA_SIW"}

// ModuleConfig is RequiredConfig plus what a kernel with modules needs
// loaded by hand (no modprobe in the guest: nothing is requested on
// demand): rxe's crc32 ("crc32" shash) and the virtio PCI transport.
func ModuleConfig(transports []string) []string {
	req := append(RequiredConfig(transports), "VIRTIO_PCI", "NVME_CORE", "NVME_FABRICS", "NVME_TARGET")
	for _, t := range transports {
		if t == vocab.RXE {
			req = append(req, "CRYPTO_CRC32")
		}
	}
	return req
}

// ShellPath is the static shell the initramfs holds when asked
// (--shell, --keep): busybox with its applet links.
const ShellPath = "/bin/sh"

// Console lines the agent prints for the host's phase tracking.
const (
	StartedLine = "patchctl-agent: started"
	DoneLine    = "patchctl-agent: done"
	ShellLine   = "patchctl-agent: shell"
	KeepLine    = "patchctl-agent: keep"
)
