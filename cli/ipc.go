package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/viewer"
)

// The commands of the shared-array interface: a host (serve), its clients
// (elements, set, request, log) and a replica (mirror).

const shmHelp = "region name (/dev/shm/simvis-NAME) or path; $SIMVIS_SHM sets the default"

// defaultShm is the region name --shm defaults to: $SIMVIS_SHM, so that a
// shell (or a test running the README's tour) can keep its hosts apart
// from others on the machine, else "default".
func defaultShm() string {
	if name := os.Getenv("SIMVIS_SHM"); name != "" {
		return name
	}
	return "default"
}

// hostFlags pick the host a client command talks to: a region on this
// machine, or a host reached over NATS.
type hostFlags struct {
	shm, connect string
	// readOnly commands connect over NATS as the viewer role when they take
	// credentials from the host's secrets file (the driver role otherwise).
	readOnly bool
}

func (f *hostFlags) register(fs *flag.FlagSet) {
	*f = hostFlags{}
	fs.StringVar(&f.shm, "shm", defaultShm(), shmHelp)
	fs.StringVar(&f.connect, "connect", "", "reach the host over NATS instead: nats://[TOKEN@|USER:PASS@]HOST:PORT/NAME")
}

// openOnly opens the host for a command that takes no positional arguments.
func (f *hostFlags) openOnly(args []string) (*ipc.Client, error) {
	if len(args) > 0 {
		return nil, usagef("unexpected argument %q", args[0])
	}
	return f.open()
}

