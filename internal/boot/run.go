package boot

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/fsutil"
	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/ktap"
	"github.com/patchctl/patchctl/internal/progress"
	"github.com/patchctl/patchctl/internal/run"
	"github.com/patchctl/patchctl/internal/stage"
)

// Options say what to boot and test.
type Options struct {
	Root       string // repository (qemu/agent)
	Kernel     string // name, for reports
	Variant    string // baseline or patched
	BzImage    string
	BuildDir   string // for .config and DWARF
	OutDir     string // console log, initramfs, result.json
	Transports []string
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
	// Accel is kvm or tcg; "" or "auto" probes (KVM when it really runs
	// guest code here).
	Accel    string
	Progress *progress.Reporter
}

// DefaultSizes cover writes below, at and above the 16 KiB in-capsule size.
var DefaultSizes = []int{512, 1024, 4096, 8192, 16384, 32768}

// Splat is a kernel error report found on the console.
type Splat struct {
	Kind    string   `json:"kind"`
	Line    int      `json:"line"`
	Excerpt []string `json:"excerpt"`
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
	Verdict      string           `json:"verdict"` // pass, fail, error
	Reason       string           `json:"reason,omitempty"`
	Duration     float64          `json:"duration_s"`
	ExpectInline guestconf.Expect `json:"expect_inline,omitempty"`
	// Evidence is the inline evidence per transport, as the agent
	// reported it (typed, see guestconf.Evidence).
	Evidence []*guestconf.Evidence `json:"evidence,omitempty"`
}

// Accel picks KVM when it really runs guest code here, TCG otherwise.
func Accel() string {
	if kvmRunsCode() {
		return "kvm"
	}
	return "tcg"
}

// ParseAccel checks an --accel value: auto, kvm or tcg.
func ParseAccel(s string) (string, error) {
	switch s {
	case "", "auto":
		return "", nil
	case "kvm", "tcg":
		return s, nil
	}
	return "", fmt.Errorf("accel %q: want auto, kvm or tcg: %w", s, errs.ErrUsage)
}

