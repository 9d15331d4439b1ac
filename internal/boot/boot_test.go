package boot

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/u-root/u-root/pkg/cpio"
)

// fakeBuild makes a build folder with a .config and an object whose DWARF
// has the verbs layout, as a kernel build with debug info has.
func fakeBuild(t *testing.T, config string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ".config"), []byte(config), 0o644)
	obj := filepath.Join(dir, "drivers/infiniband/sw/rxe/rxe_verbs.o")
	os.MkdirAll(filepath.Dir(obj), 0o755)
	src := filepath.Join(dir, "v.c")
	os.WriteFile(src, []byte(`
enum ib_wr_opcode { IB_WR_RDMA_WRITE, IB_WR_RDMA_READ = 4, IB_WR_SEND = 2, IB_WR_LOCAL_INV = 7, IB_WR_REG_MR = 0x20 };
enum ib_send_flags { IB_SEND_SIGNALED = 2, IB_SEND_INLINE = 8 };
struct ib_sge { unsigned long long addr; unsigned int length; unsigned int lkey; };
struct ib_send_wr { struct ib_send_wr *next; unsigned long long id; struct ib_sge *sg_list; int num_sge; enum ib_wr_opcode opcode; int send_flags; };
struct ib_send_wr w;
int f(enum ib_send_flags x) { return x == IB_SEND_INLINE; }
`), 0o644)
	if out, err := exec.Command("gcc", "-g", "-c", src, "-o", obj).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, out)
	}
	os.MkdirAll(filepath.Join(dir, "arch/x86/boot"), 0o755)
	os.WriteFile(filepath.Join(dir, "arch/x86/boot/bzImage"), []byte("not a kernel"), 0o644)
	return dir
}

var fullConfig = func() string {
	var b strings.Builder
	for _, s := range guestconf.RequiredConfig([]string{"rxe", "siw"}) {
		b.WriteString("CONFIG_" + s + "=y\n")
	}
	return b.String()
}()

// fakeQEMU is a qemu stand-in printing script's lines (a line "SLEEP"
// hangs).
func fakeQEMU(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "qemu-system-x86_64")
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	b.WriteString(`for a in "$@"; do case "$a" in *initramfs.cpio) test -s "$a" || { echo "no initramfs"; exit 3; };; esac; done` + "\n")
	for _, l := range strings.Split(strings.TrimSuffix(script, "\n"), "\n") {
		if l == "SLEEP" {
			b.WriteString("sleep 600\n")
			continue
		}
		b.WriteString("printf '%s\\n' '" + strings.ReplaceAll(l, "'", `'\''`) + "'\n")
	}
	os.WriteFile(p, []byte(b.String()), 0o755)
	return p
}

const passingRun = `Linux version 6.12.117 (patchctl@patchctl)
Run /init as init process
patchctl-agent: started after 3ms, transports rxe
KTAP version 1
1..1
    KTAP version 1
    # Subtest: rxe
    1..2
    ok 1 link
    # patchctl-evidence: {"transport":"rxe","inline":40,"by_reference":0,"wrs":[{"opcode":"SEND","flags":10,"num_sge":1,"len0":64,"count":40}]}
    ok 2 inline_evidence
ok 1 rxe
patchctl-agent: done after 2s`

func opts(t *testing.T, qemu string) Options {
	dir := fakeBuild(t, fullConfig)
	return Options{Root: testenv.RepoRoot(t), Kernel: testkernel.Default, Variant: "patched", BzImage: filepath.Join(dir, "arch/x86/boot/bzImage"),
		BuildDir: dir, OutDir: t.TempDir(), Transports: []string{"rxe"}, QEMU: qemu, ExpectInline: guestconf.ExpectInline,
		BootTimeout: 3 * time.Second, TestTimeout: 3 * time.Second, TotalTimeout: time.Minute}
}

