package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/report"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/tree"
	"github.com/patchctl/patchctl/internal/vocab"
)

const seed000 = "../../patches/nvme-rdma-inline-capsule/000_97dfe90d7f7f5563.txt"

func runIn(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := execute(args, &IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

// b4Fields checks a per-patch/per-series answer against b4's documented
// protocol (docs/maintainer/review.rst, "Writing an external check
// script"): a JSON array of objects with tool and status (pass, warn,
// fail) required, summary, url and details optional strings, nothing
// else.
func b4Fields(t *testing.T, out string) []map[string]string {
	t.Helper()
	var raw []map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("not a JSON array of objects: %v\n%s", err, out)
	}
	var res []map[string]string
	for i, r := range raw {
		m := map[string]string{}
		for k, v := range r {
			s, ok := v.(string)
			if !ok {
				t.Errorf("result %d: %s is %T, want a string", i, k, v)
			}
			switch k {
			case "tool", "status", "summary", "url", "details":
			default:
				t.Errorf("result %d: field %q is not b4's", i, k)
			}
			m[k] = s
		}
		if m["tool"] == "" {
			t.Errorf("result %d has no tool", i)
		}
		if m["status"] != "pass" && m["status"] != "warn" && m["status"] != "fail" {
			t.Errorf("result %d: status %q", i, m["status"])
		}
		res = append(res, m)
	}
	return res
}

// asMail makes seed 000 (the text as the author posted it) a message as
// b4 pipes it: RFC 2822 headers, the body, the diff.
func asMail(t *testing.T, text string) string {
	t.Helper()
	subject, rest, _ := strings.Cut(text, "\n")
	_, body, _ := strings.Cut(rest, "]\n") // the author line
	return "From: Andrei-Alexandru Bleortu <me@andrei-z.example>\nTo: linux-nvme@lists.infradead.org\nDate: Tue, 01 Dec 2026 10:00:00 +0000\n" +
		"Subject: " + subject + "\nMessage-ID: <20261201100000.1-1@andrei-z.example>\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n" + body
}

// withInlineSGEError is seed 000 without the line that points the SGE at
// the capsule's virtual address: the inline send keeps its DMA address.
func withInlineSGEError(t *testing.T, s string) string {
	t.Helper()
	const line, hunk = "+\t\tsge->addr = (uintptr_t)qe->data;\n", "@@ -1641,6 +1654,17 @@"
	if !strings.Contains(s, line) || !strings.Contains(s, hunk) {
		t.Fatal("seed 000 changed: the fixture needs a new edit")
	}
	return strings.Replace(strings.Replace(s, line, "", 1), hunk, "@@ -1641,6 +1654,16 @@", 1)
}

func preparedKernel(t *testing.T) {
	t.Helper()
	lock, err := tree.LoadLock(filepath.Join(testenv.RepoRoot(t), "series", "kernels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := lock.Find(testkernel.Default)
	if err != nil {
		t.Fatal(err)
	}
	if testing.Short() {
		t.Skip("runs the static checks on the 6.12 tree (about a minute): without -short")
	}
	_ = k
	testenv.Kernel(t, testkernel.Default)
}

// TestB4CheckPerPatch: seed 000 as a real-shaped message passes the
// static checks; the same patch without the SGE fix fails with the
// inline-sge-addr finding; checkpatch format and exit codes follow.
func TestB4CheckPerPatch(t *testing.T) {
	preparedKernel(t)
	root := testenv.RepoRoot(t)
	data, err := os.ReadFile(seed000)
	if err != nil {
		t.Fatal(err)
	}
	good, bad := asMail(t, string(data)), asMail(t, withInlineSGEError(t, string(data)))
	code, out, errOut := runIn(t, good, "--root", root, "b4-check", "--per-patch", "--kernel", testkernel.Default)
	if code != 0 {
		t.Fatalf("seed 000: exit %d: %s", code, errOut)
	}
	res := b4Fields(t, out)
	if len(res) != 2 || res[0]["status"] != "pass" || !strings.HasPrefix(res[0]["url"], "https://") {
		t.Errorf("seed 000: %v", res)
	}
	code, out, errOut = runIn(t, bad, "--root", root, "b4-check", "--per-patch", "--kernel", testkernel.Default)
	if code != 0 {
		t.Fatalf("inline SGE error: exit %d: %s", code, errOut)
	}
	res = b4Fields(t, out)
	if len(res) == 0 || res[0]["status"] != "fail" || !strings.Contains(res[0]["details"], "drivers/nvme/host/rdma.c") || !strings.Contains(res[0]["details"], "inline-sge-addr") {
		t.Errorf("inline SGE error: %v", res)
	}
	code, out, _ = runIn(t, bad, "--root", root, "b4-check", "--per-patch", "--format", "checkpatch")
	if code != 1 || !strings.Contains(out, ": ERROR: inline-sge-addr: ") {
		t.Errorf("checkpatch format, inline SGE error: exit %d\n%s", code, out)
	}
	code, out, _ = runIn(t, good, "--root", root, "b4-check", "--per-patch", "--format", "checkpatch")
	if code != 0 || strings.Contains(out, "ERROR") {
		t.Errorf("checkpatch format, seed 000: exit %d\n%s", code, out)
	}
	// a patch that does not apply is a failure result, not a crash
	conflict := strings.Replace(good, " \tstruct ib_send_wr wr;", " \tstruct ib_send_wr wr_renamed;", 1)
	if conflict != good {
		code, out, _ = runIn(t, conflict, "--root", root, "b4-check", "--per-patch")
		if res := b4Fields(t, out); code != 0 || len(res) != 1 || res[0]["status"] != "fail" {
			t.Errorf("a patch that does not apply: exit %d %v", code, res)
		}
	}
}

// TestSendemailValidate: the hook refuses the patch with the inline-SGE
// error and lets seed 000 through.
func TestSendemailValidate(t *testing.T) {
	preparedKernel(t)
	root := testenv.RepoRoot(t)
	bin := filepath.Join(t.TempDir(), "patchctl")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data, _ := os.ReadFile(seed000)
	dir := t.TempDir()
	badFile := filepath.Join(dir, "0001-nvme-rdma-inline-dma.patch")
	os.WriteFile(badFile, []byte(withInlineSGEError(t, string(data))), 0o644)
	hook := filepath.Join(root, "scripts", "sendemail-validate")
	for _, c := range []struct {
		file string
		want int
	}{{badFile, 1}, {seed000, 0}} {
		cmd := exec.Command(hook, c.file)
		cmd.Dir = dir // git send-email runs it in the kernel repository
		cmd.Env = append(os.Environ(), "PATCHCTL="+bin)
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.want {
			t.Errorf("%s: exit %d, want %d\n%s", filepath.Base(c.file), code, c.want, out)
		}
	}
	// git send-email itself runs the hook and stops on a refusal.
	if !strings.Contains(gitSendEmailHelp(), "git send-email") {
		t.Log("git send-email not installed (Debian: git-email): the hook was run directly only")
		return
	}
	repo := t.TempDir()
	hooks := filepath.Join(repo, "hooks")
	os.MkdirAll(hooks, 0o755)
	os.Symlink(hook, filepath.Join(hooks, "sendemail-validate"))
	exec.Command("git", "init", "-q", repo).Run()
	good := asMail(t, string(data))
	good = strings.Replace(good, "me@andrei-z.example", "me@andrei-z.com", 1)
	for name, c := range map[string]struct {
		text string
		sent bool
	}{"0001-good.patch": {good, true}, "0001-bad.patch": {asMail(t, withInlineSGEError(t, string(data))), false}} {
		text := strings.Replace(c.text, "me@andrei-z.example", "me@andrei-z.com", 1)
		os.WriteFile(filepath.Join(repo, name), []byte(text), 0o644)
		cmd := exec.Command("git", "-c", "core.hooksPath="+hooks, "send-email", "--dry-run", "--confirm=never", "--to=list@example.org",
			"--from=pat@example.org", "--smtp-server=/bin/true", "--8bit-encoding=UTF-8", name)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "PATCHCTL="+bin)
		out, err := cmd.CombinedOutput()
		if sent := err == nil; sent != c.sent {
			t.Errorf("git send-email %s: sent %v, want %v (%v)\n%s", name, sent, c.sent, err, out)
		}
	}
}

func gitSendEmailHelp() string {
	out, _ := exec.Command("git", "send-email", "-h").CombinedOutput() // exit 129, the usage
	return string(out)
}

// TestB4CheckUsage: flags and input are checked before anything runs;
// a cover letter alone asks for its thread.
func TestB4CheckUsage(t *testing.T) {
	root := testenv.RepoRoot(t)
	for _, c := range []struct {
		stdin string
		args  []string
		want  int
	}{
		{"x", []string{"b4-check"}, 2},
		{"x", []string{"b4-check", "--per-patch", "--per-series"}, 2},
		{"x", []string{"b4-check", "--per-patch", "--format", "xml"}, 2},
		{"", []string{"b4-check", "--per-patch"}, 2},
		{"From: a@example.org\nSubject: hello\n\nno diff here\n", []string{"b4-check", "--per-patch"}, 2},
	} {
		if code, _, errOut := runIn(t, c.stdin, append([]string{"--root", root}, c.args...)...); code != c.want {
			t.Errorf("%v: exit %d, want %d: %s", c.args, code, c.want, errOut)
		}
	}
	cover := "From: Pat <pat@example.org>\nSubject: [PATCH 0/2] nvme-rdma: things\nMessage-ID: <cover.1@example.org>\n\nThis series does things.\n"
	code, out, errOut := runIn(t, cover, "--root", root, "b4-check", "--per-series")
	if code != 0 {
		t.Fatalf("cover letter: exit %d: %s", code, errOut)
	}
	if res := b4Fields(t, out); len(res) != 1 || res[0]["status"] != "warn" || !strings.Contains(res[0]["summary"], "--lore") {
		t.Errorf("cover letter without --lore: %v", res)
	}
}

// TestB4SeriesResult: try's verdict as b4's one result, the report
// folder as url.
func TestB4SeriesResult(t *testing.T) {
	out := t.TempDir()
	pass := &pipeline.Result{Verdict: vocab.Pass, Kernels: []*pipeline.Kernel{{Name: testkernel.Default, Verdict: vocab.Pass, Stages: []*pipeline.Stage{{Name: "apply", Status: vocab.Pass}}}}}
	fail := &pipeline.Result{Verdict: vocab.Fail, Kernels: []*pipeline.Kernel{{Name: testkernel.Default, Verdict: vocab.Fail,
		Stages: []*pipeline.Stage{{Name: "apply", Status: vocab.Pass}, {Name: "check", Status: vocab.Fail, Detail: "1 new error"}}}}}
	for _, c := range []struct {
		res    *pipeline.Result
		status string
		detail string
	}{{pass, "pass", ""}, {fail, "fail", "6.12 check: FAIL 1 new error"}, {nil, "fail", ""}} {
		r := report.B4Series(c.res, out, nil)
		b, _ := json.Marshal([]report.B4Result{r})
		got := b4Fields(t, string(b))
		if got[0]["status"] != c.status || got[0]["url"] != "file://"+out || !strings.Contains(got[0]["details"], c.detail) {
			t.Errorf("%v: %v", c.res, got[0])
		}
	}
}
