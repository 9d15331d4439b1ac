package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchctl/patchctl/checks"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/patchctl/patchctl/internal/vocab"
	"github.com/spf13/cobra"
)

// B4CheckOptions are the inputs of `patchctl b4-check`.
type B4CheckOptions struct {
	IO        *IOStreams
	Global    *GlobalOptions
	PerPatch  bool
	PerSeries bool
	Kernel    string
	Format    string
	Out       string
	Lore      string
	Inbox     string
}

// b4Result is one result of b4's external check protocol (b4 review:
// b4.review-perpatch-check-cmd and b4.review-series-check-cmd): tool and
// status are required, status one of pass, warn, fail.
type b4Result struct {
	Tool    string `json:"tool"`
	Status  string `json:"status"`
	Summary string `json:"summary,omitempty"`
	URL     string `json:"url,omitempty"`
	Details string `json:"details,omitempty"`
}

func newB4CheckCmd(io *IOStreams, g *GlobalOptions) *cobra.Command {
	opts := &B4CheckOptions{IO: io, Global: g}
	cmd := &cobra.Command{
		Use:   "b4-check (--per-patch | --per-series) [--kernel K] [--format json|checkpatch] < MESSAGE",
		Short: "b4's external check: one RFC 2822 message on stdin, the verdict on stdout",
		Long: `B4-check reads one email message on stdin, as b4 pipes it to its check
commands, and prints what patchctl says about it.

--per-patch (b4.review-perpatch-check-cmd, b4.am-perpatch-check-cmd,
b4.prep-perpatch-check-cmd, git send-email's sendemail-validate hook): the
static checks on the kernel the patch is for (--kernel, default the lock's
default), fast and without a build: the files the patch touches are
copied beside the pristine tree, the patch applied to them, the rules run
there and on the pristine files, and only what the patch introduces
judged. checkpatch.pl (the lock's checkpatch kernel when it is prepared)
runs on the patch.

--per-series (b4.review-series-check-cmd): the whole try verdict (apply,
check, builds, boots) on the series: the patches in the message, or the
thread of its Message-ID (--lore URL or --inbox DIR). Its url is the
report folder (--out, relative to the current folder; default
out/b4/<message-id> in the repository).

--format json (default) prints b4's JSON array of {tool, status
(pass|warn|fail), summary, url, details} and exits 0 when it could judge;
--format checkpatch prints checkpatch --terse style lines (FILE:LINE:
ERROR|WARNING: ...), nothing when clean, and exits 1 on a new error.

Exit status: 0 judged (json) or clean (checkpatch), 1 a new error
(checkpatch), 2 usage or input error, 3 the harness could not run.`,
		Example: `  patchctl b4-check --per-patch < 0001-nvme-rdma-fix.patch        # b4's JSON for one patch
  patchctl b4-check --per-patch --format checkpatch --kernel 7.3 < msg.eml
  patchctl b4-check --per-series --lore https://lore.kernel.org/all < cover.eml
  # in git config (b4 pipes each message):
  #   b4.review-perpatch-check-cmd = patchctl b4-check --per-patch
  #   b4.am-perpatch-check-cmd = patchctl b4-check --per-patch --format checkpatch`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, args []string) error {
			return runB4Check(c.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.PerPatch, "per-patch", false, "the static checks on the patch (b4's per-patch commands)")
	f.BoolVar(&opts.PerSeries, "per-series", false, "the whole try verdict on the series (b4's per-series command)")
	kernelFlag(f, &opts.Kernel, "the pinned kernel the patch is for (default: the lock's default)")
	f.StringVar(&opts.Format, "format", "json", "json (b4 review) or checkpatch (b4 am/prep --check, sendemail-validate)")
	f.StringVar(&opts.Out, "out", "", "--per-series: folder for the reports (default: out/b4/<message-id>)")
	f.StringVar(&opts.Lore, "lore", "", "--per-series: public-inbox server to fetch the thread of a cover letter from")
	f.StringVar(&opts.Inbox, "inbox", "", "--per-series: local public-inbox archive to find the thread of a cover letter in")
	return cmd
}

func runB4Check(ctx context.Context, opts *B4CheckOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.PerPatch == opts.PerSeries {
		return fmt.Errorf("give exactly one of --per-patch and --per-series: %w", errs.ErrUsage)
	}
	if opts.Format != "json" && opts.Format != "checkpatch" {
		return fmt.Errorf("--format %q: want json or checkpatch: %w", opts.Format, errs.ErrUsage)
	}
	msg, err := io.ReadAll(opts.IO.In)
	if err != nil {
		return fmt.Errorf("reading the message on stdin: %w", errs.ErrInput)
	}
	if len(bytes.TrimSpace(msg)) == 0 {
		return fmt.Errorf("no message on stdin: b4 (or git send-email's hook) pipes one RFC 2822 message: %w", errs.ErrInput)
	}
	tmp, err := os.MkdirTemp("", "patchctl-b4-")
	if err != nil {
		return fmt.Errorf("creating a temporary folder: %v: %w", err, errs.ErrEnv)
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, "message.eml")
	if err := os.WriteFile(file, msg, 0o644); err != nil {
		return fmt.Errorf("writing %s: %v: %w", file, err, errs.ErrEnv)
	}
	var results []b4Result
	var findings []checks.Finding
	if opts.PerPatch {
		results, findings, err = b4PerPatch(ctx, opts, tmp, file)
	} else {
		results, err = b4PerSeries(ctx, opts, file, msg)
	}
	if err != nil {
		return err
	}
	if opts.Format == "checkpatch" {
		newErrors := 0
		for _, f := range findings {
			if !f.Judged() || (f.Severity != checks.SevError && f.Severity != checks.SevWarning) {
				continue
			}
			level := "WARNING"
			if f.Severity == checks.SevError {
				level = "ERROR"
				newErrors++
			}
			fmt.Fprintf(opts.IO.Out, "%s:%d: %s: %s: %s\n", f.File, f.Line, level, f.Rule, firstLineOf(f.Message))
		}
		for _, r := range results {
			if r.Status == "fail" && len(findings) == 0 {
				fmt.Fprintf(opts.IO.Out, "-:1: ERROR: %s: %s\n", r.Tool, r.Summary)
				newErrors++
			}
		}
		if newErrors > 0 {
			return fmt.Errorf("%s: %w", errs.Count(newErrors, "new error"), errs.ErrFindings)
		}
		return nil
	}
	if results == nil {
		results = []b4Result{}
	}
	return writeJSON(opts.IO.Out, results)
}

func firstLineOf(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// b4PerPatch runs the static checks on the patch in file against its
// kernel's pristine tree, in an overlay of the folders it touches.
func b4PerPatch(ctx context.Context, opts *B4CheckOptions, tmp, file string) ([]b4Result, []checks.Finding, error) {
	in, err := readTryInput(ctx, &TryOptions{Sources: []string{file}}, nil)
	if err != nil {
		return nil, nil, err
	}
	if len(in.patches) != 1 {
		return nil, nil, fmt.Errorf("the message on stdin has %d patches: --per-patch takes one (b4 pipes one message per patch): %w", len(in.patches), errs.ErrInput)
	}
	p := in.patches[0]
	t, err := opts.Global.target(ctx, opts.IO, opts.Kernel, "")
	if err != nil {
		return nil, nil, err
	}
	pristine, err := t.Cache.Prepare(ctx, t.Kernel)
	if err != nil {
		return nil, nil, err
	}
	patchFile := filepath.Join(tmp, "0001.patch")
	if err := os.WriteFile(patchFile, p.Format(), 0o644); err != nil {
		return nil, nil, fmt.Errorf("writing %s: %v: %w", patchFile, err, errs.ErrEnv)
	}
	name := "patchctl " + t.Kernel.Name
	rulesURL := checks.InformationURI + "/blob/main/" + checks.RulesPage
	overlay := filepath.Join(tmp, "tree")
	dirs, err := overlayTree(pristine, overlay, p.Diff)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.CommandContext(ctx, "patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch", "-r", "-", "-d", overlay)
	cmd.Stdin = strings.NewReader(p.Diff)
	if out, err := cmd.CombinedOutput(); err != nil {
		if _, lerr := exec.LookPath("patch"); lerr != nil {
			return nil, nil, fmt.Errorf("GNU patch not installed (Debian: patch): %w", errs.ErrEnv)
		}
		return []b4Result{{Tool: name, Status: "fail", Summary: "does not apply to the pristine " + t.Kernel.Name,
			Details: strings.TrimSpace(string(out))}}, nil, nil
	}
	var paths, basePaths []string
	for _, d := range dirs {
		paths = append(paths, d)
		if st, err := os.Stat(filepath.Join(pristine, d)); err == nil && st.IsDir() {
			basePaths = append(basePaths, d)
		}
	}
	cpTree := pristine
	if ck, err := t.Lock.CheckpatchKernel(t.Kernel); err == nil && ck != nil && t.Cache.Prepared(ck) {
		cpTree = t.Cache.PristineDir(ck)
	}
	rep, err := checks.Run(checks.Options{Tree: overlay, Paths: paths, Patches: []string{patchFile}, CheckpatchTree: cpTree})
	if err != nil {
		return nil, nil, fmt.Errorf("checking the patched files: %w", err)
	}
	base := &checks.Report{}
	if len(basePaths) > 0 {
		if base, err = checks.Run(checks.Options{Tree: pristine, Paths: basePaths}); err != nil {
			return nil, nil, fmt.Errorf("checking the pristine %s: %w", t.Kernel.Name, err)
		}
	}
	rep.Judge(base)
	for i := range rep.Findings {
		if f := &rep.Findings[i]; f.File == patchFile {
			f.File = "0001.patch"
		}
	}
	static := b4Result{Tool: name, Status: "pass", URL: rulesURL}
	cp := b4Result{Tool: "patchctl checkpatch", Status: "pass", URL: rulesURL + "#" + checks.RuleCheckpatch}
	var sd, cd []string
	se, sw, pre := 0, 0, 0
	cpn := 0
	for _, f := range rep.Findings {
		line := fmt.Sprintf("%s:%d: %s: %s", f.File, f.Line, f.Rule, firstLineOf(f.Message))
		if f.Rule == checks.RuleCheckpatch {
			cpn++
			cd = append(cd, line)
			continue
		}
		if !f.Judged() {
			pre++
			sd = append(sd, line+" [pre-existing]")
			continue
		}
		sd = append(sd, line+" ["+f.Severity+"]")
		switch f.Severity {
		case checks.SevError:
			se++
		case checks.SevWarning:
			sw++
		}
	}
	switch {
	case se > 0:
		static.Status = "fail"
	case sw > 0:
		static.Status = "warn"
	}
	static.Summary = fmt.Sprintf("%s, %s on %s (%s); %d pre-existing", errs.Count(se, "new error"), errs.Count(sw, "new warning"),
		t.Kernel.Name, strings.Join(paths, ", "), pre)
	static.Details = strings.Join(sd, "\n")
	if cpn > 0 {
		cp.Status = "warn"
	}
	cp.Summary = fmt.Sprintf("%s from %s", errs.Count(cpn, "message"), filepath.Join(filepath.Base(cpTree), "scripts/checkpatch.pl"))
	cp.Details = strings.Join(cd, "\n")
	return []b4Result{static, cp}, rep.Findings, nil
}

// overlayTree makes dst a view of the pristine tree in which the folders
// the diff touches are real copies (their files, subfolders linked) and
// everything else is a symbolic link to the pristine tree, so the patch
// can be applied without writing to or copying the whole tree. It
// returns the touched folders, relative and sorted.
func overlayTree(pristine, dst, diff string) ([]string, error) {
	dirs := map[string]bool{}
	for _, l := range strings.Split(diff, "\n") {
		var name string
		switch {
		case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
			name = strings.TrimSpace(l[4:])
			if i := strings.IndexByte(name, '\t'); i >= 0 {
				name = name[:i]
			}
			if name == "/dev/null" {
				continue
			}
			if i := strings.IndexByte(name, '/'); i >= 0 {
				name = name[i+1:] // a/ b/
			}
		default:
			continue
		}
		clean := filepath.Clean(filepath.FromSlash(name))
		if clean == "." || filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("the patch names %q, outside the tree: %w", name, errs.ErrInput)
		}
		dirs[filepath.Dir(clean)] = true
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("the message has no diff: %w", errs.ErrInput)
	}
	real := map[string]bool{".": true}
	for d := range dirs {
		for p := d; p != "." && p != string(filepath.Separator); p = filepath.Dir(p) {
			real[p] = true
		}
	}
	var mk func(rel string) error
	mk = func(rel string) error {
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(out, 0o755); err != nil {
			return fmt.Errorf("creating %s: %v: %w", out, err, errs.ErrEnv)
		}
		entries, err := os.ReadDir(filepath.Join(pristine, rel))
		if err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("reading %s: %v: %w", filepath.Join(pristine, rel), err, errs.ErrEnv)
		}
		for _, e := range entries {
			child := filepath.Join(rel, e.Name())
			src, to := filepath.Join(pristine, child), filepath.Join(dst, child)
			switch {
			case e.IsDir() && real[child]:
				if err := mk(child); err != nil {
					return err
				}
			case !e.IsDir() && dirs[rel]:
				data, err := os.ReadFile(src)
				if err != nil {
					return fmt.Errorf("reading %s: %v: %w", src, err, errs.ErrEnv)
				}
				if err := os.WriteFile(to, data, 0o644); err != nil {
					return fmt.Errorf("writing %s: %v: %w", to, err, errs.ErrEnv)
				}
			default:
				if err := os.Symlink(src, to); err != nil {
					return fmt.Errorf("linking %s: %v: %w", to, err, errs.ErrEnv)
				}
			}
		}
		return nil
	}
	if err := mk("."); err != nil {
		return nil, err
	}
	for d := range dirs { // a folder the patch creates
		if err := os.MkdirAll(filepath.Join(dst, d), 0o755); err != nil {
			return nil, fmt.Errorf("creating %s: %v: %w", d, err, errs.ErrEnv)
		}
	}
	var out []string
	for d := range dirs {
		out = append(out, filepath.ToSlash(d))
	}
	sort.Strings(out)
	return out, nil
}

