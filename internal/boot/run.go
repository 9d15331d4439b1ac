package boot

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/ktap"
	"github.com/patchctl/patchctl/internal/progress"
	"github.com/patchctl/patchctl/internal/stagecache"
	"github.com/patchctl/patchctl/internal/vocab"
)

// Options say what to boot and test.
type Options struct {
	Root string // repository (qemu/agent)
	// AgentCache is where built agents are kept for reuse, each under
	// the key of its sources (BuildAgent); "" keeps them in memory only.
	AgentCache string
	Kernel     string // name, for reports
	Variant    string // baseline or patched
	BzImage    string
	BuildDir   string // for .config and DWARF
	// Modules are module files (.ko) the initramfs holds and the agent
	// loads, in this order (a kernel whose test drivers are modules:
	// --kernel-from distro). A transport whose provider the kernel's
	// config lacks is then reported as not available, not failed.
	Modules []string
	// BzImageSHA256, when set, is the image's hash as its build made it:
	// the boot refuses an image that another build replaced since.
	BzImageSHA256 string
	OutDir        string // console log, initramfs, result.json
	Transports    []string
	// InlineDataSize is written to the nvmet port (NVMe-oF in-capsule data).
	InlineDataSize int
	// ExpectInline: the host's command capsule SENDs must carry
	// IB_SEND_INLINE (verbs inline), must not, or are only reported.
	ExpectInline guestconf.Expect
	Sizes        []int
	Iterations   int
	QEMU         string // binary; default qemu-system-x86_64
	Memory       string
	CPUs         int
	BootTimeout  time.Duration // until the agent says it started
	TestTimeout  time.Duration // longest wait between two results
	TotalTimeout time.Duration
	Cmdline      string // appended to the kernel command line
	Stop         string // agent fault injection ("before-tests")
	// Accel is kvm, tcg or tcg-multi (vocab; AccelArg); "" or "auto"
	// probes (KVM when it really runs guest code here).
	Accel    string
	Progress *progress.Reporter
	// Shell: the guest sets up the first transport (link, target,
	// connect) and gives an interactive shell on the console instead of
	// the tests; the VM ends when the shell exits. Keep: after the tests
	// the guest stays up until the user quits QEMU (Ctrl-A x). Both put
	// a static busybox (Busybox, default /bin/busybox) in the initramfs,
	// and neither has a timeout once the agent started.
	Shell, Keep bool
	Busybox     string
	// Stdin reaches the guest's console (QEMU's -nographic stdio), for
	// Shell and Keep; Console gets the console's bytes as they come
	// (a prompt has no newline), besides the saved log.
	Stdin   io.Reader
	Console io.Writer
	// BuildCommand is the command that builds BzImage, for the error
	// when it is missing (default: patchctl build --kernel K --variant V).
	BuildCommand string
	// Bench makes the guest run patchctl bench's workloads on the first
	// transport instead of the tests (internal/bench reads the results).
	Bench *guestconf.Bench
	// Harness names the harness patches the image carries, as its build
	// recorded them ("dma-faithful/ib_virt_dma_to_ptr", ...): the guest
	// is told, and they are part of the boot's key.
	Harness []string
	// Reproduce names a reproducer the guest runs after the tests
	// (vocab.ReproIncapsule, which needs the incapsule-wrap harness).
	Reproduce string
	// Known are the kernel reports known as pre-existing defects of
	// this kernel (series/known-reports.yaml): reported, and failing
	// neither the guest's dmesg gate nor the console's.
	Known []guestconf.KnownReport
}

// Interactive is whether the run waits for a person (Shell or Keep).
func (o *Options) Interactive() bool { return o.Shell || o.Keep }

// DefaultSizes cover writes below, at and above the 16 KiB in-capsule size.
var DefaultSizes = []int{512, 1024, 4096, 8192, 16384, 32768}

// Splat is a kernel error report found on the console.
type Splat struct {
	Kind string `json:"kind"`
	Line int    `json:"line"`
	// Text is the console line that starts the report ("BUG: KASAN:
	// slab-use-after-free in nvmet_rdma_alloc_queue+0x...").
	Text    string   `json:"text,omitempty"`
	Excerpt []string `json:"excerpt"`
	// Known names the known pre-existing kernel report it is
	// (Options.Known), or, inside the reproducer's window, the
	// reproducer's defect.
	Known string `json:"known,omitempty"`
}

