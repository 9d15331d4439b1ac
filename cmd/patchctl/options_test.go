package main

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/patchctl/patchctl/internal/errs"
)

// TestSharedFlagsAgree: a flag that run, try, boot, bench and build
// share means the same on each verb: same type, and the same help unless
// the verb says what differs (its sharedFlags.help).
func TestSharedFlagsAgree(t *testing.T) {
	root := newRootCmd(&IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
	own := map[string]bool{ // verb/flag: the verb's own help, on purpose
		"boot/fragment": true, "bench/fragment": true, "bench/transport": true,
		"try/kernel": true, "try/tree": true, "try/fragment": true,
		"boot/kernel": true, "bench/kernel": true, "build/kernel": true, // one kernel, not a list
	}
	help := map[string]string{}
	types := map[string]string{}
	for _, verb := range []string{"run", "try", "boot", "bench", "build"} {
		c, _, err := root.Find([]string{verb})
		if err != nil || c.Name() != verb {
			t.Fatalf("no verb %s: %v", verb, err)
		}
		for _, name := range []string{"kernel", "tree", "fragment", "transport", "accel", "kernel-from", "no-ccache", "url-base"} {
			f := c.Flags().Lookup(name)
			if f == nil {
				continue
			}
			if own[verb+"/"+name] {
				continue
			}
			if h, ok := help[name]; ok && h != f.Usage {
				t.Errorf("%s --%s: help %q, another verb's %q", verb, name, f.Usage, h)
			}
			if ty, ok := types[name]; ok && ty != f.Value.Type() {
				t.Errorf("%s --%s: type %s, another verb's %s", verb, name, f.Value.Type(), ty)
			}
			help[name], types[name] = f.Usage, f.Value.Type()
		}
	}
	if len(help) != 8 {
		t.Errorf("shared flags seen: %v", help)
	}
}

// TestSharedParse: parse checks every shared word in one place, each
// error a usage error (exit 2) naming the flag.
func TestSharedParse(t *testing.T) {
	ok := SharedOptions{Transport: "siw", Accel: "tcg", KernelFrom: "distro", URLBase: "https://ci.example.org/runs/1/"}
	p, err := ok.parse()
	if err != nil || strings.Join(p.Transports, ",") != "siw" || p.Accel != "tcg" || p.KernelFrom != "distro" {
		t.Fatalf("parse(%+v) = %+v, %v", ok, p, err)
	}
	for _, c := range []struct {
		o    SharedOptions
		word string
	}{
		{SharedOptions{Transport: "ib"}, "transport"},
		{SharedOptions{Accel: "xen"}, "accel"},
		{SharedOptions{KernelFrom: "binary"}, "kernel-from"},
		{SharedOptions{URLBase: "file:///srv/out"}, "url-base"},
	} {
		_, err := c.o.parse()
		if !errors.Is(err, errs.ErrUsage) || !strings.Contains(err.Error(), c.word) {
			t.Errorf("parse(%+v): %v, want a usage error naming %s", c.o, err, c.word)
		}
	}
}
