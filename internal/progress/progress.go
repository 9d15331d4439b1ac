// Package progress reports long steps (extract, build, boot): a live line
// on a terminal, plain timestamped lines otherwise (CI logs).
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Reporter writes progress for one step at a time.
type Reporter struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	stage    string
	start    time.Time
	lastLine time.Time
	now      func() time.Time
	// Every is how often plain mode prints an update line.
	Every time.Duration
	// parent, for a reporter of a task beside another (Beside), is the
	// reporter that prints its lines.
	parent *Reporter
}

// Beside is a reporter for a task that runs beside the one r shows (the
// check beside a build): its steps' ends and its notes print through r
// as lines of their own, and its starts and updates never take r's
// step, so r's live line and its step's end stay r's.
func (r *Reporter) Beside() *Reporter {
	if r == nil {
		return nil
	}
	return &Reporter{parent: r, now: r.now}
}

// New reports to w; a terminal gets a live line.
func New(w io.Writer) *Reporter {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 && os.Getenv("CI") == "" {
			tty = true
		}
	}
	return &Reporter{w: w, tty: tty, now: time.Now, Every: 10 * time.Second}
}

// Start begins a stage.
func (r *Reporter) Start(stage string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stage, r.start, r.lastLine = stage, r.now(), r.now()
	if r.parent != nil {
		return
	}
	if !r.tty {
		fmt.Fprintf(r.w, "%s %s: started\n", r.start.Format("15:04:05"), stage)
	}
}

// Update shows the current state of the stage.
func (r *Reporter) Update(format string, args ...any) {
	if r == nil || r.parent != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	msg := fmt.Sprintf(format, args...)
	el := now.Sub(r.start).Truncate(time.Second)
	if r.tty {
		if len(msg) > 100 {
			msg = msg[:100]
		}
		fmt.Fprintf(r.w, "\r\033[K%s [%s] %s", r.stage, el, msg)
		return
	}
	if now.Sub(r.lastLine) >= r.Every {
		r.lastLine = now
		fmt.Fprintf(r.w, "%s %s: %s (%s)\n", now.Format("15:04:05"), r.stage, msg, el)
	}
}

// Done ends the stage.
func (r *Reporter) Done(format string, args ...any) {
	if r == nil {
		return
	}
	r.mu.Lock()
	now := r.now()
	el := now.Sub(r.start).Truncate(100 * time.Millisecond)
	msg := fmt.Sprintf(format, args...)
	if r.parent != nil {
		stage := r.stage
		r.mu.Unlock()
		r.parent.Note("%s: %s (%s)", stage, msg, el)
		return
	}
	defer r.mu.Unlock()
	if r.tty {
		fmt.Fprintf(r.w, "\r\033[K%s: %s (%s)\n", r.stage, msg, el)
		return
	}
	fmt.Fprintf(r.w, "%s %s: %s (%s)\n", now.Format("15:04:05"), r.stage, msg, el)
}

// Note prints a line of its own, whatever stage is running (a wait for a
// lock, say).
func (r *Reporter) Note(format string, args ...any) {
	if r == nil {
		return
	}
	if r.parent != nil {
		r.parent.Note(format, args...)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	msg := fmt.Sprintf(format, args...)
	if r.tty {
		fmt.Fprintf(r.w, "\r\033[K%s\n", msg)
		return
	}
	fmt.Fprintf(r.w, "%s %s\n", r.now().Format("15:04:05"), msg)
}