// words is the report in its own words: its first line, else its kind.
func (s Splat) words() string {
	if s.Text != "" {
		return s.Text
	}
	return s.Kind
}

// Result is a boot's outcome.
type Result struct {
	Kernel       string           `json:"kernel"`
	Variant      string           `json:"variant"`
	Accel        string           `json:"accel"`
	Command      []string         `json:"command"`
	ConsoleLog   string           `json:"console_log"`
	KTAP         *ktap.Test       `json:"ktap,omitempty"`
	Splats       []Splat          `json:"splats,omitempty"`
	TimedOut     bool             `json:"timed_out"`
	Phase        string           `json:"phase"` // where it was when it ended
	Tail         []string         `json:"console_tail,omitempty"`
	Verdict      string           `json:"verdict"` // PASS, FAIL, ERROR
	Reason       string           `json:"reason,omitempty"`
	Duration     float64          `json:"duration_s"`
	ExpectInline guestconf.Expect `json:"expect_inline,omitempty"`
	// Evidence is the inline evidence per transport, as the agent
	// reported it (typed, see guestconf.Evidence).
	Evidence []*guestconf.Evidence `json:"evidence,omitempty"`
	// Repro is the reproducer's outcome (--reproduce); KnownSplats the
	// kernel reports it provoked, which are its outcome and not the
	// boot's failure.
	Repro       *guestconf.Repro `json:"reproducer,omitempty"`
	KnownSplats []Splat          `json:"known_splats,omitempty"`
}

// Accel picks KVM when it really runs guest code here, TCG otherwise.
func Accel() string {
	if kvmRunsCode() {
		return vocab.AccelKVM
	}
	return vocab.AccelTCG
}

func (o *Options) defaults() {
	if len(o.Transports) == 0 {
		o.Transports = vocab.DefaultTransports()
	}
	if o.InlineDataSize == 0 {
		o.InlineDataSize = 16384
	}
	if len(o.Sizes) == 0 {
		o.Sizes = DefaultSizes
	}
	if o.Iterations == 0 {
		o.Iterations = 8
	}
	if o.QEMU == "" {
		o.QEMU = "qemu-system-x86_64"
	}
	if o.Memory == "" {
		o.Memory = "1G"
	}
	if o.CPUs == 0 {
		o.CPUs = 2
	}
	if o.BootTimeout == 0 {
		o.BootTimeout = 90 * time.Second
	}
	if o.TestTimeout == 0 {
		o.TestTimeout = 90 * time.Second
	}
	if o.TotalTimeout == 0 {
		o.TotalTimeout = 10 * time.Minute
	}
}

// AccelArg is QEMU's -accel value for an accelerator word. tcg runs
// every vCPU on one host thread (thread=single); tcg-multi gives each vCPU
// a host thread (MTTCG, QEMU's default for an x86 guest on an x86 host).
// Why one thread by default: under MTTCG a guest that sees two CPUs
// (Debian's kernel with --kernel-from distro; a tree configured with
// ACPI) once oopsed after every test had passed, "Oops: int3" on a 5-byte
// nop in __schedule (2026-12-05, Debian's 6.12, during a fresh .ci/run
// with other tests beside it): a false FAIL. The likely cause is a vCPU
// executing code as it was before the kernel patched it (static keys,
// tracepoints and kprobes are patched with a breakpoint in, then out);
// with one thread every vCPU sees each write to code at once. Not
// reproduced in 50 later boots, so this is a likely cause, not a proven
// one. What it costs: Debian's 6.12 boots in 5.2-5.4 s against 4.8-5.2 s
// (2 idle cores); patchctl's own builds have no ACPI, their guest sees one
// CPU, and boot in 2.5-3.3 s either way. What it takes away: a guest that
// sees two CPUs runs them in turns, so races between its CPUs show less
// often; tcg-multi (or KVM) is for that.
func AccelArg(accel string) string {
	switch accel {
	case vocab.AccelTCG:
		return "tcg,thread=single"
	case vocab.AccelTCGMulti:
		return "tcg,thread=multi"
	}
	return accel
}

