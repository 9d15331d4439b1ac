package apply

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/series"
)

// gnuDryRun runs GNU patch --dry-run --batch --forward on one file and
// returns its output (it never reverses anything: --forward).
func gnuDryRun(t *testing.T, file, content, patch string) string {
	t.Helper()
	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("GNU patch not installed")
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, filepath.Dir(file)), 0o755)
	os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644)
	pf := filepath.Join(t.TempDir(), "p.patch")
	os.WriteFile(pf, []byte(patch), 0o644)
	out, _ := exec.Command("patch", "-p1", "--dry-run", "--batch", "--forward", "-d", dir, "-i", pf).CombinedOutput()
	return string(out)
}

// addAfter15 adds one line after line 15 with three lines of context.
var addAfter15 = patchText("drivers/foo/foo.c", "@@ -13,6 +13,7 @@ static int foo(struct dev *dev)\n"+
	" \tfoo_call(dev, 13);\n \tfoo_call(dev, 14);\n \tfoo_call(dev, 15);\n"+
	"+\tif (entries < 1 || entries > max_cqe)\n"+
	" \tfoo_call(dev, 16);\n \tfoo_call(dev, 17);\n \tfoo_call(dev, 18);\n")

// TestReversedBeatsFuzz: the change is already there, and the hunk's two
// inner context lines recur lower in the file, where the forward hunk
// lands with fuzz 2 (a duplicate). The reverse applies at fuzz 0: it is
// previously applied, as GNU patch says.
func TestReversedBeatsFuzz(t *testing.T) {
	l := base()
	applied := append(append(append([]string{}, l[:15]...), "\tif (entries < 1 || entries > max_cqe)"), l[15:]...)
	applied[25], applied[26] = "\tfoo_call(dev, 15);", "\tfoo_call(dev, 16);" // lines 15 and 16 again, 10 lines lower
	content := join(applied)
	r := one(t, memTree{"drivers/foo/foo.c": content}, addAfter15, series.AlreadyApplied)
	if r.Disposition != series.AlreadyApplied {
		t.Fatalf("disposition %s (hunks %+v), want already-applied", r.Disposition, r.Hunks)
	}
	if h := r.Hunks[0]; !h.Reversed || h.Applied || h.Landed != 13 || h.Fuzz != 0 {
		t.Errorf("hunk %+v, want reversed at 13 with fuzz 0", h)
	}
	if out := gnuDryRun(t, "drivers/foo/foo.c", content, mustPatch(t, addAfter15).Diff); !strings.Contains(out, "Reversed (or previously applied) patch detected") {
		t.Errorf("GNU patch does not agree:\n%s", out)
	}
}

// TestReversedLaterHunk: the second hunk of a file is already there
// (the first is not), and lands forward with fuzz 2 lower down: GNU patch
// lands it there (it tries only a file's first hunk reversed), and so
// does patchctl, saying where its reverse matches exactly.
func TestReversedLaterHunk(t *testing.T) {
	two := patchText("drivers/foo/foo.c", "@@ -3,6 +3,7 @@\n \tfoo_call(dev, 3);\n \tfoo_call(dev, 4);\n \tfoo_call(dev, 5);\n+\tfirst();\n \tfoo_call(dev, 6);\n \tfoo_call(dev, 7);\n \tfoo_call(dev, 8);\n"+
		"@@ -13,6 +14,7 @@\n \tfoo_call(dev, 13);\n \tfoo_call(dev, 14);\n \tfoo_call(dev, 15);\n+\tif (entries < 1 || entries > max_cqe)\n \tfoo_call(dev, 16);\n \tfoo_call(dev, 17);\n \tfoo_call(dev, 18);\n")
	l := base()
	applied := append(append(append([]string{}, l[:15]...), "\tif (entries < 1 || entries > max_cqe)"), l[15:]...)
	applied[25], applied[26] = "\tfoo_call(dev, 15);", "\tfoo_call(dev, 16);"
	r := one(t, memTree{"drivers/foo/foo.c": join(applied)}, two, series.AppliesFuzz)
	if r.Disposition != series.AppliesFuzz {
		t.Fatalf("disposition %s, want applies-with-fuzz as GNU patch", r.Disposition)
	}
	if h := r.Hunks[1]; h.Reversed || !h.Applied || h.Fuzz != 2 || h.ReversedAt != 13 {
		t.Errorf("hunk 2 %+v: want applied with fuzz 2, its reverse noted at 13", h)
	}
	out := gnuDryRun(t, "drivers/foo/foo.c", join(applied), mustPatch(t, two).Diff)
	if !strings.Contains(out, "Hunk #2 succeeded at 25 with fuzz 2") {
		t.Errorf("GNU patch does not agree:\n%s", out)
	}
}

