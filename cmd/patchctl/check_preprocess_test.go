package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/testenv"
)

// TestCheckPreprocessCLI: check --tree --preprocess --build-dir reads a
// file as the compiler sees it. A header macro that sets IB_SEND_INLINE
// on a request whose SGE holds a DMA address (the checks' own fixture
// hdr_flag_bug, laid out as a fake kernel tree with a kbuild .o.cmd) is
// found at its source line and the text says which configuration was
// read; without --preprocess (raw C) the macro hides it. --build-dir
// without --preprocess is a usage error.
func TestCheckPreprocessCLI(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		testenv.Unavailable(t, "gcc is needed for the preprocessed path")
	}
	root := testenv.RepoRoot(t)
	fix := filepath.Join(root, "checks", "testdata", "cpp")
	tree, build := t.TempDir(), t.TempDir()
	copyDir(t, filepath.Join(fix, "kernel"), tree)
	copyDir(t, filepath.Join(fix, "hdr_flag_bug", "include"), filepath.Join(tree, "include"))
	put(t, filepath.Join(tree, "Makefile"), "# a fake kernel tree\n")
	put(t, filepath.Join(tree, "Kconfig"), "# a fake kernel tree\n")
	put(t, filepath.Join(build, ".config"), "CONFIG_TC_OTHER=y\n")
	put(t, filepath.Join(build, "include", "generated", "autoconf.h"), "#define CONFIG_TC_OTHER 1\n")
	const mod = "drivers/infiniband/ulp/tcpp"
	src, err := os.ReadFile(filepath.Join(fix, "hdr_flag_bug", "tc_hdr_flag.c"))
	if err != nil {
		t.Fatal(err)
	}
	put(t, filepath.Join(tree, mod, "tc_hdr_flag.c"), string(src))
	wantLine := 0
	for i, l := range strings.Split(string(src), "\n") {
		if strings.Contains(l, "want: inline-sge-addr") {
			wantLine = i + 1
		}
	}
	c := filepath.Join(tree, mod, "tc_hdr_flag.c")
	put(t, filepath.Join(build, mod, ".tc_hdr_flag.o.cmd"), fmt.Sprintf(
		"savedcmd_%s/tc_hdr_flag.o := gcc -Wp,-MMD,%s/.tc_hdr_flag.o.d -nostdinc -I%s/include -I./include -include %s/include/linux/kconfig.h -D__KERNEL__ -DKBUILD_MODNAME='\"tcpp\"' -c -o %s/tc_hdr_flag.o %s\n\nsource_%s/tc_hdr_flag.o := %s\n",
		mod, mod, tree, tree, mod, c, mod, c))
	t.Setenv("PATCHCTL_CACHE", t.TempDir())

	code, out, errOut := run(t, "--root", root, "check", "--tree", tree, "--preprocess", "--build-dir", build, "--format", "json", mod)
	var rep struct {
		Findings []struct {
			Rule, File string
			Line       int
		}
		Analysis string
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s\n%s", err, out, errOut)
	}
	found := false
	for _, f := range rep.Findings {
		found = found || f.Rule == "inline-sge-addr" && f.File == mod+"/tc_hdr_flag.c" && f.Line == wantLine
	}
	if code != 1 || !found || !strings.Contains(rep.Analysis, "preprocessed translation units") {
		t.Errorf("--preprocess: exit %d, findings %+v (want inline-sge-addr at line %d), analysis %q", code, rep.Findings, wantLine, rep.Analysis)
	}
	if code, out, _ := run(t, "--root", root, "check", "--tree", tree, "--preprocess", "--build-dir", build, mod); code != 1 || !strings.Contains(out, "read as: 1 .c files preprocessed with kbuild's flags (configuration: build folder "+build) {
		t.Errorf("text: exit %d, no configuration line:\n%s", code, out)
	}
	if code, out, _ := run(t, "--root", root, "check", "--tree", tree, mod); code != 0 {
		t.Errorf("raw C saw through the header macro (exit %d): the case no longer needs the preprocessor\n%s", code, out)
	}
	if code, _, errOut := run(t, "--root", root, "check", "--tree", tree, "--build-dir", build, mod); code != 2 || !strings.Contains(errOut, "--build-dir goes with --tree and --preprocess") {
		t.Errorf("--build-dir alone: exit %d: %s", code, errOut)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		put(t, filepath.Join(to, rel), string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func put(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
