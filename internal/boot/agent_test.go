package boot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// agentModule writes a module whose qemu/agent is a small program.
func agentModule(t *testing.T, body string) string {
	t.Helper()
	root := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/agenttest\n\ngo 1.22\n")
	write("qemu/agent/main.go", "package main\n\nfunc main() { println("+body+") }\n")
	return root
}

// TestAgentKeyFollowsSources: the key changes with a Go file a build
// reads, and not with tests or testdata.
func TestAgentKeyFollowsSources(t *testing.T) {
	ctx := context.Background()
	root := agentModule(t, `"one"`)
	k1, err := AgentKey(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	for rel, s := range map[string]string{
		"qemu/agent/main_test.go":  "package main\n",
		"qemu/agent/testdata/x.go": "package x\n",
		".git/HEAD":                "ref: refs/heads/main\n",
		"README.md":                "# not Go\n",
	} {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(s), 0o644)
	}
	if k, _ := AgentKey(ctx, root); k != k1 {
		t.Errorf("a test, testdata, .git or a non-Go file changed the agent's key")
	}
	for _, rel := range []string{"qemu/agent/main.go", "internal/other/other.go", "go.sum", "internal/other/asm_amd64.s", "qemu/agent/x.syso"} {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		old, _ := os.ReadFile(p)
		os.WriteFile(p, append(old, "// changed\n"...), 0o644)
		k, err := AgentKey(ctx, root)
		if err != nil {
			t.Fatal(err)
		}
		if k == k1 {
			t.Errorf("%s changed and the agent's key did not", rel)
		}
		k1 = k
	}
}

// TestAgentKept: a built agent is kept by its key and read back only
// when it matches its sha256; anything else is built again.
func TestAgentKept(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compiles a Go program")
	}
	ctx := context.Background()
	root := agentModule(t, `"kept"`)
	cache := t.TempDir()
	built, err := BuildAgent(ctx, root, cache)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := AgentKey(ctx, root)
	kept := filepath.Join(cache, key[:32])
	if b, err := readKept(kept); err != nil || !bytes.Equal(b, built) {
		t.Fatalf("the agent was not kept: %v", err)
	}
	forget := func() { builtAgents = sync.Map{} }

	// A kept agent that matches its sha256 is what a new process uses.
	other := []byte("another agent of the same sources")
	sum := sha256.Sum256(other)
	os.WriteFile(kept, other, 0o755)
	os.WriteFile(kept+".sha256", []byte(hex.EncodeToString(sum[:])+"\n"), 0o644)
	forget()
	if b, err := BuildAgent(ctx, root, cache); err != nil || !bytes.Equal(b, other) {
		t.Errorf("a kept agent was not reused: %v", err)
	}
	// One that does not match is built again, and kept anew.
	os.WriteFile(kept, []byte("truncated"), 0o755)
	forget()
	b, err := BuildAgent(ctx, root, cache)
	if err != nil || !bytes.Equal(b, built) {
		t.Fatalf("a damaged kept agent was used: %v", err)
	}
	if b, err := readKept(kept); err != nil || !bytes.Equal(b, built) {
		t.Errorf("the rebuilt agent was not kept again: %v", err)
	}
	// Other sources, another agent.
	os.WriteFile(filepath.Join(root, "qemu/agent/main.go"), []byte("package main\n\nfunc main() { println(\"changed\") }\n"), 0o644)
	if b, err := BuildAgent(ctx, root, cache); err != nil || bytes.Equal(b, built) {
		t.Errorf("changed sources gave the old agent: %v", err)
	}
}

// TestAgentKeyFollowsEmbeds: a file a //go:embed pattern matches, in a
// folder or by a glob, is part of the key.
func TestAgentKeyFollowsEmbeds(t *testing.T) {
	ctx := context.Background()
	root := agentModule(t, `"embeds"`)
	write := func(rel, s string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(s), 0o644)
	}
	write("internal/conf/conf.go", "package conf\n\nimport \"embed\"\n\n//go:embed a/*.txt data\nvar FS embed.FS\n")
	write("internal/conf/a/one.txt", "one\n")
	write("internal/conf/data/deep/two.bin", "two\n")
	k1, err := AgentKey(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"internal/conf/a/one.txt", "internal/conf/data/deep/two.bin"} {
		write(rel, "changed\n")
		k, err := AgentKey(ctx, root)
		if err != nil {
			t.Fatal(err)
		}
		if k == k1 {
			t.Errorf("%s, embedded, changed and the agent's key did not", rel)
		}
		k1 = k
	}
	write("internal/conf/b.txt", "not embedded\n")
	if k, _ := AgentKey(ctx, root); k != k1 {
		t.Error("a file no pattern matches changed the key")
	}
}

// TestAgentBuiltOnce: boots that ask for the same agent while its build
// runs (the pipeline starts one beside the kernel builds) wait for that
// build and get its binary; none compiles the sources again.
func TestAgentBuiltOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compiles a Go program")
	}
	root := agentModule(t, `"once"`)
	var compiles atomic.Int32
	compileAgentFunc = func(ctx context.Context, root string) ([]byte, error) {
		compiles.Add(1)
		return compileAgent(ctx, root)
	}
	t.Cleanup(func() { compileAgentFunc = compileAgent })
	const n = 4
	got := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = BuildAgent(context.Background(), root, t.TempDir())
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if !bytes.Equal(got[i], got[0]) {
			t.Errorf("caller %d got another binary", i)
		}
	}
	if c := compiles.Load(); c != 1 {
		t.Errorf("%d callers at once compiled the agent %d times, want once", n, c)
	}
}