func TestRunPass(t *testing.T) {
	o := opts(t, fakeQEMU(t, passingRun))
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != "PASS" || res.TimedOut || res.KTAP.Find("rxe") == nil {
		t.Fatalf("result %+v", res)
	}
	if len(res.Evidence) != 1 || res.Evidence[0].Transport != "rxe" || res.Evidence[0].Inline != 40 || res.Evidence[0].WRs[0].Opcode != "SEND" {
		t.Errorf("typed evidence %+v", res.Evidence)
	}
	cmd := strings.Join(res.Command, " ")
	// The VM boots a private copy of the image (a rebuild cannot swap it).
	copied := filepath.Join(o.OutDir, "bzImage")
	orig, _ := os.ReadFile(o.BzImage)
	if got, _ := os.ReadFile(copied); string(got) != string(orig) {
		t.Error("the booted image is not a copy of the build's")
	}
	for _, want := range []string{"-no-reboot", "-nographic", "-vga none", "restrict=on", "romfile=", "console=ttyS0", "panic=-1", "no_timer_check", "null_blk.memory_backed=1", "-kernel " + copied} {
		if !strings.Contains(cmd, want) {
			t.Errorf("command line lacks %q: %s", want, cmd)
		}
	}
	if res.Accel != Accel() {
		t.Errorf("accel %s", res.Accel)
	}
	log, _ := os.ReadFile(res.ConsoleLog)
	if !strings.HasPrefix(string(log), "# "+o.QEMU) || !strings.Contains(string(log), "ok 1 rxe") {
		t.Errorf("console log does not start with the command line or lacks the run:\n%s", log)
	}
	// The initramfs holds the agent as /init, its config and /dev/console.
	f, err := os.Open(filepath.Join(o.OutDir, "initramfs.cpio"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rr := cpio.Newc.Reader(f)
	got := map[string]cpio.Record{}
	for {
		r, err := rr.ReadRecord()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got[r.Name] = r
	}
	for _, n := range []string{"init", "patchctl.json", "dev/console", "dev", "proc", "sys"} {
		if _, ok := got[n]; !ok {
			t.Errorf("initramfs lacks %s", n)
		}
	}
	if c := got["dev/console"]; c.Mode&cpio.S_IFMT != cpio.S_IFCHR || c.Rmajor != 5 || c.Rminor != 1 {
		t.Errorf("dev/console is not char 5,1: %+v", c.Info)
	}
	conf := make([]byte, got["patchctl.json"].FileSize)
	got["patchctl.json"].ReadAt(conf, 0)
	for _, want := range []string{`"opcode": 28`, `"send_flags": 32`, `"REG_MR": 32`, `"INLINE": 8`, `"rxe": "rxe_post_send"`, `"expect_inline": "inline"`, `"inline_data_size": 16384`} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("guest config lacks %s:\n%s", want, conf)
		}
	}
	if got["init"].Mode&0o111 == 0 || got["init"].FileSize < 1<<20 {
		t.Errorf("init is not the agent binary: %+v", got["init"].Info)
	}
}

func TestRunTimeouts(t *testing.T) {
	cases := []struct {
		name, script, phase string
	}{
		{"hang in boot", "Linux version 6.12\nRun /init as init process\nSLEEP", "boot"},
		{"hang after firmware escapes", "\x1b[2JBooting from ROM..\x1b[?7lpatchctl-agent: started after 1ms\nSLEEP", "tests"},
		{"hang in a test", "patchctl-agent: started after 1ms\nKTAP version 1\n1..1\n    KTAP version 1\n    1..3\n    ok 1 link\nSLEEP", "tests"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := opts(t, fakeQEMU(t, c.script))
			start := time.Now()
			res, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if !res.TimedOut || res.Phase != c.phase || res.Verdict != "ERROR" || !strings.Contains(res.Reason, "killed") {
				t.Errorf("result %+v", res)
			}
			// The tail is the console without terminal escapes.
			if len(res.Tail) == 0 || !strings.Contains(strings.Join(res.Tail, "\n"), StripEscapes(strings.Split(c.script, "\n")[0])) {
				t.Errorf("console tail missing: %q", res.Tail)
			}
			if time.Since(start) > 30*time.Second {
				t.Errorf("the hung VM was not killed in time")
			}
		})
	}
}

func TestRunSplatsAndFailures(t *testing.T) {
	splat := passingRun + "\n[   5.1] WARNING: CPU: 0 PID: 1 at drivers/infiniband/sw/rxe/rxe_verbs.c:900 rxe_post_send+0x1/0x2\n[   5.2] Call Trace:"
	res, err := Run(context.Background(), opts(t, fakeQEMU(t, splat)))
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != "FAIL" || len(res.Splats) != 1 || res.Splats[0].Kind != "WARNING:" || !strings.Contains(strings.Join(res.Splats[0].Excerpt, "\n"), "Call Trace:") {
		t.Errorf("splat: %+v", res)
	}
	// The reason names the report, not only its kind: a KASAN report
	// after the tests passed (the debug fragment's dmesg gate).
	kasan := passingRun + "\n[   6.1] ==================================================================\n[   6.1] BUG: KASAN: slab-use-after-free in nvmet_rdma_alloc_queue+0x4d2/0x1260 [nvmet_rdma]\n[   6.1] Read of size 1 at addr ffff888104a1e208 by task kworker/u8:2/95"
	res, err = Run(context.Background(), opts(t, fakeQEMU(t, kasan)))
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != "FAIL" || len(res.Splats) != 1 || res.Splats[0].Kind != "BUG:" || !strings.Contains(res.Reason, "BUG: KASAN: slab-use-after-free in nvmet_rdma_alloc_queue") {
		t.Errorf("KASAN report: %s %q %+v", res.Verdict, res.Reason, res.Splats)
	}
	failing := strings.Replace(passingRun, "    ok 2 inline_evidence\nok 1 rxe", "    not ok 2 inline_evidence\nnot ok 1 rxe", 1)
	res, err = Run(context.Background(), opts(t, fakeQEMU(t, failing)))
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != "FAIL" || !strings.Contains(res.Reason, "rxe.inline_evidence") {
		t.Errorf("failure: %+v", res)
	}
	// A failed test and a kernel report (the guest's dmesg test fails on
	// the KASAN report it read): the reason names both, the report in its
	// own words.
	both := failing + "\n[   6.1] BUG: KASAN: slab-use-after-free in nvmet_rdma_cm_handler+0x1311/0x219e [nvmet_rdma]\n[   6.1] Read of size 1"
	res, err = Run(context.Background(), opts(t, fakeQEMU(t, both)))
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != "FAIL" || !strings.Contains(res.Reason, "rxe.inline_evidence") || !strings.Contains(res.Reason, "BUG: KASAN: slab-use-after-free in nvmet_rdma_cm_handler") {
		t.Errorf("failure with a KASAN report: %q", res.Reason)
	}
	panicRun := "Linux version 6.12\nKernel panic - not syncing: Attempted to kill init! exitcode=0x00000100"
	res, err = Run(context.Background(), opts(t, fakeQEMU(t, panicRun)))
	if err != nil {
		t.Fatal(err)
	}
	// A kernel that panics failed its test: exit 1, with the excerpt,
	// not "the harness could not run".
	if res.Verdict != "FAIL" || len(res.Splats) != 1 || res.Splats[0].Kind != "Kernel panic" || !strings.Contains(res.Reason, "Attempted to kill init") {
		t.Errorf("panic: %+v", res)
	}
}

