package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/patchctl/patchctl/internal/build"
	"github.com/patchctl/patchctl/internal/guestconf"
)

// The child side of the two-process tests: the test binary runs
// patchctl's command line with the arguments in PATCHCTL_TEST_ARGS.
func init() {
	a := os.Getenv("PATCHCTL_TEST_ARGS")
	if a == "" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(a), &args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(execute(args, stdIO()))
}

// fakeKbuild behaves like kbuild for what patchctl asks of it: the
// configuration targets, bzImage (the image is main.c's text, so it
// says which patch it carries), an object with the verbs' DWARF layout
// where the boot reads it, and main.o for the compile test.
const fakeKbuild = `O ?= $(CURDIR)
SRC := $(CURDIR)
.PHONY: tinyconfig olddefconfig bzImage main.o
tinyconfig:
	@printf 'CONFIG_A=y\n' > $(O)/.config
olddefconfig:
	@true
$(O)/main.o: $(SRC)/main.c
	@echo "  CC      main.o"
	@gcc -c $(SRC)/main.c -o $@
$(O)/drivers/infiniband/sw/rxe/rxe_verbs.o: $(SRC)/verbs.c
	@mkdir -p $(dir $@)
	@gcc -g -c $(SRC)/verbs.c -o $@
$(O)/arch/x86/boot/bzImage: $(O)/main.o $(O)/drivers/infiniband/sw/rxe/rxe_verbs.o
	@mkdir -p $(dir $@) $(O)/include/config
	@echo "  LD      bzImage"
	@cp $(SRC)/main.c $@; echo 9.9.0-fake > $(O)/include/config/kernel.release
bzImage: $(O)/arch/x86/boot/bzImage
main.o: $(O)/main.o
`

const fakeVerbs = `
enum ib_wr_opcode { IB_WR_RDMA_WRITE, IB_WR_RDMA_READ = 4, IB_WR_SEND = 2, IB_WR_LOCAL_INV = 7, IB_WR_REG_MR = 0x20 };
enum ib_send_flags { IB_SEND_SIGNALED = 2, IB_SEND_INLINE = 8 };
struct ib_sge { unsigned long long addr; unsigned int length; unsigned int lkey; };
struct ib_send_wr { struct ib_send_wr *next; unsigned long long id; struct ib_sge *sg_list; int num_sge; enum ib_wr_opcode opcode; int send_flags; };
struct ib_send_wr w;
int f(enum ib_send_flags x) { return x == IB_SEND_INLINE; }
`

const fakeMainC = "int main_fn(void)\n{\n\treturn 0;\n}\n"

// fakeQEMUScript is a qemu stand-in: it prints the sha256 of the kernel
// it was given (-kernel), then a passing run over rxe.
const fakeQEMUScript = `#!/bin/sh
k=""
while [ $# -gt 0 ]; do
	case "$1" in -kernel) k="$2"; shift;; esac
	shift
done
echo "Linux version 9.9.0-fake (patchctl@patchctl)"
echo "fake-qemu: kernel sha256 $(sha256sum "$k" | cut -d' ' -f1)"
echo "Run /init as init process"
echo "patchctl-agent: started after 3ms, transports rxe"
echo "KTAP version 1"
echo "1..1"
echo "    KTAP version 1"
echo "    # Subtest: rxe"
echo "    1..1"
echo "    ok 1 link"
if grep -q planted_uaf "$k"; then
	echo "[    2.000000] =================================================================="
	echo "[    2.000001] BUG: KASAN: slab-use-after-free in planted_uaf+0x1c/0x40"
	echo "[    2.000002] Read of size 4 at addr ffff888003f2a010 by task init/1"
fi
echo "ok 1 rxe"
echo "patchctl-agent: done after 2s"
`

