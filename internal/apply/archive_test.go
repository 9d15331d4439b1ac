package apply

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/mailpatch"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// The real-archive differential test: every message of a public-inbox
// epoch (one message per commit, file "m") that carries a diff without a
// "diff --git" line is applied to the pinned trees as `patchctl try`
// does (apply.RunGiven, the strip level found from the tree), and by GNU
// patch with that -p on a copy of the files it names (--dry-run, forward
// then -R). Both must give the same disposition: applies (offset and
// fuzz per hunk alike), already-applied, or not at all (patchctl's
// conflict or already-upstream). The messages are not copied anywhere:
// the archive is read in place, nothing of it is kept.
//
// Set PATCHCTL_TEST_INBOX to an epoch, e.g. the first linux-rdma one:
//
//	git clone --mirror https://lore.kernel.org/linux-rdma/0 /tmp/linux-rdma-0.git
//	PATCHCTL_TEST_INBOX=/tmp/linux-rdma-0.git go test -run TestArchivePlainDiffsGNU ./internal/apply/
//
// PATCHCTL_TEST_INBOX_KERNELS lists the pinned kernels (default 6.12;
// about five minutes each for the 66,851 messages of linux-rdma's first
// epoch, most of it the already-upstream search of the patches that do
// not apply).

// archiveEnv names the epoch the test reads.
const archiveEnv = "PATCHCTL_TEST_INBOX"

// archiveMsg is one message of the epoch that carries a plain diff.
type archiveMsg struct {
	blob, subject string
	data          []byte
}

var (
	plainHunk    = regexp.MustCompile(`(?m)^@@ -\d+(,\d+)? \+\d+(,\d+)? @@`)
	plainNewName = regexp.MustCompile(`(?m)^\+\+\+ \S`)
	gitDiffLine  = regexp.MustCompile(`(?m)^diff --git `)
	subjectLine  = regexp.MustCompile(`(?m)^Subject: ?(.*)$`)
)

// plainMessages reads every message blob of the epoch and keeps those with
// a unified diff that has no "diff --git" line.
func plainMessages(t *testing.T, repo string) (msgs []archiveMsg, total int) {
	t.Helper()
	log := exec.Command("git", "-C", repo, "log", "--all", "--format=", "--raw", "--no-abbrev")
	out, err := log.Output()
	if err != nil {
		t.Fatalf("git log in %s: %v (is it a public-inbox epoch? see %s)", repo, err, archiveEnv)
	}
	var blobs []string
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) >= 6 && strings.HasPrefix(f[0], ":") && f[5] == "m" {
			blobs = append(blobs, f[3])
		}
	}
	cat := exec.Command("git", "-C", repo, "cat-file", "--batch")
	cat.Stdin = strings.NewReader(strings.Join(blobs, "\n") + "\n")
	stdout, err := cat.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReaderSize(stdout, 1<<20)
	for range blobs {
		head, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("git cat-file: %v", err)
		}
		f := strings.Fields(head)
		if len(f) < 3 { // "<id> missing": a blob the mirror lacks
			continue
		}
		n, _ := strconv.Atoi(f[2])
		data := make([]byte, n+1)
		if _, err := io.ReadFull(r, data); err != nil {
			t.Fatalf("git cat-file: %v", err)
		}
		data = data[:n]
		total++
		if gitDiffLine.Match(data) || !plainHunk.Match(data) || !plainNewName.Match(data) {
			continue
		}
		subj := ""
		if m := subjectLine.FindSubmatch(data); m != nil {
			subj = string(m[1])
		}
		msgs = append(msgs, archiveMsg{blob: f[0], subject: subj, data: data})
	}
	if err := cat.Wait(); err != nil {
		t.Fatalf("git cat-file: %v", err)
	}
	return msgs, total
}

