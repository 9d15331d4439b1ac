package command_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/testenv"
)

// TestCleanMakeflags compares what CleanMakeflags keeps of the MAKEFLAGS
// GNU make itself gives a recipe, for command lines that differ only in
// flags it drops, and of hand-written values.
func TestCleanMakeflags(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "s": "", "ws": "", "se": "e", "ks -- X=1": "k -- X=1", "k -- V=1 -s": "k -- V=1 -s",
		" -j4 --jobserver-auth=3,4 --no-print-directory": "", " -j --jobserver-auth=fifo:/tmp/GMfifo1 -Otarget": "",
		"i --no-print-directory": "i", " --trace": "", " --warn-undefined-variables": "", " --check-symlink-times": "--check-symlink-times", "KCFLAGS=-O0": "KCFLAGS=-O0", "rR": "rR",
		"-ks -j4 --jobserver-auth=3,4": "-k", "-ws": "", "-s": "", "-e": "-e", "-Otarget -k": "-k",
		"pdk --trace --debug=b": "k", "-pd": "",
		// a flag with its argument, first: not the single-letter group
		" -Iscripts --no-print-directory": "-Iscripts", "-Iwsdp": "-Iwsdp", "s -Iwsdp": "-Iwsdp", "-lpd": "-lpd",
	} {
		if got := command.CleanMakeflags(in); got != want {
			t.Errorf("command.CleanMakeflags(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := exec.LookPath("make"); err != nil {
		testenv.Unavailable(t, "make not installed")
	}
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "wsdp"), 0o755) // a folder for -I, named by the dropped letters
	// The recipe writes its MAKEFLAGS to a file (make -w prints too).
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte("all:\n\t@printf '%s|%s' \"$$MAKEFLAGS\" \"$$MFLAGS\" > flags\nsub:\n\t@$(MAKE) --no-print-directory -j3 all\n"), 0o644)
	// clean cleans each of "MAKEFLAGS|MFLAGS".
	clean := func(s string) string {
		mf, mfl, _ := strings.Cut(s, "|")
		return command.CleanMakeflags(mf) + "|" + command.CleanMakeflags(mfl)
	}
	flags := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("make", args...)
		cmd.Dir = dir // not -C, which prints the folder
		cmd.Env = append(os.Environ(), "MAKEFLAGS=", "MFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make %v: %v\n%s", args, err, out)
		}
		return readFlags(t, filepath.Join(dir, "flags"))
	}
	for _, c := range []struct{ plain, more []string }{
		{[]string{"all"}, []string{"-s", "all"}},
		{[]string{"all"}, []string{"-w", "-s", "-j2", "all"}},
		{[]string{"all"}, []string{"--no-print-directory", "-Otarget", "all"}},
		{[]string{"all"}, []string{"sub"}},
		{[]string{"-k", "X=1", "all"}, []string{"-k", "-s", "-j2", "X=1", "all"}},
		{[]string{"-i", "all"}, []string{"-i", "-w", "all"}},
		{[]string{"-k", "all"}, []string{"-k", "--trace", "--debug=b", "all"}},
		{[]string{"all"}, []string{"-p", "-d", "all"}},
		{[]string{"all"}, []string{"--warn-undefined-variables", "all"}},
		{[]string{"-I", "wsdp", "all"}, []string{"-I", "wsdp", "-s", "all"}},
		{[]string{"-k", "-I", "wsdp", "all"}, []string{"-k", "-s", "-I", "wsdp", "-w", "all"}},
	} {
		p, m := flags(c.plain...), flags(c.more...)
		if clean(p) != clean(m) {
			t.Errorf("make %v gives %q, make %v %q: cleaned %q and %q", c.plain, p, c.more, m, clean(p), clean(m))
		}
	}
	for _, c := range [][]string{{"-k", "all"}, {"-i", "all"}, {"-e", "all"}, {"X=1", "all"}, {"-B", "all"}} {
		if p := flags(c...); strings.HasPrefix(clean(p), "|") {
			t.Errorf("make %v gives %q: cleaned to nothing", c, p)
		}
	}
	// A folder given with -I stays whole, wherever make puts it, in both
	// variables (its letters are the dropped ones: s, w, d, p).
	for _, c := range [][]string{{"-I", "wsdp", "all"}, {"-s", "-I", "wsdp", "all"}, {"--include-dir=wsdp", "-k", "all"}} {
		p := flags(c...)
		mf, mfl, _ := strings.Cut(clean(p), "|")
		for _, v := range []string{mf, mfl} {
			if !slices.Contains(strings.Fields(v), "-Iwsdp") {
				t.Errorf("make %v gives %q: cleaned %q lost -Iwsdp", c, p, clean(p))
			}
		}
	}
}

func readFlags(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestChildGetsCleanMakeflags: a child started under a parent make's
// MAKEFLAGS sees it cleaned; the command's own Env still wins.
func TestChildGetsCleanMakeflags(t *testing.T) {
	t.Setenv("MAKEFLAGS", "ks -j4 --jobserver-auth=3,4 --no-print-directory -- X=1")
	t.Setenv("MFLAGS", "-ks -j4 --jobserver-auth=3,4")
	out, err := command.Command("sh", "-c", `printf '%s|%s' "$MAKEFLAGS" "$MFLAGS"`).Output(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "k -- X=1|-k"; got != want {
		t.Errorf("the child's MAKEFLAGS|MFLAGS = %q, want %q", got, want)
	}
	var b strings.Builder
	c := &command.Cmd{Name: "sh", Args: []string{"-c", `printf '%s' "$MAKEFLAGS"`}, Stdout: &b, Env: []string{"MAKEFLAGS=e"}}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b.String() != "e" {
		t.Errorf("the command's own MAKEFLAGS=e became %q", b.String())
	}
}
