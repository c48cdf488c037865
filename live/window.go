package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/viewer"
)

// WindowOptions configure a live window (docs/viewer.md).
type WindowOptions struct {
	Grid, Panel bool
	Follow      string // frame the f key follows
	Shots       string // directory for screenshots
	BenchFrames int    // draw N frames as fast as possible, print the rate and close
	MaxFPS      float64
	EveryFrame  bool   // draw every frame, even when nothing changed
	Present     string // auto, gl or x11
	NoCache     bool   // draw every mesh each frame, the still ones too
	Controls    bool   // print each panel control when the panel opens
}

// Check reports options out of range.
func (f *WindowOptions) Check() error {
	if f.BenchFrames < 0 || f.BenchFrames > 1000000 {
		return optionf("--bench-frames %d: want 0 to 1000000", f.BenchFrames)
	}
	if f.Present != "" && f.Present != "auto" && f.Present != "gl" && f.Present != "x11" {
		return optionf("--present %q: want auto, gl or x11", f.Present)
	}
	if !(f.MaxFPS >= 0 && f.MaxFPS <= 10000) {
		return optionf("--max-fps %v: want 0 to 10000", f.MaxFPS)
	}
	return nil
}

// Viewpoint is a render for people (sensed="false" geometry included) from
// a pose in a frame of the scene, looking along its +x with +z up.
type Viewpoint struct {
	// Auto frames the scene's content (Framed) at this size and field of
	// view, instead of Pose in Frame.
	Auto          bool
	Pose          scene.Pose
	Frame         string
	Width, Height int
	FOV           float64 // horizontal, degrees
}

// resolved is the viewpoint itself, or with Auto the scene's Framed one at
// its size and field of view.
func (vp Viewpoint) resolved(s *scene.Scene) Viewpoint {
	if vp.Auto {
		return Framed(s, vp.Width, vp.Height, vp.FOV)
	}
	return vp
}

// WritePNG renders the scene from the Viewpoint into a PNG file.
func (vp Viewpoint) WritePNG(r *sensors.Renderer, s *scene.Scene, path string) error {
	vp = vp.resolved(s)
	base, err := s.Transform(vp.Frame, scene.WorldFrame)
	if err != nil {
		return err
	}
	img, err := r.RenderRGBA(s, sensors.View{
		Pose: base.Mul4(vp.Pose.Matrix()), Width: vp.Width, Height: vp.Height, HFOV: vp.FOV,
		Near: 0.05, Far: 500, Background: sensors.DefaultBackground, Viewer: true,
		// No shadows, as in the window (viewer.currentView): a view for
		// people shows the scene and its overlays; shadows are a camera
		// sensor's realism, which capture renders.
		Shadows: false,
	})
	if err != nil {
		return err
	}
	return sensors.WritePNG(path, img)
}

// open opens the window with the Viewpoint as its start view.
func (f *WindowOptions) open(title string, s *scene.Scene, vp Viewpoint, set func(e, p string, v float64) error, w io.Writer) (*viewer.Viewer, error) {
	vp = vp.resolved(s)
	base, err := s.Transform(vp.Frame, scene.WorldFrame)
	if err != nil {
		return nil, err
	}
	v, err := viewer.Open(viewer.Options{
		Title: title, Width: vp.Width, Height: vp.Height, FOV: vp.FOV,
		From: scene.PoseFromMatrix(base.Mul4(vp.Pose.Matrix())), Grid: f.Grid, Panel: f.Panel,
		Follow: f.Follow, Shots: f.Shots, Set: set, Log: w, EveryFrame: f.EveryFrame,
		Present: strings.TrimPrefix(f.Present, "auto"), NoCache: f.NoCache, ListControls: f.Controls,
	})
	if err != nil {
		return nil, err
	}
	info := v.Info()
	fmt.Fprintf(w, "viewer: window open %dx%d, %d samples per pixel (%s, %s)\n", vp.Width, vp.Height, v.Samples(), info.Renderer, info.Version)
	return v, nil
}

