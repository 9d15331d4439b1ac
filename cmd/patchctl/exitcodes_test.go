package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/testenv"
	"github.com/patchctl/patchctl/internal/testenv/testkernel"
)

// readmeExitTable parses README's "Exit status of every command" table:
// code -> its meaning and examples.
func readmeExitTable(t *testing.T) map[int]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "Exit status of every command")
	if i < 0 {
		t.Fatal("README.md has no exit status table")
	}
	rows := map[int]string{}
	row := regexp.MustCompile(`^\|\s*(\d+)\s*\|(.*)\|\s*$`)
	started := false
	for _, l := range strings.Split(s[i:], "\n")[1:] {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "|") {
			if started {
				break
			}
			continue
		}
		started = true
		if m := row.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			rows[n] = m[2]
		}
	}
	return rows
}

// TestREADMEExitTable: the exit codes README's table lists are exactly the
// codes the error classes give (internal/errs), each row's meaning names
// its classes, and examples the table gives exit with their row's code
// when run.
func TestREADMEExitTable(t *testing.T) {
	rows := readmeExitTable(t)
	classes := []struct {
		name  string
		err   error
		words []string // what README's row must say
	}{
		{"ok", nil, []string{"ok"}},
		{"findings", fmt.Errorf("check: 2 findings: %w", errs.ErrFindings), []string{"findings", "failed tests"}},
		{"input", fmt.Errorf("a.patch: %w", errs.ErrInput), []string{"input error"}},
		{"usage", fmt.Errorf("%w: unknown flag", errs.ErrUsage), []string{"usage"}},
		{"environment", fmt.Errorf("no qemu: %w", errs.ErrEnv), []string{"environment"}},
		{"an error of no class (I/O)", errors.New("read /x: input/output error"), []string{"environment"}},
		{"interrupted", fmt.Errorf("interrupted: %w: %w", context.Canceled, errs.ErrEnv), []string{"environment"}},
		{"findings and environment", fmt.Errorf("a: %w", errors.Join(errs.ErrEnv, errs.ErrFindings)), []string{"findings"}},
	}
	produced := map[int]bool{}
	for _, c := range classes {
		code := errs.Code(c.err)
		produced[code] = true
		meaning, ok := rows[code]
		if !ok {
			t.Errorf("%s: exit %d is not in README's table", c.name, code)
			continue
		}
		for _, w := range c.words {
			if !strings.Contains(meaning, w) {
				t.Errorf("%s: README's row for %d does not say %q: %s", c.name, code, w, meaning)
			}
		}
	}
	for code := range rows {
		if !produced[code] {
			t.Errorf("README lists exit %d, which no error class gives", code)
		}
	}
	if len(rows) != len(produced) {
		t.Errorf("README lists %d codes, the classes give %d", len(rows), len(produced))
	}
	// Examples from the table, run: each exits with its row's code.
	r := fixtureRepo(t)
	cache := t.TempDir()
	examples := []struct {
		example string
		args    []string
	}{
		{"an unknown flag", []string{"tree", "list", "--no-such-flag"}},
		{"unknown flag or kernel", []string{"tree", "prepare", "--kernel", "4.4"}},
		{"`--out /`", []string{"run", "--out", "/"}},
		{"a name that would become a path outside its folder", []string{"try", "--record", "../x", "--out", t.TempDir(), filepath.Join(r, "patches", testkernel.Default, "0001-x.patch")}},
	}
	for _, e := range examples {
		code, out, errOut := run(t, append([]string{"--root", r, "--cache", cache, "--offline"}, e.args...)...)
		want := -1
		for c, m := range rows {
			if strings.Contains(m, strings.TrimPrefix(e.example, "an ")) {
				want = c
			}
		}
		if want < 0 {
			t.Errorf("README's table has no example %q any more", e.example)
			continue
		}
		if code != want {
			t.Errorf("%s (%v): exit %d, README says %d\n%s%s", e.example, e.args, code, want, out, errOut)
		}
	}
}
