package checks

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/patchctl/patchctl/internal/command"
)

// Rule checkpatch: the tree's own scripts/checkpatch.pl on each generated
// patch, its messages folded into the report: ERROR as error, WARNING as
// warning, CHECK as note. Only errors make check fail; warnings are
// reported (and in SARIF) for a maintainer to weigh.

var checkpatchLine = regexp.MustCompile(`^(.*?):(\d+): (ERROR|WARNING|CHECK):(\w+): (.*)$`)

func checkpatch(tree string, patches []string) ([]Finding, error) {
	script := filepath.Join(tree, "scripts", "checkpatch.pl")
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("the tree has no scripts/checkpatch.pl: %w", err)
	}
	var out []Finding
	for _, p := range patches {
		abs, _ := filepath.Abs(p)
		cmd := &command.Cmd{Name: "perl", Args: []string{script, "--terse", "--show-types", "--no-summary", "--color=never", abs}, Dir: tree}
		b, err := cmd.Output(context.Background())
		// checkpatch exits 1 when it found something.
		var re *command.Error
		if err != nil && !(errors.As(err, &re) && re.ExitCode == 1) {
			return nil, fmt.Errorf("checkpatch.pl on %s: %w", p, err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			m := checkpatchLine.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			line, _ := strconv.Atoi(m[2])
			sev := map[string]string{"ERROR": SevError, "WARNING": SevWarning, "CHECK": SevNote}[m[3]]
			out = append(out, Finding{Rule: RuleCheckpatch, Severity: sev, File: p, Line: line, Message: m[4] + ": " + m[5]})
		}
	}
	return out, nil
}