// windowLoop paces a window's frames and counts them for --bench-frames.
type windowLoop struct {
	f     *WindowOptions
	start time.Time
	next  time.Time
	n     int
}

func newWindowLoop(f *WindowOptions) *windowLoop {
	now := time.Now()
	return &windowLoop{f: f, start: now, next: now}
}

// done counts a frame and waits for the next one's time; it reports true
// when --bench-frames frames were shown, after printing the rates: frames
// shown, and how many of them were drawn (the others showed an
// unchanged picture; --redraw-all draws all).
func (l *windowLoop) done(v *viewer.Viewer, w io.Writer) bool {
	l.n++
	if l.f.BenchFrames > 0 {
		if l.n >= l.f.BenchFrames {
			d := time.Since(l.start).Seconds()
			fmt.Fprintf(w, "%d frames in %.2fs: %.1f frames/s; %d drawn: %.1f/s\n", l.n, d, float64(l.n)/d,
				v.Redraws(), float64(v.Redraws())/d)
			return true
		}
		return false
	}
	if l.f.MaxFPS > 0 {
		l.next = l.next.Add(time.Duration(float64(time.Second) / l.f.MaxFPS))
		if d := time.Until(l.next); d > 0 {
			time.Sleep(d)
		} else if d < -time.Second {
			l.next = time.Now() // fell behind: do not race to catch up
		}
	}
	return false
}

// returnsTracker renders the sensors that overlays draw (scan elements)
// whenever the scene's values changed, so that a local scene's overlays
// follow its elements without a host's cycle.
type returnsTracker struct{ last []float64 }

func (t *returnsTracker) update(r *sensors.Renderer, s *scene.Scene) error {
	if t.last != nil && slices.Equal(t.last, s.Values()) {
		return nil
	}
	t.last = append(t.last[:0], s.Values()...)
	return sensors.RenderReturns(r, s)
}

// ViewWindow shows a local scene until the window closes; its panel sets
// the scene's values.
func ViewWindow(s *scene.Scene, title string, vp Viewpoint, wf *WindowOptions, w io.Writer) error {
	v, err := wf.open(title, s, vp, s.Set, w)
	if err != nil {
		return err
	}
	defer v.Close()
	var rt returnsTracker
	loop := newWindowLoop(wf)
	for {
		if err := rt.update(v.Sensors(), s); err != nil {
			v.SetStatus(err.Error())
		}
		open, err := v.Frame(s)
		if err != nil {
			return err
		}
		if !open || loop.done(v, w) {
			return nil
		}
	}
}

// clientSetter sets parameters through a host's client, so that a change
// made in a window reaches the host and every other client.
func clientSetter(c *ipc.Client) func(e, p string, v float64) error {
	return func(e, p string, v float64) error {
		// A host restarted, or replaced its run for a removal: the
		// indices are the new region's.
		if errors.Is(c.Check(), ipc.ErrHostReplaced) {
			if err := c.Reopen(); err != nil {
				return err
			}
		}
		i, err := c.Param(e, p)
		if err != nil {
			return err
		}
		return c.Set(i, v)
	}
}

// hostStatus describes a host for a window's status line: its cycle and
// measured rate (shared memory only: over NATS the mirror sees changes, not
// cycles).
type hostStatus struct {
	c          *ipc.Client
	lastCycles uint64
	lastAt     time.Time
	rate       float64
}

func (hs *hostStatus) String() string {
	if hs.c == nil || hs.c.Region() == nil {
		return ""
	}
	now := time.Now()
	cyc := hs.c.Region().Cycles()
	if d := now.Sub(hs.lastAt); d >= time.Second {
		if !hs.lastAt.IsZero() {
			hs.rate = float64(cyc-hs.lastCycles) / d.Seconds()
		}
		hs.lastCycles, hs.lastAt = cyc, now
	}
	st := fmt.Sprintf("host cycle %d (%.0f Hz)", cyc, hs.rate)
	if n := hs.c.Region().Rejected(); n > 0 {
		st += fmt.Sprintf(", %d values refused", n)
	}
	return st
}

