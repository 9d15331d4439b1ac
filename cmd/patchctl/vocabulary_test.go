package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/spf13/cobra"
)

// TestCompletion: patchctl __complete knows the kernels of the lock, the
// series, the fragments and the enum flags' words, on every verb that
// has the flag.
func TestCompletion(t *testing.T) {
	root := "../.."
	lock, err := tree.LoadLock(filepath.Join(root, "series", "kernels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	kernels := strings.Join(lock.Names(), "\n")
	series, _ := os.ReadDir(filepath.Join(root, "patches"))
	var seriesNames []string
	for _, e := range series {
		if e.IsDir() {
			seriesNames = append(seriesNames, e.Name())
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--kernel", ""}, kernels},
		{[]string{"apply", "--kernel", ""}, kernels},
		{[]string{"boot", "--kernel", ""}, kernels},
		{[]string{"tree", "prepare", "--kernel", ""}, kernels},
		{[]string{"boot", "--variant", ""}, "baseline\npatched"},
		{[]string{"run", "--transport", ""}, "rxe\nsiw\nall"},
		{[]string{"check", "--format", ""}, "text\njson\nsarif"},
		{[]string{"boot", "--accel", ""}, "auto\nkvm\ntcg\ntcg-multi"},
		{[]string{"bench", "--kernel", ""}, kernels},
		{[]string{"apply", "--series", ""}, strings.Join(seriesNames, "\n")},
		{[]string{"build", "--fragment", ""}, strings.Join(fragmentNames(t, root), "\n")},
	} {
		code, out, errOut := run(t, append([]string{"--root", root, "__complete"}, c.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d %s", c.args, code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		got := strings.Join(lines[:len(lines)-1], "\n") // the last line is cobra's directive
		if got != c.want {
			t.Errorf("__complete %v:\n%s\nwant:\n%s", c.args, got, c.want)
		}
	}
}

// TestOneFlagVocabulary: a one-kernel verb refuses a second --kernel, an
// enum flag's bad word is refused on every verb before any work (exit 2,
// the words it takes named).
func TestOneFlagVocabulary(t *testing.T) {
	for _, verb := range [][]string{{"apply"}, {"build"}, {"boot"}, {"check"}, {"refresh"}, {"bench"}} {
		code, _, errOut := run(t, append(append([]string{"--root", "../.."}, verb...), "--kernel", testkernel.Default, "--kernel", "6.1")...)
		if code != 2 || !strings.Contains(errOut, "--kernel given twice (6.12, then 6.1)") {
			t.Errorf("%v --kernel twice: exit %d %s", verb, code, errOut)
		}
	}
	for _, c := range [][]string{
		{"boot", "--variant", "patch"}, {"build", "--variant", "patch"},
		{"boot", "--transport", "ib"}, {"run", "--transport", "ib"},
		{"boot", "--accel", "xen"}, {"run", "--accel", "xen"}, {"check", "--format", "xml"},
		{"bench", "--transport", "ib"}, {"bench", "--accel", "xen"},
	} {
		code, _, errOut := run(t, append([]string{"--root", "../.."}, c...)...)
		if code != 2 || !strings.Contains(errOut, "is not a "+strings.TrimPrefix(c[1], "--")+": want ") {
			t.Errorf("%v: exit %d %s", c, code, errOut)
		}
	}
}

// TestJSONEverywhere: every verb with a result takes --json (check keeps
// --format); tree list and matrix print JSON with it.
func TestJSONEverywhere(t *testing.T) {
	root := newRootCmd(&IOStreams{In: strings.NewReader(""), Out: &strings.Builder{}, ErrOut: &strings.Builder{}})
	for _, path := range [][]string{{"import"}, {"tree", "prepare"}, {"tree", "list"}, {"tree", "verify"}, {"apply"}, {"refresh"}, {"build"}, {"boot"}, {"run"}, {"bench"}, {"matrix"}} {
		c, _, err := root.Find(path)
		if err != nil || c.Flags().Lookup("json") == nil {
			t.Errorf("%v has no --json (%v)", path, err)
		}
	}
	code, out, errOut := run(t, "--root", "../..", "tree", "list", "--json")
	var list []pipeline.ListedTree
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) < 2 || list[0].Kernel == "" {
		t.Errorf("tree list --json: exit %d %s %s", code, out, errOut)
	}
	code, out, errOut = run(t, "--root", "../..", "matrix", "--json")
	var m struct{ Include []pipeline.MatrixEntry }
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil || len(m.Include) != len(list) {
		t.Errorf("matrix --json: exit %d %s %s", code, out, errOut)
	}
}

// TestOfflineFreshCache: --offline on a fresh cache downloads nothing and
// says what it would have fetched (exit 3).
func TestOfflineFreshCache(t *testing.T) {
	code, _, errOut := run(t, "--root", "../..", "--cache", t.TempDir(), "--offline", "tree", "prepare", "--kernel", "6.1")
	if code != 3 || !strings.Contains(errOut, "linux-source-6.1=") || !strings.Contains(errOut, "is not in the cache") || !strings.Contains(errOut, "run without --offline") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// TestHelpExamplesAndTerms: every verb's help has two or more examples and
// explains the terms its flags use.
func TestHelpExamplesAndTerms(t *testing.T) {
	root := newRootCmd(&IOStreams{In: strings.NewReader(""), Out: &strings.Builder{}, ErrOut: &strings.Builder{}})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.Hidden && c.Name() != "help" && c.Name() != "completion" && c != root {
			n := 0
			for _, l := range strings.Split(c.Example, "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), "patchctl ") {
					n++
				}
			}
			if n < 2 {
				t.Errorf("%s: %d examples:\n%s", c.CommandPath(), n, c.Example)
			}
			checks := map[string]string{"kernel": "the lock's default", "fragment": "kernel-<name>.config", "out": "relative to the current folder", "variant": "baseline is the pristine tree"}
			for flag, want := range checks {
				if c.Flags().Lookup(flag) != nil && !strings.Contains(strings.ToLower(c.Long), strings.ToLower(want)) {
					t.Errorf("%s has --%s but its help does not explain %q", c.CommandPath(), flag, want)
				}
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// TestImportOutOneRule: import --out is relative to the current folder,
// and without it the patches go to the repository's out/import wherever
// patchctl runs in the repository (not series/out/import).
func TestImportOutOneRule(t *testing.T) {
	repo, _ := filepath.Abs("../..")
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	rel := t.TempDir()
	os.Chdir(rel)
	code, _, errOut := run(t, "--root", repo, "import", "--out", "given", filepath.Join(repo, "patches", "nvme-rdma-inline-capsule"))
	if code != 0 {
		t.Fatalf("exit %d %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(rel, "given", "nvme-rdma-inline-capsule")); err != nil {
		t.Errorf("--out given is not relative to the current folder: %v", err)
	}
	// Without --out, from a folder inside a copy of the repository.
	cp := t.TempDir()
	os.MkdirAll(filepath.Join(cp, "series"), 0o755)
	b, _ := os.ReadFile(filepath.Join(repo, "series", "kernels.yaml"))
	os.WriteFile(filepath.Join(cp, "series", "kernels.yaml"), b, 0o644)
	os.Chdir(filepath.Join(cp, "series"))
	code, out, errOut := run(t, "import", filepath.Join(repo, "patches", "nvme-rdma-inline-capsule"))
	if code != 0 {
		t.Fatalf("exit %d %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(cp, "out", "import", "nvme-rdma-inline-capsule")); err != nil || !strings.Contains(out, filepath.Join(cp, "out", "import")) {
		t.Errorf("the default is not the repository's out/import: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(cp, "series", "out")); err == nil {
		t.Error("series/out was made")
	}
}

// TestBootBeforeBuild: booting a kernel that was not built names the
// exact build command (with the cache and fragments given).
func TestBootBeforeBuild(t *testing.T) {
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 not installed")
	}
	// The shared cache's 6.1 tree (a fresh cache would download and
	// extract it for this one message), with fragments no build uses.
	testenv.KernelIfTested(t, "6.1")
	cache := testenv.Cache().Dir
	code, _, errOut := run(t, "--root", "../..", "--cache", cache, "boot", "--kernel", "6.1", "--variant", "baseline", "--fragment", "base,debug")
	want := "run `patchctl --root ../.. --cache " + cache + " build --kernel 6.1 --variant baseline --fragment base,debug` first"
	if code != 2 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d: %s\nwant %s", code, errOut, want)
	}
}

// TestBootPrintQEMU: boot --print-qemu writes the image and initramfs and
// prints a command line a shell reads back, without booting (the 6.12
// build in the cache).
func TestBootPrintQEMU(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: needs the 6.12 build")
	}
	out := t.TempDir()
	code, stdout, errOut := run(t, "--root", "../..", "boot", "--kernel", testkernel.Default, "--print-qemu", "--shell", "--out", out, "--cmdline", "dyndbg='file rdma.c +p'")
	if code == 2 && strings.Contains(errOut, "not built yet") {
		t.Skip("6.12 not built")
	}
	if code != 0 {
		t.Fatalf("exit %d %s", code, errOut)
	}
	for _, f := range []string{"bzImage", "initramfs.cpio"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "console.log")); err == nil {
		t.Error("--print-qemu booted")
	}
	line := strings.TrimSpace(stdout)
	b, err := exec.Command("sh", "-c", `for a in `+line+`; do printf '%s\n' "$a"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(strings.TrimSpace(string(b)), "\n")
	if args[0] != "qemu-system-x86_64" || !strings.Contains(line, "-append '") || !strings.HasSuffix(args[slices.Index(args, "-append")+1], "dyndbg='file rdma.c +p'") {
		t.Errorf("command %s read back as %q", line, args)
	}
}

// fragmentNames lists kconfig/*.config by name, as completion should.
func fragmentNames(t *testing.T, root string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(root, "kconfig", "*.config"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no fragments in %s/kconfig: %v", root, err)
	}
	var out []string
	for _, p := range m {
		out = append(out, strings.TrimSuffix(filepath.Base(p), ".config"))
	}
	sort.Strings(out)
	return out
}