func (o *Options) defaults() {
	if len(o.Transports) == 0 {
		o.Transports = []string{"rxe", "siw"}
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

// Command is the QEMU command line for a kernel and initramfs.
func Command(o *Options, accel, initrd string) []string {
	cmdline := "console=ttyS0 panic=-1 loglevel=5 null_blk.memory_backed=1 null_blk.gb=1"
	if o.Cmdline != "" {
		cmdline += " " + o.Cmdline
	}
	args := []string{o.QEMU, "-accel", accel, "-m", o.Memory, "-smp", fmt.Sprint(o.CPUs),
		"-nographic", "-no-reboot", "-kernel", o.BzImage, "-initrd", initrd, "-append", cmdline,
		"-nic", "user,model=virtio-net-pci,restrict=on"}
	if accel == "kvm" {
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
	if _, err := run.LookPath(o.QEMU); err != nil {
		return nil, fmt.Errorf("%s not found: install qemu-system-x86 (or run make deps): %w", o.QEMU, errs.ErrEnv)
	}
	if !fileExists(o.BzImage) {
		return nil, fmt.Errorf("no kernel image at %s: run patchctl build --kernel %s --variant %s first: %w", o.BzImage, o.Kernel, o.Variant, errs.ErrInput)
	}
	if err := checkKernel(o.BuildDir, o.Transports); err != nil {
		return nil, err
	}
	g := GuestConfig{Transports: o.Transports, InlineDataSize: o.InlineDataSize, ExpectInline: o.ExpectInline,
		Sizes: o.Sizes, Iterations: o.Iterations, Seed: 1, Address: "192.0.2.10/24",
		NQN: "nqn.2026-11.dev.patchctl:loopback", Stop: o.Stop}
	if err := wrLayout(o.BuildDir, &g); err != nil {
		return nil, err
	}
	agent, err := BuildAgent(ctx, o.Root)
	if err != nil {
		return nil, err
	}
	p := &Prepared{o: o, guest: g, agent: agent, accel: o.Accel}
	if p.accel == "" {
		p.accel = Accel()
	}
	p.key, err = stage.NewKey("boot").Code().Bytes("agent", agent).JSON("guest", g).File(o.BzImage).
		Add("qemu", o.QEMU, o.Memory, strconv.Itoa(o.CPUs), o.Cmdline, p.accel).
		Add("timeouts", o.BootTimeout.String(), o.TestTimeout.String(), o.TotalTimeout.String()).Sum()
	if err != nil {
		return nil, fmt.Errorf("boot key: %w", err)
	}
	return p, nil
}

// Run boots the kernel and runs the tests. An error means the harness
// could not run (exit 3); a failed test is a Result with verdict "fail".
func Run(ctx context.Context, o Options) (*Result, error) {
	p, err := Prepare(ctx, o)
	if err != nil {
		return nil, err
	}
	return p.Run(ctx, o.OutDir)
}

// Run boots into outDir: the image's private copy, the initramfs, the
// console log and result.json.
func (p *Prepared) Run(ctx context.Context, outDir string) (*Result, error) {
	o := p.o
	o.OutDir = outDir
	start := time.Now()
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("boot output: %w", err)
	}
	// Boot a copy: a rebuild of the same folder while the VM starts cannot
	// change the kernel under it.
	img := filepath.Join(o.OutDir, "bzImage")
	if err := fsutil.CopyFile(o.BzImage, img); err != nil {
		return nil, fmt.Errorf("copying the kernel image: %w", err)
	}
	o.BzImage = img
	initrd := filepath.Join(o.OutDir, "initramfs.cpio")
	if err := Initramfs(initrd, p.agent, p.guest); err != nil {
		return nil, err
	}
	res := &Result{Kernel: o.Kernel, Variant: o.Variant, Accel: p.accel, ConsoleLog: filepath.Join(o.OutDir, "console.log"), ExpectInline: o.ExpectInline}
	res.Command = Command(&o, res.Accel, initrd)
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
	fmt.Fprintf(logf, "# %s\n", run.Quote(res.Command))
	ctx, cancel := context.WithTimeout(ctx, o.TotalTimeout)
	defer cancel()
	pr, pw := io.Pipe()
	cmd := &run.Cmd{Name: res.Command[0], Args: res.Command[1:], Stdout: pw, Signal: syscall.SIGKILL, WaitDelay: 5 * time.Second}
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
			l := strings.TrimRight(sc.Text(), "\r")
			fmt.Fprintln(logf, l)
			mu.Lock()
			lines = append(lines, l)
			switch t := strings.TrimSpace(l); {
			case strings.Contains(l, "patchctl-agent: started"): // firmware escapes may precede it
				phase, last = "tests", time.Now()
			case strings.HasPrefix(t, "ok ") || strings.HasPrefix(t, "not ok "):
				last = time.Now()
				o.Progress.Update("%s", t)
			case strings.Contains(l, "patchctl-agent: done"):
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
			res.Splats = findSplats(lines)
			var re *run.Error
			if err != nil && !errors.As(err, &re) && !res.TimedOut {
				return fmt.Errorf("qemu: %w: %w", err, errs.ErrEnv)
			}
			o.Progress.Done("qemu exited after %s in phase %s", time.Since(started).Round(time.Second), res.Phase)
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
			if !res.TimedOut && time.Since(since) > limit {
				res.TimedOut = true
				res.Reason = fmt.Sprintf("no progress in phase %s for %s: the VM was killed", phase, limit)
				proc.Kill()
			}
			mu.Unlock()
		}
	}
}

func tail(lines []string, n int) []string {
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return append([]string(nil), lines...)
}

// findSplats finds kernel error reports, with context.
func findSplats(lines []string) []Splat {
	var out []Splat
	for i := 0; i < len(lines); i++ {
		if p := guestconf.SplatIn(lines[i]); p != "" {
			from, to := max(i-3, 0), min(i+12, len(lines))
			out = append(out, Splat{Kind: p, Line: i + 2, Excerpt: append([]string(nil), lines[from:to]...)})
			i = to - 1 // one report, one splat
		}
	}
	return out
}

// judge sets the verdict from the KTAP results, splats and timeouts. A
// kernel that crashed (a splat, and the results cut short or missing) is a
// failed test of the kernel under test, not a harness fault.
func judge(res *Result, o *Options) {
	res.Evidence = collectEvidence(res.KTAP)
	crashed := len(res.Splats) > 0 && (res.KTAP == nil || !res.KTAP.Complete() || res.TimedOut)
	switch {
	case crashed:
		s := res.Splats[0]
		res.Verdict = "fail"
		res.Reason = fmt.Sprintf("the kernel crashed: %q at console line %d, before the tests finished: %s", s.Kind, s.Line, strings.Join(s.Excerpt, " | "))
	case res.TimedOut:
		res.Verdict = "error"
	case res.KTAP == nil:
		res.Verdict, res.Reason = "error", "the guest printed no KTAP results (see the console tail)"
	case res.KTAP.Bail != "":
		res.Verdict, res.Reason = "error", "the guest bailed out: "+res.KTAP.Bail
	case !res.KTAP.Complete():
		res.Verdict, res.Reason = "error", "the KTAP results are cut short"
	}
	if res.Verdict != "" {
		return
	}
	c := res.KTAP.Count()
	switch {
	case c.Fail > 0:
		var failed []string
		walkFailed(res.KTAP, "", &failed)
		res.Verdict, res.Reason = "fail", fmt.Sprintf("%d of %d tests failed: %s", c.Fail, c.Fail+c.Pass+c.Skip, strings.Join(failed, ", "))
	case len(res.Splats) > 0:
		res.Verdict, res.Reason = "fail", fmt.Sprintf("kernel reported %q (console line %d)", res.Splats[0].Kind, res.Splats[0].Line)
	default:
		res.Verdict = "pass"
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