// b4PerSeries is the whole try verdict on the series of the message.
func b4PerSeries(ctx context.Context, opts *B4CheckOptions, file string, msg []byte) ([]b4Result, error) {
	to := &TryOptions{IO: &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: opts.IO.ErrOut}, Global: opts.Global, SharedOptions: SharedOptions{Transport: vocab.AllTransports, Accel: vocab.AccelAuto}}
	if opts.Kernel != "" {
		to.Kernels = []string{opts.Kernel}
	}
	in, err := readTryInput(ctx, &TryOptions{Sources: []string{file}}, nil)
	switch {
	case err == nil && len(in.patches) > 0:
		to.Sources = []string{file}
	case opts.Lore != "" || opts.Inbox != "":
		id := messageID(msg)
		if id == "" {
			return nil, fmt.Errorf("the message has no Message-ID to find its thread by: %w", errs.ErrInput)
		}
		to.MsgID, to.Lore, to.Inbox = id, opts.Lore, opts.Inbox
	default:
		return []b4Result{{Tool: "patchctl try", Status: "warn", Summary: "no patches in the message (a cover letter): give --lore URL or --inbox DIR to fetch its thread"}}, nil
	}
	_, root, err := opts.Global.lock()
	if err != nil {
		return nil, err
	}
	to.Out = opts.Out
	if to.Out == "" {
		name := messageID(msg)
		if name == "" {
			name = "message"
		}
		to.Out = filepath.Join(root, "out", "b4", sanitize(name))
	}
	terr := runTry(ctx, to)
	var tr TryResult
	if data, err := os.ReadFile(filepath.Join(to.Out, "try.json")); err == nil {
		_ = json.Unmarshal(data, &tr)
	}
	return []b4Result{seriesResult(tr.Run, to.Out, terr)}, nil
}

