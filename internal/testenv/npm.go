package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// npmComplete marks a tool folder whose npm install finished.
const npmComplete = ".patchctl-complete"

var npmMu sync.Mutex

// NPMTool is the folder under the cache's tools where pkg (name@version)
// is installed by npm, installed first when it is not there whole. Test
// binaries of several packages run at once on a fresh machine and reach
// for the same tool: one installs, under a lock, into a folder of its
// own that is renamed into place when npm is done, so no test ever sees
// a half-installed tree (it did: two concurrent installs of jest-sarif
// gave one test an ajv without its files, "rules is not a function",
// 2026-12-06). A folder without the mark (an install interrupted, or
// made before the mark existed), or whose mark names another version of
// pkg, is installed again.
func NPMTool(t testing.TB, name, pkg string) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		Unavailable(t, "npm not installed: cannot install "+pkg)
	}
	dir, err := npmInstall(filepath.Join(Cache().Dir, "tools"), name, pkg)
	if err != nil {
		Unavailable(t, err.Error())
	}
	return dir
}

// npmInstall is NPMTool's work in the folder tools.
func npmInstall(tools, name, pkg string) (string, error) {
	npmMu.Lock()
	defer npmMu.Unlock()
	dir := filepath.Join(tools, name)
	if err := os.MkdirAll(tools, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(tools, name+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return "", fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	// The mark names the package and version installed: a folder of
	// another version (the pin moved) is installed again.
	if b, err := os.ReadFile(filepath.Join(dir, npmComplete)); err == nil && string(b) == pkg+"\n" {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(tools, "."+name+".install-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if out, err := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", tmp, pkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("installing %s: %w: %s", pkg, err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, npmComplete), []byte(pkg+"\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	return dir, nil
}
