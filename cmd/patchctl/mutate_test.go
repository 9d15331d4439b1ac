package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestMutateUsage: a negative --max, an unknown operator class and a
// --min-score that is no percentage are usage errors (exit 2), said
// before any tree or cache is touched (the cache given does not exist).
func TestMutateUsage(t *testing.T) {
	cache := t.TempDir() + "/none"
	for say, args := range map[string][]string{
		"--max -1: want 0":                              {"mutate", "--max", "-1"},
		`unknown mutation operator "no-such"`:           {"mutate", "--operators", "addr-kind,no-such"},
		"--min-score 150: want a percentage":            {"mutate", "--min-score", "150"},
		`unknown command "extra" for "patchctl mutate"`: {"mutate", "extra"},
	} {
		var out, errOut bytes.Buffer
		code := execute(append([]string{"--cache", cache}, args...), &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		if code != 2 || !strings.Contains(errOut.String(), say) {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errOut.String())
		}
	}
}
