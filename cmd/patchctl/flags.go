package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchctl/patchctl/internal/vocab"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// enums are the flags that take one of a fixed set of words: the one
// place they are validated (when the command line is parsed, before any
// work) and completed.
var enums = map[string][]string{
	"variant":   vocab.Variants(),
	"transport": append(vocab.DefaultTransports(), vocab.AllTransports),
	"format":    {"text", "json", "sarif"},
	"accel":     vocab.Accels(),
}

// enumValue is a string flag that refuses a word outside its set.
type enumValue struct {
	p    *string
	name string
}

func (e *enumValue) String() string { return *e.p }
func (e *enumValue) Type() string   { return "string" }
func (e *enumValue) Set(s string) error {
	for _, w := range enums[e.name] {
		if s == w {
			*e.p = s
			return nil
		}
	}
	return fmt.Errorf("%q is not a %s: want %s", s, e.name, strings.Join(enums[e.name], ", "))
}

// enumFlag defines --name as one of enums[name], default def.
func enumFlag(fs *pflag.FlagSet, p *string, name, def, usage string) {
	*p = def
	fs.Var(&enumValue{p: p, name: name}, name, usage)
}

// onceValue is a string flag for verbs that work on one thing: a second
// occurrence is refused rather than silently winning.
type onceValue struct {
	p    *string
	name string
	set  bool
	hint string
}

func (o *onceValue) String() string { return *o.p }
func (o *onceValue) Type() string   { return "string" }
func (o *onceValue) Set(s string) error {
	if o.set && s != *o.p {
		return fmt.Errorf("--%s given twice (%s, then %s): this verb takes one%s", o.name, *o.p, s, o.hint)
	}
	*o.p, o.set = s, true
	return nil
}

// kernelFlag defines --kernel for a verb that works on one kernel.
func kernelFlag(fs *pflag.FlagSet, p *string, usage string) {
	fs.Var(&onceValue{p: p, name: "kernel", hint: "; run it once per kernel, or use patchctl run --kernel A --kernel B"}, "kernel", usage)
}

// registerCompletions completes, on every verb that has the flag, kernel
// names (series/kernels.yaml), series (patches/), fragments (kconfig/)
// and the enum flags' words.
func registerCompletions(root *cobra.Command, g *GlobalOptions) {
	kernels := func(c *cobra.Command, args []string, to string) ([]string, cobra.ShellCompDirective) {
		w, err := g.workspace(nil)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, k := range w.Lock.Kernels {
			out = append(out, k.Name)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	files := func(sub, ext string, dirs bool) cobra.CompletionFunc {
		return func(c *cobra.Command, args []string, to string) ([]string, cobra.ShellCompDirective) {
			root, err := g.repoRoot()
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			ents, _ := os.ReadDir(filepath.Join(root, sub))
			var out []string
			for _, e := range ents {
				if e.IsDir() == dirs && strings.HasSuffix(e.Name(), ext) && !strings.HasPrefix(e.Name(), ".") {
					out = append(out, strings.TrimSuffix(e.Name(), ext))
				}
			}
			sort.Strings(out)
			return out, cobra.ShellCompDirectiveNoFileComp
		}
	}
	funcs := map[string]cobra.CompletionFunc{
		"kernel":   kernels,
		"series":   files("patches", "", true),
		"fragment": files("kconfig", ".config", false),
	}
	for name, words := range enums {
		funcs[name] = cobra.FixedCompletions(words, cobra.ShellCompDirectiveNoFileComp)
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, f := range funcs {
			if c.Flags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, f) // fails only on a flag registered twice
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}
