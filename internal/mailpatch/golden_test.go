package mailpatch

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/golden")

// seedSeries are the received copies of record, under patches/.
var seedSeries = []string{"nvme-rdma-inline-capsule", "mlx5-umr-inline-reg-wr", "nvmet-rdma-inline-16k"}

func seedDir(name string) string { return filepath.Join("..", "..", "patches", name) }

// TestSeedsGolden imports each series of record and compares the patches and
// the report byte for byte with testdata/golden (go test -update rewrites).
func TestSeedsGolden(t *testing.T) {
	for _, s := range seedSeries {
		t.Run(s, func(t *testing.T) {
			res, err := Import([]string{seedDir(s)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			outputs, err := res.Write(out)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range outputs {
				outputs[k], _ = filepath.Rel(out, v)
			}
			rep, _ := json.MarshalIndent(res.Report(outputs), "", "  ")
			got := map[string][]byte{"import.json": append(rep, '\n')}
			for _, p := range res.Patches {
				got[filepath.Base(outputs[p])] = p.Format()
			}
			dir := filepath.Join("testdata", "golden", s)
			if *update {
				os.RemoveAll(dir)
				os.MkdirAll(dir, 0o755)
				for n, b := range got {
					if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatalf("no golden files (run go test -update): %v", err)
			}
			if len(ents) != len(got) {
				t.Errorf("golden folder has %d files, import produced %d", len(ents), len(got))
			}
			for n, b := range got {
				want, err := os.ReadFile(filepath.Join(dir, n))
				if err != nil {
					t.Fatalf("missing golden %s (run go test -update): %v", n, err)
				}
				if !bytes.Equal(b, want) {
					t.Errorf("%s differs from golden:\n%s", n, firstDiff(string(want), string(b)))
				}
			}
		})
	}
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + itoa(i+1) + ":\n- " + a + "\n+ " + b
		}
	}
	return "(same lines, different bytes)"
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestSeedRepairs states what each seed must have repaired, independent of
// the golden text.
func TestSeedRepairs(t *testing.T) {
	type want struct {
		kind, before, after string
	}
	cases := map[string]struct {
		author   string
		subject  string
		repairs  []want
		warnings []string
	}{
		"nvme-rdma-inline-capsule": {
			author:  "Andrei-Alexandru Bleortu <me@andrei-z.com>",
			subject: "[PATCH 1/1] nvme-rdma: post the command capsule inline when it fits",
			repairs: []want{
				{KindEntity, "\t\tfirst->next = ≀", "\t\tfirst->next = &wr;"},
				{KindEmail, "Signed-off-by: Andrei-Alexandru Bleortu <me at andrei-z.com>", "Signed-off-by: Andrei-Alexandru Bleortu <me@andrei-z.com>"},
				{KindAuthor, "[Andrei-Alexandru Bleortu]", "From: Andrei-Alexandru Bleortu <me@andrei-z.com>"},
				{KindSignature, "-- \\n2.56.0", ""},
				{KindFinalNewline, "2.56.0", "2.56.0\\n"},
			},
		},
		"mlx5-umr-inline-reg-wr": {
			author:  "Idan Burstein <idanb@mellanox.com>",
			subject: "[PATCH 1/2] IB/mlx5: posting klm/mtt list inline in the send queue for reg_wr",
			repairs: []want{
				{KindEmail, "Idan Burstein <idanb at mellanox.com>", "Idan Burstein <idanb@mellanox.com>"},
				{KindEmail, "Reviewed-by: Max Gurtovoy <maxg at mellanox.com>", "Reviewed-by: Max Gurtovoy <maxg@mellanox.com>"},
				{KindInBodyFrom, "From: Idan Burstein <idanb at mellanox.com>", "From: Idan Burstein <idanb@mellanox.com> (header)"},
			},
			warnings: []string{"2/2 missing"},
		},
		"nvmet-rdma-inline-16k": {
			author:  "Parav Pandit <parav@mellanox.com>",
			subject: "[PATCH v1] nvmet-rdma: Support 16K worth of inline data for write commands",
			repairs: []want{
				{KindAuthor, "parav@mellanox.com (Parav Pandit)", "Parav Pandit <parav@mellanox.com>"},
				{KindEmail, "Signed-off-by: Parav Pandit <parav at mellanox.com>", "Signed-off-by: Parav Pandit <parav@mellanox.com>"},
				{KindSubjectPrefix, "[PATCHv1]", "[PATCH v1]"},
			},
		},
	}
	for s, c := range cases {
		t.Run(s, func(t *testing.T) {
			res, err := Import([]string{seedDir(s)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Patches) != 1 {
				t.Fatalf("got %d patches, want 1", len(res.Patches))
			}
			p := res.Patches[0]
			if got := formatAddress(p.Author.Name, p.Author.Address); got != c.author {
				t.Errorf("author %q, want %q", got, c.author)
			}
			if p.SubjectLine() != c.subject {
				t.Errorf("subject %q, want %q", p.SubjectLine(), c.subject)
			}
			for _, w := range c.repairs {
				found := false
				for _, r := range p.Repairs {
					if r.Kind == w.kind && r.Before == w.before && r.After == w.after {
						found = true
						if r.Line == 0 || r.Why == "" {
							t.Errorf("repair %s %q has no line or no reason: %+v", w.kind, w.before, r)
						}
					}
				}
				if !found {
					t.Errorf("missing repair %s %q -> %q; have %+v", w.kind, w.before, w.after, p.Repairs)
				}
			}
			if len(res.Warnings) != len(c.warnings) {
				t.Errorf("warnings %v, want %v", res.Warnings, c.warnings)
			}
			for i, w := range c.warnings {
				if i < len(res.Warnings) && !strings.Contains(res.Warnings[i].Message, w) {
					t.Errorf("warning %q does not say %q", res.Warnings[i].Message, w)
				}
			}
			if strings.ContainsRune(string(p.Format()), '≀') {
				t.Error("output still carries the decoded entity")
			}
		})
	}
}