func TestArchivePlainDiffsGNU(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads a whole public-inbox epoch")
	}
	repo := os.Getenv(archiveEnv)
	if repo == "" {
		t.Skipf("%s is not set: clone an epoch (git clone --mirror https://lore.kernel.org/linux-rdma/0 DIR) and set it to DIR", archiveEnv)
	}
	for _, tool := range []string{"git", "patch"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Unavailable(t, tool+" is not installed")
		}
	}
	msgs, total := plainMessages(t, repo)
	t.Logf("%d messages, %d with a diff and no \"diff --git\" line", total, len(msgs))
	kernels := []string{testkernel.Default}
	if s := os.Getenv(archiveEnv + "_KERNELS"); s != "" {
		kernels = strings.Split(s, ",")
	}
	for _, kn := range kernels {
		t.Run(kn, func(t *testing.T) {
			k, pristine := testenv.Kernel(t, kn)
			counts := map[string]int{}
			var disagree, notImported []string
			for _, m := range msgs {
				ps, err := mailpatch.ImportBytes(m.blob, m.data, "archive", mailpatch.Options{})
				if err != nil {
					// GNU patch reads what mailpatch refuses only when
					// the diff itself is whole: say so when it is.
					if g := gnuOnMail(t, pristine, m.data); g != "" {
						notImported = append(notImported, fmt.Sprintf("%s %q: %v (GNU patch -p1: %s)", m.blob, m.subject, err, g))
					}
					continue
				}
				for i, p := range ps {
					if !plainOnly(p) {
						continue
					}
					src := fmt.Sprintf("%s#%d", m.blob, i+1)
					t0 := time.Now()
					out, err := RunGiven(t.Context(), Given{Kernel: k, Pristine: pristine, Patches: []*mailpatch.Patch{p},
						Sources: []string{src}, Dir: t.TempDir(), Allow: []string{series.AlreadyApplied, series.AlreadyUpstream, series.Conflict}})
					if err != nil {
						disagree = append(disagree, fmt.Sprintf("%s %q: patchctl: %v", src, m.subject, err))
						continue
					}
					r := out.Result.Results[0]
					counts[r.Disposition]++
					if r.Disposition == series.AlreadyApplied && counts[r.Disposition] <= 5 {
						t.Logf("already-applied: %s %q (%s)", src, m.subject, strings.Join(r.Explain(), "; "))
					}
					if d := time.Since(t0); d > 2*time.Second {
						t.Logf("%s %q: %s in %.1fs", src, m.subject, r.Disposition, d.Seconds())
					}
					if why := compareArchive(t, pristine, p, r); why != "" {
						disagree = append(disagree, fmt.Sprintf("%s %q: %s", src, m.subject, why))
					}
				}
			}
			t.Logf("%s: dispositions %v; %d disagreements with GNU patch; %d messages mailpatch refuses whose diff GNU patch reads",
				kn, counts, len(disagree), len(notImported))
			for _, d := range notImported {
				t.Log("not imported: " + d)
			}
			for _, d := range disagree {
				t.Error(d)
			}
			// 6.12 itself: a fact of the archive on that tree
			if kn == "6.12" && counts[series.AlreadyApplied] == 0 {
				t.Errorf("no plain-diff mail of the archive is already-applied on %s", kn)
			}
		})
	}
}

// plainOnly: a patch whose files all came without a "diff --git" line.
func plainOnly(p *mailpatch.Patch) bool {
	return len(p.Files) > 0 && !strings.Contains(p.Diff, "\ndiff --git ") && !strings.HasPrefix(p.Diff, "diff --git ")
}

// gnuDisposition runs GNU patch -pN --dry-run on a copy of the files the
// diff names (every name at every level that exists in pristine), first
// forward, then reversed, and says what it found: applies,
// applies-with-offset, applies-with-fuzz, already-applied or conflict,
// with its per-file report.
func gnuDisposition(t *testing.T, pristine string, diff []byte, strip int, names []string) (string, map[string]*gnuFile, string) {
	dir := copyNamed(t, pristine, names)
	pf := filepath.Join(t.TempDir(), "p.diff")
	if err := os.WriteFile(pf, diff, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, bool) {
		cmd := exec.Command("patch", append([]string{"-p" + strconv.Itoa(strip), "--dry-run", "--no-backup-if-mismatch", "-r", "-", "-d", dir, "-i", pf}, args...)...)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		out, err := cmd.CombinedOutput()
		return string(out), err == nil
	}
	fwd, ok := run("--batch", "--forward")
	files := parseGNU(fwd)
	if ok {
		d := series.Applies
		for _, f := range files {
			for _, h := range f.hunks {
				if h.fuzz > 0 {
					d = series.AppliesFuzz
				} else if h.offset != 0 && d == series.Applies {
					d = series.AppliesOffset
				}
			}
		}
		return d, files, fwd
	}
	rev, ok := run("-R", "--force")
	if ok {
		return series.AlreadyApplied, files, fwd + "-R:\n" + rev
	}
	return series.Conflict, files, fwd + "-R:\n" + rev
}

