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
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/natsipc"
	"github.com/simvis/simvis/live"
	"github.com/simvis/simvis/scene"
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

// natsFlags configure the host's NATS side.
type natsFlags struct{ o live.NATSOptions }

func (f *natsFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.o.Off, "no-nats", false, "serve over shared memory only, no NATS")
	fs.StringVar(&f.o.URL, "nats", "", "publish through this NATS server or cluster instead of an embedded one (a cluster: nats://USER:PASSWORD@HOST1:4222,HOST2:4222,HOST3:4222)")
	fs.StringVar(&f.o.Listen, "listen", "127.0.0.1:4222", "address of the embedded NATS server (not loopback: needs credentials)")
	fs.StringVar(&f.o.Name, "name", "", "scene name on NATS, simvis.NAME.* (default: the --shm name)")
	fs.StringVar(&f.o.Token, "token", "", "token that gives remote clients the driver role (default $SIMVIS_NATS_TOKEN; local clients find credentials in /dev/shm/simvis-NAME.nats)")
	fs.StringVar(&f.o.User, "user", "", "user that has the driver role, with --password")
	fs.StringVar(&f.o.Password, "password", "", "password for --user (default $SIMVIS_NATS_PASSWORD)")
	fs.StringVar(&f.o.TLSCert, "tls-cert", "", "TLS certificate file of the embedded server (with --tls-key)")
	fs.StringVar(&f.o.TLSKey, "tls-key", "", "TLS key file of the embedded server")
	fs.IntVar(&f.o.Consumers, "max-consumers", 256, "consumers the change-log stream may have (each client and mirror uses one)")
	fs.IntVar(&f.o.Replicas, "replicas", 0, "servers of a --nats cluster that keep the change log (default: 3 on a cluster of three or more servers, else 1)")
}

// options are the flags as live takes them.
func (f *natsFlags) options() (live.NATSOptions, error) {
	if f.o.Consumers <= 0 {
		return f.o, usagef("--max-consumers %d: want at least 1", f.o.Consumers)
	}
	return f.o, nil
}

func serveCommand() *command {
	var o live.ServeOptions
	var nf natsFlags
	var ff foxgloveFlags
	var wb webFlags
	var lf limitFlags
	var rf recordFlags
	var window bool
	var wf windowFlags
	return &command{
		name: "serve", args: "SCENE [--shm NAME] [--replace] [--rate HZ] [--fast] [--cycles N] [-o DIR [--latest]] [--record FILE.mcap [--realtime]] [NATS flags] [--foxglove ADDR [Foxglove flags]] [--web ADDR [web flags]] [budget flags]",
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
			fs.StringVar(&o.Shm, "shm", defaultShm(), shmHelp)
			fs.BoolVar(&o.Replace, "replace", false, "take the name of a host that another process runs (refused otherwise)")
			fs.Float64Var(&o.Rate, "rate", 30, "host cycles per second")
			fs.BoolVar(&o.Fast, "fast", false, "run cycles as fast as possible (data generation)")
			fs.IntVar(&o.Cycles, "cycles", 0, "stop after N cycles (0: run until interrupted)")
			fs.StringVar(&o.Out, "o", "", "write sensor outputs into DIR")
			fs.BoolVar(&o.Latest, "latest", false, "overwrite each sensor's files instead of numbering frames")
			fs.IntVar(&o.LogMiB, "log-mib", 64, "change-log size in MiB (a full log refuses further commands)")
			fs.DurationVar(&o.RemoveInterval, "remove-interval", time.Second, "least time between two removals by request, each of which reloads the scene (<0: none)")
			fs.BoolVar(&window, "window", false, "show the host's scene in a window (docs/viewer.md); closing it stops the host")
			wf.register(fs)
			nf.register(fs)
			ff.register(fs)
			wb.register(fs)
			lf.register(fs)
			rf.register(fs, "record")
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			path, _, err := sceneArgs(args, 0)
			if err != nil {
				return err
			}
			// 0 would be live's default: on the command line it is a mistake.
			if o.Rate <= 0 {
				return usagef("--rate %v: want cycles per second in (0, 100000]", o.Rate)
			}
			if o.LogMiB <= 0 {
				return usagef("--log-mib %d: want 1 to 1048576", o.LogMiB)
			}
			if o.Limits, err = lf.limits(); err != nil {
				return err
			}
			if o.NATS, err = nf.options(); err != nil {
				return err
			}
			if o.Foxglove, err = ff.options(); err != nil {
				return err
			}
			if o.Web, err = wb.options(); err != nil {
				return err
			}
			if window {
				o.Window = wf.options(fs)
			}
			o.Scene, o.Record, o.Warnings, o.NewHost, o.PackagePath = path, rf.o, warnings, newHost, lf.packages()
			// Signal handlers come first: a Ctrl-C at any time from here on,
			// right after the serving line included, stops the host with its
			// summary and removes its region instead of killing it.
			ctx, stop := interrupted()
			defer stop()
			return withLimitHint(live.Serve(ctx, o, w))
		},
	}
}

func elementsCommand() *command {
	var hf hostFlags
	var asJSON bool
	return &command{
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
	}
}

func setCommand() *command {
	var hf hostFlags
	var setTimeout time.Duration
	return &command{
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
			// credentials): SetConfirmed waits for its word (the Conn's
			// Flush) rather than succeed.
			err = c.SetConfirmed(writes, setTimeout, nil)
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
	}
}