// open connects to the host and checks that it lives: a region whose host
// was killed is still there to open.
func (f *hostFlags) open() (*ipc.Client, error) {
	var c *ipc.Client
	var err error
	if strings.HasPrefix(f.connect, "nats://") || strings.HasPrefix(f.connect, "tls://") {
		role := natsipc.RoleDriver
		if f.readOnly {
			role = natsipc.RoleViewer
		}
		var conn *natsipc.Conn
		if conn, err = natsipc.DialAs(f.connect, role); err == nil {
			c = ipc.NewClient(conn)
		}
	} else if f.connect != "" {
		c, err = ipc.Dial(f.connect)
	} else {
		c, err = ipc.Open(f.shm)
	}
	if err != nil {
		return nil, err
	}
	if err := f.check(c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// openPatiently is open retrying for up to patience, twice a second, while
// no NATS server answers at the --connect URL or no host serves the scene
// there yet (Ctrl-C stops it). Other errors (credentials refused, a bad
// URL) end it at once.
func (f *hostFlags) openPatiently(patience time.Duration) (*ipc.Client, error) {
	// A host on this machine writes its credentials for local clients
	// just after its server answers: refused credentials are worth
	// retrying where they were to come from there.
	u, uerr := url.Parse(f.connect)
	local := uerr == nil && u.User == nil && (u.Hostname() == "localhost" || strings.HasPrefix(u.Hostname(), "127.") || u.Hostname() == "::1")
	worthRetry := func(err error) bool { return retryable(err) || local && errors.Is(err, nats.ErrAuthorization) }
	c, err := f.open()
	if err == nil || f.connect == "" || !worthRetry(err) {
		return c, err
	}
	ctx, stop := interrupted()
	defer stop()
	fmt.Fprintf(warnings, "simvis mirror: %v; retrying for %v\n", err, patience)
	for deadline := time.Now().Add(patience); time.Now().Before(deadline) && ctx.Err() == nil; {
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
		if c, err = f.open(); err == nil || !worthRetry(err) {
			return c, err
		}
	}
	return nil, err
}

// retryable tells a server or host that is not there (yet) from errors
// that waiting does not cure.
func retryable(err error) bool {
	if errors.Is(err, nats.ErrAuthorization) {
		return false
	}
	return errors.Is(err, nats.ErrNoServers) || errors.Is(err, ipc.ErrHostStopped) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, nats.ErrNoResponders)
}

// check reports whether the host still serves c, for a command about to
// report success: what it wrote or read means nothing if the host is gone.
func (f *hostFlags) check(c *ipc.Client) error { return f.gone(c.Check()) }

// gone words an error that says the host is not there (ipc.ErrHostStopped)
// as "host NAME is not running (...)"; other errors pass unchanged.
func (f *hostFlags) gone(err error) error {
	var worded *ipc.HostGoneError
	if !errors.Is(err, ipc.ErrHostStopped) || errors.As(err, &worded) {
		return err
	}
	why := "it stopped"
	if err != ipc.ErrHostStopped {
		why = err.Error()
		for _, known := range []error{ipc.ErrHostVanished, ipc.ErrHostStopped} {
			why = strings.TrimPrefix(why, known.Error()+": ")
		}
	}
	return &hostGoneError{f.where(), why, err}
}

// hostGoneError is a host that is not running; it is an ipc.ErrHostStopped.
type hostGoneError struct {
	where, why string
	err        error // the transport's own error
}

func (e *hostGoneError) Error() string {
	return fmt.Sprintf("host %s is not running (%s)", e.where, e.why)
}

func (e *hostGoneError) Unwrap() error { return e.err }

// where names the host for messages: the region's path, or the NATS URL
// without credentials.
func (f *hostFlags) where() string {
	if f.connect == "" {
		return ipc.Path(f.shm)
	}
	u, err := url.Parse(f.connect)
	if err != nil {
		return "at the --connect URL"
	}
	u.User = nil
	return u.String()
}

// newHost is ipc.NewHost; tests see through it what serve asks for.
var newHost = ipc.NewHost

// newMirror is ipc.NewMirrorWith; tests see through it what mirror asks for.
var newMirror = ipc.NewMirrorWith

// interrupted is a context that ends on Ctrl-C or SIGTERM.
func interrupted() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// sensorClock renders each sensor at its rate attribute (0: every cycle)
// in scene time, numbering each sensor's frames on its own.
type sensorClock struct {
	next   map[string]float64 // scene time (s) the sensor is due
	frames map[string]int
	// stamp, if not nil, gives the time frames are stamped with instead of
	// the scene time they are scheduled at: a mirror schedules on its own
	// clock and stamps the host's scene time of the state it shows.
	stamp func(t float64) float64
}

func newSensorClock() *sensorClock {
	return &sensorClock{next: map[string]float64{}, frames: map[string]int{}}
}

// due reports whether se is to be rendered at scene time t (seconds) and
// if so schedules its next frame.
func (c *sensorClock) due(se *scene.SensorEntry, t float64) bool {
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

// emitFunc hands a rendered frame on (files, a transport) and returns the
// number of files it wrote.
type emitFunc func(se *scene.SensorEntry, f *sensors.Frame, st *sensors.Stamp) (int, error)

// render renders the due sensors (all of them, or those in only) once
// each and hands every frame to emit, in the scene's order. A sensor that
// fails to render or to be emitted goes to fail, and the others still
// render: one bad sensor never stops a loop that serves many. The range
// sensors on the CPU cast their beams together, on all cores
// (sensors.RenderFrames), so the frames are all rendered before the first
// is emitted. It returns the files written.
func (c *sensorClock) render(r *sensors.Renderer, s *scene.Scene, t float64, latest bool, only map[string]bool,
	emit emitFunc, fail func(se *scene.SensorEntry, err error)) int {
	var due []*scene.SensorEntry
	var stamps []*sensors.Stamp
	for _, se := range s.Sensors() {
		if len(only) > 0 && !only[se.Name] || !c.due(se, t) {
			continue
		}
		st := &sensors.Stamp{Frame: c.frames[se.Name], Time: t}
		if c.stamp != nil {
			st.Time = c.stamp(t)
		}
		c.frames[se.Name]++
		due, stamps = append(due, se), append(stamps, st)
	}
	if len(due) == 0 {
		return 0
	}
	frames, errs := sensors.RenderFrames(r, s, due, stamps)
	written := 0
	for i, se := range due {
		if errs[i] != nil {
			fail(se, errs[i])
			continue
		}
		f, st := frames[i], stamps[i]
		if latest {
			st = nil
		}
		n, err := emit(se, f, st)
		written += n
		if err != nil {
			fail(se, fmt.Errorf("sensor %q: %w", se.Name, err))
		}
	}
	return written
}

// sensorFailures counts failed sensor frames per sensor and reports them
// through warn, which limits its reports' rate.
type sensorFailures struct {
	count map[string]int
	warn  func(kind, format string, args ...any)
}

func newSensorFailures(warn func(kind, format string, args ...any)) *sensorFailures {
	return &sensorFailures{count: map[string]int{}, warn: warn}
}

func (sf *sensorFailures) fail(se *scene.SensorEntry, err error) {
	sf.count[se.Name]++
	sf.warn("sensor "+se.Name, "%v (%d frames of this sensor failed so far)", err, sf.count[se.Name])
}

// String sums the failures up: "2 sensor frames failed (A: 1, B: 1)".
func (sf *sensorFailures) String() string {
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

func (sf *sensorFailures) total() int {
	n := 0
	for _, c := range sf.count {
		n += c
	}
	return n
}

// hostSensors renders a host's sensors every cycle. Its renderer is made
// when the scene first has a sensor, so that sensors requests add to a
// host started without any render too.
type hostSensors struct {
	r        *sensors.Renderer
	rErr     error // why no renderer could be made
	clock    *sensorClock
	fails    *sensorFailures
	seen     map[string]bool
	hostRate float64
	latest   bool
	emit     emitFunc
	files    int
	warn     func(kind, format string, args ...any)
	noClose  bool // r belongs to a window, which closes it
	// overlaysOnly: no emitter, a window: render only what overlays draw.
	overlaysOnly bool
}

func (hs *hostSensors) cycle(s *scene.Scene, t float64) {
	list := s.Sensors()
	if len(list) == 0 {
		return
	}
	for _, se := range list {
		if !hs.seen[se.Name] {
			hs.seen[se.Name] = true
			if se.Rate > hs.hostRate {
				hs.warn("rate "+se.Name, "sensor %q: rate %g Hz is above the host's %g Hz; it renders every cycle", se.Name, se.Rate, hs.hostRate)
			}
		}
	}
	if hs.r == nil && hs.rErr == nil {
		hs.r, hs.rErr = sensors.NewRenderer()
	}
	if hs.rErr != nil {
		for _, se := range list {
			if hs.clock.due(se, t) {
				hs.fails.fail(se, fmt.Errorf("sensor %q: no renderer: %w", se.Name, hs.rErr))
			}
		}
		return
	}
	var only map[string]bool
	if hs.overlaysOnly {
		// Nothing publishes or writes the frames: only the sensors whose
		// returns a window's overlays draw need to render.
		only = map[string]bool{}
		for _, name := range s.ReturnsWanted() {
			only[name] = true
		}
		if len(only) == 0 {
			return
		}
	}
	hs.files += hs.clock.render(hs.r, s, t, hs.latest, only, hs.emit, hs.fails.fail)
}

func (hs *hostSensors) close() {
	if hs.r != nil && !hs.noClose {
		hs.r.Close()
	}
}

// fileWriter writes frames into dir as capture names them.
func fileWriter(dir string) emitFunc {
	return func(se *scene.SensorEntry, f *sensors.Frame, st *sensors.Stamp) (int, error) {
		paths, err := f.WriteFiles(sensors.OutputBase(dir, se.Name, st))
		if err != nil {
			return 0, err // a frame counts when all its files are written
		}
		return len(paths), nil
	}
}

// natsFlags configure the host's NATS side.
type natsFlags struct {
	off                   bool
	url, listen, name     string
	token, user, password string
	tlsCert, tlsKey       string
	consumers, replicas   int
}

func (f *natsFlags) register(fs *flag.FlagSet) {
	*f = natsFlags{}
	fs.BoolVar(&f.off, "no-nats", false, "serve over shared memory only, no NATS")
	fs.StringVar(&f.url, "nats", "", "publish through this NATS server or cluster instead of an embedded one (a cluster: nats://USER:PASSWORD@HOST1:4222,HOST2:4222,HOST3:4222)")
	fs.StringVar(&f.listen, "listen", "127.0.0.1:4222", "address of the embedded NATS server (not loopback: needs credentials)")
	fs.StringVar(&f.name, "name", "", "scene name on NATS, simvis.NAME.* (default: the --shm name)")
	fs.StringVar(&f.token, "token", "", "token that gives remote clients the driver role (default $SIMVIS_NATS_TOKEN; local clients find credentials in /dev/shm/simvis-NAME.nats)")
	fs.StringVar(&f.user, "user", "", "user that has the driver role, with --password")
	fs.StringVar(&f.password, "password", "", "password for --user (default $SIMVIS_NATS_PASSWORD)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "TLS certificate file of the embedded server (with --tls-key)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "TLS key file of the embedded server")
	fs.IntVar(&f.consumers, "max-consumers", 256, "consumers the change-log stream may have (each client and mirror uses one)")
	fs.IntVar(&f.replicas, "replicas", 0, "servers of a --nats cluster that keep the change log (default: 3 on a cluster of three or more servers, else 1)")
}

// start publishes h over NATS: through an embedded server unless --nats
// names one. It returns the publisher, the URL clients use and a cleanup.
func (f *natsFlags) start(h *ipc.Host, shm string) (*natsipc.Publisher, string, func(), error) {
	name := f.name
	if name == "" {
		name = strings.TrimPrefix(filepath.Base(shm), "simvis-")
	}
	// Secrets from the environment are read here, not as flag defaults,
	// which help would print.
	if f.token == "" {
		f.token = os.Getenv("SIMVIS_NATS_TOKEN")
	}
	if f.password == "" {
		f.password = os.Getenv("SIMVIS_NATS_PASSWORD")
	}
	var srv *natsipc.Server
	serverURL := f.url
	if serverURL == "" {
		var err error
		srv, err = natsipc.StartServer(natsipc.ServerOptions{Listen: f.listen, Token: f.token, User: f.user,
			Password: f.password, TLSCert: f.tlsCert, TLSKey: f.tlsKey, Name: name})
		if err != nil {
			return nil, "", nil, fmt.Errorf("%w (--no-nats serves over shared memory only)", err)
		}
		serverURL = srv.URL()
	}
	if f.consumers <= 0 || f.replicas < 0 || f.replicas > 5 || f.replicas > 1 && f.url == "" {
		if srv != nil {
			srv.Close()
		}
		if f.consumers <= 0 {
			return nil, "", nil, usagef("--max-consumers %d: want at least 1", f.consumers)
		}
		if f.replicas > 1 && f.url == "" {
			return nil, "", nil, usagef("--replicas %d: the embedded server is one server; replicas need a cluster (--nats)", f.replicas)
		}
		return nil, "", nil, usagef("--replicas %d: want 1 to 5 (JetStream's limit), or 0 for the default", f.replicas)
	}
	// A cluster's servers: the host moves to another one when its own
	// goes away (natsipc.Failover).
	nc, err := natsipc.ConnectHost(serverURL, name)
	if err != nil {
		if srv != nil {
			srv.Close()
		}
		return nil, "", nil, fmt.Errorf("connecting to NATS: %w", err)
	}
	pub, err := natsipc.Publish(h, nc, name, natsipc.Limits{Consumers: f.consumers, Replicas: f.replicas})
	if err != nil {
		nc.Close()
		if srv != nil {
			srv.Close()
		}
		return nil, "", nil, err
	}
	clientURL, _ := natsipc.ClientURL(serverURL, name) // without secrets
	cleanup := func() {
		pub.Close()
		nc.Close()
		if srv != nil {
			srv.Close()
		}
	}
	return pub, clientURL, cleanup, nil
}

// publisher publishes frames on the sensor's subject. A frame the server
// cannot take, or a connection that is down, is reported, not fatal: the
// host goes on.
func publisher(h *ipc.Host, pub *natsipc.Publisher) emitFunc {
	return func(se *scene.SensorEntry, f *sensors.Frame, _ *sensors.Stamp) (int, error) {
		info, data, err := f.Encode()
		if err != nil {
			return 0, err
		}
		if err := pub.PublishSensor(se.Name, f.Kind, info, data); err != nil {
			h.Warn("publish "+se.Name, "sensor %q not published: %v", se.Name, err)
		}
		return 0, nil
	}
}

func init() {
	var shm, out string
	var rate float64
	var fast, latest bool
	var cycles, logMiB int
	var nf natsFlags
	var ff foxgloveFlags
	var lf limitFlags
	var rf recordFlags
	var window, replace bool
	var wf windowFlags
	commands = append(commands, &command{
		name: "serve", args: "SCENE [--shm NAME] [--replace] [--rate HZ] [--fast] [--cycles N] [-o DIR [--latest]] [--record FILE.mcap [--realtime]] [NATS flags] [--foxglove ADDR [Foxglove flags]] [budget flags]",
		short: "run a scene as a host that other processes drive and mirror",
		summary: "Run the scene as a host: publish its elements and values in shared memory\n" +
			"(/dev/shm/simvis-NAME, layout in ipc/LAYOUT.md) and over NATS (an embedded server on\n" +
			"127.0.0.1:4222 unless --nats names one; subjects in ipc/natsipc/NATS.md), and every\n" +
			"cycle apply the values clients wrote, execute their change requests and log them.\n" +
			"Each sensor renders at its rate attribute (every cycle without one) and is published\n" +
			"on NATS; with -o its output is also written as capture does, NAME_0000.png ...\n" +
			"stamped with scene time (--latest: overwrite NAME.png). Cycles run in real time, with\n" +
			"a warning when one overruns, or back to back with --fast (scene time still advances\n" +
			"1/rate a cycle). A sensor frame that fails to render or to be written is counted,\n" +
			"reported (at most once a second per sensor) and in the summary; the host goes on.\n" +
			"Sensors that requests add render too. With --record every cycle (tf, values, change\n" +
			"log) and sensor frame goes into an MCAP recording (docs/recordings.md). Ctrl-C stops it.",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&shm, "shm", defaultShm(), shmHelp)
			fs.BoolVar(&replace, "replace", false, "take the name of a host that another process runs (refused otherwise)")
			fs.Float64Var(&rate, "rate", 30, "host cycles per second")
			fs.BoolVar(&fast, "fast", false, "run cycles as fast as possible (data generation)")
			fs.IntVar(&cycles, "cycles", 0, "stop after N cycles (0: run until interrupted)")
			fs.StringVar(&out, "o", "", "write sensor outputs into DIR")
			fs.BoolVar(&latest, "latest", false, "overwrite each sensor's files instead of numbering frames")
			fs.IntVar(&logMiB, "log-mib", 64, "change-log size in MiB (a full log refuses further commands)")
			fs.BoolVar(&window, "window", false, "show the host's scene in a window (docs/viewer.md); closing it stops the host")
			wf = windowFlags{}
			wf.register(fs)
			nf.register(fs)
			ff.register(fs)
			lf.register(fs)
			rf.register(fs, "record")
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			path, _, err := sceneArgs(args, 0)
			if err != nil {
				return err
			}
			if !(rate > 0 && rate <= 100000) {
				return usagef("--rate %v: want cycles per second in (0, 100000]", rate)
			}
			if cycles < 0 {
				return usagef("--cycles %d: want N >= 0", cycles)
			}
			if latest && out == "" {
				return usagef("--latest needs -o DIR")
			}
			if logMiB < 1 || logMiB > 1<<20 {
				return usagef("--log-mib %d: want 1 to 1048576", logMiB)
			}
			if nf.off && (nf.url != "" || nf.token != "" || nf.user != "") {
				return usagef("--no-nats excludes the other NATS flags")
			}
			lim, err := lf.limits()
			if err != nil {
				return err
			}
			// Signal handlers come first: a Ctrl-C at any time from here on,
			// right after the serving line included, stops the host with its
			// summary and removes its region instead of killing it.
			ctx, stop := interrupted()
			defer stop()
			sizes := ipc.DefaultSizes
			sizes.LogBytes = logMiB << 20
			h, err := newHost(ipc.Path(shm), path, ipc.HostOptions{Sizes: sizes, Rate: rate, Fast: fast, Warnings: warnings, Limits: lim, Replace: replace})
			if err != nil {
				return withLimitHint(err)
			}
			defer h.Close()
			var emitters []emitFunc
			where := ipc.Path(shm)
			if !nf.off {
				pub, clientURL, cleanup, err := nf.start(h, shm)
				if err != nil {
					return err
				}
				defer cleanup()
				where += " and " + clientURL
				emitters = append(emitters, publisher(h, pub))
			}
			var fox *foxgloveLive
			if ff.addr != "" {
				var cleanup func()
				if fox, cleanup, err = ff.startHost(h, "simvis serve", nil, ipc.NewWarnings(warnings, "simvis serve").Warn); err != nil {
					return err
				}
				defer cleanup()
				where += " and " + fox.srv.URL()
				emitters = append(emitters, fox.emit)
			}
			if out != "" {
				if err := os.MkdirAll(out, 0o755); err != nil {
					return err
				}
				emitters = append(emitters, fileWriter(out))
			}
			rec, err := rf.open(path, rate)
			if err != nil {
				return err
			}
			defer rec.close(w)
			if rec != nil {
				emitters = append(emitters, rec.emit)
			}
			fails := newSensorFailures(h.Warn)
			var render func(int, time.Duration) error
			var hs *hostSensors
			var win *viewer.Viewer
			if window {
				if err := wf.check(); err != nil {
					return err
				}
				v, closeWin, err := serveWindow(ipc.Path(shm), h.Scene, &wf, w)
				if err != nil {
					return err
				}
				defer closeWin()
				win = v
			}
			if len(emitters) > 0 || win != nil {
				hs = &hostSensors{clock: newSensorClock(), fails: fails, seen: map[string]bool{}, hostRate: rate,
					latest: latest, warn: h.Warn, emit: joinEmit(emitters...)}
				defer hs.close()
				if win != nil {
					// One GL context per process: the window's (viewer doc).
					hs.r = win.Sensors()
					hs.noClose = true
					hs.overlaysOnly = len(emitters) == 0
				} else if len(h.Scene.Sensors()) > 0 {
					// A machine that cannot render fails here, at the start,
					// rather than in every cycle.
					if hs.r, err = sensors.NewRenderer(); err != nil {
						return err
					}
				}
				wf.maxFPS = 0 // the host's cycles pace the window
				loop := newWindowLoop(&wf)
				render = func(_ int, t time.Duration) error {
					if err := rec.cycle(h.Scene, t.Seconds()); err != nil {
						return err
					}
					hs.cycle(h.Scene, t.Seconds())
					if win == nil {
						return nil
					}
					win.SetStatus(fmt.Sprintf("host cycle %d (%g Hz)", h.Region.Cycles(), rate))
					open, err := win.Frame(h.Scene)
					if err != nil {
						return err
					}
					if !open || loop.done(win, w) {
						stop() // closing the window stops the host
					}
					return nil
				}
			}
			mode := "real time"
			if fast {
				mode = "as fast as possible"
			}
			fmt.Fprintf(w, "serving %s as %s: %d elements, %d sensors, %g Hz, %s\n",
				path, where, len(h.Scene.Elements()), len(h.Scene.Sensors()), rate, mode)
			start := time.Now()
			err = h.Run(ctx, cycles, render)
			reg := h.Region
			files := 0
			if hs != nil {
				files = hs.files
			}
			fmt.Fprintf(w, "%d cycles in %v (%d overran their period), %d changes logged, %d values rejected, %d files written, %s\n",
				reg.Cycles(), time.Since(start).Round(time.Millisecond), h.Overruns(), len(h.Scene.Log()), reg.Rejected(), files, fails)
			if fox != nil {
				fmt.Fprintln(w, fox.summary())
			}
			return errors.Join(err, rec.close(w))
		},
	})
}

func init() {
	var hf hostFlags
	var asJSON bool
	commands = append(commands, &command{
		name: "elements", args: "[--shm NAME | --connect URL] [--json]",
		short:   "list a running host's elements, their value indices and values",
		summary: "List the elements a running host publishes: name, type, insertion point, the index\nof the first value and every parameter's current value.",
		flags: func(fs *flag.FlagSet) {
			hf.register(fs)
			hf.readOnly = true // over NATS: the viewer role
			fs.BoolVar(&asJSON, "json", false, "print JSON instead of text")
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			c, err := hf.openOnly(args)
			if err != nil {
				return err
			}
			defer c.Close()
			ds, err := c.Elements()
			if err != nil {
				return err
			}
			type element struct {
				ipc.Descriptor
				Values []float64
			}
			list := make([]element, len(ds))
			for i, d := range ds {
				list[i].Descriptor = d
				for j := range d.Params {
					v, err := c.Get(d.Start + j)
					if err != nil {
						return err
					}
					list[i].Values = append(list[i].Values, v)
				}
			}
			if err := hf.check(c); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(w, list)
			}
			for _, e := range list {
				vals := make([]string, len(e.Params))
				for j, p := range e.Params {
					vals[j] = fmt.Sprintf("%s=%g", p, e.Values[j])
				}
				writeWrapped(w, fmt.Sprintf("%s (%s at %s) start %d:", e.Name, e.Type, e.At, e.Start), vals, elementsWidth)
			}
			return nil
		},
	})
}

