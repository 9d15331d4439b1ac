package build

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/patchctl/patchctl/internal/vocab"
	"golang.org/x/sys/unix"
)

// Tuxmake is a build's metadata in the shape tuxmake documents for its
// metadata.json (https://tuxmake.org/metadata/): exactly two levels, a
// group name (build, results, compiler, source, ...) and its items.
// Groups that do not apply are left out, as tuxmake does: no git (the
// pinned trees are Debian source packages), no ccache counts (ccache's
// statistics are the cache's totals, not one build's), no runtime (the
// null runtime has none). Nothing in it is a host path: artifacts are
// file names in the build's output folder, fragments are relative to the
// repository. Facts about the machine (hardware, os, tools, uname) are
// read when the metadata is written.
type Tuxmake map[string]map[string]any

var (
	gccVersion = regexp.MustCompile(`^(\S+).*?\s(\d+(?:\.\d+)+)\s*$`)
	kernelVer  = regexp.MustCompile(`^\d+\.\d+(?:\.\d+)?`)
)

// Tuxmake converts the metadata to tuxmake's shape.
func (m *Metadata) Tuxmake() Tuxmake {
	t := Tuxmake{}
	wrapper := "none"
	if m.Ccache {
		wrapper = "ccache"
	}
	compiler := map[string]any{"version_full": m.Compiler}
	toolchain := "gcc"
	if g := gccVersion.FindStringSubmatch(m.Compiler); g != nil {
		compiler["name"], compiler["version"] = g[1], g[2]
		toolchain = g[1] + "-" + strings.SplitN(g[2], ".", 2)[0]
	}
	targets := []string{"config", "kernel"}
	if len(m.CompileTested) > 0 {
		targets = append(targets, "compile-test")
	}
	var fragments []string
	for _, f := range m.Fragments {
		fragments = append(fragments, "kconfig/"+f+".config")
	}
	reproducer := []string{"patchctl", "build", "--kernel", m.Kernel, "--variant", m.Variant}
	if len(m.Fragments) > 0 {
		reproducer = append(reproducer, "--fragment", strings.Join(m.Fragments, ","))
	}
	if m.Jobs > 0 {
		reproducer = append(reproducer, "--jobs", strconv.Itoa(m.Jobs))
	}
	t["build"] = map[string]any{"targets": targets, "target_arch": "x86_64", "toolchain": toolchain, "wrapper": wrapper,
		"environment": map[string]string{}, "kconfig": "tinyconfig", "kconfig_add": nonNil(fragments), "jobs": m.Jobs,
		"reproducer_cmdline": reproducer, "runtime": "null", "verbose": false}
	t["compiler"] = compiler

	status := m.Status
	if status == "" {
		status = vocab.Fail
	}
	configStatus := vocab.Pass
	if m.Verified == 0 {
		configStatus = vocab.Fail
	}
	// Each target's duration as the build measured it; a build written
	// before steps were timed has the whole build as the kernel's.
	d := func(target string, fallback float64) float64 {
		if v, ok := m.TargetDurations[target]; ok {
			return v
		}
		return fallback
	}
	resTargets := map[string]any{"config": map[string]any{"status": configStatus, "duration": d("config", 0)},
		"kernel": map[string]any{"status": status, "duration": d("kernel", m.Duration)}}
	artifacts := map[string][]string{}
	for name, p := range m.Artifacts {
		target := map[string]string{"bzImage": "kernel", "config": "config", "System.map": "kernel", "vmlinux": "kernel"}[name]
		if target == "" {
			target = name
		}
		if p != "" {
			artifacts[target] = append(artifacts[target], name) // tuxmake's artifact names: bzImage, config, System.map, vmlinux
		}
	}
	for _, a := range artifacts {
		sort.Strings(a)
	}
	if len(m.CompileTested) > 0 {
		resTargets["compile-test"] = map[string]any{"status": status, "duration": d("compile-test", 0)}
	}
	t["results"] = map[string]any{"status": status, "duration": m.Duration, "targets": resTargets, "artifacts": artifacts,
		"errors": m.Errors, "warnings": m.Warnings}
	t["artifacts"] = map[string]any{"modules": []string{}, "dtbs": []string{}} // all built in: no modules, no device trees on x86
	if m.KernelRelease != "" {
		src := map[string]any{"kernelrelease": m.KernelRelease}
		if v := kernelVer.FindString(m.KernelRelease); v != "" {
			src["kernelversion"] = v
		}
		t["source"] = src
	}
	t["patchctl"] = map[string]any{"kernel": m.Kernel, "source": m.Source, "variant": m.Variant, "config_hash": m.ConfigHash,
		"fragments": nonNil(m.Fragments), "applied": nonNil(m.Applied), "symbols_verified": m.Verified,
		"compile_tested": nonNil(m.CompileTested), "up_to_date": m.UpToDate}

	if p := m.Artifacts["System.map"]; p != "" {
		if off := textOffset(p); off != "" {
			t["system_map"] = map[string]any{"text_offset": off}
		}
	}
	if p := m.Artifacts["vmlinux"]; p != "" {
		if v := vmlinuxSizes(p); v != nil {
			t["vmlinux"] = v
		}
	}
	t["hardware"] = hardware()
	if o := osRelease(); o != nil {
		t["os"] = o
	}
	t["tools"] = tools()
	if u := uname(); u != nil {
		t["uname"] = u
	}
	return t
}

// WriteTuxmake writes the metadata as tuxmake's metadata.json.
func (m *Metadata) WriteTuxmake(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(m.Tuxmake())
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// textOffset is the address of _text in System.map.
func textOffset(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 3 && fs[2] == "_text" {
			return "0x" + strings.TrimLeft(fs[0], "0")
		}
	}
	return ""
}

func vmlinuxSizes(path string) map[string]any {
	st, err := os.Stat(path)
	if err != nil {
		return nil
	}
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]any{"file_size": st.Size()}
	for _, s := range []string{"text", "data", "bss"} {
		if sec := f.Section("." + s); sec != nil {
			out[s+"_size"] = sec.Size
		}
	}
	return out
}

func hardware() map[string]any {
	h := map[string]any{"cores": runtime.NumCPU()}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.Atoi(f[1]); err == nil {
					h["ram"] = kb / 1024
				}
			}
		}
	}
	return h
}

func osRelease() map[string]any {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return nil
	}
	o := map[string]any{}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		v = strings.Trim(v, `"'`)
		switch k {
		case "NAME":
			o["name"] = v
		case "VERSION_ID":
			o["version"] = v
		}
	}
	return o
}

// firstNonEmptyLine is a --version output's first line with text (perl
// starts with an empty line).
func firstNonEmptyLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// tools are the versions of what a build runs, as their --version's
// first line says.
func tools() map[string]any {
	out := map[string]any{}
	for _, tool := range []string{"gcc", "make", "ld", "as", "ccache", "bison", "flex", "bc", "perl", "openssl", "qemu-system-x86_64"} {
		b, err := exec.Command(tool, "--version").Output()
		if err != nil {
			continue
		}
		out[tool] = firstNonEmptyLine(string(b))
	}
	return out
}

func uname() map[string]any {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return nil
	}
	s := func(b []byte) string { return strings.TrimRight(string(b), "\x00") }
	return map[string]any{"kernel": s(u.Sysname[:]), "kernel_release": s(u.Release[:]), "kernel_version": s(u.Version[:]),
		"machine": s(u.Machine[:]), "operating_system": "GNU/Linux"}
}