// compareArchive compares patchctl's result for p with GNU patch's.
func compareArchive(t *testing.T, pristine string, p *mailpatch.Patch, r *Result) string {
	strip := 1
	if r.Strip != nil {
		strip = *r.Strip
	}
	var names []string
	for _, f := range p.Files {
		names = append(names, f.OldName, f.NewName)
	}
	// The names as GNU patch reads them: the diff's own header lines at
	// the same -p (patchctl resolved p.Files' names already).
	for _, l := range strings.Split(p.Diff, "\n") {
		if strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") || strings.HasPrefix(l, "Index: ") {
			n := strings.Fields(strings.SplitN(l, " ", 2)[1] + " ")
			if len(n) > 0 {
				if c := strings.SplitN(n[0], "/", strip+1); len(c) == strip+1 {
					names = append(names, c[strip])
				}
			}
		}
	}
	gnu, files, log := gnuDisposition(t, pristine, []byte(p.Diff), strip, names)
	ours := r.Disposition
	if ours == series.AlreadyUpstream {
		ours = series.Conflict // GNU patch cannot tell: it does not apply
	}
	if ours != gnu {
		return fmt.Sprintf("patchctl %s (-p%d; %s), GNU patch %s:\n%s", r.Disposition, strip, strings.Join(r.Explain(), "; "), gnu, log)
	}
	if !series.IsApplied(gnu) {
		return ""
	}
	// Per hunk: where it landed.
	byFile := map[string][]Hunk{}
	for _, h := range r.Hunks {
		byFile[h.File] = append(byFile[h.File], h)
	}
	var fs []string
	for f := range byFile {
		fs = append(fs, f)
	}
	sort.Strings(fs)
	for _, f := range fs {
		g := files[f]
		if g == nil {
			return fmt.Sprintf("GNU patch did not patch %s:\n%s", f, log)
		}
		for i, h := range byFile[f] {
			gh, said := g.hunks[i+1]
			if !said {
				gh = gnuHunkResult{ok: true}
			}
			if int(h.Offset) != gh.offset || h.Fuzz != gh.fuzz {
				return fmt.Sprintf("%s hunk %d: offset %d fuzz %d, GNU patch offset %d fuzz %d", f, i+1, h.Offset, h.Fuzz, gh.offset, gh.fuzz)
			}
		}
	}
	return ""
}

// gnuOnMail runs GNU patch -p1 --dry-run on the whole message as it is
// stored (GNU patch skips the mail headers), on a copy of the files its
// "---" and "+++" lines name, and returns what it says when it applies
// or fails at a hunk, or "" when it reads no diff or finds no file.
func gnuOnMail(t *testing.T, pristine string, data []byte) string {
	var names []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") {
			if n := strings.Fields(l[4:]); len(n) > 0 {
				if c := strings.SplitN(n[0], "/", 2); len(c) == 2 {
					names = append(names, c[1])
				}
			}
		}
	}
	dir := copyNamed(t, pristine, names)
	pf := filepath.Join(t.TempDir(), "m")
	if err := os.WriteFile(pf, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("patch", "-p1", "--dry-run", "--batch", "--forward", "-r", "-", "-d", dir, "-i", pf)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err == nil {
		return "applies"
	}
	if bytes.Contains(out, []byte("FAILED")) || bytes.Contains(out, []byte("Reversed")) {
		return strings.Join(strings.Fields(string(out)), " ")
	}
	return ""
}

// copyNamed copies the files of pristine that names name (those that
// exist) into a new folder: GNU patch reads and writes only there.
func copyNamed(t *testing.T, pristine string, names []string) string {
	dir := t.TempDir()
	for _, n := range names {
		if n == "" || strings.Contains(n, "..") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(pristine, n))
		if err != nil {
			continue
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(n)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