// imagesProject is a project of its own (the repository's files, for
// the guest agent's source) whose one pinned kernel is a fake kbuild tree
// in git, with a fake qemu first on PATH.
func imagesProject(t *testing.T) (root, cache string) {
	t.Helper()
	for _, tool := range []string{"git", "make", "gcc", "go", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "Makefile"), []byte(fakeKbuild), 0o644)
	os.WriteFile(filepath.Join(src, "main.c"), []byte(fakeMainC), 0o644)
	os.WriteFile(filepath.Join(src, "verbs.c"), []byte(fakeVerbs), 0o644)
	os.WriteFile(filepath.Join(src, "Kconfig"), []byte("config A\n\tbool \"a\"\n"), 0o644)
	os.MkdirAll(filepath.Join(src, "scripts"), 0o755)
	os.WriteFile(filepath.Join(src, "scripts", "checkpatch.pl"), []byte("exit 0;\n"), 0o755)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "fake kernel"}, {"tag", "v9.9"}} {
		g := exec.Command("git", args...)
		g.Dir = src
		g.Env = append(os.Environ(), "HOME="+src, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org")
		if out, err := g.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	root = cleanClone(t)
	w := func(p, s string) {
		os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w("series/kernels.yaml", fmt.Sprintf("default: \"9.9\"\nkernels:\n  - name: \"9.9\"\n    git: {url: %q, tag: v9.9}\n", src))
	w("series/9.9/manifest.yaml", "kernel: \"9.9\"\npatches: []\n")
	var cfg strings.Builder
	cfg.WriteString("CONFIG_A=y\n")
	for _, s := range guestconf.RequiredConfig([]string{"rxe"}) {
		cfg.WriteString("CONFIG_" + s + "=y\n")
	}
	w("kconfig/base.config", cfg.String())
	w("kconfig/rdma-loopback.config", "CONFIG_A=y\n")
	w("kconfig/compile-test.config", "CONFIG_A=y\n")
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "qemu-system-x86_64"), []byte(fakeQEMUScript), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return root, t.TempDir()
}

// patchReturning is a patch of the fake kernel's main.c.
func patchReturning(n int) string {
	return fmt.Sprintf("From: Pat Developer <pat@example.org>\nSubject: [PATCH] main: return %d\n\nReturn %d.\n\nSigned-off-by: Pat Developer <pat@example.org>\n---\n"+
		"diff --git a/main.c b/main.c\n--- a/main.c\n+++ b/main.c\n@@ -1,4 +1,4 @@\n int main_fn(void)\n {\n-\treturn 0;\n+\treturn %d;\n }\n", n, n, n)
}

// child runs patchctl in a process of its own (the test binary).
func child(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	a, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PATCHCTL_TEST_ARGS="+string(a))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

func sha256Of(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestTwoTriesBootTheirOwnImages: two different patches through try, in
// two processes at once on one cache; then boot --image and bench
// --image of each output folder: each boots (and bench pins) its own
// image, by sha256, and says what it carries first; the default boot is
// the series of record's build, never the latest made by anyone.
func TestTwoTriesBootTheirOwnImages(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs patchctl in processes and builds the guest agent")
	}
	root, cache := imagesProject(t)
	dir := t.TempDir()
	type tried struct {
		n        int
		out      string
		code     int
		stdout   string
		stderr   string
		imageSHA string
		imageID  string
	}
	tries := []*tried{{n: 1}, {n: 2}}
	var wg sync.WaitGroup
	for _, tr := range tries {
		p := filepath.Join(dir, fmt.Sprintf("return-%d.patch", tr.n))
		os.WriteFile(p, []byte(patchReturning(tr.n)), 0o644)
		tr.out = filepath.Join(dir, fmt.Sprintf("out-%d", tr.n))
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr.code, tr.stdout, tr.stderr = child(t, "--root", root, "--cache", cache, "try", p, "--transport", "rxe", "--out", tr.out)
		}()
	}
	wg.Wait()
	for _, tr := range tries {
		if tr.code != 0 {
			t.Fatalf("try return-%d: exit %d\n%s\n%s", tr.n, tr.code, tr.stdout, tr.stderr)
		}
		// The thread summary once, on stdout.
		all := tr.stdout + tr.stderr
		if c := strings.Count(all, "taken: [PATCH] main: return"); c != 1 {
			t.Errorf("try return-%d: the thread summary printed %d times:\n%s\n%s", tr.n, c, tr.stdout, tr.stderr)
		}
		var res struct {
			Kernels []struct {
				Builds map[string]struct {
					ID      string            `json:"image_id"`
					SHA256  map[string]string `json:"sha256"`
					Patches []struct {
						Source, Disposition string
						DiffSHA256          string `json:"diff_sha256"`
					} `json:"patches"`
				}
			}
		}
		b, err := os.ReadFile(filepath.Join(tr.out, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &res); err != nil || len(res.Kernels) != 1 {
			t.Fatalf("result.json: %v", err)
		}
		p := res.Kernels[0].Builds["patched"]
		tr.imageSHA, tr.imageID = p.SHA256["bzImage"], p.ID
		if tr.imageID == "" || tr.imageSHA == "" || len(p.Patches) != 1 || p.Patches[0].Disposition != "applies" || p.Patches[0].DiffSHA256 == "" {
			t.Fatalf("try return-%d: the patched build is not named with what it carries: %+v", tr.n, p)
		}
		if !strings.Contains(tr.stdout, "image 9.9 patched: "+tr.imageID) {
			t.Errorf("try return-%d does not print its image:\n%s", tr.n, tr.stdout)
		}
	}
	if tries[0].imageID == tries[1].imageID || tries[0].imageSHA == tries[1].imageSHA {
		t.Fatalf("two patches, one image: %s %s", tries[0].imageID, tries[1].imageID)
	}
	for _, tr := range tries {
		// boot --image OUT, from a process of its own.
		bootOut := filepath.Join(dir, fmt.Sprintf("boot-%d", tr.n))
		code, stdout, stderr := child(t, "--root", root, "--cache", cache, "boot", "--image", tr.out, "--transport", "rxe", "--out", bootOut)
		if code != 0 {
			t.Fatalf("boot --image %s: exit %d\n%s\n%s", tr.out, code, stdout, stderr)
		}
		t.Logf("boot --image %s:\n%s%s", tr.out, stdout, stderr)
		if !strings.Contains(stderr, "image "+tr.imageID) || !strings.Contains(stderr, fmt.Sprintf("main: return %d", tr.n)) || !strings.Contains(stderr, "bzImage  sha256 "+tr.imageSHA) {
			t.Errorf("boot --image %s does not say what it boots first:\n%s", tr.out, stderr)
		}
		console, _ := os.ReadFile(filepath.Join(bootOut, "console.log"))
		if !strings.Contains(string(console), "fake-qemu: kernel sha256 "+tr.imageSHA) {
			t.Errorf("boot --image %s booted another image (want sha256 %s):\n%s", tr.out, tr.imageSHA, console)
		}
		if b, _ := os.ReadFile(filepath.Join(bootOut, "bzImage")); !strings.Contains(string(b), fmt.Sprintf("return %d;", tr.n)) {
			t.Errorf("boot --image %s: the image is not return-%d's:\n%s", tr.out, tr.n, b)
		}
		// The same by image id.
		code, _, stderr = child(t, "--root", root, "--cache", cache, "boot", "--image", tr.imageID, "--transport", "rxe", "--out", bootOut+"-id", "--print-qemu")
		if code != 0 || sha256Of(t, filepath.Join(bootOut+"-id", "bzImage")) != tr.imageSHA {
			t.Errorf("boot --image %s: exit %d\n%s", tr.imageID, code, stderr)
		}
		// bench --image OUT pins both images of the try: its own.
		benchOut := filepath.Join(dir, fmt.Sprintf("bench-%d", tr.n))
		_, _, stderr = child(t, "--root", root, "--cache", cache, "bench", "--image", tr.out, "--boots", "2", "--out", benchOut)
		if got := sha256Of(t, filepath.Join(benchOut, "kernels", "patched-bzImage")); got != tr.imageSHA {
			t.Errorf("bench --image %s pinned sha256 %s, want %s\n%s", tr.out, got, tr.imageSHA, stderr)
		}
		if !strings.Contains(stderr, "image "+tr.imageID) {
			t.Errorf("bench --image %s does not say what it boots:\n%s", tr.out, stderr)
		}
	}
	// Without --image: the series of record's build, which nobody built
	// (the tries' builds do not stand in for it).
	code, _, stderr := child(t, "--root", root, "--cache", cache, "boot", "--transport", "rxe", "--out", filepath.Join(dir, "boot-default"))
	if code != 2 || !strings.Contains(stderr, "not built yet") {
		t.Errorf("boot without --image: exit %d, want 2 naming the series of record's build:\n%s", code, stderr)
	}
	// A snapshot changed after its build is refused before the boot.
	snap, err := build.ImageDir(cache, tries[0].imageID)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(snap, "bzImage"), []byte("replaced"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = child(t, "--root", root, "--cache", cache, "boot", "--image", tries[0].out, "--transport", "rxe", "--out", filepath.Join(dir, "boot-tampered"))
	if code != 3 || !strings.Contains(stderr, "not the one its build recorded") {
		t.Errorf("boot of a changed image: exit %d, want 3:\n%s", code, stderr)
	}
}

// TestTryDebugFragment: try --fragment with the debug fragment builds an
// image of its own (another configuration, so another build key and
// image id) that carries the fragment, and a use-after-free report on
// the console of the patched boot (the fake qemu prints one for an image
// with a planted use-after-free) fails the dmesg gate.
func TestTryDebugFragment(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs patchctl in processes and builds the guest agent")
	}
	root, cache := imagesProject(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "uaf.patch")
	os.WriteFile(p, []byte(strings.Replace(patchReturning(3), "+\treturn 3;\n", "+\treturn 3; /* planted_uaf */\n", 1)), 0o644)
	type builds struct {
		Kernels []struct {
			Builds map[string]struct {
				ID        string   `json:"image_id"`
				Fragments []string `json:"fragments"`
			}
			Boots map[string]struct {
				Verdict string
				Splats  []struct{ Kind string }
			}
		}
	}
	read := func(out string) builds {
		var r builds
		b, _ := os.ReadFile(filepath.Join(out, "result.json"))
		if err := json.Unmarshal(b, &r); err != nil || len(r.Kernels) != 1 {
			t.Fatalf("%s/result.json: %v", out, err)
		}
		return r
	}
	def := filepath.Join(dir, "out-default")
	if code, stdout, stderr := child(t, "--root", root, "--cache", cache, "try", p, "--transport", "rxe", "--out", def); code != 1 {
		t.Fatalf("try without debug: exit %d, want 1 (the splat)\n%s\n%s", code, stdout, stderr)
	}
	dbg := filepath.Join(dir, "out-debug")
	code, stdout, stderr := child(t, "--root", root, "--cache", cache, "try", p, "--fragment", "base,rdma-loopback,debug", "--transport", "rxe", "--out", dbg)
	if code != 1 {
		t.Fatalf("try --fragment debug: exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	d, n := read(dbg).Kernels[0], read(def).Kernels[0]
	pd, pn := d.Builds["patched"], n.Builds["patched"]
	if strings.Join(pd.Fragments, ",") != "base,rdma-loopback,debug" || pd.ID == pn.ID || strings.Split(pd.ID, "/")[1] == strings.Split(pn.ID, "/")[1] {
		t.Errorf("the debug image is not one of its own: %+v vs %+v", pd, pn)
	}
	b := d.Boots["patched"]
	if b.Verdict != "FAIL" || len(b.Splats) == 0 || b.Splats[0].Kind != "BUG:" {
		t.Errorf("patched boot with a KASAN report: %+v", b)
	}
	if d.Boots["baseline"].Verdict != "PASS" {
		t.Errorf("baseline boot: %+v", d.Boots["baseline"])
	}
	if !strings.Contains(stdout, "BUG: KASAN") && !strings.Contains(stdout, "boot-patched") {
		t.Logf("summary:\n%s", stdout)
	}
}
