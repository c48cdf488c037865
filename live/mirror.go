package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// MirrorOptions configure a replica of a running host (Mirror).
type MirrorOptions struct {
	// Client is the host's, opened by the caller, who closes it.
	Client *ipc.Client
	// Connect opens another client of the same host: Foxglove's drivers
	// act through their own (the mirror's is busy syncing).
	Connect func() (*ipc.Client, error)
	// Where names the host (a window's title).
	Where string
	// Gone explains the error of a host that stayed away past Patience
	// (nil: as it is).
	Gone     func(error) error
	Patience time.Duration // how long to retry while the host is away (default 30 s)

	Overlay    []*scene.Command // commands only the replica shows
	FetchFiles bool             // fetch model files over NATS even where the scene's folder exists here
	Scene      scene.Options
	// NewMirror is ipc.NewMirrorWith unless set (tests see what a mirror asks for).
	NewMirror func(*ipc.Client, ipc.MirrorOptions) (*ipc.Mirror, error)

	Out     string   // write the sensors' outputs (or the view) into this directory
	Latest  bool     // overwrite each sensor's files instead of numbering frames
	Frames  int      // frames to capture (default 1)
	Rate    float64  // frames per second of real time (default 10)
	Sensors []string // capture only these sensors
	// From renders the replica for people from this viewpoint into
	// view.png (view_0000.png ...) instead of the sensors' files.
	From     *Viewpoint
	Foxglove FoxgloveOptions
	// Web serves the host to browsers (through Connect; model files
	// fetched from the host). With nothing else to do (no Out, From,
	// Record, Foxglove or Sinks) the mirror serves them until ctx ends,
	// rendering from its replica the sensors pages want (relayWeb);
	// otherwise pages get the frames the mirror renders.
	Web    WebOptions
	Record RecordOptions
	// Window shows the replica live (from From, or Framed on its content)
	// until it closes, instead of the frame loop.
	Window   *WindowOptions
	Sinks    []Sink    // the caller's own, given every sensor frame
	Warnings io.Writer // warnings (default standard error)
}

