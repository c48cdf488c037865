package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/viewer"
)

// ServeOptions configure a host (Serve).
type ServeOptions struct {
	Scene   string // the scene file
	Shm     string // region name (/dev/shm/simvis-NAME) or path (default "default")
	Replace bool   // take the name of a host another live process runs
	Rate    float64
	Fast    bool // cycles back to back; scene time still advances 1/Rate a cycle
	Cycles  int  // stop after this many cycles (0: until ctx ends)
	Out     string
	Latest  bool // overwrite each sensor's files instead of numbering frames
	LogMiB  int  // change-log size (default 64)
	Limits  scene.Limits
	// PackagePath is where URDF parts find package://PKG/... files (nil:
	// models.DefaultPackagePath, $ROS_PACKAGE_PATH).
	PackagePath []string
	// RemoveInterval is the least time between two removals by request
	// (ipc.HostOptions.RemoveInterval; 0: 1 s, negative: none).
	RemoveInterval time.Duration
	// NewHost is ipc.NewHost unless set (tests see what a host asks for).
	NewHost  func(path, sceneFile string, o ipc.HostOptions) (*ipc.Host, error)
	NATS     NATSOptions
	Foxglove FoxgloveOptions
	Web      WebOptions
	Record   RecordOptions
	Window   *WindowOptions // show the host's scene; closing it stops the host
	Sinks    []Sink         // the caller's own, given every sensor frame
	Warnings io.Writer      // warnings (default standard error)
}

// Serve runs a scene as a host until ctx ends (or Cycles ran): it
// publishes the scene in shared memory and over NATS, and every cycle
// applies the values clients wrote, executes their requests and renders
// each sensor at its rate into the sinks. It reports on w.
func Serve(ctx context.Context, o ServeOptions, w io.Writer) error {
	if o.Warnings == nil {
		o.Warnings = os.Stderr
	}
	if o.Shm == "" {
		o.Shm = "default"
	}
	if o.Rate == 0 {
		o.Rate = 30
	}
	if o.LogMiB == 0 {
		o.LogMiB = 64
	}
	if o.NewHost == nil {
		o.NewHost = ipc.NewHost
	}
	switch {
	case !(o.Rate > 0 && o.Rate <= 100000):
		return optionf("--rate %v: want cycles per second in (0, 100000]", o.Rate)
	case o.Cycles < 0:
		return optionf("--cycles %d: want N >= 0", o.Cycles)
	case o.Latest && o.Out == "":
		return optionf("--latest needs -o DIR")
	case o.LogMiB < 1 || o.LogMiB > 1<<20:
		return optionf("--log-mib %d: want 1 to 1048576", o.LogMiB)
	case o.NATS.Off && (o.NATS.URL != "" || o.NATS.Token != "" || o.NATS.User != ""):
		return optionf("--no-nats excludes the other NATS flags")
	}
	if o.Window != nil {
		if err := o.Window.Check(); err != nil {
			return err
		}
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	sizes := ipc.DefaultSizes
	sizes.LogBytes = o.LogMiB << 20
	path := ipc.Path(o.Shm)
	h, err := o.NewHost(path, o.Scene, ipc.HostOptions{Sizes: sizes, Rate: o.Rate, Fast: o.Fast, Warnings: o.Warnings, Limits: o.Limits, Replace: o.Replace, PackagePath: o.PackagePath,
		RemoveInterval: o.RemoveInterval})
	if err != nil {
		return err
	}
	defer h.Close()
	out := sinks(o.Sinks)
	where := path
	if !o.NATS.Off {
		n, err := StartNATS(h, o.NATS)
		if err != nil {
			return err
		}
		defer n.Close()
		where += " and " + n.ClientURL
		out = append(out, n)
	}
	var fox *Foxglove
	if o.Foxglove.Addr != "" {
		if fox, err = o.Foxglove.startHost(h, "simvis serve", nil, ipc.NewWarnings(o.Warnings, "simvis serve").Warn); err != nil {
			return err
		}
		defer fox.Close()
		where += " and " + fox.srv.URL()
		out = append(out, fox)
	}
	if o.Web.Addr != "" {
		ws, err := o.Web.start(webHost{dial: func() (*ipc.Client, error) { return ipc.Open(path) }, title: o.Scene, scene: h.Scene, requests: true, log: o.Warnings}, w)
		if err != nil {
			return err
		}
		defer ws.srv.Close()
		where += " and " + ws.srv.URL()
		out = append(out, &webFrames{srv: ws.srv})
	}
	var files *Files
	if o.Out != "" {
		if files, err = NewFiles(o.Out, o.Latest); err != nil {
			return err
		}
		out = append(out, files)
	}
	o.Record.PackagePath = o.PackagePath
	rec, err := OpenRecorder(o.Record, o.Scene, o.Rate)
	if err != nil {
		return err
	}
	defer rec.Close(w)
	if rec != nil {
		out = append(out, rec)
	}
	var win *viewer.Viewer
	if o.Window != nil {
		v, closeWin, err := serveWindow(path, h.Scene, o.Window, w)
		if err != nil {
			return err
		}
		defer closeWin()
		win = v
	}
	var loop *Loop
	var render func(int, time.Duration) error
	if len(out) > 0 || win != nil {
		if win != nil {
			// One GL context per process: the window's (viewer doc).
			// The window's scan overlays want their returns whatever
			// selective sinks (pages) want.
			loop = &Loop{R: win.Sensors(), Borrowed: true, OverlaysOnly: len(out) == 0,
				Clock: NewClock(), Fails: NewFailures(h.Warn), Sink: append(slices.Clip(out), windowOverlays{}), HostRate: o.Rate, Warn: h.Warn}
		} else if loop, err = NewLoop(h.Scene, out, o.Rate, h.Warn); err != nil {
			return err
		}
		defer loop.Close()
		var wl *windowLoop
		if win != nil {
			wo := *o.Window
			wo.MaxFPS = 0 // the host's cycles pace the window
			wl = newWindowLoop(&wo)
		}
		render = func(_ int, t time.Duration) error {
			if err := out.Cycle(h.Scene, t.Seconds()); err != nil {
				return err
			}
			loop.Cycle(h.Scene, t.Seconds())
			if win == nil {
				return nil
			}
			win.SetStatus(fmt.Sprintf("host cycle %d (%g Hz)", h.Region.Cycles(), o.Rate))
			open, err := win.Frame(h.Scene)
			if err != nil {
				return err
			}
			if !open || wl.done(win, w) {
				stop() // closing the window stops the host
			}
			return nil
		}
	}
	mode := "real time"
	if o.Fast {
		mode = "as fast as possible"
	}
	fmt.Fprintf(w, "serving %s as %s: %d elements, %d sensors, %g Hz, %s\n",
		o.Scene, where, len(h.Scene.Elements()), len(h.Scene.Sensors()), o.Rate, mode)
	start := time.Now()
	err = h.Run(ctx, o.Cycles, render)
	reg := h.Region
	written, fails := 0, "0 sensor frames failed"
	if files != nil {
		written = files.Written
	}
	if loop != nil {
		fails = loop.Fails.String()
	}
	fmt.Fprintf(w, "%d cycles in %v (%d overran their period), %d changes logged, %d values rejected, %d files written, %s\n",
		reg.Cycles(), time.Since(start).Round(time.Millisecond), h.Overruns(), len(h.Scene.Log()), reg.Rejected(), written, fails)
	if fox != nil {
		fmt.Fprintln(w, fox.Summary())
	}
	return errors.Join(err, rec.Close(w))
}
