package boot

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/ktap"
	"github.com/patchctl/patchctl/internal/progress"
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
	// IB_SEND_INLINE (verbs inline); false: they must not.
	ExpectInline bool
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
	Progress     *progress.Reporter
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
	Kernel       string     `json:"kernel"`
	Variant      string     `json:"variant"`
	Accel        string     `json:"accel"`
	Command      []string   `json:"command"`
	ConsoleLog   string     `json:"console_log"`
	KTAP         *ktap.Test `json:"ktap,omitempty"`
	Splats       []Splat    `json:"splats,omitempty"`
	TimedOut     bool       `json:"timed_out"`
	Phase        string     `json:"phase"` // where it was when it ended
	Tail         []string   `json:"console_tail,omitempty"`
	Verdict      string     `json:"verdict"` // pass, fail, error
	Reason       string     `json:"reason,omitempty"`
	Duration     float64    `json:"duration_s"`
	ExpectInline bool       `json:"expect_inline"`
}

// splatPatterns are the console lines that fail a boot.
var splatPatterns = []string{"Kernel panic", "kernel BUG at", "WARNING:", "BUG:", "Oops:", "possible recursive locking",
	"circular locking", "general protection fault", "suspicious RCU usage", "Call Trace:"}

// Accel picks KVM when it really runs guest code here, TCG otherwise.
// PATCHCTL_ACCEL=tcg|kvm overrides the probe.
func Accel() string {
	if a := os.Getenv("PATCHCTL_ACCEL"); a == "tcg" || a == "kvm" {
		return a
	}
	if kvmRunsCode() {
		return "kvm"
	}
	return "tcg"
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

// Run boots the kernel and runs the tests. An error means the harness
// could not run (exit 2); a failed test is a Result with verdict "fail".
func Run(ctx context.Context, o Options) (*Result, error) {
	o.defaults()
	start := time.Now()
	if _, err := exec.LookPath(o.QEMU); err != nil {
		return nil, fmt.Errorf("%s not found: install qemu-system-x86 (or run make deps): %w", o.QEMU, errs.ErrInput)
	}
	if !fileExists(o.BzImage) {
		return nil, fmt.Errorf("no kernel image at %s: run patchctl build first: %w", o.BzImage, errs.ErrInput)
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
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, err
	}
	agentBin := filepath.Join(o.OutDir, "agent")
	if err := BuildAgent(ctx, o.Root, agentBin); err != nil {
		return nil, err
	}
	agent, err := os.ReadFile(agentBin)
	if err != nil {
		return nil, err
	}
	// Boot a copy: a rebuild of the same folder while the VM starts cannot
	// change the kernel under it.
	img, err := os.ReadFile(o.BzImage)
	if err != nil {
		return nil, err
	}
	o.BzImage = filepath.Join(o.OutDir, "bzImage")
	if err := os.WriteFile(o.BzImage, img, 0o644); err != nil {
		return nil, err
	}
	initrd := filepath.Join(o.OutDir, "initramfs.cpio")
	if err := Initramfs(initrd, agent, g); err != nil {
		return nil, err
	}
	res := &Result{Kernel: o.Kernel, Variant: o.Variant, Accel: Accel(), ConsoleLog: filepath.Join(o.OutDir, "console.log"), ExpectInline: o.ExpectInline}
	res.Command = Command(&o, res.Accel, initrd)
	if err := runQEMU(ctx, &o, res); err != nil {
		return nil, err
	}
	res.Duration = time.Since(start).Seconds()
	judge(res, &o)
	if b, err := json.MarshalIndent(res, "", "  "); err == nil {
		os.WriteFile(filepath.Join(o.OutDir, "result.json"), append(b, '\n'), 0o644)
	}
	return res, nil
}

// runQEMU runs the VM, tees the console to the log, and kills the VM when
// a phase takes too long.
func runQEMU(ctx context.Context, o *Options, res *Result) error {
	logf, err := os.Create(res.ConsoleLog)
	if err != nil {
		return err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "# %s\n", shellQuote(res.Command))
	ctx, cancel := context.WithTimeout(ctx, o.TotalTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, res.Command[0], res.Command[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Stdin = nil
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = cmd.Stdout
	o.Progress.Start(fmt.Sprintf("boot %s %s (%s)", o.Kernel, o.Variant, res.Accel))
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting qemu: %w", err)
	}

	var mu sync.Mutex
	var lines []string
	phase := "boot"
	last := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
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
	go func() { <-done; waitErr <- cmd.Wait() }()
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
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) && !res.TimedOut {
				return fmt.Errorf("qemu: %w", err)
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
				cmd.Cancel()
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
		for _, p := range splatPatterns {
			if !strings.Contains(lines[i], p) {
				continue
			}
			from, to := max(i-3, 0), min(i+12, len(lines))
			out = append(out, Splat{Kind: p, Line: i + 2, Excerpt: append([]string(nil), lines[from:to]...)})
			i = to - 1 // one report, one splat
			break
		}
	}
	return out
}

// judge sets the verdict from the KTAP results, splats and timeouts.
func judge(res *Result, o *Options) {
	switch {
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

func shellQuote(args []string) string {
	var q []string
	for _, a := range args {
		if strings.ContainsAny(a, " \"'$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q = append(q, a)
	}
	return strings.Join(q, " ")
}