// TestEndOfFileAnchor: a hunk with context above and none below was made
// at the end of the file; GNU patch only places it at the end.
func TestEndOfFileAnchor(t *testing.T) {
	atEnd := patchText("drivers/foo/foo.c", "@@ -28,3 +28,4 @@\n \tfoo_call(dev, 28);\n \tfoo_call(dev, 29);\n \tfoo_call(dev, 30);\n+\tfoo_done(dev);\n")
	// The file grew at its end: the three lines are now mid-file.
	grown := join(append(base(), "\tfoo_call(dev, 31);", "\tfoo_call(dev, 32);"))
	r := one(t, memTree{"drivers/foo/foo.c": grown}, atEnd, series.Conflict)
	if r.Disposition != series.Conflict {
		t.Errorf("disposition %s (hunks %+v), want conflict: the hunk belongs at the end of the file", r.Disposition, r.Hunks)
	}
	if out := gnuDryRun(t, "drivers/foo/foo.c", grown, mustPatch(t, atEnd).Diff); !strings.Contains(out, "FAILED") {
		t.Errorf("GNU patch does not agree:\n%s", out)
	}
	// Lines inserted above: still at the end, with an offset.
	shifted := join(append([]string{"/* a */", "/* b */"}, base()...))
	r = one(t, memTree{"drivers/foo/foo.c": shifted}, atEnd, series.AppliesOffset)
	if r.Disposition != series.AppliesOffset || r.Hunks[0].Landed != 30 {
		t.Errorf("disposition %s landed %d, want applies-with-offset at 30", r.Disposition, r.Hunks[0].Landed)
	}
}

// TestStartOfFileAnchor: a hunk at line 1 with no context above only
// matches at the start of the file.
func TestStartOfFileAnchor(t *testing.T) {
	atStart := patchText("drivers/foo/foo.c", "@@ -1,3 +1,4 @@\n+/* SPDX-License-Identifier: GPL-2.0 */\n \tfoo_call(dev, 1);\n \tfoo_call(dev, 2);\n \tfoo_call(dev, 3);\n")
	moved := join(append([]string{"/* a */", "/* b */"}, base()...))
	r := one(t, memTree{"drivers/foo/foo.c": moved}, atStart, series.Conflict)
	if r.Disposition != series.Conflict {
		t.Errorf("disposition %s (hunks %+v), want conflict: the hunk belongs at the start", r.Disposition, r.Hunks)
	}
	if out := gnuDryRun(t, "drivers/foo/foo.c", moved, mustPatch(t, atStart).Diff); !strings.Contains(out, "FAILED") {
		t.Errorf("GNU patch does not agree:\n%s", out)
	}
}

// TestIntroducedNamesArePreimageAbsent: names the touched file already
// uses everywhere are not introduced by the patch, so they are no
// evidence that it is upstream.
func TestIntroducedNamesArePreimageAbsent(t *testing.T) {
	file := "\tstatic int rtnl_newlink_create(struct sk_buff *skb)\n{\n" +
		"\tif (nlh->nlmsg_flags & NLM_F_CREATE)\n\t\treturn rtnl_create_link_now(skb);\n" +
		"\tif (nlh->nlmsg_flags & NLM_F_EXCL)\n\t\treturn -EEXIST;\n" +
		"\tdev_change_net_namespace_now(dev, net);\n\trtnl_configure_link_now(dev, ifm);\n\treturn 0;\n}\n"
	for i := 1; i <= 20; i++ {
		file += "\tfoo_call(dev, " + itoa(i) + ");\n"
	}
	patch := patchText("net/core/rtnetlink.c", "@@ -12,4 +12,8 @@\n \tfoo_call(dev, 1);\n \tfoo_call(dev, 2);\n-\tfoo_call(dev, 3 + old);\n+\tif (nlh->nlmsg_flags & NLM_F_CREATE)\n+\t\treturn rtnl_create_link_now(skb);\n"+
		"+\tif (device_net)\n+\t\tnlh->nlmsg_flags |= NLM_F_EXCL | NLM_F_CREATE;\n+\tdev_change_net_namespace_now(device_net, net, NLM_F_EXCL, nlh);\n \tfoo_call(dev, 4);\n")
	r := one(t, memTree{"net/core/rtnetlink.c": file}, patch, series.Conflict)
	if r.Disposition != series.Conflict {
		t.Fatalf("disposition %s, want conflict; upstream %+v", r.Disposition, r.Upstream)
	}
	u := r.Upstream
	for _, n := range u.NamesPresent {
		if n == "NLM_F_CREATE" || n == "NLM_F_EXCL" || n == "nlmsg_flags" {
			t.Errorf("%s counted as introduced and present, but the touched file used it before the patch", n)
		}
	}
	found := map[string]NameAt{}
	for _, n := range u.NamesInPreimage {
		found[n.Name] = n
	}
	if at := found["NLM_F_CREATE"]; at.Path != "net/core/rtnetlink.c" || at.Line != 3 {
		t.Errorf("NLM_F_CREATE not reported as in the pre-image at rtnetlink.c:3: %+v", u.NamesInPreimage)
	}
	if strings.Join(u.NamesMissing, ",") != "device_net" || u.Found != 2 || u.Total != 5 {
		t.Errorf("missing names %v", u.NamesMissing)
	}
}

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(i)) }

func fmtInt(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return fmtInt(i/10) + string(rune('0'+i%10))
}