func init() {
	var hf hostFlags
	var setTimeout time.Duration
	commands = append(commands, &command{
		name: "set", args: "[--shm NAME | --connect URL] [--timeout D] ELEMENT.PARAM=VALUE ...",
		short: "write parameter values of a running host",
		summary: "Write parameter values into a running host's value array and wait until a host cycle\n" +
			"has applied them: a value the host refuses (beyond a joint's range, say) fails with the\n" +
			"host's reason and exit status 1.",
		flags: func(fs *flag.FlagSet) {
			hf.register(fs)
			fs.DurationVar(&setTimeout, "timeout", 5*time.Second, "how long to wait for the host's cycle")
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			if len(args) == 0 {
				return usagef("no ELEMENT.PARAM=VALUE given")
			}
			if !(setTimeout > 0) {
				return usagef("--timeout %v: want a positive duration", setTimeout)
			}
			c, err := hf.open()
			if err != nil {
				return err
			}
			defer c.Close()
			// Look every argument up first: all are written or none.
			var writes []ipc.ValueWrite
			for _, a := range args {
				e, p, v, err := parseSet("", a)
				if err != nil {
					return err
				}
				i, err := c.Param(e, p)
				if err != nil {
					return fmt.Errorf("%s: %w", a, err)
				}
				writes = append(writes, ipc.ValueWrite{Index: i, Value: v})
			}
			// Over NATS the server may refuse the writes (a viewer's
			// credentials): wait for its word rather than succeed.
			var flush func() error
			if fl, ok := c.Conn().(interface{ Flush() error }); ok {
				flush = fl.Flush
			}
			err = c.SetConfirmed(writes, setTimeout, flush)
			var refused *ipc.RefusedError
			if errors.As(err, &refused) {
				for k, x := range writes {
					if x.Index == refused.Index {
						return fmt.Errorf("%s: %w", args[k], err)
					}
				}
			}
			if err != nil {
				// Values written into the region of a host that is gone
				// are lost: say so rather than succeed.
				return hf.gone(err)
			}
			return nil
		},
	})
}