func requestCommand() *command {
	var hf hostFlags
	var timeout time.Duration
	return &command{
		name: "request", args: "[--shm NAME | --connect URL] 'XML' ... (- reads one from standard input)",
		short: "ask a running host to execute part, element or sensor commands, or to remove one",
		summary: "Send each XML command to a running host's change-request log and wait for its\noutcome: the change-log sequence number, or the host's error. File paths in requests\nare relative to the scene file's directory and may not leave it.\n" +
			"<remove name=\"NAME\"/> takes away the part, element or sensor NAME, with whatever was\n" +
			"inserted inside it: the host starts a new run without them (a new region and change\n" +
			"log, values carried over), which clients reopen and mirrors rebuild from; its outcome\n" +
			"is the new run's last change. A request the old run had not taken is sent again.",
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
				var refused *ipc.RequestError
				if errors.Is(err, ipc.ErrHostReplaced) && errors.Is(err, ipc.ErrNotExecuted) ||
					errors.As(err, &refused) && refused.Msg == ipc.ErrRunRestarted.Error() {
					// A removal's new run (or a restart) replaced the
					// host before it took the request, or as it took it:
					// not executed, it goes to the host now at the name,
					// once.
					if c.Reopen() == nil {
						seq, err = c.Request(a)
					}
				}
				if err != nil {
					return hf.gone(err)
				}
				fmt.Fprintf(w, "change %d\n", seq)
			}
			return nil
		},
	}
}

func logCommand() *command {
	var hf hostFlags
	var from uint64
	var follow bool
	return &command{
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
	}
}

func mirrorCommand() *command {
	var o live.MirrorOptions
	var hf hostFlags
	var overlay, from, frame, size string
	var fov float64
	var only setFlags
	var lf limitFlags
	var ff foxgloveFlags
	var wb webFlags
	var rf recordFlags
	var window bool
	var wf windowFlags
	return &command{
		name: "mirror", args: "[--shm NAME | --connect URL] [--overlay FILE] [-o DIR] [--record FILE.mcap] [--window] [--frames N] [--rate HZ] [--sensor NAME ... | --from POSE [--frame F] [--size WxH] [--fov DEG]] [--latest] [--foxglove ADDR [Foxglove flags]] [--web ADDR [web flags]] [budget flags]",
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
			hf.register(fs)
			hf.readOnly = true // over NATS: the viewer role
			fs.StringVar(&overlay, "overlay", "", "scene file of commands only the replica shows")
			fs.StringVar(&o.Out, "o", "", "output directory (required unless --window, --record, --foxglove or --web take the replica)")
			fs.IntVar(&o.Frames, "frames", 1, "frames to capture")
			fs.Float64Var(&o.Rate, "rate", 10, "frames per second")
			fs.Var(&only, "sensor", "capture only this sensor (repeatable)")
			fs.BoolVar(&o.Latest, "latest", false, "overwrite each sensor's files instead of numbering frames")
			viewFlags(fs, &from, &frame, &size, &fov, "")
			fs.DurationVar(&o.Patience, "patience", 30*time.Second, "how long to keep retrying while the host is gone or unreachable")
			fs.BoolVar(&o.FetchFiles, "fetch-files", false, "fetch model files from the host over NATS even where its scene directory exists here")
			lf.register(fs) // a host started with larger budgets needs a mirror given the same
			ff.register(fs)
			wb.register(fs)
			rf.register(fs, "record")
			fs.BoolVar(&window, "window", false, "show the live replica in a window (docs/viewer.md); -o is then optional")
			wf.register(fs)
		},
		run: func(fs *flag.FlagSet, args []string, w io.Writer) error {
			if len(args) > 0 {
				return usagef("unexpected argument %q", args[0])
			}
			if o.Out == "" && rf.o.Path == "" && !window && wb.o.Addr == "" && (ff.o.Addr == "" || from != "") {
				return usagef("-o DIR is required (without it, --window, --record, --foxglove or --web serve the replica only)")
			}
			if from != "" && len(only) > 0 && !window {
				return usagef("--from and --sensor exclude each other")
			}
			if o.Frames < 1 || o.Frames > 1000000 {
				return usagef("--frames %d: want 1 to 1000000", o.Frames)
			}
			if !(o.Rate > 0) || math.IsInf(o.Rate, 0) {
				return usagef("--rate %v: want frames per second > 0", o.Rate)
			}
			var err error
			if window {
				o.Window = wf.options(fs)
			}
			if from != "" || window {
				vp, err := parseViewpoint(from, frame, size, fov) // "": framed on the content
				if err != nil {
					return err
				}
				o.From = &vp
			}
			if o.Scene.Limits, err = lf.limits(); err != nil {
				return err
			}
			o.Scene.PackagePath = lf.packages()
			if o.Foxglove, err = ff.options(); err != nil {
				return err
			}
			if o.Web, err = wb.options(); err != nil {
				return err
			}
			if overlay != "" {
				if o.Overlay, err = scene.ReadCommands(overlay); err != nil {
					return err
				}
			}
			if o.Client, err = hf.openPatiently(o.Patience); err != nil {
				return err
			}
			defer o.Client.Close()
			o.Sensors, o.Record, o.Where, o.Connect, o.Warnings, o.NewMirror = only, rf.o, hf.where(), hf.open, warnings, newMirror
			o.Gone = func(err error) error { return withLimitHint(hf.gone(err)) }
			ctx, stop := interrupted()
			defer stop()
			return withLimitHint(live.Mirror(ctx, o, w))
		},
	}
}

func benchIpcCommand() *command {
	var rate float64
	var duration time.Duration
	var connect string
	return &command{
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
			if connect != "" {
				return natsipc.BenchServer(w, connect, rate, duration)
			}
			res, err := ipc.BenchIPC(rate, duration)
			if err != nil {
				return err
			}
			return res.WriteText(w, rate)
		},
	}
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
