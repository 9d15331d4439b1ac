// Package vocab is the vocabulary every stage and verb of patchctl
// shares: the statuses of stages, boots and builds (KCIDB's words), the
// two variants of a kernel under test, the RDMA transports and where the
// kernels come from, with the parsers of their command-line words. It is
// the only place these words are spelled; a test (vocab_test.go) refuses
// them as bare strings anywhere else in the module's code.
package vocab

import (
	"fmt"

	"github.com/patchctl/patchctl/internal/errs"
)

// Statuses of a stage, a build, a boot and a verdict, as KCIDB names
// them: one vocabulary in result.json and every report.
const (
	Pass  = "PASS"
	Fail  = "FAIL"
	Error = "ERROR" // the harness could not finish
	Skip  = "SKIP"
	Done  = "DONE"
)

// Variants of a kernel under test: the work tree's state it is built
// from.
const (
	Baseline = "baseline" // the pristine tree
	Patched  = "patched"  // the tree with the series
)

// Variants are both variants, in the order the stages build and boot
// them (A, then B).
func Variants() []string { return []string{Baseline, Patched} }

// ParseVariant checks a --variant word; "" is the patched kernel.
func ParseVariant(s string) (string, error) {
	switch s {
	case "":
		return Patched, nil
	case Baseline, Patched:
		return s, nil
	}
	return "", fmt.Errorf("variant %q: want %s or %s: %w", s, Baseline, Patched, errs.ErrUsage)
}

// RDMA transports the boots test over, and the word for both.
const (
	RXE = "rxe" // soft-RoCE
	SIW = "siw" // soft-iWARP
	// AllTransports is --transport's word for every transport.
	AllTransports = "all"
)

// DefaultTransports are the transports a boot tests when none is named
// (a new slice each call: callers may keep and change it).
func DefaultTransports() []string { return []string{RXE, SIW} }

// IsTransport reports whether s names one transport.
func IsTransport(s string) bool { return s == RXE || s == SIW }

// ParseTransports turns a --transport word (rxe, siw, all; "" is all)
// into the transports to test.
func ParseTransports(s string) ([]string, error) {
	switch {
	case s == AllTransports || s == "":
		return DefaultTransports(), nil
	case IsTransport(s):
		return []string{s}, nil
	}
	return nil, fmt.Errorf("transport %q: want %s, %s or %s: %w", s, RXE, SIW, AllTransports, errs.ErrUsage)
}

// Where the kernels under test come from (--kernel-from).
const (
	FromSource = "source" // build the pinned tree
	FromDistro = "distro" // Debian's binary kernel, touched modules rebuilt
)

// ParseKernelFrom checks a --kernel-from word; "" is source.
func ParseKernelFrom(s string) (string, error) {
	switch s {
	case "", FromSource:
		return FromSource, nil
	case FromDistro:
		return FromDistro, nil
	}
	return "", fmt.Errorf("kernel-from %q: want source (build the pinned tree) or distro (Debian's binary kernel with the touched modules rebuilt): %w", s, errs.ErrUsage)
}

// Accelerators QEMU runs the guests under (--accel): auto picks KVM when
// it runs guest code here, else TCG. TCG runs every vCPU on one host
// thread; TCGMulti gives each vCPU a host thread (QEMU's MTTCG).
const (
	AccelAuto     = "auto"
	AccelKVM      = "kvm"
	AccelTCG      = "tcg"
	AccelTCGMulti = "tcg-multi"
)

// Accels are --accel's words.
func Accels() []string { return []string{AccelAuto, AccelKVM, AccelTCG, AccelTCGMulti} }

// IsTCG reports whether an accelerator word is QEMU's emulator, on one
// host thread or several.
func IsTCG(accel string) bool { return accel == AccelTCG || accel == AccelTCGMulti }

// ParseAccel checks an --accel word: "" for auto (the boot probes), else
// kvm, tcg or tcg-multi.
func ParseAccel(s string) (string, error) {
	switch s {
	case "", AccelAuto:
		return "", nil
	case AccelKVM, AccelTCG, AccelTCGMulti:
		return s, nil
	}
	return "", fmt.Errorf("accel %q: want auto, kvm, tcg or tcg-multi: %w", s, errs.ErrUsage)
}

// DMA modes of the kernels built from source (--dma): faithful applies
// the DMA-faithful harness (qemu/harness/dma-faithful: a virtual-DMA
// address no CPU access can use), plain builds without it.
const (
	DMAFaithful = "faithful"
	DMAPlain    = "plain"
)

// ParseDMA checks a --dma word; "" is faithful.
func ParseDMA(s string) (string, error) {
	switch s {
	case "", DMAFaithful:
		return DMAFaithful, nil
	case DMAPlain:
		return DMAPlain, nil
	}
	return "", fmt.Errorf("dma %q: want faithful (virtual-DMA addresses no CPU access can use, the default) or plain (the providers as they are): %w", s, errs.ErrUsage)
}

// Reproducers a boot can run after its tests (--reproduce).
const (
	// ReproIncapsule: nvmet-rdma's in-capsule bounds check, fed a
	// wrapping offset by the host (qemu/harness/incapsule-wrap).
	ReproIncapsule = "incapsule"
)

// ParseReproduce checks a --reproduce word; "" is none.
func ParseReproduce(s string) (string, error) {
	switch s {
	case "", ReproIncapsule:
		return s, nil
	}
	return "", fmt.Errorf("reproduce %q: want %s (nvmet-rdma's in-capsule bounds reproducer; needs a KASAN kernel: --fragment base,rdma-loopback,debug): %w", s, ReproIncapsule, errs.ErrUsage)
}
