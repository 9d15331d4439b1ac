package guestconf

import (
	"encoding/json"
	"fmt"
	"github.com/patchctl/patchctl/internal/vocab"
	"strings"
)

// EvidenceTag starts the KTAP diagnostic line that carries a transport's
// inline evidence as JSON: "# patchctl-evidence: {...}".
const EvidenceTag = "patchctl-evidence: "

// WRCount is how many work requests of one shape a provider's post
// function saw.
type WRCount struct {
	Opcode string `json:"opcode"` // SEND, REG_MR, ... (opN when unknown)
	Flags  int    `json:"flags"`
	NumSGE int    `json:"num_sge"`
	// Len0 is the first SGE's length; only meaningful when NumSGE > 0.
	Len0  int `json:"len0,omitempty"`
	Count int `json:"count"`
	// FlagNames are Flags as the build's IB_SEND_* names
	// (IB_SEND_SIGNALED|IB_SEND_INLINE; bits without a name in hex).
	FlagNames string `json:"flag_names,omitempty"`
	// Capsule: the host's NVMe command capsule SEND without in-capsule
	// data (one SGE of the command's size), the requests the inline
	// rule judges.
	Capsule bool `json:"capsule,omitempty"`
}

// String is the request shape as the evidence prints it:
// "SEND flags=IB_SEND_SIGNALED|IB_SEND_INLINE sge=1 len0=64 count=12".
func (w WRCount) String() string {
	fl := w.FlagNames
	if fl == "" {
		fl = fmt.Sprintf("0x%02x", w.Flags)
	}
	s := fmt.Sprintf("%-9s flags=%s sge=%d", w.Opcode, fl, w.NumSGE)
	if w.NumSGE > 0 {
		s += fmt.Sprintf(" len0=%d", w.Len0)
	}
	s += fmt.Sprintf(" count=%d", w.Count)
	if w.Capsule {
		s += "  <- the host's command capsules"
	}
	return s
}

// FlagNames names the bits of flags from names (IB_SEND_* without the
// prefix, as the build's DWARF has them), lowest bit first; bits without
// a name stay in hex; no bit is "0".
func FlagNames(flags int, names map[string]int) string {
	var parts []string
	rest := flags
	for bit := 0; bit < 32; bit++ {
		v := 1 << bit
		if flags&v == 0 {
			continue
		}
		name := ""
		for n, x := range names {
			if x == v && (name == "" || n < name) {
				name = n
			}
		}
		if name != "" {
			parts = append(parts, "IB_SEND_"+name)
			rest &^= v
		}
	}
	if rest != 0 {
		parts = append(parts, fmt.Sprintf("0x%x", rest))
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, "|")
}

// Evidence is what the kprobe on one transport's post function recorded
// of the host's command capsule SENDs without in-capsule data (one SGE of
// the capsule's size): how many carried IB_SEND_INLINE.
type Evidence struct {
	Transport string    `json:"transport"`
	Inline    int       `json:"inline"`
	ByRef     int       `json:"by_reference"`
	WRs       []WRCount `json:"wrs"`
}

// Diagnostic is the KTAP diagnostic text (without "# ") carrying e.
func (e *Evidence) Diagnostic() string {
	b, _ := json.Marshal(e)
	return EvidenceTag + string(b)
}

// ParseEvidence reads a diagnostic that Diagnostic wrote; ok is false for
// any other line.
func ParseEvidence(diag string) (*Evidence, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(diag), EvidenceTag)
	if !ok {
		return nil, false
	}
	var e Evidence
	if err := json.Unmarshal([]byte(rest), &e); err != nil {
		return nil, false
	}
	return &e, true
}

// Expect is what a boot expects of the inline evidence: a tri-state.
type Expect string

const (
	// ExpectReport records and reports the evidence without judging it:
	// a patch that is not about the inline path is judged by the suite's
	// own tests (links, target, connect, data, teardown, dmesg).
	ExpectReport Expect = ""
	ExpectInline Expect = "inline" // every capsule SEND without in-capsule data carries IB_SEND_INLINE
	ExpectNone   Expect = "none"   // none does
)

// ExpectOf is ExpectInline for true, ExpectNone for false.
func ExpectOf(inline bool) Expect {
	if inline {
		return ExpectInline
	}
	return ExpectNone
}

// Judged reports whether the evidence is judged at all.
func (x Expect) Judged() bool { return x != ExpectReport }

// UnmarshalJSON reads the tri-state, and the boolean of results written
// before it (true: inline, false: none).
func (x *Expect) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "true":
		*x = ExpectInline
		return nil
	case "false":
		*x = ExpectNone
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("expect_inline: %w", err)
	}
	switch Expect(s) {
	case ExpectReport, ExpectInline, ExpectNone:
		*x = Expect(s)
		return nil
	}
	return fmt.Errorf("expect_inline %q: want inline, none or nothing", s)
}

// JudgeInline is the inline rule, the one place it is decided: with
// ExpectInline, every capsule SEND without in-capsule data is inline;
// with ExpectNone, none is; no capsule SEND at all is a failure either way
// (nothing was observed). ExpectReport judges nothing.
func JudgeInline(e *Evidence, expect Expect) error {
	switch {
	case !expect.Judged():
		return nil
	case e.Inline+e.ByRef == 0:
		return fmt.Errorf("no command capsule SEND was recorded")
	case expect == ExpectInline && (e.Inline == 0 || e.ByRef > 0):
		return fmt.Errorf("expected every capsule SEND inline: %d inline, %d by reference", e.Inline, e.ByRef)
	case expect == ExpectNone && e.Inline > 0:
		return fmt.Errorf("expected no inline capsule SEND: %d inline, %d by reference", e.Inline, e.ByRef)
	}
	return nil
}

// Splats are the kernel log lines that fail a run, on the console (host)
// and in dmesg (guest) alike.
// KASAN and KFENCE report as "BUG: KASAN: ..." and "BUG: KFENCE: ...",
// lockdep as "WARNING: possible ... locking ...", UBSAN as "UBSAN: ..."
// (kconfig/debug.config turns them on). The DMA-faithful harness
// (qemu/harness) reports an address of the wrong kind as "patchctl-dma:
// ..."; it comes first so the gate names it rather than the WARNING after.
var Splats = []string{"patchctl-dma:", "Kernel panic", "kernel BUG at", "WARNING:", "BUG:", "Oops:", "possible recursive locking",
	"circular locking", "general protection fault", "suspicious RCU usage", "Call Trace:", "UBSAN:"}

// SplatIn returns the splat pattern line holds, or "".
func SplatIn(line string) string {
	for _, p := range Splats {
		if strings.Contains(line, p) {
			return p
		}
	}
	return ""
}

// RequiredConfig are the kernel config symbols the boot test cannot run
// without, for the given transports.
func RequiredConfig(transports []string) []string {
	req := []string{"BLK_DEV_INITRD", "DEVTMPFS", "SERIAL_8250_CONSOLE", "CONFIGFS_FS", "VIRTIO_NET", "INFINIBAND",
		"INFINIBAND_ADDR_TRANS", "NVME_RDMA", "NVME_TARGET_RDMA", "BLK_DEV_NULL_BLK", "KPROBE_EVENTS"}
	for _, t := range transports {
		switch t {
		case vocab.RXE:
			req = append(req, "RDMA_RXE")
		case vocab.SIW:
			req = append(req, "RDMA_SIW")
		}
	}
	return req
}