// Command is the QEMU command line for a kernel and initramfs.
func Command(o *Options, accel, initrd string) []string {
	// no_timer_check: the kernel's test that the IO-APIC timer ticks
	// counts ticks over a busy-wait, which a TCG guest on a loaded host
	// fails ("IO-APIC + timer doesn't work!", a panic before init); it
	// tests the host's load, not the kernel (every pinned kernel has the
	// parameter).
	cmdline := "console=ttyS0 panic=-1 loglevel=5 no_timer_check null_blk.memory_backed=1 null_blk.gb=1"
	if o.Cmdline != "" {
		cmdline += " " + o.Cmdline
	}
	// -vga none: the console is the serial port; an emulated VGA card
	// only costs the guest its VGA setup and arbitration (2026-12-05,
	// TCG, 6.12: 2.93 s against 3.01 s per boot, mean of 6).
	//
	// romfile= (empty): the NIC without its option ROM (iPXE). The
	// firmware runs a card's ROM before it boots anything, -kernel too,
	// and nothing here boots from the network (2026-12-06, TCG, 6.12:
	// 2.43 s against 2.61 s per boot, mean of 6 alternating).
	args := []string{o.QEMU, "-accel", AccelArg(accel), "-m", o.Memory, "-smp", fmt.Sprint(o.CPUs),
		"-nographic", "-vga", "none", "-no-reboot", "-kernel", o.BzImage, "-initrd", initrd, "-append", cmdline,
		"-netdev", "user,id=net0,restrict=on", "-device", "virtio-net-pci,netdev=net0,romfile="}
	if accel == vocab.AccelKVM {
		args = append(args, "-cpu", "host")
	}
	return args
}

// Prepared is a boot ready to run: the guest agent built, its
// configuration read from the build, the key that names all of it.
type Prepared struct {
	o     Options
	guest GuestConfig
	agent []byte
	bb    *Busybox
	accel string
	key   string
}

// Key names everything the boot's result depends on: the kernel image and
// the build's layout (through the guest configuration), the agent binary,
// the host's code (judging, configuration), QEMU's settings and the
// accelerator.
func (p *Prepared) Key() string { return p.key }

// Prepare checks what a boot needs and builds the guest agent. Its errors
// mean the harness could not run.
func Prepare(ctx context.Context, o Options) (*Prepared, error) {
	o.defaults()
	if _, err := command.LookPath(o.QEMU); err != nil {
		return nil, fmt.Errorf("%s not found: install qemu-system-x86 (or run make deps): %w", o.QEMU, errs.ErrEnv)
	}
	if !fileExists(o.BzImage) {
		bc := o.BuildCommand
		if bc == "" {
			bc = command.Quote([]string{"patchctl", "build", "--kernel", o.Kernel, "--variant", o.Variant})
		}
		return nil, fmt.Errorf("no %s %s kernel built yet (no %s): run `%s` first: %w", o.Kernel, o.Variant, o.BzImage, bc, errs.ErrInput)
	}
	unavailable, err := checkKernel(o.BuildDir, o.Transports, o.Modules)
	if err != nil {
		return nil, err
	}
	if err := checkReproduce(&o); err != nil {
		return nil, err
	}
	g := GuestConfig{Transports: o.Transports, Unavailable: unavailable, InlineDataSize: o.InlineDataSize, ExpectInline: o.ExpectInline,
		Sizes: o.Sizes, Iterations: o.Iterations, Seed: 1, Address: "192.0.2.10/24",
		NQN: "nqn.2026-11.dev.patchctl:loopback", Stop: o.Stop, Shell: o.Shell, Keep: o.Keep, Bench: o.Bench,
		Harness: o.Harness, Reproduce: o.Reproduce, Known: o.Known}
	if err := wrLayout(o.BuildDir, &g); err != nil {
		return nil, err
	}
	for _, m := range o.Modules {
		name := moduleName(m)
		g.Modules = append(g.Modules, guestconf.Module{Name: name, Path: guestconf.ModuleDir + "/" + name + ".ko", Params: guestconf.ModuleParams[name]})
	}
	agent, err := BuildAgent(ctx, o.Root, o.AgentCache)
	if err != nil {
		return nil, err
	}
	p := &Prepared{o: o, guest: g, agent: agent, accel: o.Accel}
	if o.Interactive() {
		if p.bb, err = LoadBusybox(ctx, o.Busybox); err != nil {
			return nil, err
		}
	}
	if p.accel == "" {
		p.accel = Accel()
	}
	var shell []byte
	if p.bb != nil {
		shell = p.bb.Binary
	}
	p.key, err = stagecache.NewKey("boot").Code().Bytes("agent", agent).Bytes("busybox", shell).JSON("guest", g).File(o.BzImage).File(o.Modules...).
		Add("qemu", o.QEMU, o.Memory, strconv.Itoa(o.CPUs), o.Cmdline, AccelArg(p.accel)).
		Add("timeouts", o.BootTimeout.String(), o.TestTimeout.String(), o.TotalTimeout.String()).Sum()
	if err != nil {
		return nil, fmt.Errorf("boot key: %w", err)
	}
	return p, nil
}

