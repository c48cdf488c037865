package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/simvis/simvis/ipc"
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
	everyFrame  bool
	present     string
	cache       bool
	controls    bool
}

func (f *windowFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.grid, "grid", true, "window: draw the ground grid and frame axes (key g)")
	fs.BoolVar(&f.panel, "panel", true, "window: show the panel of elements and sensors (key Tab)")
	fs.StringVar(&f.follow, "follow", "", "window: frame the f key follows (default: the first pose element's insertion point)")
	fs.StringVar(&f.shots, "shots", ".", "window: directory for screenshots (key p)")
	fs.IntVar(&f.benchFrames, "bench-frames", 0, "window: draw N frames as fast as possible, print frames per second and exit")
	fs.Float64Var(&f.maxFPS, "max-fps", 60, "window: frames per second at most (0: no limit)")
	fs.BoolVar(&f.everyFrame, "redraw-all", false, "window: draw every frame, even when nothing changed (the still meshes from the cache unless --cache=false)")
	fs.BoolVar(&f.cache, "cache", true, "window: draw the meshes that stand still once and only what moves over them each frame")
	fs.BoolVar(&f.controls, "list-controls", false, "window: print each panel control's name, kind and place when the panel opens (for scripts driving it, e.g. with xdotool)")
	fs.StringVar(&f.present, "present", "auto", "window: how frames reach the window: gl (GL swap), x11 (the viewer puts them, XShmPutImage), auto (x11 with a software GL such as llvmpipe)")
}

func (f *windowFlags) check() error {
	if f.benchFrames < 0 || f.benchFrames > 1000000 {
		return usagef("--bench-frames %d: want 0 to 1000000", f.benchFrames)
	}
	if f.present != "auto" && f.present != "gl" && f.present != "x11" {
		return usagef("--present %q: want auto, gl or x11", f.present)
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
		Follow: f.follow, Shots: f.shots, Set: set, Log: w, EveryFrame: f.everyFrame,
		Present: strings.TrimPrefix(f.present, "auto"), NoCache: !f.cache, ListControls: f.controls,
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
// when --bench-frames frames were shown, after printing the rates: frames
// shown, and how many of them were drawn (the others showed an
// unchanged picture; --redraw-all draws all).
func (l *windowLoop) done(v *viewer.Viewer, w io.Writer) bool {
	l.n++
	if l.f.benchFrames > 0 {
		if l.n >= l.f.benchFrames {
			d := time.Since(l.start).Seconds()
			fmt.Fprintf(w, "%d frames in %.2fs: %.1f frames/s; %d drawn: %.1f/s\n", l.n, d, float64(l.n)/d,
				v.Redraws(), float64(v.Redraws())/d)
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
			if out != "" {
				if err := wantExt(out, "view writes PNG", ".png"); err != nil {
					return err
				}
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
			if err := mkdirFor(out); err != nil {
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

// defaultWindowFrom is the start viewpoint of windows that were given none.
const defaultWindowFrom = "-4.7 -3.7 2.4 0 25 38"

// clientSetter sets parameters through a host's client, so that a change
// made in a window reaches the host and every other client.
func clientSetter(c *ipc.Client) func(e, p string, v float64) error {
	return func(e, p string, v float64) error {
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

// mirrorWindow shows a mirror's replica live until the window closes: each
// frame syncs the replica, renders the sensors that are due (their files
// with -o, and the overlays that draw their returns) and draws the window.
// A host that goes away leaves the replica as it was, with a warning in the
// status line, for patience; the window's panel sets values on the host.
func mirrorWindow(c *ipc.Client, m *ipc.Mirror, hf *hostFlags, vp viewpoint, wf *windowFlags,
	out string, latest bool, picked map[string]bool, patience time.Duration, w io.Writer) error {
	v, err := wf.open("simvis mirror "+hf.where(), m.Scene(), vp, clientSetter(c), w)
	if err != nil {
		return err
	}
	defer v.Close()
	ctx, stop := interrupted()
	defer stop()
	clock := newSensorClock()
	emit := emitFunc(func(*scene.SensorEntry, *sensors.Frame, *sensors.Stamp) (int, error) { return 0, nil })
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		emit = fileWriter(out)
	}
	fails := newSensorFailures(ipc.NewWarnings(warnings, "simvis mirror").Warn)
	hs := &hostStatus{c: c}
	loop := newWindowLoop(wf)
	start := time.Now()
	var silentSince time.Time
	var lag time.Duration // from reading the host's values to showing them, the last frame
	for ctx.Err() == nil {
		synced := time.Now()
		if err := m.Sync(); err != nil {
			if silentSince.IsZero() {
				silentSince = time.Now()
				fmt.Fprintf(warnings, "simvis mirror: %v; retrying for %v\n", err, patience)
			}
			if time.Since(silentSince) > patience {
				return withLimitHint(hf.gone(err))
			}
			v.SetStatus(fmt.Sprintf("host gone or rebuilding (%v); retrying", err))
		} else {
			if !silentSince.IsZero() {
				fmt.Fprintf(warnings, "simvis mirror: in sync again at change %d\n", m.Applied())
				silentSince = time.Time{}
			}
			v.SetStatus(fmt.Sprintf("%s | change %d, %d rebuilds | mirror lag %v", hs, m.Applied(), m.Rebuilds,
				lag.Round(time.Millisecond)))
		}
		only := picked
		if out == "" {
			// Without files to write, only the sensors whose returns an
			// overlay draws need to render; the rest would cost frames.
			only = map[string]bool{}
			for _, name := range m.Scene().ReturnsWanted() {
				if len(picked) == 0 || picked[name] {
					only[name] = true
				}
			}
		}
		if len(only) > 0 || out != "" {
			clock.render(v.Sensors(), m.Scene(), time.Since(start).Seconds(), latest, only, emit, fails.fail)
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
func serveWindow(shm string, s *scene.Scene, wf *windowFlags, w io.Writer) (*viewer.Viewer, func(), error) {
	vp, err := parseViewpoint(defaultWindowFrom, scene.WorldFrame, "1280x720", 70)
	if err != nil {
		return nil, nil, err
	}
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