func init() {
	var hf hostFlags
	var timeout time.Duration
	commands = append(commands, &command{
		name: "request", args: "[--shm NAME | --connect URL] 'XML' ... (- reads one from standard input)",
		short:   "ask a running host to execute part, element or sensor commands",
		summary: "Send each XML command to a running host's change-request log and wait for its\noutcome: the change-log sequence number, or the host's error. File paths in requests\nare relative to the scene file's directory and may not leave it.",
		flags: func(fs *flag.FlagSet) {
			hf.register(fs)
			fs.DurationVar(&timeout, "timeout", 10*time.Second, "how long to wait for each outcome")
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			if len(args) == 0 {
				return usagef("no XML command given")
			}
			c, err := hf.open()
			if err != nil {
				return err
			}
			defer c.Close()
			c.RequestTimeout = timeout
			for _, a := range args {
				if a == "-" {
					data, err := io.ReadAll(os.Stdin)
					if err != nil {
						return err
					}
					a = string(data)
				}
				seq, err := c.Request(a)
				if err != nil {
					return hf.gone(err)
				}
				fmt.Fprintf(w, "change %d\n", seq)
			}
			return nil
		},
	})
}

func init() {
	var hf hostFlags
	var from uint64
	var follow bool
	commands = append(commands, &command{
		name: "log", args: "[--shm NAME | --connect URL] [--from SEQ] [--follow]",
		short:   "print a running host's change log",
		summary: "Print the change log of a running host: every command it executed, from the scene\nfile on, as SEQ SOURCE XML. --follow keeps printing new ones until the host stops\n(exit 0; a host killed without stopping is an error, exit 1).",
		flags: func(fs *flag.FlagSet) {
			hf.register(fs)
			hf.readOnly = true // over NATS: the viewer role
			fs.Uint64Var(&from, "from", 1, "first sequence number to print")
			fs.BoolVar(&follow, "follow", false, "wait for and print new commands")
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			c, err := hf.openOnly(args)
			if err != nil {
				return err
			}
			defer c.Close()
			f := c.Follow(from)
			ctx, stop := interrupted()
			defer stop()
			for {
				recs, err := f.Next(100 * time.Millisecond)
				for _, r := range recs {
					fmt.Fprintf(w, "%d\t%s\t%s\n", r.Seq, r.Source, strings.ReplaceAll(r.XML, "\n", " "))
				}
				// A host that stopped and said so ends the log, not a
				// failure; one that vanished may have had more to say.
				if follow && errors.Is(err, ipc.ErrHostStopped) && !errors.Is(err, ipc.ErrHostVanished) {
					return nil
				}
				if err != nil {
					return hf.gone(err)
				}
				if ctx.Err() != nil {
					return nil
				}
				if !follow && len(recs) == 0 {
					return hf.check(c)
				}
			}
		},
	})
}