// Run boots the kernel and runs the tests. An error means the harness
// could not run (exit 3); a failed test is a Result with verdict FAIL.
func Run(ctx context.Context, o Options) (*Result, error) {
	p, err := Prepare(ctx, o)
	if err != nil {
		return nil, err
	}
	return p.Run(ctx, o.OutDir)
}

// Stage writes into outDir what the VM boots (the image's private copy,
// the initramfs) and returns the QEMU command line that boots it, which
// `patchctl boot --print-qemu` prints without running it.
func (p *Prepared) Stage(outDir string) ([]string, error) {
	o := p.o
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("boot output: %w", err)
	}
	// Boot a copy: a rebuild of the same folder while the VM starts cannot
	// change the kernel under it.
	img := filepath.Join(outDir, "bzImage")
	if err := fsutil.CopyFile(o.BzImage, img); err != nil {
		return nil, fmt.Errorf("copying the kernel image: %w", err)
	}
	if o.BzImageSHA256 != "" {
		if h, err := fsutil.HashFile(img); err != nil || h != o.BzImageSHA256 {
			return nil, fmt.Errorf("the kernel image %s is not the one its build made (sha256 %.12s, built %.12s): another build replaced it; run again: %w", p.o.BzImage, h, o.BzImageSHA256, errs.ErrEnv)
		}
	}
	o.BzImage = img
	initrd := filepath.Join(outDir, "initramfs.cpio")
	var files []File
	for i, m := range o.Modules {
		b, err := guestModule(m, outDir)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: p.guest.Modules[i].Path, Data: b})
	}
	if err := initramfs(initrd, p.agent, p.guest, p.bb, files...); err != nil {
		return nil, err
	}
	return Command(&o, p.accel, initrd), nil
}

// Run boots into outDir: the image's private copy, the initramfs, the
// console log and result.json.
func (p *Prepared) Run(ctx context.Context, outDir string) (*Result, error) {
	o := p.o
	o.OutDir = outDir
	start := time.Now()
	cmd, err := p.Stage(outDir)
	if err != nil {
		return nil, err
	}
	res := &Result{Kernel: o.Kernel, Variant: o.Variant, Accel: p.accel, ConsoleLog: filepath.Join(o.OutDir, "console.log"), ExpectInline: o.ExpectInline}
	res.Command = cmd
	if err := runQEMU(ctx, &o, res); err != nil {
		return nil, err
	}
	res.Duration = time.Since(start).Seconds()
	judge(res, &o)
	if err := fsutil.WriteJSON(ResultPath(o.OutDir), res); err != nil {
		return nil, err
	}
	return res, nil
}

// ResultPath is where Run writes the result in outDir.
func ResultPath(outDir string) string { return filepath.Join(outDir, "result.json") }

