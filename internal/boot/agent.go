package boot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/patchctl/patchctl/internal/command"
	"github.com/patchctl/patchctl/internal/fsutil"
)

// agentEnv is the environment of the agent's build: a static Linux
// binary.
var agentEnv = []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64"}

// builtAgents are the agents this process built or read, by key: the
// boots of one run (the baseline's key is computed even when its boot is
// reused) build it once.
var builtAgents sync.Map

// agentLocks hold, by key, a *sync.Mutex for the one build of that
// agent: a boot that asks while a build started ahead of it (the
// pipeline's, beside the kernel builds) runs waits for it instead of
// compiling the same sources again.
var agentLocks sync.Map

// BuildAgent compiles qemu/agent as a static Linux binary and returns it
// (the flags make the binary a function of its sources). A binary made
// from the same sources is reused: from this process, or from cacheDir
// ("" for none), where each is kept under the key of what it is made of
// (AgentKey) with its sha256, and read back only when the two agree.
func BuildAgent(ctx context.Context, root, cacheDir string) ([]byte, error) {
	key, err := AgentKey(ctx, root)
	if err != nil {
		return nil, fmt.Errorf("building the guest agent: %w", err)
	}
	if b, ok := builtAgents.Load(key); ok {
		return b.([]byte), nil
	}
	mu, _ := agentLocks.LoadOrStore(key, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	if b, ok := builtAgents.Load(key); ok {
		return b.([]byte), nil
	}
	kept := ""
	if cacheDir != "" {
		kept = filepath.Join(cacheDir, key[:32])
		if b, err := readKept(kept); err == nil {
			builtAgents.Store(key, b)
			return b, nil
		}
	}
	b, err := compileAgentFunc(ctx, root)
	if err != nil {
		return nil, err
	}
	builtAgents.Store(key, b)
	if kept != "" {
		// Best effort: a cache that cannot be written costs a build.
		if os.MkdirAll(cacheDir, 0o755) == nil {
			sum := sha256.Sum256(b)
			if fsutil.WriteFile(kept, b, 0o755) == nil {
				_ = fsutil.WriteFile(kept+".sha256", []byte(hex.EncodeToString(sum[:])+"\n"), 0o644)
			}
		}
	}
	return b, nil
}

// readKept reads a kept agent and checks it against its recorded sha256.
func readKept(p string) ([]byte, error) {
	want, err := os.ReadFile(p + ".sha256")
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != strings.TrimSpace(string(want)) {
		return nil, fmt.Errorf("the kept agent %s does not match its sha256", p)
	}
	return b, nil
}

// compileAgentFunc is compileAgent; tests count its calls.
var compileAgentFunc = compileAgent

func compileAgent(ctx context.Context, root string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "patchctl-agent-")
	if err != nil {
		return nil, fmt.Errorf("building the guest agent: %w", err)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "agent")
	cmd := &command.Cmd{Name: "go", Args: []string{"build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid=", "-o", out, "./qemu/agent"},
		Dir: root, Env: agentEnv}
	if err := cmd.Run(ctx); err != nil {
		return nil, fmt.Errorf("building the guest agent: %w", err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("building the guest agent: %w", err)
	}
	return b, nil
}

// agentSource says whether a file of the module is one a build of the
// agent may read: Go files (not tests), assembly, C and its headers, and
// go.mod and go.sum (which name every dependency by its content).
func agentSource(name string) bool {
	switch filepath.Ext(name) {
	case ".go":
		return !strings.HasSuffix(name, "_test.go")
	case ".s", ".S", ".c", ".h", ".syso":
		return true
	}
	return name == "go.mod" || name == "go.sum" || name == "go.work" || name == "go.work.sum"
}

// AgentKey names what the agent is built from: every file of the module
// at root that a build may read (agentSource; tests and testdata are
// not) and every file a Go file's //go:embed patterns match, and what the
// go tool says of itself and of the settings a build follows.
func AgentKey(ctx context.Context, root string) (string, error) {
	env, err := (&command.Cmd{Name: "go", Args: []string{"env", "GOVERSION", "GOROOT", "GOFLAGS", "GOEXPERIMENT", "GOAMD64", "GOTOOLCHAIN", "GOMODCACHE", "GOWORK"},
		Dir: root, Env: agentEnv}).Output(ctx)
	if err != nil {
		return "", fmt.Errorf("asking the go tool its version: %w", err)
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if agentSource(name) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("reading the agent's sources: %w", err)
	}
	sort.Strings(files)
	h := sha256.New()
	fmt.Fprintf(h, "agent\x00%s\x00%s\x00", strings.Join(agentEnv, " "), env)
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("reading the agent's sources: %w", err)
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
		if strings.HasSuffix(p, ".go") {
			if err := hashEmbeds(h, root, p, b); err != nil {
				return "", err
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashEmbeds adds to h the files the //go:embed lines of the Go file p
// (content b) match in its folder, folders whole.
func hashEmbeds(h io.Writer, root, p string, b []byte) error {
	for _, line := range strings.Split(string(b), "\n") {
		pats, ok := strings.CutPrefix(strings.TrimSpace(line), "//go:embed ")
		if !ok {
			continue
		}
		for _, pat := range strings.Fields(pats) {
			pat = strings.TrimPrefix(strings.Trim(pat, "`\""), "all:")
			matches, err := filepath.Glob(filepath.Join(filepath.Dir(p), filepath.FromSlash(pat)))
			if err != nil {
				return fmt.Errorf("%s: the pattern %q: %w", p, pat, err)
			}
			for _, m := range matches {
				err := filepath.WalkDir(m, func(f string, d fs.DirEntry, err error) error {
					if err != nil || d.IsDir() {
						return err
					}
					c, err := os.ReadFile(f)
					if err != nil {
						return err
					}
					rel, _ := filepath.Rel(root, f)
					fmt.Fprintf(h, "embed\x00%s\x00%d\x00", rel, len(c))
					_, err = h.Write(c)
					return err
				})
				if err != nil {
					return fmt.Errorf("reading what %s embeds: %w", p, err)
				}
			}
		}
	}
	return nil
}
