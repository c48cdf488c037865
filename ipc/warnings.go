package ipc

import (
	"fmt"
	"io"
	"time"
)

// Warnings prints reports at most once a second per kind, counting the
// others into the next report of that kind, so that a problem repeating
// every cycle (an overrun, a failing sensor) never floods its output.
type Warnings struct {
	w      io.Writer
	prefix string
	last   map[string]time.Time // last report of each kind
	held   map[string]int       // reports suppressed since then
}

// NewWarnings returns Warnings that print "PREFIX: message" lines to w.
func NewWarnings(w io.Writer, prefix string) *Warnings {
	return &Warnings{w: w, prefix: prefix, last: map[string]time.Time{}, held: map[string]int{}}
}

// Warn reports a problem of the given kind.
func (r *Warnings) Warn(kind, format string, args ...any) {
	now := time.Now()
	if now.Sub(r.last[kind]) < time.Second {
		r.held[kind]++
		return
	}
	msg := fmt.Sprintf(format, args...)
	if n := r.held[kind]; n > 0 {
		msg += fmt.Sprintf(" (and %d more since the last report)", n)
	}
	fmt.Fprintf(r.w, "%s: %s\n", r.prefix, msg)
	r.last[kind], r.held[kind] = now, 0
}
