package guestconf

import (
	"encoding/json"
	"strings"
)

// The in-capsule bounds reproducer (vocab.ReproIncapsule): the agent,
// after the tests, connects over the first transport, arms the host
// driver's one-shot switch (ReproParam, from qemu/harness/incapsule-wrap)
// and writes one 4 KiB block with O_DIRECT, whose data goes in the
// capsule with an SGL offset of -len. The console lines between
// ReproBeginLine and ReproEndLine are the reproducer's: a kernel report
// there is its outcome, not a failure of the boot.
const (
	ReproBeginLine = "patchctl-agent: reproducer begins"
	ReproEndLine   = "patchctl-agent: reproducer ends"
	ReproParam     = "/sys/module/nvme_rdma/parameters/patchctl_wrap_icdoff"
	// ReproSentLine is what the host driver logs when it sends the
	// wrapping offset (the harness patch's pr_info).
	ReproSentLine = "patchctl-repro:"
	// ReproTest is the reproducer's KTAP test name.
	ReproTest = "reproduce_incapsule"
	// ReproDefect is the pre-existing defect the reproducer shows.
	ReproDefect = "nvmet-rdma's in-capsule bounds check (off + len > inline_data_size) wraps for an offset of -len: pre-existing on every pinned kernel (docs/dma.md, docs/triage.md)"
)

// Outcomes of the reproducer.
const (
	// ReproShown: the kernel reported the out-of-bounds access (KASAN,
	// or a general protection fault): the known pre-existing defect,
	// not a failure of the patch under test.
	ReproShown = "defect-shown"
	// ReproRejected: the host sent the wrapping offset, the target
	// refused the write, and the kernel reported nothing: the bounds
	// check holds (a fix is in the kernel).
	ReproRejected = "rejected"
	// ReproNotReached: the write went through with nothing reported, or
	// the host never sent the offset: the reproducer did not test the
	// check (a failure of the reproducer).
	ReproNotReached = "not-reached"
)

// Repro is the reproducer's outcome as the agent reports it (a typed
// diagnostic line, ReproPrefix + JSON).
type Repro struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	Outcome   string `json:"outcome"`
	// Sent: the host driver logged the wrapping offset.
	Sent bool `json:"sent"`
	// Write is the write's outcome: "ok", or its error.
	Write string `json:"write"`
	// Splat is the first kernel report after the write.
	Splat string `json:"splat,omitempty"`
}

// ReproPrefix starts the reproducer's typed diagnostic line.
const ReproPrefix = "patchctl-repro-result: "

// Line is the typed diagnostic line.
func (r *Repro) Line() string {
	b, _ := json.Marshal(r) // a struct of strings and a bool: never fails
	return ReproPrefix + string(b)
}

// ParseRepro reads a diagnostic line written by Line.
func ParseRepro(diag string) (*Repro, bool) {
	i := strings.Index(diag, ReproPrefix)
	if i < 0 {
		return nil, false
	}
	var r Repro
	if json.Unmarshal([]byte(diag[i+len(ReproPrefix):]), &r) != nil || r.Outcome == "" {
		return nil, false
	}
	return &r, true
}

// JudgeRepro decides the outcome from what the guest saw after arming
// the switch: the log lines since (the kernel's reports, the host
// driver's line) and the write's result ("" when it succeeded, else its
// error; a write still hanging is an error too).
func JudgeRepro(log []string, writeErr string) *Repro {
	r := &Repro{Name: ReproTest, Write: "ok"}
	if writeErr != "" {
		r.Write = writeErr
	}
	for _, l := range log {
		if strings.Contains(l, ReproSentLine) {
			r.Sent = true
		}
		if r.Splat == "" && SplatIn(l) != "" {
			r.Splat = trimLevel(strings.TrimSpace(l))
		}
	}
	switch {
	case r.Splat != "":
		r.Outcome = ReproShown
	case r.Sent && writeErr != "":
		r.Outcome = ReproRejected
	default:
		r.Outcome = ReproNotReached
	}
	return r
}

// OK is whether the reproducer did its job: it showed the defect or the
// check held.
func (r *Repro) OK() bool { return r.Outcome == ReproShown || r.Outcome == ReproRejected }

// trimLevel drops the "<3>" log level the kernel's log buffer keeps
// before a line.
func trimLevel(l string) string {
	if rest, ok := strings.CutPrefix(l, "<"); ok {
		if i := strings.IndexByte(rest, '>'); i > 0 && strings.Trim(rest[:i], "0123456789") == "" {
			return strings.TrimSpace(rest[i+1:])
		}
	}
	return l
}
