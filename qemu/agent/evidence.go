package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/patchctl/patchctl/internal/guestconf"
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
	_ = writeFile(fmt.Sprintf("%s/events/patchctl/%s/enable", tracing, probeName(transport)), "0") // undoing, best effort
	f, err := os.OpenFile(tracing+"/kprobe_events", os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		_, _ = f.WriteString("-:patchctl/" + probeName(transport) + "\n") // undoing, best effort
		f.Close()
	}
}

// wr is one recorded work request.
type wr struct{ opcode, flags, nsge, len0 int }

var traceField = regexp.MustCompile(`(\w+)=(-?\d+)`)

// readEvidence parses the trace buffer into work requests.
func readEvidence(cfg *Config, transport string) ([]wr, error) {
	f, err := os.Open(tracing + "/trace")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseTrace(f, cfg, transport)
}

// parseTrace reads the kprobe's trace lines for transport, following the
// chain only after REG_MR and LOCAL_INV (reading a NULL next gives
// garbage). The first SGE's length is kept only for a request that has
// an SGE: the probe reads it whatever num_sge says.
func parseTrace(r io.Reader, cfg *Config, transport string) ([]wr, error) {
	var out []wr
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
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
		get := func(i int) wr {
			w := wr{v[fmt.Sprintf("op%d", i)], v[fmt.Sprintf("fl%d", i)], v[fmt.Sprintf("n%d", i)], v[fmt.Sprintf("len%d", i)]}
			if w.nsge <= 0 {
				w.len0 = 0
			}
			return w
		}
		out = append(out, get(0))
		if v["op0"] == cfg.Opcodes["REG_MR"] || v["op0"] == cfg.Opcodes["LOCAL_INV"] {
			out = append(out, get(1))
		}
	}
	return out, sc.Err()
}

// evidence counts the work requests by shape, and splits the host's
// command capsule SENDs without in-capsule data (one SGE of the capsule's
// size) into inline and by reference.
func evidence(cfg *Config, transport string, wrs []wr) *guestconf.Evidence {
	names := map[int]string{}
	for n, v := range cfg.Opcodes { // one name per value, the same every time
		if old, ok := names[v]; !ok || len(n) < len(old) || len(n) == len(old) && n < old {
			names[v] = n
		}
	}
	e := &guestconf.Evidence{Transport: transport}
	type shape struct{ op, flags, nsge, len0 int }
	counts := map[shape]int{}
	for _, w := range wrs {
		counts[shape{w.opcode, w.flags, w.nsge, w.len0}]++
		if w.opcode != cfg.Opcodes["SEND"] || w.nsge != 1 || w.len0 != cfg.CapsuleSize {
			continue
		}
		if w.flags&cfg.Flags["INLINE"] != 0 {
			e.Inline++
		} else {
			e.ByRef++
		}
	}
	for s, n := range counts {
		name := names[s.op]
		if name == "" {
			name = fmt.Sprintf("op%d", s.op)
		}
		capsule := s.op == cfg.Opcodes["SEND"] && s.nsge == 1 && s.len0 == cfg.CapsuleSize
		e.WRs = append(e.WRs, guestconf.WRCount{Opcode: name, Flags: s.flags, NumSGE: s.nsge, Len0: s.len0, Count: n,
			FlagNames: guestconf.FlagNames(s.flags, cfg.Flags), Capsule: capsule})
	}
	sort.Slice(e.WRs, func(i, j int) bool {
		a, b := e.WRs[i], e.WRs[j]
		if a.Opcode != b.Opcode {
			return a.Opcode < b.Opcode
		}
		if a.Flags != b.Flags {
			return a.Flags < b.Flags
		}
		if a.NumSGE != b.NumSGE {
			return a.NumSGE < b.NumSGE
		}
		return a.Len0 < b.Len0
	})
	return e
}
