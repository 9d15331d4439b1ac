package main

import (
	"strings"

	"github.com/patchctl/patchctl/internal/pipeline"
	"github.com/spf13/cobra"
)

// examples are every verb's, by command path.
var examples = map[string]string{
	"patchctl import": `  patchctl import patches/*
  patchctl import --tree ~/.cache/patchctl/trees/6.12 --json series.mbox
  patchctl import --out /tmp/imported lore-thread.mbox`,
	"patchctl tree": `  patchctl tree list
  patchctl tree prepare --all`,
	"patchctl tree prepare": `  patchctl tree prepare                      # the lock's default kernel
  patchctl tree prepare --kernel 6.12 --kernel 6.1
  patchctl --offline tree prepare --all      # only what the cache has`,
	"patchctl apply": `  patchctl apply                             # the lock's default kernel
  patchctl apply --kernel 6.1 --dry-run --json
  patchctl apply --kernel 6.12 --series nvme-rdma-inline-capsule`,
	"patchctl refresh": `  patchctl refresh --kernel 6.12
  patchctl refresh --kernel 6.1 --check      # CI: exit 1 when series/6.1 is stale
  patchctl refresh --json`,
	"patchctl build": `  patchctl build                             # the default kernel, patched
  patchctl build --kernel 6.1 --variant baseline
  patchctl build --fragment base,rdma-loopback,debug -j 8`,
	"patchctl boot": `  patchctl boot --transport rxe
  patchctl boot --shell --transport siw      # a shell in the guest, connected
  patchctl boot --keep --variant baseline    # the tests, then the VM stays up
  patchctl boot --print-qemu --out /tmp/vm   # the command, to run by hand`,
	"patchctl check": `  patchctl check --kernel 6.12
  patchctl check --kernel 6.12 --format sarif > check.sarif
  patchctl check --tree ~/src/linux drivers/nvme/host`,
	"patchctl run": `  patchctl run                               # every pinned kernel
  patchctl run --kernel 6.12 --transport rxe --out /tmp/run
  patchctl run --json --url-base https://ci.example.org/artifacts/42 > result.json`,
	"patchctl try": `  patchctl try my-fix.patch --kernel 6.12       # a patch file on a pinned kernel
  patchctl try --git ~/linux HEAD~2..HEAD --tree ~/linux
  patchctl try --msgid 20260604.1234-1-dev@example.org --inbox ~/mirrors/linux-rdma --record nvmet-inline-offset`,
	"patchctl bench": `  patchctl bench --kernel 6.12                  # rxe, the default boots per variant
  patchctl bench --transport siw --boots 8 --out /tmp/bench-siw
  patchctl bench --json | jq '.latency.diff_mean_us'`,
	"patchctl mutate": `  patchctl mutate --kernel 6.12                 # every mutant: the checks, a build and a boot each
  patchctl mutate --kernel 6.12 --max 12 --operators addr-kind,flag-cleared
  patchctl mutate --static-only --json | jq '.scores'`,
	"patchctl matrix": `  patchctl matrix
  patchctl matrix --json | jq -r '.include[].kernel'`,
}

// terms explain the words flags use, appended to the help of every verb
// with the flag.
var terms = []struct{ flag, text string }{
	{"kernel", `Kernels: the names pinned in series/kernels.yaml (patchctl tree list).
"The lock's default" is the kernel its default: field names. A verb that
works on one kernel refuses a second --kernel; run and tree take several.`},
	{"variant", `Variants: baseline is the pristine tree, patched the tree with the
manifest's series applied (series/<kernel>/manifest.yaml).`},
	{"fragment", `Fragments: kconfig/<name>.config files merged in order (later wins) onto
tinyconfig. The default is ` + strings.Join(pipeline.DefaultFragments(), ",") + `, and for each kernel
kconfig/kernel-<name>.config is added last when it exists (kernel-6.1 on
6.1), with or without --fragment.`},
	{"out", `--out: a path relative to the current folder, as every path on the command
line; without it, a folder under the repository's out/.`},
}

// addHelp puts the examples and the flags' terms in every verb's help.
func addHelp(c *cobra.Command) {
	if ex, ok := examples[c.CommandPath()]; ok && c.Example == "" {
		c.Example = ex
	}
	var add []string
	for _, t := range terms {
		if c.Flags().Lookup(t.flag) != nil {
			add = append(add, t.text)
		}
	}
	if len(add) > 0 {
		long := c.Long
		if long == "" {
			long = c.Short + "."
		}
		c.Long = strings.TrimRight(long, "\n") + "\n\n" + strings.Join(add, "\n\n")
	}
	for _, s := range c.Commands() {
		addHelp(s)
	}
}