// mirrorWindow shows a mirror's replica live until the window closes or
// ctx ends: each frame syncs the replica, renders the sensors that are due
// (their files with o.Out, and the overlays that draw their returns) and
// draws the window. A host that goes away leaves the replica as it was,
// with a warning in the status line, for o.Patience; the window's panel
// sets values on the host.
func mirrorWindow(ctx context.Context, m *ipc.Mirror, o *MirrorOptions, vp Viewpoint, picked map[string]bool, wf *webFrames, w io.Writer) error {
	v, err := o.Window.open("simvis mirror "+o.Where, m.Scene(), vp, clientSetter(o.Client), w)
	if err != nil {
		return err
	}
	defer v.Close()
	clock := NewClock()
	var sink Sink = SinkFunc(func(*scene.SensorEntry, *sensors.Frame, *sensors.Stamp) error { return nil })
	if o.Out != "" {
		if sink, err = NewFiles(o.Out, o.Latest); err != nil {
			return err
		}
	}
	if wf != nil {
		sink = sinks{sink, wf} // the web viewer's pages: their returns and insets
	}
	fails := NewFailures(ipc.NewWarnings(o.Warnings, "simvis mirror").Warn)
	hs := &hostStatus{c: o.Client}
	loop := newWindowLoop(o.Window)
	start := time.Now()
	var patient patientSync
	var lag time.Duration // from reading the host's values to showing them, the last frame
	for ctx.Err() == nil {
		synced := time.Now()
		if err, gone := patient.sync(m, o); gone {
			return o.Gone(err)
		} else if err != nil {
			v.SetStatus(fmt.Sprintf("host gone or rebuilding (%v); retrying", err))
		} else {
			v.SetStatus(fmt.Sprintf("%s | change %d, %d rebuilds | mirror lag %v", hs, m.Applied(), m.Rebuilds,
				lag.Round(time.Millisecond)))
		}
		t := time.Since(start).Seconds()
		if wf != nil {
			wf.Cycle(m.Scene(), t)
		}
		only := picked
		if o.Out == "" {
			// Without files to write, only the sensors whose returns an
			// overlay draws need to render; the rest would cost frames.
			only = map[string]bool{}
			for _, name := range m.Scene().ReturnsWanted() {
				if len(picked) == 0 || picked[name] {
					only[name] = true
				}
			}
			if wf != nil {
				for _, se := range m.Scene().Sensors() {
					if wf.Wants(m.Scene(), se.Name) {
						only[se.Name] = true
					}
				}
			}
		}
		if len(only) > 0 || o.Out != "" {
			clock.Render(v.Sensors(), m.Scene(), t, only, sink, fails.Fail)
		}
		open, err := v.Frame(m.Scene())
		if err != nil {
			return err
		}
		lag = time.Since(synced)
		if !open || loop.done(v, w) {
			break
		}
	}
	// Closing the window ends the mirror, not the host.
	return nil
}

// serveWindow opens the host's window: the host's own scene, its panel
// writing values through a client of the host like any other.
func serveWindow(shm string, s *scene.Scene, wf *WindowOptions, w io.Writer) (*viewer.Viewer, func(), error) {
	vp := Viewpoint{Auto: true, Width: 1280, Height: 720, FOV: 70}
	c, err := ipc.Open(shm)
	if err != nil {
		return nil, nil, err
	}
	v, err := wf.open("simvis serve "+shm, s, vp, clientSetter(c), w)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return v, func() { v.Close(); c.Close() }, nil
}

// windowOverlays is a host window's share of a loop's sinks: it wants the
// sensors whose returns the scene's overlays draw (rendering them hands
// the overlays their returns) and takes nothing of their frames.
type windowOverlays struct{}

func (windowOverlays) Wants(s *scene.Scene, sensor string) bool { return s.WantsReturns(sensor) }

func (windowOverlays) Frame(*scene.SensorEntry, *sensors.Frame, *sensors.Stamp) error { return nil }
