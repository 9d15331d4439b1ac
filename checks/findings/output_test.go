package findings

import (
	"bytes"
	"strings"
	"testing"
)

// TestReadLine: the text report's "read as:" line says how many files
// were read each way, from the counts, however many files fell back to
// raw C (the analysis text lists only a few of them), and nothing when
// no preprocessor was asked for.
func TestReadLine(t *testing.T) {
	for _, c := range []struct {
		read *Read
		want string
	}{
		{&Read{Preprocessed: 13, RawC: 7, Configs: []string{"build folder /b (.config sha256 abc)"}},
			"read as: 13 .c files preprocessed with kbuild's flags (configuration: build folder /b (.config sha256 abc)), 7 as raw C (why: --format json"},
		{&Read{Preprocessed: 2, Configs: []string{"x", "y"}}, "read as: 2 .c files preprocessed with kbuild's flags (configuration: x; y), 0 as raw C\n"},
		{nil, ""},
	} {
		var b bytes.Buffer
		(&Report{Analysis: "whatever the text says", Read: c.read}).WriteText(&b)
		got := b.String()
		if c.want == "" {
			if strings.Contains(got, "read as:") {
				t.Errorf("no preprocessor, yet:\n%s", got)
			}
			continue
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%+v: want %q in\n%s", c.read, c.want, got)
		}
	}
}