func TestRefusals(t *testing.T) {
	o := opts(t, fakeQEMU(t, passingRun))
	o.BuildDir = fakeBuild(t, strings.Replace(fullConfig, "CONFIG_RDMA_RXE=y\n", "", 1))
	_, err := Run(context.Background(), o)
	if !errors.Is(err, errs.ErrInput) || !strings.Contains(err.Error(), "CONFIG_RDMA_RXE") {
		t.Errorf("kernel without rxe: %v", err)
	}
	o = opts(t, filepath.Join(t.TempDir(), "no-qemu"))
	if _, err := Run(context.Background(), o); !errors.Is(err, errs.ErrEnv) || !strings.Contains(err.Error(), "qemu-system-x86") {
		t.Errorf("missing qemu: %v", err)
	}
}

// copyRepo copies the Go sources the agent builds from (go.mod, go.sum,
// internal/, qemu/) into a new folder.
func copyRepo(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	for _, top := range []string{"go.mod", "go.sum", "internal", "qemu"} {
		filepath.Walk(filepath.Join(src, top), func(p string, info os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			if info.IsDir() {
				return os.MkdirAll(filepath.Join(dst, rel), 0o755)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
		})
	}
	return dst
}

// TestKeyCoversAgentAndImage: the boot's key is stable for the same
// inputs and changes with the agent's code (its own package or the
// guest configuration it imports), the kernel image, and the options.
func TestKeyCoversAgentAndImage(t *testing.T) {
	o := opts(t, fakeQEMU(t, passingRun))
	ctx := context.Background()
	key := func(o Options) string {
		t.Helper()
		p, err := Prepare(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		return p.Key()
	}
	k1 := key(o)
	if k2 := key(o); k1 != k2 {
		t.Fatal("the same inputs give two keys: the agent build is not reproducible")
	}
	edits := map[string]func(o *Options){
		"agent": func(o *Options) {
			o.Root = copyRepo(t, o.Root)
			p := filepath.Join(o.Root, "qemu/agent/main.go")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), `"reading /patchctl.json: "`, `"cannot read /patchctl.json: "`, 1)), 0o644)
		},
		"guestconf": func(o *Options) {
			o.Root = copyRepo(t, o.Root)
			p := filepath.Join(o.Root, "internal/guestconf/results.go")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), `"Call Trace:", "UBSAN:"}`, `"Call Trace:", "UBSAN:", "EDITED:"}`, 1)), 0o644)
		},
		"image": func(o *Options) {
			p := filepath.Join(t.TempDir(), "bzImage")
			os.WriteFile(p, []byte("another kernel"), 0o644)
			o.BzImage = p
		},
		"inline size": func(o *Options) { o.InlineDataSize = 4096 },
		"transports":  func(o *Options) { o.Transports = []string{"rxe", "siw"} },
		"accel":       func(o *Options) { o.Accel = "kvm" },
		// One host thread or a thread per vCPU: the same emulator, another
		// QEMU command line (AccelArg).
		"TCG's threads": func(o *Options) { o.Accel = "tcg-multi" },
	}
	for name, edit := range edits {
		e := o
		edit(&e)
		if key(e) == k1 {
			t.Errorf("editing the %s does not change the boot's key", name)
		}
	}
}