func init() {
	var hf hostFlags
	var out, overlay, from, frame, size string
	var frames int
	var rate, fov float64
	var latest bool
	var only setFlags
	var patience time.Duration
	var fetch bool
	var lf limitFlags
	var ff foxgloveFlags
	var rf recordFlags
	var window bool
	var wf windowFlags
	commands = append(commands, &command{
		name: "mirror", args: "[--shm NAME | --connect URL] [--overlay FILE] -o DIR [--record FILE.mcap] [--frames N] [--rate HZ] [--sensor NAME ... | --from POSE [--frame F] [--size WxH] [--fov DEG]] [--latest] [--foxglove ADDR [Foxglove flags]] [budget flags]",
		short: "replicate a running host's scene and capture from the replica",
		summary: "Build a local replica of a running host's scene by replaying its change log and\n" +
			"copying its values, add the overlay file's commands (visualization only: never\n" +
			"sent to the host), and write its sensors' outputs N times at RATE frames per\n" +
			"second of real time, syncing before each frame. Each sensor is captured at its\n" +
			"rate attribute; --sensor picks sensors (the overlay may bring its own cameras).\n" +
			"Over NATS, model files are fetched from the host where its scene directory does not\n" +
			"exist on this machine (always with --fetch-files).\n" +
			"With --from it renders the replica for people from that viewpoint instead, overlay\n" +
			"geometry marked sensed=\"false\" included, into view.png (view_0000.png ...).\n" +
			"A host restart is followed by a rebuild. With --record the replica's frames, tf, values\n" +
			"and change log also go into an MCAP recording (docs/recordings.md); -o is then optional.",
		flags: func(fs *flag.FlagSet) {
			only = nil
			hf.register(fs)
			hf.readOnly = true // over NATS: the viewer role
			fs.StringVar(&overlay, "overlay", "", "scene file of commands only the replica shows")
			fs.StringVar(&out, "o", "", "output directory (required)")
			fs.IntVar(&frames, "frames", 1, "frames to capture")
			fs.Float64Var(&rate, "rate", 10, "frames per second")
			fs.Var(&only, "sensor", "capture only this sensor (repeatable)")
			fs.BoolVar(&latest, "latest", false, "overwrite each sensor's files instead of numbering frames")
			viewFlags(fs, &from, &frame, &size, &fov, "")
			fs.DurationVar(&patience, "patience", 30*time.Second, "how long to keep retrying while the host is gone or unreachable")
			fs.BoolVar(&fetch, "fetch-files", false, "fetch model files from the host over NATS even where its scene directory exists here")
			lf.register(fs) // a host started with larger budgets needs a mirror given the same
			ff.register(fs)
			rf.register(fs, "record")
			fs.BoolVar(&window, "window", false, "show the live replica in a window (docs/viewer.md); -o is then optional")
			wf = windowFlags{}
			wf.register(fs)
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			if len(args) > 0 {
				return usagef("unexpected argument %q", args[0])
			}
			if out == "" && rf.path == "" && !window && (ff.addr == "" || from != "") {
				return usagef("-o DIR is required (without it, --window, --record or --foxglove serve the replica only)")
			}
			if window && (rf.path != "" || ff.addr != "") {
				// The window shows the replica live; recording and the
				// Foxglove server follow the frame loop, which a window
				// replaces.
				return usagef("--window excludes --record and --foxglove: run a second mirror for them")
			}
			if window {
				if err := wf.check(); err != nil {
					return err
				}
			}
			var vp *viewpoint
			if window {
				start := from
				if start == "" {
					start = defaultWindowFrom
				}
				v, err := parseViewpoint(start, frame, size, fov)
				if err != nil {
					return err
				}
				vp = &v
			} else if from != "" {
				if len(only) > 0 {
					return usagef("--from and --sensor exclude each other")
				}
				v, err := parseViewpoint(from, frame, size, fov)
				if err != nil {
					return err
				}
				vp = &v
			}
			if frames < 1 || frames > 1000000 {
				return usagef("--frames %d: want 1 to 1000000", frames)
			}
			if !(rate > 0) || math.IsInf(rate, 0) {
				return usagef("--rate %v: want frames per second > 0", rate)
			}
			lim, err := lf.limits()
			if err != nil {
				return err
			}
			var cmds []*scene.Command
			if overlay != "" {
				var err error
				if cmds, err = scene.ReadCommands(overlay); err != nil {
					return err
				}
			}
			c, err := hf.openPatiently(patience)
			if err != nil {
				return err
			}
			defer c.Close()
			m, err := newMirror(c, ipc.MirrorOptions{Overlay: cmds, FetchFiles: fetch, Scene: scene.Options{Limits: lim}})
			if err != nil {
				return withLimitHint(err)
			}
			defer m.Close()
			picked := map[string]bool{}
			for _, name := range only {
				if !isSensor(m.Scene(), name) {
					return fmt.Errorf("--sensor %s: the replica has no such sensor", name)
				}
				picked[name] = true
			}
			if window {
				return mirrorWindow(c, m, &hf, *vp, &wf, out, latest, picked, patience, w)
			}
			if vp == nil && len(m.Scene().Sensors()) == 0 && ff.addr == "" {
				return errors.New("the replica has no sensors to capture (add a camera with --overlay, or render a viewpoint with --from)")
			}
			var emit emitFunc
			if out != "" {
				if err := os.MkdirAll(out, 0o755); err != nil {
					return err
				}
				emit = fileWriter(out)
			}
			rec, err := rf.open("", rate)
			if err != nil {
				return err
			}
			defer rec.close(w)
			// streams get the sensors' frames whether or not files are
			// written (--from writes the view instead).
			var streams []emitFunc
			if rec != nil {
				streams = append(streams, rec.emit)
			}
			var fox *foxgloveLive
			if ff.addr != "" {
				if fox, err = ff.startMirror(&hf); err != nil {
					return err
				}
				defer fox.close()
				streams = append(streams, fox.emit)
				fmt.Fprintf(w, "serving the replica to Foxglove at %s\n", fox.srv.URL())
			}
			emit = joinEmit(append([]emitFunc{emit}, streams...)...)
			r, err := sensors.NewRenderer()
			if err != nil {
				return err
			}
			defer r.Close()
			clock := newSensorClock()
			// Frames carry the host's scene time of the state they show.
			var hostAt float64
			clock.stamp = func(float64) float64 { return hostAt }
			behind := ipc.NewWarnings(warnings, "simvis mirror")
			late := 0
			ctx, stop := interrupted()
			defer stop()
			period := time.Duration(float64(time.Second) / rate)
			next := time.Now()
			total := 0
			fails := newSensorFailures(ipc.NewWarnings(warnings, "simvis mirror").Warn)
			var silentSince time.Time
			var syncErr error
			for i := 0; i < frames && ctx.Err() == nil; i++ {
				if syncErr = m.Sync(); syncErr != nil {
					// A host restarting or a network cut: keep the replica as it
					// is and try again, for a while.
					if silentSince.IsZero() {
						silentSince = time.Now()
						fmt.Fprintf(warnings, "simvis mirror: %v; retrying for %v\n", syncErr, patience)
					}
					if time.Since(silentSince) > patience {
						return withLimitHint(hf.gone(syncErr))
					}
				} else if !silentSince.IsZero() {
					fmt.Fprintf(warnings, "simvis mirror: in sync again at change %d\n", m.Applied())
					silentSince = time.Time{}
				}
				if at, ok := c.HostTime(); ok {
					hostAt = at.Seconds()
				}
				if fox != nil {
					// Stamped with the host's scene time, like the frames.
					fox.cycle(m.Scene(), time.Duration(hostAt*float64(time.Second)))
				}
				n := 0
				var err error
				if vp != nil {
					name := filepath.Join(out, "view.png")
					if !latest {
						name = filepath.Join(out, fmt.Sprintf("view_%04d.png", i))
					}
					// Overlays drawing sensors' returns (scan elements) show
					// this frame's scan.
					if out != "" { // without -o, --from serves a recording or Foxglove only
						if err = sensors.RenderReturns(r, m.Scene()); err == nil {
							err = vp.write(r, m.Scene(), name)
						}
						if err == nil {
							n = 1
						}
					}
					if err == nil && len(streams) > 0 {
						// The recording and Foxglove still get every
						// sensor; the files are the view alone.
						if err = rec.cycle(m.Scene(), float64(i)/rate); err == nil {
							clock.render(r, m.Scene(), float64(i)/rate, false, picked, joinEmit(streams...), fails.fail)
						}
					}
				} else if err = rec.cycle(m.Scene(), float64(i)/rate); err == nil {
					n = clock.render(r, m.Scene(), float64(i)/rate, latest, picked, emit, fails.fail)
				}
				total += n
				if err != nil {
					return err
				}
				if frames > 1 {
					fmt.Fprintf(w, "frame %d/%d: change %d, %d files, host time %.3f s\n", i+1, frames, m.Applied(), n, hostAt)
				}
				if i == 0 {
					// The first frame compiles the renderer's shaders and
					// uploads the meshes: the schedule starts after it.
					next = time.Now()
				}
				next = next.Add(period)
				if lag := time.Since(next); lag > period && i+1 < frames {
					// Rendering takes longer than --rate allows: say so
					// (once a second at most) instead of quietly stretching
					// the run.
					late++
					behind.Warn("behind", "frame %d is %v behind its schedule at --rate %g: a frame takes longer than %v to sync, render and write (lower --rate, or pick sensors with --sensor)",
						i, lag.Round(time.Millisecond), rate, period)
				}
				if i+1 < frames {
					time.Sleep(time.Until(next))
				}
			}
			if out != "" {
				fmt.Fprintf(w, "replica at change %d (%d rebuilds): %d files in %s\n", m.Applied(), m.Rebuilds, total, out)
			} else {
				fmt.Fprintf(w, "replica at change %d (%d rebuilds)\n", m.Applied(), m.Rebuilds)
			}
			if late > 0 {
				fmt.Fprintf(warnings, "simvis mirror: %d of %d frames started late: %d frames at --rate %g should take %v\n",
					late, frames, frames, rate, (time.Duration(frames-1) * period).Round(time.Millisecond))
			}
			if fox != nil {
				fmt.Fprintln(w, fox.summary())
			}
			if err := rec.close(w); err != nil {
				return err
			}
			if syncErr != nil {
				// The last frames came from a replica the host no longer
				// updated: not a success.
				return withLimitHint(fmt.Errorf("the replica is out of sync: %w", hf.gone(syncErr)))
			}
			if fails.total() > 0 {
				// Every frame that could be written was; the run still failed.
				return errors.New(fails.String())
			}
			return nil
		},
	})
}

