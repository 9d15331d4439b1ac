package guestconf

import "strings"

// KnownReport is a kernel report known to be a pre-existing defect of
// the kernel under test, not of the patches (series/known-reports.yaml):
// a report whose lines hold every Match string is reported as known by
// the guest's dmesg gate and by the host's console gate, and fails
// neither.
type KnownReport struct {
	ID    string   `json:"id"`
	Match []string `json:"match"`
}

// Report is one kernel report in a log: lines[Start:End].
type Report struct {
	Start, End int
	// Kind is the Splats pattern of its first line.
	Kind string
	// Known is the ID of the KnownReport it matches, or "".
	Known string
}

// reportLimit bounds a report that never says where it ends.
const reportLimit = 200

// Reports groups a kernel log's lines into reports: each begins at a line
// SplatIn names and runs to the end of its first call trace ("</TASK>"
// after "Call Trace:"), to the line before the next report, or at most
// reportLimit lines; KTAP diagnostic lines ("# ...") quote reports and
// begin none. A "Call Trace:" inside a report is part of it; one
// outside every report (a bare dump_stack) is a report of its own. A
// report holding every Match string of a known one is marked Known.
func Reports(lines []string, known []KnownReport) []Report {
	var out []Report
	for i := 0; i < len(lines); {
		kind := reportStart(lines[i])
		if kind == "" {
			i++
			continue
		}
		r := Report{Start: i, End: len(lines), Kind: kind}
		trace := kind == callTrace
		for j := i + 1; j < len(lines) && j < i+reportLimit; j++ {
			k := reportStart(lines[j])
			if k != "" && k != callTrace {
				r.End = j
				break
			}
			if k == callTrace {
				trace = true
			}
			if trace && strings.Contains(lines[j], "</TASK>") {
				r.End = j + 1
				break
			}
			r.End = j + 1
		}
		r.Known = matchKnown(lines[r.Start:r.End], known)
		out = append(out, r)
		i = r.End
	}
	return out
}

const callTrace = "Call Trace:"

// reportStart is the Splats pattern a kernel line holds, or "": a KTAP
// diagnostic ("# ...", the agent quoting a report it saw in dmesg) is
// not the kernel's report.
func reportStart(line string) string {
	if strings.HasPrefix(strings.TrimSpace(line), "# ") {
		return ""
	}
	return SplatIn(line)
}

func matchKnown(block []string, known []KnownReport) string {
	for _, k := range known {
		if len(k.Match) == 0 {
			continue
		}
		all := true
		for _, m := range k.Match {
			if !containsAny(block, m) {
				all = false
				break
			}
		}
		if all {
			return k.ID
		}
	}
	return ""
}

func containsAny(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}
