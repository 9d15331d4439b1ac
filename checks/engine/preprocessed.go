package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/patchctl/patchctl/checks/findings"
	"github.com/patchctl/patchctl/internal/preproc"
)

// Preprocessor, set in Options, supplies for a .c file the source the
// rules read instead of the raw file: the translation unit the compiler
// sees, cut to the file's own lines and kept at their source lines, so
// findings need no other mapping; Macros names, per line where a macro
// was expanded, its definition (the finding's related location). ok
// false: the file is read as raw C (its own macros expanded, macro.go).
type Preprocessor interface {
	Source(rel string, raw []byte) (src []byte, macros map[int]macroUse, ok bool)
	// Analysis is Report.Analysis: what the rules read, and Read its
	// counts.
	Analysis() string
	Read() *findings.Read
}

// NewPreprocessor is the Preprocessor of a preproc session: a line keeps
// its source text unless a macro named on it touches what the rules read
// (macroTouch, through the macros its body names); #if arms the
// configuration does not build are gone.
func NewPreprocessor(ctx context.Context, s *preproc.Session) Preprocessor {
	return &ppSession{ctx: ctx, s: s, done: map[string]*ppResult{}}
}

type ppSession struct {
	ctx context.Context
	s   *preproc.Session

	mu   sync.Mutex
	done map[string]*ppResult
}

type ppResult struct {
	once   sync.Once
	src    []byte
	macros map[int]macroUse
	cfg    string
	why    string // the fallback's reason
}

func (p *ppSession) Source(rel string, raw []byte) ([]byte, map[int]macroUse, bool) {
	if !strings.HasSuffix(rel, ".c") {
		return nil, nil, false
	}
	p.mu.Lock()
	r := p.done[rel]
	if r == nil {
		r = &ppResult{}
		p.done[rel] = r
	}
	p.mu.Unlock()
	r.once.Do(func() {
		defer func() {
			if x := recover(); x != nil {
				r.src, r.why = nil, fmt.Sprintf("internal error in preprocessing (%v)", x)
			}
		}()
		u, err := p.s.Preprocess(p.ctx, rel)
		if err != nil {
			var fb *preproc.FallbackError
			if errors.As(err, &fb) {
				r.why = fb.Reason
			} else {
				r.why = err.Error()
			}
			return
		}
		pr := u.Project(raw, func(m preproc.MacroSite) bool { return macroTouch.MatchString(m.Text) })
		r.src, r.cfg = pr.Src, u.Config.String()
		r.macros = map[int]macroUse{}
		for line, ms := range pr.Macros {
			best := ms[0]
			for _, m := range ms {
				if macroTouch.MatchString(m.Text) {
					best = m
					break
				}
			}
			r.macros[line] = macroUse{Name: best.Name, File: best.File, Line: best.Line}
		}
	})
	if r.src == nil {
		return nil, nil, false
	}
	return r.src, r.macros, true
}

func (p *ppSession) Read() *findings.Read {
	p.mu.Lock()
	defer p.mu.Unlock()
	rd := &findings.Read{Configs: []string{}}
	cfgs := map[string]bool{}
	for _, r := range p.done {
		if r.src != nil {
			rd.Preprocessed++
			if !cfgs[r.cfg] {
				cfgs[r.cfg] = true
				rd.Configs = append(rd.Configs, r.cfg)
			}
		} else if r.why != "" {
			rd.RawC++
		}
	}
	sort.Strings(rd.Configs)
	return rd
}

func (p *ppSession) Analysis() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var pre, raw []string
	cfgs := map[string]bool{}
	for rel, r := range p.done {
		if r.src != nil {
			pre = append(pre, rel)
			cfgs[r.cfg] = true
		} else if r.why != "" {
			raw = append(raw, rel+" ("+r.why+")")
		}
	}
	if len(pre) == 0 && len(raw) == 0 {
		return findings.AnalysisRawC + "; no .c file needed preprocessing"
	}
	sort.Strings(raw)
	var cs []string
	for c := range cfgs {
		cs = append(cs, c)
	}
	sort.Strings(cs)
	s := fmt.Sprintf("preprocessed translation units for %d .c files (kbuild's flags; #if arms the configuration does not build are not analysed; configuration: %s)", len(pre), strings.Join(cs, "; "))
	if len(raw) > 0 {
		if len(raw) > 3 {
			raw = append(raw[:3], fmt.Sprintf("and %d more", len(raw)-3))
		}
		s += fmt.Sprintf("; raw C, the module's own macros expanded, for the others: %s", strings.Join(raw, "; "))
	}
	return s
}