// seriesResult is try's verdict as one b4 result: the report folder as
// its url (a file:// URL), the stages that did not pass as details.
func seriesResult(res *pipeline.Result, out string, err error) b4Result {
	abs, _ := filepath.Abs(out)
	r := b4Result{Tool: "patchctl try", Status: "pass", URL: "file://" + filepath.ToSlash(abs)}
	if res == nil {
		r.Status, r.Summary = "fail", "try did not run"
		if err != nil {
			r.Details = errs.Message(err)
		}
		return r
	}
	var kernels, details []string
	for _, k := range res.Kernels {
		kernels = append(kernels, k.Name+" "+k.Verdict)
		for _, s := range k.Stages {
			if s.Status != vocab.Pass && s.Status != vocab.Done {
				details = append(details, fmt.Sprintf("%s %s: %s %s", k.Name, s.Name, s.Status, s.Detail))
			}
		}
	}
	if res.Verdict != vocab.Pass {
		r.Status = "fail"
	}
	r.Summary = fmt.Sprintf("verdict %s (%s)", res.Verdict, strings.Join(kernels, ", "))
	if res.Reason != "" {
		details = append([]string{res.Reason}, details...)
	}
	r.Details = strings.Join(details, "\n")
	return r
}

// messageID is the Message-ID header of a message, without brackets.
func messageID(msg []byte) string {
	head, _, _ := bytes.Cut(msg, []byte("\n\n"))
	for _, l := range strings.Split(string(head), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), "message-id") {
			return strings.Trim(strings.TrimSpace(v), "<>")
		}
	}
	return ""
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}
