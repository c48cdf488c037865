package live

import (
	"fmt"
	"slices"
	"strings"

	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// Clock renders each sensor at its rate attribute (0: every cycle) in
// scene time, numbering each sensor's frames on its own.
type Clock struct {
	next   map[string]float64 // scene time (s) the sensor is due
	frames map[string]int
	// Stamp, if not nil, gives the time frames are stamped with instead
	// of the scene time they are scheduled at: a mirror schedules on its
	// own clock and stamps the host's scene time of the state it shows.
	Stamp func(t float64) float64
}

// NewClock returns a clock with every sensor due at once.
func NewClock() *Clock {
	return &Clock{next: map[string]float64{}, frames: map[string]int{}}
}

// due reports whether se is to be rendered at scene time t (seconds) and
// if so schedules its next frame.
func (c *Clock) due(se *scene.SensorEntry, t float64) bool {
	if se.Rate == 0 {
		return true
	}
	next, seen := c.next[se.Name]
	if seen && t+1e-9 < next {
		return false
	}
	if !seen {
		next = t
	}
	for next <= t+1e-9 {
		next += 1 / se.Rate
	}
	c.next[se.Name] = next
	return true
}

// Render renders the due sensors (all of them, or those in only) once
// each and hands every frame to sink, in the scene's order. A sensor that
// fails to render or to be taken goes to fail, and the others still
// render: one bad sensor never stops a loop that serves many. The range
// sensors on the CPU cast their beams together, on all cores
// (sensors.RenderFrames), so the frames are all rendered before the first
// is handed on. It returns the frames handed on.
func (c *Clock) Render(r *sensors.Renderer, s *scene.Scene, t float64, only map[string]bool, sink Sink, fail func(se *scene.SensorEntry, err error)) int {
	var due []*scene.SensorEntry
	var stamps []*sensors.Stamp
	for _, se := range s.Sensors() {
		if len(only) > 0 && !only[se.Name] || !c.due(se, t) {
			continue
		}
		st := &sensors.Stamp{Frame: c.frames[se.Name], Time: t}
		if c.Stamp != nil {
			st.Time = c.Stamp(t)
		}
		c.frames[se.Name]++
		due, stamps = append(due, se), append(stamps, st)
	}
	if len(due) == 0 {
		return 0
	}
	frames, errs := sensors.RenderFrames(r, s, due, stamps)
	done := 0
	for i, se := range due {
		if errs[i] != nil {
			fail(se, errs[i])
			continue
		}
		if err := sink.Frame(se, frames[i], stamps[i]); err != nil {
			fail(se, fmt.Errorf("sensor %q: %w", se.Name, err))
			continue
		}
		done++
	}
	return done
}

// Failures counts failed sensor frames per sensor and reports them
// through warn, which limits its reports' rate (ipc.Warnings).
type Failures struct {
	count map[string]int
	warn  func(kind, format string, args ...any)
}

// NewFailures returns a count that reports through warn.
func NewFailures(warn func(kind, format string, args ...any)) *Failures {
	return &Failures{count: map[string]int{}, warn: warn}
}

// Fail counts and reports a failed frame of se.
func (sf *Failures) Fail(se *scene.SensorEntry, err error) {
	sf.count[se.Name]++
	sf.warn("sensor "+se.Name, "%v (%d frames of this sensor failed so far)", err, sf.count[se.Name])
}

// String sums the failures up: "2 sensor frames failed (A: 1, B: 1)".
func (sf *Failures) String() string {
	total := 0
	var each []string
	for name, n := range sf.count {
		total += n
		each = append(each, fmt.Sprintf("%s: %d", name, n))
	}
	if total == 0 {
		return "0 sensor frames failed"
	}
	slices.Sort(each)
	return fmt.Sprintf("%d sensor frames failed (%s)", total, strings.Join(each, ", "))
}

// Total is the number of failed frames.
func (sf *Failures) Total() int {
	n := 0
	for _, c := range sf.count {
		n += c
	}
	return n
}

// Loop renders a host's sensors every cycle and hands the frames to its
// sink. Its renderer is made when the scene first has a sensor, so that
// sensors that requests add render in a host started without any.
type Loop struct {
	R        *sensors.Renderer // nil: made when needed
	Clock    *Clock
	Fails    *Failures
	Sink     Sink
	HostRate float64 // cycles per second: a sensor asking for more is warned about
	Warn     func(kind, format string, args ...any)
	// OverlaysOnly renders only the sensors whose returns a window's
	// overlays draw: nothing else takes the frames.
	OverlaysOnly bool
	// Borrowed: R belongs to a window, which closes it.
	Borrowed bool

	rErr error // why no renderer could be made
	seen map[string]bool
	// computeTold: the compute caster's failure has been warned of.
	computeTold bool
}

// NewLoop returns a loop handing frames to sink; a renderer is made
// at once if the scene has sensors, so that a machine that cannot render
// fails at the start rather than in every cycle.
func NewLoop(s *scene.Scene, sink Sink, hostRate float64, warn func(kind, format string, args ...any)) (*Loop, error) {
	l := &Loop{Clock: NewClock(), Fails: NewFailures(warn), Sink: sink, HostRate: hostRate, Warn: warn}
	if len(s.Sensors()) > 0 {
		var err error
		if l.R, err = sensors.NewRenderer(); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Cycle renders the sensors due at scene time t. A loop whose sinks want
// nothing now renders nothing and makes no renderer: a host serving pages
// that want no sensor costs what it did without them.
func (l *Loop) Cycle(s *scene.Scene, t float64) {
	list := s.Sensors()
	if len(list) == 0 {
		return
	}
	var only map[string]bool
	if l.OverlaysOnly {
		only = map[string]bool{}
		for _, name := range s.ReturnsWanted() {
			only[name] = true
		}
		if len(only) == 0 {
			return
		}
	} else if want, selective := wanted(l.Sink, s); selective {
		if len(want) == 0 {
			return // nothing wanted now: nothing rendered
		}
		only = want
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	for _, se := range list {
		if !l.seen[se.Name] && (only == nil || only[se.Name]) {
			l.seen[se.Name] = true
			if se.Rate > l.HostRate {
				l.Warn("rate "+se.Name, "sensor %q: rate %g Hz is above the host's %g Hz; it renders every cycle", se.Name, se.Rate, l.HostRate)
			}
		}
	}
	if l.R == nil && l.rErr == nil {
		l.R, l.rErr = sensors.NewRenderer()
	}
	if l.rErr != nil {
		for _, se := range list {
			if (only == nil || only[se.Name]) && l.Clock.due(se, t) {
				l.Fails.Fail(se, fmt.Errorf("sensor %q: no renderer: %w", se.Name, l.rErr))
			}
		}
		return
	}
	l.Clock.Render(l.R, s, t, only, l.Sink, l.Fails.Fail)
	if !l.computeTold {
		if err := l.R.ComputeErr(); err != nil {
			l.computeTold = true
			l.Warn("gpu-ranges", "range sensors on the GPU backend draw depth-buffer views: the compute caster could not be made: %v", err)
		}
	}
}

// Close closes the renderer unless a window lent it.
func (l *Loop) Close() {
	if l.R != nil && !l.Borrowed {
		l.R.Close()
	}
}
