package pipeline

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchctl/patchctl/checks"
	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/mailpatch"
)

// PatchCheck is what CheckPatch found for one patch.
type PatchCheck struct {
	// Applied is false when the patch does not apply to the pristine
	// tree (Output says why; nothing was checked).
	Applied bool
	Output  string
	// Report holds the rules' findings on the patched files, judged
	// against the pristine ones, and checkpatch's on the patch (its
	// file named PatchName).
	Report *checks.Report
	// Paths are the folders the patch touches, checked.
	Paths []string
	// CheckpatchTree is the tree whose scripts/checkpatch.pl ran.
	CheckpatchTree string
}

// PatchName is the name the patch's own findings carry (checkpatch's).
const PatchName = "0001.patch"

// CheckPatch runs the static checks on one patch against the target's
// pristine tree, fast and without a build (b4-check --per-patch): the
// folders it touches are copied into an overlay of the pristine tree
// under tmp, the patch applied there (GNU patch), the rules run on them
// and on the pristine folders, and only what the patch introduces is
// judged; checkpatch.pl (the lock's checkpatch kernel's when prepared)
// runs on the patch.
func (t *Target) CheckPatch(ctx context.Context, p *mailpatch.Patch, tmp string) (*PatchCheck, error) {
	pristine, err := t.Cache.Prepare(ctx, t.Kernel)
	if err != nil {
		return nil, err
	}
	patchFile := filepath.Join(tmp, PatchName)
	if err := os.WriteFile(patchFile, p.Format(), 0o644); err != nil {
		return nil, fmt.Errorf("writing %s: %v: %w", patchFile, err, errs.ErrEnv)
	}
	overlay := filepath.Join(tmp, "tree")
	dirs, err := overlayTree(pristine, overlay, p.Diff)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch", "-r", "-", "-d", overlay)
	cmd.Stdin = strings.NewReader(p.Diff)
	if out, err := cmd.CombinedOutput(); err != nil {
		if _, lerr := exec.LookPath("patch"); lerr != nil {
			return nil, fmt.Errorf("GNU patch not installed (Debian: patch): %w", errs.ErrEnv)
		}
		return &PatchCheck{Output: strings.TrimSpace(string(out))}, nil
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
		return nil, fmt.Errorf("checking the patched files: %w", err)
	}
	base := &checks.Report{}
	if len(basePaths) > 0 {
		if base, err = checks.Run(checks.Options{Tree: pristine, Paths: basePaths}); err != nil {
			return nil, fmt.Errorf("checking the pristine %s: %w", t.Kernel.Name, err)
		}
	}
	rep.Judge(base)
	for i := range rep.Findings {
		if f := &rep.Findings[i]; f.File == patchFile {
			f.File = PatchName
		}
	}
	return &PatchCheck{Applied: true, Report: rep, Paths: paths, CheckpatchTree: cpTree}, nil
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