// runQEMU runs the VM, tees the console to the log, and kills the VM when
// a phase takes too long.
func runQEMU(ctx context.Context, o *Options, res *Result) error {
	logf, err := os.Create(res.ConsoleLog)
	if err != nil {
		return err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "# %s\n", command.Quote(res.Command))
	interactive := o.Interactive()
	cancel := func() {}
	if !interactive { // a person at the console takes the time they need
		ctx, cancel = context.WithTimeout(ctx, o.TotalTimeout)
	}
	defer cancel()
	pr, pw := io.Pipe()
	var stdout io.Writer = pw
	if o.Console != nil {
		stdout = io.MultiWriter(o.Console, pw)
	}
	cmd := &command.Cmd{Name: res.Command[0], Args: res.Command[1:], Stdin: o.Stdin, Stdout: stdout, Signal: syscall.SIGKILL, WaitDelay: 5 * time.Second,
		Foreground: interactive}
	o.Progress.Start(fmt.Sprintf("boot %s %s (%s)", o.Kernel, o.Variant, res.Accel))
	proc, err := cmd.Start(ctx)
	if err != nil {
		return fmt.Errorf("starting qemu: %w", err)
	}

	var mu sync.Mutex
	var lines []string
	phase := "boot"
	last := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			l := StripEscapes(strings.TrimRight(sc.Text(), "\r"))
			fmt.Fprintln(logf, l)
			mu.Lock()
			lines = append(lines, l)
			switch t := strings.TrimSpace(l); {
			case strings.Contains(l, guestconf.StartedLine):
				phase, last = "tests", time.Now()
			case strings.HasPrefix(t, "ok ") || strings.HasPrefix(t, "not ok "):
				last = time.Now()
				o.Progress.Update("%s", t)
			case strings.HasPrefix(t, guestconf.ShellLine):
				phase = "shell"
			case strings.HasPrefix(t, guestconf.KeepLine):
				phase = "kept"
			case strings.HasPrefix(t, guestconf.DoneLine) && phase != "kept":
				phase = "shutdown"
			}
			mu.Unlock()
		}
	}()
	waitErr := make(chan error, 1)
	go func() { err := proc.Wait(); pw.Close(); <-done; waitErr <- err }()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	started := time.Now()
	for {
		select {
		case err := <-waitErr:
			mu.Lock()
			res.Phase = phase
			res.Tail = tail(lines, 30)
			text := strings.Join(lines, "\n")
			mu.Unlock()
			if ctx.Err() != nil && !res.TimedOut {
				res.TimedOut = true
				res.Reason = fmt.Sprintf("the whole run took longer than %s (in phase %s)", o.TotalTimeout, res.Phase)
			}
			res.KTAP = ktap.Parse(text)
			res.Splats, res.KnownSplats = reproSplats(lines, o.Known)
			var re *command.Error
			if err != nil && !errors.As(err, &re) && !res.TimedOut {
				return fmt.Errorf("qemu: %w: %w", err, errs.ErrEnv)
			}
			o.Progress.Done("%s", exitNote(res, time.Since(started)))
			return nil
		case <-tick.C:
			mu.Lock()
			var limit time.Duration
			switch phase {
			case "boot":
				limit = o.BootTimeout
			case "tests":
				limit = o.TestTimeout
			default:
				limit = 30 * time.Second
			}
			since := last
			if phase == "boot" {
				since = started
			}
			waiting := interactive && phase != "boot" // for a person, not for the guest
			if !res.TimedOut && !waiting && time.Since(since) > limit {
				res.TimedOut = true
				res.Reason = fmt.Sprintf("no progress in phase %s for %s: the VM was killed", phase, limit)
				proc.Kill()
			}
			mu.Unlock()
		}
	}
}

// exitNote says how QEMU's run ended: the normal end (the guest finished
// and powered off, or the user quit an interactive VM) reads as one.
func exitNote(res *Result, d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case res.TimedOut:
		return fmt.Sprintf("qemu killed after %s in phase %s", d, res.Phase)
	case res.Phase == "shutdown":
		return fmt.Sprintf("the guest finished and powered off after %s", d)
	case res.Phase == "shell" || res.Phase == "kept":
		return fmt.Sprintf("the interactive VM ended after %s", d)
	}
	return fmt.Sprintf("qemu exited after %s in phase %s, before the guest finished", d, res.Phase)
}

// escapes are terminal control sequences (CSI, OSC, two-byte ESC
// sequences, character-set selections) that firmware and consoles print.
var escapes = regexp.MustCompile(`\x1b\[[0-9;?<=>!]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()*+][0-9A-Za-z]|\x1b[@-Z\\^_a-z=>78]`)