// Mirror builds a local replica of a running host's scene by replaying
// its change log and copying its values, adds the overlay, and captures
// from it Frames times at Rate, syncing before each frame, until ctx ends.
// A host restart is followed by a rebuild. It reports progress and a
// summary on w.
func Mirror(ctx context.Context, o MirrorOptions, w io.Writer) error {
	if o.Warnings == nil {
		o.Warnings = os.Stderr
	}
	if o.Gone == nil {
		o.Gone = func(err error) error { return err }
	}
	if o.Patience == 0 {
		o.Patience = 30 * time.Second
	}
	if o.Frames == 0 {
		o.Frames = 1
	}
	if o.Rate == 0 {
		o.Rate = 10
	}
	if o.NewMirror == nil {
		o.NewMirror = ipc.NewMirrorWith
	}
	if o.Window != nil && (o.Record.Path != "" || o.Foxglove.Addr != "") {
		// The window shows the replica live; recording and the Foxglove
		// server follow the frame loop, which a window replaces.
		return optionf("--window excludes --record and --foxglove: run a second mirror for them")
	}
	m, err := o.NewMirror(o.Client, ipc.MirrorOptions{Overlay: o.Overlay, FetchFiles: o.FetchFiles, Scene: o.Scene})
	if err != nil {
		return err
	}
	defer m.Close()
	var wf *webFrames // the pages' frames, when the web viewer is served
	if o.Web.Addr != "" {
		if o.Connect == nil {
			return errors.New("mirror: the web viewer needs MirrorOptions.Connect")
		}
		ws, err := o.Web.start(webHost{dial: o.Connect, title: o.Where, scene: m.Scene(), requests: true, fetch: true, log: o.Warnings}, w)
		if err != nil {
			return err
		}
		defer ws.srv.Close()
		wf = &webFrames{srv: ws.srv}
		if o.Window == nil && o.Out == "" && o.From == nil && o.Record.Path == "" && o.Foxglove.Addr == "" && len(o.Sinks) == 0 {
			return relayWeb(ctx, m, &o, wf)
		}
	}
	picked := map[string]bool{}
	for _, name := range o.Sensors {
		if !hasSensor(m.Scene(), name) {
			return fmt.Errorf("--sensor %s: the replica has no such sensor", name)
		}
		picked[name] = true
	}
	if o.Window != nil {
		vp := o.From
		if vp == nil {
			vp = &Viewpoint{Auto: true, Width: 1280, Height: 720, FOV: 70}
		}
		return mirrorWindow(ctx, m, &o, *vp, picked, wf, w)
	}
	if o.From == nil && len(m.Scene().Sensors()) == 0 && o.Foxglove.Addr == "" {
		return errors.New("the replica has no sensors to capture (add a camera with --overlay, or render a viewpoint with --from)")
	}
	var files *Files // the sensors' files; with From, the view is written instead
	if o.Out != "" {
		if files, err = NewFiles(o.Out, o.Latest); err != nil {
			return err
		}
		if o.From != nil {
			files = nil
		}
	}
	o.Record.PackagePath = o.Scene.PackagePath
	rec, err := OpenRecorder(o.Record, "", o.Rate)
	if err != nil {
		return err
	}
	defer rec.Close(w)
	// streams get the sensors' frames whether or not files are written
	// (From writes the view instead).
	streams := sinks(o.Sinks)
	if rec != nil {
		streams = append(streams, rec)
	}
	var fox *Foxglove
	if o.Foxglove.Addr != "" {
		if o.Connect == nil {
			return errors.New("mirror: Foxglove's drivers need MirrorOptions.Connect")
		}
		if fox, err = o.Foxglove.startMirror(o.Connect, ipc.NewWarnings(o.Warnings, "simvis mirror").Warn); err != nil {
			return err
		}
		defer fox.Close()
		streams = append(streams, fox)
		fmt.Fprintf(w, "serving the replica to Foxglove at %s\n", fox.srv.URL())
	}
	if wf != nil && len(streams) > 0 {
		// Pages get what is rendered anyway.
		streams = append(streams, wf)
	}
	all := streams
	if files != nil {
		all = append(sinks{files}, streams...)
		if wf != nil && len(streams) == 0 {
			all = append(all, wf)
		}
	}
	r, err := sensors.NewRenderer()
	if err != nil {
		return err
	}
	defer r.Close()
	clock := NewClock()
	// Frames carry the host's scene time of the state they show.
	var hostAt float64
	clock.Stamp = func(float64) float64 { return hostAt }
	behind := ipc.NewWarnings(o.Warnings, "simvis mirror")
	late := 0
	period := time.Duration(float64(time.Second) / o.Rate)
	next := time.Now()
	total := 0
	fails := NewFailures(ipc.NewWarnings(o.Warnings, "simvis mirror").Warn)
	var patient patientSync
	var syncErr error
	for i := 0; i < o.Frames && ctx.Err() == nil; i++ {
		var gone bool
		if syncErr, gone = patient.sync(m, &o); gone {
			return o.Gone(syncErr)
		}
		if at, ok := o.Client.HostTime(); ok {
			hostAt = at.Seconds()
		}
		if fox != nil {
			// Stamped with the host's scene time, like the frames.
			fox.Update(m.Scene(), time.Duration(hostAt*float64(time.Second)))
		}
		written := 0
		if files != nil {
			written = files.Written
		}
		t := float64(i) / o.Rate
		if o.From != nil {
			if o.Out != "" { // without Out, From serves a recording or Foxglove only
				name := filepath.Join(o.Out, "view.png")
				if !o.Latest {
					name = filepath.Join(o.Out, fmt.Sprintf("view_%04d.png", i))
				}
				// Overlays drawing sensors' returns (scan elements) show
				// this frame's scan.
				if err = sensors.RenderReturns(r, m.Scene()); err == nil {
					err = o.From.WritePNG(r, m.Scene(), name)
				}
				if err == nil {
					total++
				}
			}
			if err == nil && len(streams) > 0 {
				// The recording and Foxglove still get every sensor; the
				// files are the view alone.
				if err = streams.Cycle(m.Scene(), t); err == nil {
					clock.Render(r, m.Scene(), t, picked, streams, fails.Fail)
				}
			}
		} else if err = all.Cycle(m.Scene(), t); err == nil {
			clock.Render(r, m.Scene(), t, picked, all, fails.Fail)
		}
		n := 0
		if files != nil {
			n = files.Written - written
			total += n
		} else if o.From != nil && o.Out != "" && err == nil {
			n = 1
		}
		if err != nil {
			return err
		}
		if o.Frames > 1 {
			// Numbered from 0, like capture's lines and every file (view_0000.png).
			fmt.Fprintf(w, "frame %d (%d of %d): change %d, %d files, host time %.3f s\n", i, i+1, o.Frames, m.Applied(), n, hostAt)
		}
		if i == 0 {
			// The first frame compiles the renderer's shaders and uploads
			// the meshes: the schedule starts after it.
			next = time.Now()
		}
		next = next.Add(period)
		if lag := time.Since(next); lag > period && i+1 < o.Frames {
			// Rendering takes longer than Rate allows: say so (once a
			// second at most) instead of quietly stretching the run.
			late++
			behind.Warn("behind", "frame %d is %v behind its schedule at --rate %g: a frame takes longer than %v to sync, render and write (lower --rate, or pick sensors with --sensor)",
				i, lag.Round(time.Millisecond), o.Rate, period)
		}
		if i+1 < o.Frames {
			time.Sleep(time.Until(next))
		}
	}
	if o.Out != "" {
		fmt.Fprintf(w, "replica at change %d (%d rebuilds): %d files in %s\n", m.Applied(), m.Rebuilds, total, o.Out)
	} else {
		fmt.Fprintf(w, "replica at change %d (%d rebuilds)\n", m.Applied(), m.Rebuilds)
	}
	if late > 0 {
		fmt.Fprintf(o.Warnings, "simvis mirror: %d of %d frames started late: %d frames at --rate %g should take %v\n",
			late, o.Frames, o.Frames, o.Rate, (time.Duration(o.Frames-1) * period).Round(time.Millisecond))
	}
	if fox != nil {
		fmt.Fprintln(w, fox.Summary())
	}
	if err := rec.Close(w); err != nil {
		return err
	}
	if syncErr != nil {
		// The last frames came from a replica the host no longer updated:
		// not a success.
		return fmt.Errorf("the replica is out of sync: %w", o.Gone(syncErr))
	}
	if fails.Total() > 0 {
		// Every frame that could be written was; the run still failed.
		return errors.New(fails.String())
	}
	return nil
}

