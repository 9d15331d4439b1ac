package kconfig

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
)

// Config is a .config or a fragment: symbols (without CONFIG_) to values.
// "# CONFIG_X is not set" reads as "n".
type Config struct {
	Name   string
	Values map[string]string
	Lines  map[string]int // where each symbol was set
	Order  []string       // symbols in file order
}

var (
	setLine   = regexp.MustCompile(`^CONFIG_([A-Za-z0-9_]+)=(.*)$`)
	unsetLine = regexp.MustCompile(`^# CONFIG_([A-Za-z0-9_]+) is not set$`)
)

// Parse reads a .config or fragment.
func Parse(name string, r io.Reader) (*Config, error) {
	c := &Config{Name: name, Values: map[string]string{}, Lines: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		var sym, val string
		if m := setLine.FindStringSubmatch(l); m != nil {
			sym, val = m[1], m[2]
		} else if m := unsetLine.FindStringSubmatch(l); m != nil {
			sym, val = m[1], "n"
		} else if l == "" || strings.HasPrefix(l, "#") {
			continue
		} else {
			return nil, fmt.Errorf("%s:%d: not a config line: %q (want CONFIG_X=value or \"# CONFIG_X is not set\"): %w", name, n, l, errs.ErrInput)
		}
		if _, seen := c.Values[sym]; !seen {
			c.Order = append(c.Order, sym)
		}
		c.Values[sym], c.Lines[sym] = val, n
	}
	return c, sc.Err()
}

// Load reads a config file.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	return Parse(path, f)
}

// Value returns a symbol's value, "n" when it is absent (as Kconfig reads it).
func (c *Config) Value(sym string) string {
	if v, ok := c.Values[sym]; ok {
		return v
	}
	return "n"
}

// Override is a symbol that a later fragment set to another value.
type Override struct {
	Symbol   string `json:"symbol"`
	Old, New string
	By       string `json:"by"`
}

// Merge applies fragments over base in order: a later value wins
// (merge_config.sh). It returns the merged config and what changed value.
func Merge(base *Config, fragments ...*Config) (*Config, []Override) {
	out := &Config{Name: "merged", Values: map[string]string{}, Lines: map[string]int{}}
	var ov []Override
	set := func(sym, val string) {
		if _, ok := out.Values[sym]; !ok {
			out.Order = append(out.Order, sym)
		}
		out.Values[sym] = val
	}
	for _, s := range base.Order {
		set(s, base.Values[s])
	}
	requested := map[string]string{}
	for _, f := range fragments {
		for _, s := range f.Order {
			if old, ok := requested[s]; ok && old != f.Values[s] {
				ov = append(ov, Override{Symbol: s, Old: old, New: f.Values[s], By: f.Name})
			}
			requested[s] = f.Values[s]
			set(s, f.Values[s])
		}
	}
	return out, ov
}

// Requested is what the fragments ask for, later winning.
func Requested(fragments ...*Config) map[string]string {
	req := map[string]string{}
	for _, f := range fragments {
		for _, s := range f.Order {
			req[s] = f.Values[s]
		}
	}
	return req
}

// Write writes c in .config form ("# CONFIG_X is not set" for n).
func (c *Config) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, s := range c.Order {
		if v := c.Values[s]; v == "n" {
			fmt.Fprintf(bw, "# CONFIG_%s is not set\n", s)
		} else {
			fmt.Fprintf(bw, "CONFIG_%s=%s\n", s, v)
		}
	}
	return bw.Flush()
}

// Miss is a requested symbol that did not land.
type Miss struct {
	Symbol    string   `json:"symbol"`
	Want      string   `json:"want"`
	Got       string   `json:"got"`
	Known     bool     `json:"known"` // the tree's Kconfig defines it
	DependsOn string   `json:"depends_on,omitempty"`
	Unmet     []string `json:"unmet,omitempty"` // symbols in DependsOn that are off
	Where     string   `json:"where,omitempty"` // Kconfig file:line
}

func (m Miss) String() string {
	s := fmt.Sprintf("CONFIG_%s=%s requested, got %s", m.Symbol, m.Want, m.Got)
	switch {
	case !m.Known:
		s += ": no such symbol in this kernel's Kconfig"
	case len(m.Unmet) > 0:
		s += fmt.Sprintf(": depends on %s (%s) [%s]", m.DependsOn, strings.Join(m.Unmet, ", "), m.Where)
	case m.DependsOn != "":
		s += fmt.Sprintf(": depends on %s [%s]", m.DependsOn, m.Where)
	default:
		s += fmt.Sprintf(" [%s]", m.Where)
	}
	return s
}

// Verify checks the requested symbols against the final config. db may be
// nil (no dependency explanations).
func Verify(requested map[string]string, final *Config, db *DB) []Miss {
	var syms []string
	for s := range requested {
		syms = append(syms, s)
	}
	sort.Strings(syms)
	var out []Miss
	for _, s := range syms {
		want, got := requested[s], final.Value(s)
		if want == got {
			continue
		}
		m := Miss{Symbol: s, Want: want, Got: got}
		if db != nil {
			if e, ok := db.Symbols[s]; ok {
				m.Known = true
				m.DependsOn = e.DependsOn()
				m.Where = fmt.Sprintf("%s:%d", filepath.ToSlash(e.File), e.Line)
				for _, d := range e.DependSymbols() {
					if final.Value(d) == "n" {
						m.Unmet = append(m.Unmet, d+"=n")
					}
				}
			}
		}
		out = append(out, m)
	}
	return out
}
