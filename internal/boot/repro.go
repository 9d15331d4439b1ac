package boot

import (
	"fmt"
	"slices"
	"strings"

	"github.com/patchctl/patchctl/internal/errs"
	"github.com/patchctl/patchctl/internal/guestconf"
	"github.com/patchctl/patchctl/internal/ktap"
	"github.com/patchctl/patchctl/internal/vocab"
)

// incapsuleHarness is the harness the in-capsule reproducer needs
// (qemu/harness: incapsule-wrap), as a build records its patches.
const incapsuleHarness = "incapsule-wrap/"

// checkReproduce refuses a reproducer the image cannot run.
func checkReproduce(o *Options) error {
	r, err := vocab.ParseReproduce(o.Reproduce)
	if err != nil {
		return err
	}
	o.Reproduce = r
	if r == "" {
		return nil
	}
	if o.Interactive() || o.Bench != nil {
		return fmt.Errorf("--reproduce %s goes with the tests, not with --shell, --keep or bench: %w", r, errs.ErrUsage)
	}
	if !slices.ContainsFunc(o.Harness, func(h string) bool { return strings.HasPrefix(h, incapsuleHarness) }) {
		return fmt.Errorf("--reproduce %s needs the incapsule-wrap harness in the kernel, and the %s %s image carries none (built by the distro path, or before patchctl applied the harness): rebuild it from source: %w", r, o.Kernel, o.Variant, errs.ErrInput)
	}
	return nil
}

// reproSplats splits the console's kernel reports into those that fail
// the boot and the known ones: inside the reproducer's markers (its
// outcome), or a known pre-existing report of this kernel. A reproducer
// that never printed its end marker (the VM died in it) keeps its window
// to the end of the log.
func reproSplats(lines []string, kr []guestconf.KnownReport) (splats, known []Splat) {
	begin, end := -1, len(lines)
	for i, l := range lines {
		if begin < 0 && strings.Contains(l, guestconf.ReproBeginLine) {
			begin = i
		} else if begin >= 0 && strings.Contains(l, guestconf.ReproEndLine) {
			end = i
			break
		}
	}
	for _, s := range findSplats(lines, kr) {
		switch i := s.Line - 2; {
		case begin >= 0 && i > begin && i < end:
			s.Known = reproKnown + guestconf.ReproDefect
			known = append(known, s)
		case s.Known != "":
			known = append(known, s)
		default:
			splats = append(splats, s)
		}
	}
	return splats, known
}

// collectRepro finds the reproducer's typed outcome in the results.
func collectRepro(t *ktap.Test) *guestconf.Repro {
	if t == nil {
		return nil
	}
	for _, d := range t.Diagnostics {
		if r, ok := guestconf.ParseRepro(d); ok {
			return r
		}
	}
	for _, s := range t.Subtests {
		if r := collectRepro(s); r != nil {
			return r
		}
	}
	return nil
}

// judgeRepro says in the reason what the reproducer showed: a defect it
// showed is the known pre-existing one, not the patch's failure.
func judgeRepro(res *Result) {
	r := res.Repro
	if r == nil {
		return
	}
	switch r.Outcome {
	case guestconf.ReproShown:
		res.Reason += fmt.Sprintf("; reproducer %s over %s: known pre-existing defect shown (%s): %s", r.Name, r.Transport, r.Splat, guestconf.ReproDefect)
	case guestconf.ReproRejected:
		res.Reason += fmt.Sprintf("; reproducer %s over %s: the target rejected the wrapping offset, nothing reported: the bounds check holds", r.Name, r.Transport)
	default:
		res.Reason += fmt.Sprintf("; reproducer %s over %s did not test the check (offset sent: %v, write: %s)", r.Name, r.Transport, r.Sent, r.Write)
		if res.Verdict == vocab.Pass {
			res.Verdict = vocab.Fail
		}
	}
}

// noteKnown says in the reason which known pre-existing kernel reports
// the boot met (they failed nothing).
func noteKnown(res *Result) {
	for _, s := range res.KnownSplats {
		if !s.KernelReport() {
			continue
		}
		res.Reason += fmt.Sprintf("; known pre-existing kernel report %s at console line %d, not the patch's: %q", s.Known, s.Line, s.words())
	}
}

// reproKnown begins the Known of a report inside the reproducer's window.
const reproKnown = "reproducer: "

// KernelReport is whether the splat is a known pre-existing kernel report
// (Options.Known), not the reproducer's outcome.
func (s Splat) KernelReport() bool {
	return s.Known != "" && !strings.HasPrefix(s.Known, reproKnown)
}