// patientSync syncs a replica, keeping it as it is while its host is
// restarting or cut off: the first failure and the return are reported
// once each on the warnings, and gone tells a failure that lasted past
// MirrorOptions.Patience.
// patientSync syncs a mirror and says once that its host is away, and
// once that it is back; gone is true when the host stayed away longer
// than o.Patience. A loop that waits for the host however long (forever:
// the web viewer's relay, whose pages follow the host on their own) says
// so instead of naming a patience it does not keep.
type patientSync struct {
	since   time.Time
	forever bool
}

func (p *patientSync) sync(m *ipc.Mirror, o *MirrorOptions) (err error, gone bool) {
	err = m.Sync()
	switch {
	case err != nil:
		if p.since.IsZero() {
			p.since = time.Now()
			if p.forever {
				fmt.Fprintf(o.Warnings, "simvis mirror: %v; retrying until the host is back\n", err)
			} else {
				fmt.Fprintf(o.Warnings, "simvis mirror: %v; retrying for %v\n", err, o.Patience)
			}
		}
		gone = time.Since(p.since) > o.Patience
	case !p.since.IsZero():
		fmt.Fprintf(o.Warnings, "simvis mirror: in sync again at change %d\n", m.Applied())
		p.since = time.Time{}
	}
	return err, gone
}

func hasSensor(s *scene.Scene, name string) bool { return sensorNamed(s, name) != nil }
