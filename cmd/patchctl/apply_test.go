package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
	"github.com/patchctl/patchctl/internal/tree"
)

func TestApplyRealKernel(t *testing.T) {
	if testing.Short() {
		// apply --kernel writes the 6.12 work tree under its lock: a
		// build of another process (make run) holds it for minutes.
		t.Skip("-short: writes the 6.12 work tree (waits for its lock)")
	}
	testenv.Kernel(t, testkernel.Default) // prepared in the user's cache
	root := testenv.RepoRoot(t)
	code, out, errOut := run(t, "--root", root, "apply", "--kernel", testkernel.Default, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		WorkTree string `json:"work_tree"`
		Written  bool
		Patches  []struct {
			Source, Disposition, Expected string
			Match                         bool
			Hunks                         []struct{ Offset, Fuzz int }
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Written || len(rep.Patches) != 3 {
		t.Fatalf("report %+v", rep)
	}
	for _, p := range rep.Patches {
		if !p.Match {
			t.Errorf("%s: %s, expected %s", p.Source, p.Disposition, p.Expected)
		}
	}
	if h := rep.Patches[0].Hunks; len(h) != 4 || h[0].Fuzz != 1 || h[3].Offset != -34 {
		t.Errorf("hunk table %+v", h)
	}
	patched := filepath.Join(rep.WorkTree, "drivers/nvme/host/rdma.c")
	before, err := os.ReadFile(patched)
	if err != nil || !strings.Contains(string(before), "wr.send_flags |= IB_SEND_INLINE;") {
		t.Fatalf("work tree not patched: %v", err)
	}

	// A forced failure while writing leaves the work tree as it was.
	// Replace (never write in place: a work tree file may be a hardlink
	// into the pristine cache).
	os.WriteFile(patched+".t", []byte("/* changed by hand */\n"), 0o644)
	if err := os.Rename(patched+".t", patched); err != nil {
		t.Fatal(err)
	}
	tree.TestHookBeforeRename = func(i int, p string) error { return fmt.Errorf("failing on purpose before %s", p) }
	code, _, errOut = run(t, "--root", root, "apply", "--kernel", testkernel.Default)
	tree.TestHookBeforeRename = nil
	if code != 3 || !strings.Contains(errOut, "left as it was") {
		t.Fatalf("forced failure: exit %d %s", code, errOut)
	}
	if b, _ := os.ReadFile(patched); string(b) != "/* changed by hand */\n" {
		t.Error("a failed apply changed the work tree")
	}
	if code, _, errOut := run(t, "--root", root, "apply", "--kernel", testkernel.Default); code != 0 {
		t.Fatalf("apply after the forced failure: %d %s", code, errOut)
	}
	if b, _ := os.ReadFile(patched); string(b) != string(before) {
		t.Error("apply did not restore the patched file")
	}

	// refresh --check agrees with what is committed.
	if code, out, errOut := run(t, "--root", root, "refresh", "--kernel", testkernel.Default, "--check"); code != 0 {
		t.Errorf("refresh --check: exit %d %s %s", code, out, errOut)
	}
}

func TestApplyInputErrors(t *testing.T) {
	root := testenv.RepoRoot(t)
	code, _, errOut := run(t, "--root", root, "apply", "--kernel", "5.4")
	if code != 2 || !strings.Contains(errOut, "unknown kernel \"5.4\"; pinned kernels: 5.10, 6.1, 6.12, 7.2, 7.3") {
		t.Errorf("unknown kernel: exit %d %s", code, errOut)
	}
	code, _, errOut = run(t, "--root", t.TempDir(), "tree", "list")
	if code != 2 || !strings.Contains(errOut, "kernels.yaml") {
		t.Errorf("no lock: exit %d %s", code, errOut)
	}
}

func TestApplyMismatchExitsOne(t *testing.T) {
	testenv.Kernel(t, testkernel.Default)
	// A copy of the repository whose manifest expects the wrong thing.
	src := testenv.RepoRoot(t)
	root := t.TempDir()
	for _, p := range []string{"series/kernels.yaml", "patches/nvmet-rdma-inline-16k/003_be5ede6ad577d1fd.txt"} {
		os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755)
		b, _ := os.ReadFile(filepath.Join(src, p))
		os.WriteFile(filepath.Join(root, p), b, 0o644)
	}
	os.MkdirAll(filepath.Join(root, "series", testkernel.Default), 0o755)
	os.WriteFile(filepath.Join(root, "series", testkernel.Default, "manifest.yaml"), []byte("kernel: \"6.12\"\npatches:\n  - source: patches/nvmet-rdma-inline-16k/003_be5ede6ad577d1fd.txt\n    expect: applies\n"), 0o644)
	code, out, errOut := run(t, "--root", root, "--cache", testenv.Cache().Dir, "apply", "--kernel", testkernel.Default, "--dry-run")
	if code != 1 || !strings.Contains(out, "MISMATCH") || !strings.Contains(errOut, "is conflict, manifest expects applies") {
		t.Errorf("mismatch: exit %d\n%s\n%s", code, out, errOut)
	}
}

// --tree: a plain folder (here the pristine 6.12 tree itself, read only)
// as the pristine tree: its manifest from its Makefile, dispositions as
// on the pinned kernel, nothing written.
func TestApplyLocalTree(t *testing.T) {
	_, pristine := testenv.Kernel(t, testkernel.Default)
	root := testenv.RepoRoot(t)
	start := time.Now()
	code, out, errOut := run(t, "--root", root, "apply", "--tree", pristine, "--dry-run", "--json")
	if code != 0 {
		t.Fatalf("apply --tree: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("apply --tree of a plain 6.12 folder (content hash included): %s", time.Since(start).Round(time.Millisecond))
	var rep struct {
		Kernel, Source string
		Patches        []struct{ Disposition, Expected string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rep.Kernel, "local-") || !strings.Contains(rep.Source, "content:") || len(rep.Patches) != 3 {
		t.Errorf("apply --tree: %+v", rep)
	}
	for _, p := range rep.Patches {
		if p.Disposition != p.Expected {
			t.Errorf("apply --tree: %s, the manifest expects %s", p.Disposition, p.Expected)
		}
	}
	// Again: the content hashes of unchanged files are remembered.
	start = time.Now()
	code, out2, errOut := run(t, "--root", root, "apply", "--tree", pristine, "--dry-run", "--json")
	if code != 0 || out2 != out {
		t.Errorf("apply --tree again: exit %d, output differs: %v\n%s", code, out2 != out, errOut)
	}
	t.Logf("again: %s", time.Since(start).Round(time.Millisecond))
	if code, _, errOut := run(t, "--root", root, "apply", "--tree", pristine, "--kernel", "4.19", "--dry-run"); code != 2 {
		t.Errorf("apply --tree with an unknown --kernel: exit %d, want 2\n%s", code, errOut)
	}
}