func isSensor(s *scene.Scene, name string) bool {
	for _, se := range s.Sensors() {
		if se.Name == name {
			return true
		}
	}
	return false
}

func init() {
	var rate float64
	var duration time.Duration
	var connect string
	commands = append(commands, &command{
		name: "bench-ipc", args: "[--rate HZ] [--duration D] [--connect URL|embedded]",
		short: "measure the shared-array interface: write rates, latencies, mirror catch-up",
		summary: "Measure the shared-array interface in one process, every client on its own\n" +
			"mapping of a region in /dev/shm: values written per second by one and by 8 clients,\n" +
			"write-to-applied latency and request round trips against a host cycling at RATE,\n" +
			"and how long a new mirror takes to replay a 10,000-command change log.\n" +
			"With --connect it measures the NATS transport through that server instead\n" +
			"(\"embedded\": one started on loopback for the run): writes from 8 clients sent and\n" +
			"applied per second, write-to-applied latency, a mirror's lag, the log replay.",
		flags: func(fs *flag.FlagSet) {
			fs.Float64Var(&rate, "rate", 100, "host cycles per second for the latency runs")
			fs.DurationVar(&duration, "duration", time.Second, "length of each write-rate run")
			fs.StringVar(&connect, "connect", "", "a NATS server URL, or embedded")
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			if len(args) > 0 {
				return usagef("unexpected argument %q", args[0])
			}
			if !(rate >= 1 && rate <= 10000) {
				return usagef("--rate %v: want 1 to 10000 cycles per second", rate)
			}
			if duration <= 0 || duration > time.Minute {
				return usagef("--duration %v: want up to a minute", duration)
			}
			period := time.Duration(float64(time.Second) / rate)
			if connect != "" {
				return benchNATS(w, connect, rate, duration, period)
			}
			res, err := ipc.BenchIPC(rate, duration)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "region in %s, host at %g Hz (cycle %v)\n", res.RegionLocation, rate, period.Round(time.Microsecond))
			fmt.Fprintf(w, "value writes, 1 client:   %6.1f million/s\n", res.WritesOne/1e6)
			fmt.Fprintf(w, "value writes, 8 clients:  %6.1f million/s\n", res.WritesEight/1e6)
			fmt.Fprintf(w, "write to applied:         %v; %d of %d by the first cycle after the write\n",
				res.WriteLatency, res.NextCycle, res.WriteLatency.N)
			fmt.Fprintf(w, "request round trip:       %v; target p99 < %v\n", res.RequestTrip, (period + time.Millisecond).Round(time.Microsecond))
			fmt.Fprintf(w, "mirror catch-up:          %d commands in %v (the host loading them: %v)\n",
				res.CatchUpCmds, res.CatchUp.Round(time.Millisecond), res.HostLoad.Round(time.Millisecond))
			return nil
		},
	})
}

