package build

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/fsutil"
)

// folder makes a build folder under parent as a build leaves it: the
// kernel source record, the configuration state, a sources record
// (complete or not) and a command record naming the folder's own path.
func folder(t *testing.T, parent, name, key string, complete bool, frags ...string) string {
	t.Helper()
	d := filepath.Join(parent, name)
	for _, f := range []struct{ p, s string }{
		{".patchctl-kernel", key + "\n"},
		{".config", "CONFIG_X=y\n"},
		{"kernel/.fork.o.cmd", "cmd := " + d + "/tools/objtool/objtool\n"},
		// objtool's build names the headers it installs relative to
		// the work tree's tools/objtool.
		{"tools/objtool/.check.o.cmd", "deps_check.o := ../../../" + name + "/tools/objtool/libsubcmd/include/subcmd/exec-cmd.h\n"},
		{"kernel/fork.o", name},
		{"net/ipv4/udp_tunnel.ko", name},
		{"net/ipv4/udp_tunnel.mod.o", name},
		{"net/ipv4/.udp_tunnel.ko.cmd", "savedcmd := ld"},
		{".module-common.o", name},
		{"variants/baseline-0/metadata.json", "{}"},
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(d, f.p)), 0o755)
		if err := os.WriteFile(filepath.Join(d, f.p), []byte(f.s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsutil.WriteJSON(filepath.Join(d, ".patchctl-config.json"), configState{Hash: name, Fragments: frags}); err != nil {
		t.Fatal(err)
	}
	if err := fsutil.WriteJSON(sourcesPath(d), sources{Complete: complete, Files: map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestSeedConfig: a configuration's new build folder starts as a copy of
// the nearest completed folder of the same kernel source (the same
// fragment names first), its command records relocated, its snapshots
// and its modules' link products left out; never from an unfinished build, another source,
// a variant's folder or a copy under way; an existing folder is kept.
func TestSeedConfig(t *testing.T) {
	parent := t.TempDir()
	const key = "debian linux-source-6.12=1"
	folder(t, parent, "aaaaaaaaaaaa", key, true, "base", "rdma-loopback", "debug")
	near := folder(t, parent, "bbbbbbbbbbbb", key, true, "base", "rdma-loopback")
	folder(t, parent, "cccccccccccc", key, false, "base", "rdma-loopback")                        // interrupted
	folder(t, parent, "dddddddddddd", "debian linux-source-6.1=1", true, "base", "rdma-loopback") // another source
	folder(t, parent, "bbbbbbbbbbbb.patched", key, true, "base", "rdma-loopback")
	folder(t, parent, "eeeeeeeeeeee.tmp-1", key, true, "base", "rdma-loopback")

	if got := nearestConfig(parent, key, []string{"base", "rdma-loopback"}); got != near {
		t.Errorf("nearest to the default fragments: %s, want %s", got, near)
	}
	if got := nearestConfig(parent, key, []string{"base", "rdma-loopback", "debug", "compile-test"}); filepath.Base(got) != "aaaaaaaaaaaa" {
		t.Errorf("nearest to debug and compile-test: %s, want aaaaaaaaaaaa", got)
	}
	if got := nearestConfig(parent, "debian linux-source-7.3=1", []string{"base"}); got != "" {
		t.Errorf("a source never built: %s, want none", got)
	}

	dir := filepath.Join(parent, "ffffffffffff")
	if err := seedConfig(context.Background(), dir, key, []string{"base", "rdma-loopback"}, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "kernel/fork.o")); err != nil || string(b) != "bbbbbbbbbbbb" {
		t.Errorf("seeded object: %q, %v; want the copy of bbbbbbbbbbbb's", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "kernel/.fork.o.cmd")); !strings.Contains(string(b), dir+"/tools/objtool") || strings.Contains(string(b), near) {
		t.Errorf("command record not relocated: %s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "tools/objtool/.check.o.cmd")); !strings.Contains(string(b), "../../../ffffffffffff/tools/") {
		t.Errorf("objtool's relative record not relocated: %s", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "variants")); err == nil {
		t.Error("the snapshots were copied")
	}
	// The modules' link products are made again in the new folder.
	for _, p := range []string{"net/ipv4/udp_tunnel.ko", "net/ipv4/udp_tunnel.mod.o", ".module-common.o"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s was copied from the other configuration's folder", p)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "net/ipv4/.udp_tunnel.ko.cmd")); err != nil {
		t.Errorf("a command record was left out: %v", err)
	}
	if m, _ := filepath.Glob(dir + ".tmp-*"); len(m) > 0 {
		t.Errorf("copies left behind: %v", m)
	}

	// An existing folder is never replaced.
	os.WriteFile(filepath.Join(dir, "kernel/fork.o"), []byte("mine"), 0o644)
	if err := seedConfig(context.Background(), dir, key, []string{"base"}, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "kernel/fork.o")); string(b) != "mine" {
		t.Errorf("an existing folder was seeded again: %q", b)
	}

	// Nothing to seed from: the folder is left to be made empty.
	lone := filepath.Join(t.TempDir(), "111111111111")
	if err := seedConfig(context.Background(), lone, key, []string{"base"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(lone); err == nil {
		t.Error("a folder was made with nothing to seed it from")
	}
}
