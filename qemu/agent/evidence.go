package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

const tracing = "/sys/kernel/tracing"

// probeName is the kprobe event for a transport.
func probeName(transport string) string { return "post_" + transport }

// addProbe puts a kprobe event on the provider's post function recording,
// for the work request and the one chained after it, the opcode, send
// flags, number of SGEs and the first SGE's length. The second argument
// (%si on x86_64) is the work request list; offsets come from the build.
func addProbe(cfg *Config, transport string) error {
	fn := cfg.Probes[transport]
	if fn == "" {
		return fmt.Errorf("no post function known for %s", transport)
	}
	w := cfg.WR
	fields := func(i int, base string) string {
		return fmt.Sprintf("op%d=+%d(%s):u32 fl%d=+%d(%s):u32 n%d=+%d(%s):s32 len%d=+%d(+%d(%s)):u32",
			i, w["opcode"], base, i, w["send_flags"], base, i, w["num_sge"], base, i, w["sge_length"], w["sg_list"], base)
	}
	def := fmt.Sprintf("p:patchctl/%s %s %s %s", probeName(transport), fn, fields(0, "%si"), fields(1, fmt.Sprintf("+%d(%%si)", w["next"])))
	f, err := os.OpenFile(tracing+"/kprobe_events", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("kprobe_events: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(def + "\n"); err != nil {
		return fmt.Errorf("adding %q: %w", def, err)
	}
	if err := writeFile(tracing+"/trace", ""); err != nil {
		return err
	}
	return writeFile(fmt.Sprintf("%s/events/patchctl/%s/enable", tracing, probeName(transport)), "1")
}

func removeProbe(transport string) {
	writeFile(fmt.Sprintf("%s/events/patchctl/%s/enable", tracing, probeName(transport)), "0")
	f, err := os.OpenFile(tracing+"/kprobe_events", os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		f.WriteString("-:patchctl/" + probeName(transport) + "\n")
		f.Close()
	}
}

// wr is one recorded work request.
type wr struct{ opcode, flags, nsge, len0 int }

var traceField = regexp.MustCompile(`(\w+)=(-?\d+)`)

// readEvidence parses the trace buffer into work requests, following the
// chain only after REG_MR and LOCAL_INV (reading a NULL next gives garbage).
func readEvidence(cfg *Config, transport string) ([]wr, error) {
	f, err := os.Open(tracing + "/trace")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []wr
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, probeName(transport)+":") {
			continue
		}
		v := map[string]int{}
		for _, m := range traceField.FindAllStringSubmatch(line, -1) {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			v[m[1]] = int(n)
		}
		out = append(out, wr{v["op0"], v["fl0"], v["n0"], v["len0"]})
		if v["op0"] == cfg.Opcodes["REG_MR"] || v["op0"] == cfg.Opcodes["LOCAL_INV"] {
			out = append(out, wr{v["op1"], v["fl1"], v["n1"], v["len1"]})
		}
	}
	return out, sc.Err()
}

// summary counts work requests per (opcode, flags, SGEs, first length).
func summary(cfg *Config, wrs []wr) []string {
	names := map[int]string{}
	for n, v := range cfg.Opcodes {
		names[v] = n
	}
	counts := map[string]int{}
	for _, w := range wrs {
		name := names[w.opcode]
		if name == "" {
			name = fmt.Sprintf("op%d", w.opcode)
		}
		counts[fmt.Sprintf("%-9s flags=0x%02x sge=%d len0=%d", name, w.flags, w.nsge, w.len0)]++
	}
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s count=%d", k, counts[k]))
	}
	return out
}

// capsuleSends splits the host's command capsule SENDs without in-capsule
// data (one SGE of the capsule's size) into inline and by reference.
func capsuleSends(cfg *Config, wrs []wr) (inline, byRef int) {
	for _, w := range wrs {
		if w.opcode != cfg.Opcodes["SEND"] || w.nsge != 1 || w.len0 != cfg.CapsuleSize {
			continue
		}
		if w.flags&cfg.Flags["INLINE"] != 0 {
			inline++
		} else {
			byRef++
		}
	}
	return inline, byRef
}
