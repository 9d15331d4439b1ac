package apply

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/patchctl/patchctl/internal/series"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// realExpect is what the pinned trees do with seed 000 (GNU patch agrees:
// see gnuPatchHunks).
var realExpect = map[string]struct {
	offsets []int64
	fuzz    []int
}{
	// 6.12 itself: offsets measured on its tree
	"6.12": {[]int64{-8, -8, -8, -34}, []int{1, 0, 0, 0}},
	"6.1":  {[]int64{-7, -7, -7, -14}, []int{1, 0, 0, 0}},
}

var gnuHunk = regexp.MustCompile(`^Hunk #(\d+) succeeded at (\d+)(?: with fuzz (\d+))?(?: \(offset (-?\d+) lines?\))?\.`)

// gnuPatchHunks runs GNU patch --dry-run and returns, per hunk number, the
// line it landed at and its fuzz (hunks it does not mention applied as
// stated).
func gnuPatchHunks(t *testing.T, dir string, patch []byte) map[int][2]int64 {
	t.Helper()
	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("GNU patch not installed")
	}
	f := filepath.Join(t.TempDir(), "p.patch")
	os.WriteFile(f, patch, 0o644)
	cmd := exec.Command("patch", "-p1", "--dry-run", "-d", dir, "-i", f)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("GNU patch: %v\n%s", err, out)
	}
	res := map[int][2]int64{}
	for _, l := range strings.Split(string(out), "\n") {
		if m := gnuHunk.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			at, _ := strconv.ParseInt(m[2], 10, 64)
			fz, _ := strconv.ParseInt(m[3], 10, 64)
			res[n] = [2]int64{at, fz}
		}
	}
	return res
}

func TestRealTrees(t *testing.T) {
	root := testenv.RepoRoot(t)
	for name, want := range realExpect {
		t.Run(name, func(t *testing.T) {
			_, pristine := testenv.KernelIfTested(t, name)
			plan, err := LoadPlan(root, name, "")
			if err != nil {
				t.Fatal(err)
			}
			res, err := plan.Run(pristine)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, r := range res.Results {
				got[r.Entry.Series()] = r.Disposition
				if !r.Match {
					t.Errorf("%s: %s, manifest expects %s", r.Source, r.Disposition, r.Expected)
				}
			}
			for s, d := range map[string]string{
				"nvme-rdma-inline-capsule": series.AppliesFuzz,
				"mlx5-umr-inline-reg-wr":   series.AlreadyUpstream,
				"nvmet-rdma-inline-16k":    series.Conflict,
			} {
				if got[s] != d {
					t.Errorf("%s: %s, want %s", s, got[s], d)
				}
			}
			r := res.Results[0]
			if len(r.Hunks) != len(want.offsets) {
				t.Fatalf("%d hunks, want %d", len(r.Hunks), len(want.offsets))
			}
			gnu := gnuPatchHunks(t, pristine, r.Patch.Format())
			for i, h := range r.Hunks {
				if h.Offset != want.offsets[i] || h.Fuzz != want.fuzz[i] {
					t.Errorf("hunk %d: offset %d fuzz %d, want %d %d", i+1, h.Offset, h.Fuzz, want.offsets[i], want.fuzz[i])
				}
				// GNU patch names the line in the new file: after the lines
				// that earlier hunks added.
				if g, ok := gnu[i+1]; !ok || g[0] != h.Landed+h.newPosOffset || g[1] != int64(h.Fuzz) {
					t.Errorf("hunk %d: landed %d (+%d) fuzz %d; GNU patch says %v", i+1, h.Landed, h.newPosOffset, h.Fuzz, g)
				}
			}
			// 002: the evidence names wr.c, where the code moved.
			up := res.Results[1].Upstream
			if up == nil || len(up.Files) == 0 || up.Files[0].Path != "drivers/infiniband/hw/mlx5/wr.c" {
				t.Errorf("002's upstream evidence does not point at wr.c: %+v", up)
			}

			// The regenerated patches are the committed ones.
			ref := Refresh(res)
			if d := ref.Diff(plan.Manifest.Dir()); len(d) > 0 {
				t.Errorf("series/%s differs from what refresh generates: %v (run patchctl refresh --kernel %s)", name, d, name)
			}
			// Each applies strictly (no offset, no fuzz) to the pristine
			// files and gives what apply gave.
			for _, r := range res.Results {
				if r.Regenerated == nil {
					continue
				}
				for _, f := range r.Regenerated.Files {
					src, err := os.ReadFile(filepath.Join(pristine, f.OldName))
					if err != nil {
						t.Fatal(err)
					}
					var out bytes.Buffer
					if err := gitdiff.Apply(&out, bytes.NewReader(src), f); err != nil {
						t.Fatalf("regenerated %s does not apply strictly: %v", f.NewName, err)
					}
					if !bytes.Equal(out.Bytes(), res.Files[f.NewName]) {
						t.Errorf("regenerated %s gives another result than apply", f.NewName)
					}
				}
			}
			gitAmSeries(t, pristine, plan.Manifest.Dir(), ref, res)
		})
	}
}

// gitAmSeries makes a repository of the pristine files the series touches
// and runs git am on the committed series/<kernel>/ patches.
func gitAmSeries(t *testing.T, pristine, dir string, ref *Refreshed, res *SeriesResult) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo := t.TempDir()
	g := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "HOME="+repo, "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	g("init", "-q")
	for p := range res.Files {
		b, err := os.ReadFile(filepath.Join(pristine, p))
		if err != nil {
			continue // created by the series
		}
		os.MkdirAll(filepath.Join(repo, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(repo, p), b, 0o644)
	}
	g("add", "-A")
	g("commit", "-qm", "pristine")
	args := []string{"am", "-q"}
	for _, n := range ref.Order {
		args = append(args, filepath.Join(dir, n))
	}
	g(args...)
	for p, want := range res.Files {
		got, _ := os.ReadFile(filepath.Join(repo, p))
		if !bytes.Equal(got, want) {
			t.Errorf("git am of series/ gives another %s than apply", p)
		}
	}
}

func BenchmarkApplyRefresh(b *testing.B) {
	root := testenv.RepoRoot(b)
	_, pristine := testenv.Kernel(b, testkernel.Default)
	cpu := testenv.MeasureCPU(b)
	defer cpu.Report()
	for b.Loop() {
		plan, err := LoadPlan(root, testkernel.Default, "")
		if err != nil {
			b.Fatal(err)
		}
		res, err := plan.Run(pristine)
		if err != nil {
			b.Fatal(err)
		}
		Refresh(res)
	}
}
