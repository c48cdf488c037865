package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/viewer"
)

// windowFlags are the flags of a live window (view without -o, serve and
// mirror with --window).
type windowFlags struct {
	grid, panel bool
	follow      string
	shots       string
	benchFrames int
	maxFPS      float64
}

func (f *windowFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.grid, "grid", true, "window: draw the ground grid and frame axes (key g)")
	fs.BoolVar(&f.panel, "panel", true, "window: show the panel of elements and sensors (key Tab)")
	fs.StringVar(&f.follow, "follow", "", "window: frame the f key follows (default: the first pose element's insertion point)")
	fs.StringVar(&f.shots, "shots", ".", "window: directory for screenshots (key p)")
	fs.IntVar(&f.benchFrames, "bench-frames", 0, "window: draw N frames as fast as possible, print frames per second and exit")
	fs.Float64Var(&f.maxFPS, "max-fps", 60, "window: frames per second at most (0: no limit)")
}

func (f *windowFlags) check() error {
	if f.benchFrames < 0 || f.benchFrames > 1000000 {
		return usagef("--bench-frames %d: want 0 to 1000000", f.benchFrames)
	}
	if !(f.maxFPS >= 0 && f.maxFPS <= 10000) {
		return usagef("--max-fps %v: want 0 to 10000", f.maxFPS)
	}
	return nil
}

// open opens the window with the viewpoint as its start view.
func (f *windowFlags) open(title string, s *scene.Scene, vp viewpoint, set func(e, p string, v float64) error, w io.Writer) (*viewer.Viewer, error) {
	base, err := s.Transform(vp.frame, scene.WorldFrame)
	if err != nil {
		return nil, err
	}
	v, err := viewer.Open(viewer.Options{
		Title: title, Width: vp.width, Height: vp.height, FOV: vp.fov,
		From: scene.PoseFromMatrix(base.Mul4(vp.pose.Matrix())), Grid: f.grid, Panel: f.panel,
		Follow: f.follow, Shots: f.shots, Set: set, Log: w,
	})
	if err != nil {
		return nil, err
	}
	info := v.Info()
	fmt.Fprintf(w, "viewer: window open %dx%d, %d samples per pixel (%s, %s)\n", vp.width, vp.height, v.Samples(), info.Renderer, info.Version)
	return v, nil
}

// windowLoop paces a window's frames and counts them for --bench-frames.
type windowLoop struct {
	f     *windowFlags
	start time.Time
	next  time.Time
	n     int
}

func newWindowLoop(f *windowFlags) *windowLoop {
	now := time.Now()
	return &windowLoop{f: f, start: now, next: now}
}

// done counts a frame and waits for the next one's time; it reports true
// when --bench-frames frames were drawn, after printing the rate.
func (l *windowLoop) done(w io.Writer) bool {
	l.n++
	if l.f.benchFrames > 0 {
		if l.n >= l.f.benchFrames {
			d := time.Since(l.start)
			fmt.Fprintf(w, "%d frames in %v: %.1f frames/s\n", l.n, d.Round(time.Millisecond), float64(l.n)/d.Seconds())
			return true
		}
		return false
	}
	if l.f.maxFPS > 0 {
		l.next = l.next.Add(time.Duration(float64(time.Second) / l.f.maxFPS))
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

func init() {
	var sf sceneFlags
	var wf windowFlags
	var out, from, frame, size string
	var fov float64
	commands = append(commands, &command{
		name: "view", args: "SCENE [-o FILE.png] [--from \"x y z roll pitch yaw\"] [--frame FRAME] [--size WxH] [--fov DEG] [--set E.P=V ...] [window flags] [budget flags]",
		short: "show the scene in a window, or render it for people into a PNG (-o)",
		summary: "Without -o, open a window on the X display (DISPLAY) showing the scene: drag with\n" +
			"the left button to orbit, with the right or middle one (or shift) to pan, scroll to\n" +
			"zoom; keys 1-9 look through a sensor, f follows a frame, r resets, o toggles\n" +
			"overlays, g the grid and axes, p writes a screenshot, Tab the panel, q closes\n" +
			"(docs/viewer.md). The panel sets element parameters on the local scene.\n" +
			"With -o, render the scene from the viewpoint into a PNG, as a viewer sees it: unlike\n" +
			"sensor captures it also draws geometry marked sensed=\"false\" (beams, scan points,\n" +
			"labels); sensors whose returns a scan element draws render first.\n" +
			"The viewpoint is a pose in FRAME (default world) that looks along its +x with +z up.",
		flags: func(fs *flag.FlagSet) {
			sf = sceneFlags{}
			sf.register(fs)
			wf = windowFlags{}
			wf.register(fs)
			fs.StringVar(&out, "o", "", "output PNG file (without it: a window)")
			viewFlags(fs, &from, &frame, &size, &fov, "-4.7 -3.7 2.4 0 25 38")
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			path, _, err := sceneArgs(args, 0)
			if err != nil {
				return err
			}
			vp, err := parseViewpoint(from, frame, size, fov)
			if err != nil {
				return err
			}
			if err := wf.check(); err != nil {
				return err
			}
			s, err := sf.load(path)
			if err != nil {
				return err
			}
			if out == "" {
				return viewWindow(s, path, vp, &wf, w)
			}
			r, err := sensors.NewRenderer()
			if err != nil {
				return err
			}
			defer r.Close()
			if err := sensors.RenderReturns(r, s); err != nil {
				return err
			}
			if err := vp.write(r, s, out); err != nil {
				return err
			}
			fmt.Fprintln(w, out)
			return nil
		},
	})
}

// viewWindow shows a local scene until the window closes.
func viewWindow(s *scene.Scene, path string, vp viewpoint, wf *windowFlags, w io.Writer) error {
	v, err := wf.open("simvis view "+path, s, vp, s.Set, w)
	if err != nil {
		if errors.Is(err, viewer.ErrNoDisplay) {
			return err
		}
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
		if !open || loop.done(w) {
			return nil
		}
	}
}
