package main

import (
	"fmt"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/report"
	"github.com/patchctl/patchctl/internal/vocab"
	"github.com/spf13/pflag"
)

// SharedOptions are the inputs run, try, boot, bench and build share, as
// the command line gives them: registered on each verb by register and
// checked in one place, parse.
type SharedOptions struct {
	Kernels    []string // --kernel, on the verbs that take several (run, try)
	Kernel     string   // --kernel, on the verbs that take one
	Tree       string
	Fragments  []string
	Transport  string // rxe, siw or all
	Accel      string // auto, kvm, tcg or tcg-multi
	KernelFrom string // source or distro
	NoCcache   bool
	URLBase    string
	DMA        string // faithful or plain
	Reproduce  string // "" or incapsule
}

// Parsed are SharedOptions' words checked and turned into what the
// pipeline takes.
type Parsed struct {
	Transports []string // nil when the verb has no --transport
	Accel      string   // "" for auto
	KernelFrom string
	DMA        string // vocab.DMAFaithful or vocab.DMAPlain
	Reproduce  string // "" or vocab.ReproIncapsule
}

// sharedFlags says which of the shared flags a verb has, and the help
// where the verb's differs from the common one.
type sharedFlags struct {
	kernels    bool // --kernel, several
	kernel     bool // --kernel, one
	tree       bool
	fragment   bool
	transport  string // --transport with this default ("" none)
	accel      bool
	kernelFrom bool
	noCcache   bool
	urlBase    bool
	dma        bool
	reproduce  bool
	help       map[string]string // per flag name, the verb's own help
}

// sharedHelp is each shared flag's common help.
var sharedHelp = map[string]string{
	"kernels":     "kernels to run (default: every pinned kernel)",
	"kernel":      "pinned kernel (default: the lock's default)",
	"tree":        "a local kernel tree (git checkout or folder) as the pristine tree, never written to; --kernel K picks series/K (default: its Makefile's version)",
	"fragment":    "kconfig/ fragments in order (default base,rdma-loopback,compile-test)",
	"transport":   "rxe, siw or all",
	"accel":       "auto (KVM when it runs guest code here, else tcg), kvm, tcg (QEMU's emulator, every vCPU on one host thread) or tcg-multi (a host thread per vCPU: a guest that sees several CPUs runs them in parallel)",
	"kernel-from": "source (build the pinned tree) or distro (Debian's binary kernel of the pinned version, the touched modules rebuilt against its headers)",
	"no-ccache":   "compile without ccache even when it is installed",
	"url-base":    "http(s) URL where --out will be published: KCIDB and SARIF link under it",
	"dma":         "faithful (rxe and siw hand out DMA addresses no CPU access can use, so an inline SGE carrying one fails the boot; docs/dma.md) or plain (the providers as they are)",
	"reproduce":   "incapsule: after the tests, the guest sends one in-capsule write whose SGL offset wraps nvmet-rdma's bounds check (use a KASAN kernel: --fragment base,rdma-loopback,debug; docs/dma.md)",
}

// register defines the shared flags f names on fs: the one place they
// are defined.
func (s *SharedOptions) register(fs *pflag.FlagSet, f sharedFlags) {
	help := func(name string) string {
		if h, ok := f.help[name]; ok {
			return h
		}
		return sharedHelp[name]
	}
	if f.kernels {
		fs.StringSliceVar(&s.Kernels, "kernel", nil, help("kernels"))
	}
	if f.kernel {
		kernelFlag(fs, &s.Kernel, help("kernel"))
	}
	if f.tree {
		fs.StringVar(&s.Tree, "tree", "", help("tree"))
	}
	if f.fragment {
		fs.StringSliceVar(&s.Fragments, "fragment", nil, help("fragment"))
	}
	if f.transport != "" {
		enumFlag(fs, &s.Transport, "transport", f.transport, help("transport"))
	}
	if f.accel {
		enumFlag(fs, &s.Accel, "accel", vocab.AccelAuto, help("accel"))
	}
	if f.kernelFrom {
		fs.StringVar(&s.KernelFrom, "kernel-from", vocab.FromSource, help("kernel-from"))
	}
	if f.noCcache {
		fs.BoolVar(&s.NoCcache, "no-ccache", false, help("no-ccache"))
	}
	if f.urlBase {
		fs.StringVar(&s.URLBase, "url-base", "", help("url-base"))
	}
	if f.dma {
		fs.StringVar(&s.DMA, "dma", vocab.DMAFaithful, help("dma"))
	}
	if f.reproduce {
		fs.StringVar(&s.Reproduce, "reproduce", "", help("reproduce"))
	}
}

// parse checks the shared options, in the order the verbs always have:
// transport, accel, kernel-from, url-base. Every error is a usage error
// (exit 2).
func (s *SharedOptions) parse() (Parsed, error) {
	var p Parsed
	var err error
	if s.Transport != "" {
		if p.Transports, err = vocab.ParseTransports(s.Transport); err != nil {
			return p, err
		}
	}
	if p.Accel, err = vocab.ParseAccel(s.Accel); err != nil {
		return p, err
	}
	if p.KernelFrom, err = vocab.ParseKernelFrom(s.KernelFrom); err != nil {
		return p, err
	}
	if p.DMA, err = vocab.ParseDMA(s.DMA); err != nil {
		return p, err
	}
	if p.Reproduce, err = vocab.ParseReproduce(s.Reproduce); err != nil {
		return p, err
	}
	if err := report.CheckURLBase(s.URLBase); err != nil {
		return p, fmt.Errorf("%w: %w", err, errs.ErrUsage)
	}
	return p, nil
}