// StripEscapes removes terminal escape sequences and other control
// characters but tab from a console line.
func StripEscapes(l string) string {
	if !strings.ContainsFunc(l, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
		return l
	}
	l = escapes.ReplaceAllString(l, "")
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' || r == 0x7f {
			return -1
		}
		return r
	}, l)
}

func tail(lines []string, n int) []string {
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return append([]string(nil), lines...)
}

// findSplats finds kernel error reports, with context.
func findSplats(lines []string, known []guestconf.KnownReport) []Splat {
	var out []Splat
	for _, r := range guestconf.Reports(lines, known) {
		from, to := max(r.Start-3, 0), min(r.Start+12, len(lines))
		out = append(out, Splat{Kind: r.Kind, Line: r.Start + 2, Text: strings.TrimSpace(lines[r.Start]), Excerpt: append([]string(nil), lines[from:to]...), Known: r.Known})
	}
	return out
}

// judge sets the verdict from the KTAP results, splats and timeouts. A
// kernel that crashed (a splat, and the results cut short or missing) is a
// failed test of the kernel under test, not a harness fault.
func judge(res *Result, o *Options) {
	res.Evidence = collectEvidence(res.KTAP)
	res.Repro = collectRepro(res.KTAP)
	defer judgeRepro(res)
	defer noteKnown(res)
	crashed := len(res.Splats) > 0 && (res.KTAP == nil || !res.KTAP.Complete() || res.TimedOut)
	switch {
	case crashed:
		s := res.Splats[0]
		res.Verdict = vocab.Fail
		res.Reason = fmt.Sprintf("the kernel crashed: %q at console line %d, before the tests finished: %s", s.Kind, s.Line, strings.Join(s.Excerpt, " | "))
	case res.TimedOut:
		res.Verdict = vocab.Error
	case res.KTAP == nil:
		res.Verdict, res.Reason = vocab.Error, "the guest printed no KTAP results (see the console tail)"
	case res.KTAP.Bail != "":
		res.Verdict, res.Reason = vocab.Error, "the guest bailed out: "+res.KTAP.Bail
	case !res.KTAP.Complete():
		res.Verdict, res.Reason = vocab.Error, "the KTAP results are cut short"
	}
	if res.Verdict != "" {
		return
	}
	c := res.KTAP.Count()
	switch {
	case c.Fail > 0:
		var failed []string
		walkFailed(res.KTAP, "", &failed)
		res.Verdict, res.Reason = vocab.Fail, fmt.Sprintf("%d of %d tests failed: %s", c.Fail, c.Fail+c.Pass+c.Skip, strings.Join(failed, ", "))
		// The guest's dmesg test fails on a report of the kernel's: say
		// which, in its own words (a KASAN report names the access and
		// the function), not only that the dmesg test failed.
		if len(res.Splats) > 0 {
			res.Reason += fmt.Sprintf("; the kernel reported %q (console line %d)", res.Splats[0].words(), res.Splats[0].Line)
		}
	case len(res.Splats) > 0:
		res.Verdict, res.Reason = vocab.Fail, fmt.Sprintf("kernel reported %q (console line %d)", res.Splats[0].words(), res.Splats[0].Line)
	default:
		res.Verdict = vocab.Pass
		res.Reason = fmt.Sprintf("%d tests passed", c.Pass)
	}
}

// collectEvidence finds the agent's typed evidence lines in the results.
func collectEvidence(t *ktap.Test) []*guestconf.Evidence {
	if t == nil {
		return nil
	}
	var out []*guestconf.Evidence
	for _, d := range t.Diagnostics {
		if e, ok := guestconf.ParseEvidence(d); ok {
			out = append(out, e)
		}
	}
	for _, s := range t.Subtests {
		out = append(out, collectEvidence(s)...)
	}
	return out
}

func walkFailed(t *ktap.Test, prefix string, out *[]string) {
	for _, s := range t.Subtests {
		name := strings.TrimPrefix(prefix+"."+s.Name, ".")
		if len(s.Subtests) > 0 {
			walkFailed(s, name, out)
		} else if !s.OK && !s.Skip {
			*out = append(*out, name)
		}
	}
}