func benchNATS(w io.Writer, connect string, rate float64, duration, period time.Duration) error {
	serverURL, clientURL := connect, connect
	if connect == "embedded" {
		// The host and its clients log in with their own roles: the
		// server checks every message's permissions, as in use.
		srv, err := natsipc.StartServer(natsipc.ServerOptions{Listen: "127.0.0.1:0"})
		if err != nil {
			return err
		}
		defer srv.Close()
		serverURL, clientURL = srv.URL(), srv.URLFor(natsipc.RoleDriver)
	}
	res, err := natsipc.BenchRoles(serverURL, clientURL, rate, duration)
	if err != nil {
		return err
	}
	u, _ := url.Parse(serverURL)
	u.User = nil
	fmt.Fprintf(w, "NATS at %s, host at %g Hz (cycle %v)\n", u, rate, period.Round(time.Microsecond))
	fmt.Fprintf(w, "value writes, 8 clients:  %.0f/s sent, %.0f/s applied, %d dropped\n", res.Sent, res.Applied, res.Dropped)
	fmt.Fprintf(w, "write to applied:         %v\n", res.WriteLatency)
	fmt.Fprintf(w, "mirror lag:               %v (host applied to replica)\n", res.MirrorLag)
	fmt.Fprintf(w, "change-log replay:        %d commands in %v\n", res.CatchUpCmds, res.CatchUp.Round(time.Millisecond))
	return nil
}

// elementsWidth is the line length `elements` wraps long value lists at (a
// point cloud's thousands of values would make one line of many thousand
// characters).
const elementsWidth = 100

// writeWrapped writes head and then items separated by spaces, starting a
// new line, indented by four spaces, before an item that would pass width
// characters; an item longer than a line gets a line of its own.
func writeWrapped(w io.Writer, head string, items []string, width int) {
	var b strings.Builder
	b.WriteString(head)
	n := len(head)
	for _, it := range items {
		if n+1+len(it) > width && n > 4 {
			b.WriteString("\n   ")
			n = 3
		}
		b.WriteString(" ")
		b.WriteString(it)
		n += 1 + len(it)
	}
	b.WriteString("\n")
	io.WriteString(w, b.String())
}
