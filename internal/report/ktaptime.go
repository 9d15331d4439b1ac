package report

import (
	"regexp"
	"strconv"
	"time"

	"github.com/patchctl/patchctl/internal/ktap"
)

// The guest agent prints "# duration: S s" before each result (KTAP has
// no field for it).
var durationDiag = regexp.MustCompile(`^duration: ([0-9]+(?:\.[0-9]+)?) s$`)

// testDuration is a test's duration as the agent reported it.
func testDuration(t *ktap.Test) (float64, bool) {
	for _, d := range t.Diagnostics {
		if m := durationDiag.FindStringSubmatch(d); m != nil {
			f, err := strconv.ParseFloat(m[1], 64)
			return f, err == nil
		}
	}
	return 0, false
}

// diagnostics are a test's diagnostic lines without the durations.
func diagnostics(t *ktap.Test) []string {
	var out []string
	for _, d := range t.Diagnostics {
		if !durationDiag.MatchString(d) {
			out = append(out, d)
		}
	}
	return out
}

type timing struct {
	start time.Time
	dur   float64
	known bool // the agent reported the duration
}

// ktapTimes places every test of a boot in time. The guest reports
// durations, not times: the tests ran one after another and ended just
// before the boot did (the agent halts the VM after the last result), so
// the first one began the sum of the top-level durations before the end
// of the boot stage. Without durations (an older console) every test
// gets the stage's start and no duration.
func ktapTimes(root *ktap.Test, stageStart time.Time, stageDur float64) map[*ktap.Test]timing {
	out := map[*ktap.Test]timing{}
	if root == nil {
		return out
	}
	total, all := 0.0, len(root.Subtests) > 0
	for _, t := range root.Subtests {
		d, ok := testDuration(t)
		all = all && ok
		total += d
	}
	anchor := stageStart
	if all {
		end := stageStart.Add(seconds(stageDur))
		if a := end.Add(-seconds(total)); a.After(stageStart) {
			anchor = a
		}
	}
	var walk func(list []*ktap.Test, from time.Time)
	walk = func(list []*ktap.Test, from time.Time) {
		cur := from
		for _, t := range list {
			d, ok := testDuration(t)
			out[t] = timing{start: cur, dur: d, known: ok}
			walk(t.Subtests, cur)
			cur = cur.Add(seconds(d))
		}
	}
	walk(root.Subtests, anchor)
	out[root] = timing{start: anchor, dur: total, known: all}
	return out
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
