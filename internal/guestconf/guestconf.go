// Package guestconf is the boot test's configuration as the host writes
// it into the initramfs (/patchctl.json) and the guest agent reads it.
package guestconf

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
}
