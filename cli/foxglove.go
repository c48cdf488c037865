package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/ipc/foxglove"
	"github.com/simvis/simvis/record"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/sensors/ros2"
)

// foxgloveFlags configure the Foxglove WebSocket server of serve and
// mirror (docs/foxglove.md).
type foxgloveFlags struct {
	addr, token, viewerToken string
	tlsCert, tlsKey, origins string
	maxClients               int
	tokenless                bool
	maxMessageKiB, maxQueue  int
	maxQueueMiB, maxPending  int
	maxSetEntries            int
	maxPendingSets           int
	maxSceneMiB              int
}

func (f *foxgloveFlags) register(fs *flag.FlagSet) {
	*f = foxgloveFlags{}
	fs.StringVar(&f.addr, "foxglove", "", "serve the Foxglove WebSocket protocol on ADDR, e.g. 127.0.0.1:8765 (not loopback: needs a token)")
	fs.StringVar(&f.token, "foxglove-token", "", "driver token: may set parameters and call services (default $SIMVIS_FOXGLOVE_TOKEN)")
	fs.StringVar(&f.viewerToken, "foxglove-viewer-token", "", "viewer token: may only subscribe (default $SIMVIS_FOXGLOVE_VIEWER_TOKEN)")
	fs.StringVar(&f.tlsCert, "foxglove-tls-cert", "", "TLS certificate file: serve wss:// (with --foxglove-tls-key)")
	fs.StringVar(&f.tlsKey, "foxglove-tls-key", "", "TLS key file")
	fs.StringVar(&f.origins, "foxglove-origins", "", "browser origins to accept besides Foxglove's app and localhost, comma-separated host patterns ('*': any)")
	fs.IntVar(&f.maxClients, "foxglove-max-clients", 16, "Foxglove clients connected at once")
	fs.BoolVar(&f.tokenless, "foxglove-tokenless-driving", false, "let loopback clients without a token drive (every local user); default: they watch, driving takes the driver token")
	fs.IntVar(&f.maxMessageKiB, "foxglove-max-message-kib", 1024, "largest message a Foxglove client may send, KiB")
	fs.IntVar(&f.maxQueue, "foxglove-max-queue", 1024, "control messages queued for one Foxglove client before it is disconnected")
	fs.IntVar(&f.maxQueueMiB, "foxglove-max-queue-mib", 64, "MiB of control messages queued for one Foxglove client before it is disconnected")
	fs.IntVar(&f.maxPending, "foxglove-max-pending", 64, "setParameters messages and service calls of one Foxglove connection waiting for the host (each)")
	fs.IntVar(&f.maxSetEntries, "foxglove-max-set-entries", 1024, "entries of one Foxglove setParameters message")
	fs.IntVar(&f.maxPendingSets, "foxglove-max-pending-sets", 4096, "parameter writes of all Foxglove clients waiting for the host to show them")
	fs.IntVar(&f.maxSceneMiB, "foxglove-max-scene-mib", 256, "MiB of models kept encoded for Foxglove's scene channel (one copy per distinct model)")
}

// loopbackHost reports whether host is a loopback name or address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// tokenPath is where a Foxglove server of the region at regionPath keeps
// its driver token for this user's tools: beside the region and its NATS
// credentials (/dev/shm/simvis-NAME.foxglove).
func foxgloveTokenPath(regionPath string) string { return regionPath + ".foxglove" }

// foxgloveLive publishes one scene to Foxglove clients: sensor frames as
// ROS 2 messages (emit), and after every cycle or sync the transforms, the
// scene, the values and the parameters (cycle).
type foxgloveLive struct {
	srv      *foxglove.Server
	warn     func(kind, format string, args ...any)
	tf, tfs  uint32
	static   string          // the /tf_static message last sent
	names    ros2.Namespaces // each sensor's topic namespace
	channels map[string]uint32
	last     int64 // the last cycle's scene time, ns

	closeDriver func() error
	removeToken func()
}

// start listens for Foxglove clients; drv takes drivers' writes and
// requests to the host (nil: none). Without --foxglove-token (or
// $SIMVIS_FOXGLOVE_TOKEN) and --foxglove-tokenless-driving, a driver token
// is made up, written to tokenPath (0600) and printed on standard error
// for the user who started the command; clients without a token watch.
func (f *foxgloveFlags) start(drv foxglove.Driver, name, tokenPath string, warn func(kind, format string, args ...any)) (*foxgloveLive, error) {
	if f.token == "" {
		f.token = os.Getenv("SIMVIS_FOXGLOVE_TOKEN")
	}
	if f.viewerToken == "" {
		f.viewerToken = os.Getenv("SIMVIS_FOXGLOVE_VIEWER_TOKEN")
	}
	if f.maxClients < 1 || f.maxClients > 1000 {
		return nil, usagef("--foxglove-max-clients %d: want 1 to 1000", f.maxClients)
	}
	for _, b := range []struct {
		name   string
		v, max int
	}{
		{"--foxglove-max-message-kib", f.maxMessageKiB, 1 << 20}, {"--foxglove-max-queue", f.maxQueue, 1 << 24},
		{"--foxglove-max-queue-mib", f.maxQueueMiB, 1 << 16}, {"--foxglove-max-pending", f.maxPending, 1 << 20},
		{"--foxglove-max-set-entries", f.maxSetEntries, 1 << 24}, {"--foxglove-max-pending-sets", f.maxPendingSets, 1 << 24},
		{"--foxglove-max-scene-mib", f.maxSceneMiB, 1 << 20},
	} {
		if b.v < 1 || b.v > b.max {
			return nil, usagef("%s %d: want 1 to %d", b.name, b.v, b.max)
		}
	}
	if f.tokenless && f.token != "" {
		return nil, usagef("--foxglove-tokenless-driving excludes a driver token (--foxglove-token, $SIMVIS_FOXGLOVE_TOKEN)")
	}
	if host, _, err := net.SplitHostPort(f.addr); err == nil && f.token == "" && f.viewerToken == "" && !loopbackHost(host) {
		// A made-up driver token does not open other addresses: those
		// are the user's decision, with tokens of their own.
		return nil, usagef("--foxglove %s is not a loopback address: give --foxglove-token or --foxglove-viewer-token ($SIMVIS_FOXGLOVE_TOKEN, $SIMVIS_FOXGLOVE_VIEWER_TOKEN)", f.addr)
	}
	generated := false
	if f.token == "" && !f.tokenless {
		tok, err := foxglove.NewToken()
		if err != nil {
			return nil, fmt.Errorf("foxglove: %w", err)
		}
		f.token, generated = tok, true
	}
	opts := foxglove.Options{Addr: f.addr, Name: name, DriverToken: f.token, ViewerToken: f.viewerToken,
		TLSCert: f.tlsCert, TLSKey: f.tlsKey, MaxClients: f.maxClients, Warn: warn,
		AnonymousDrivers: f.tokenless, MaxMessage: int64(f.maxMessageKiB) << 10, MaxQueue: f.maxQueue,
		MaxQueueBytes: f.maxQueueMiB << 20, MaxPending: f.maxPending, MaxSetEntries: f.maxSetEntries,
		MaxPendingSets: f.maxPendingSets, MaxSceneBytes: int64(f.maxSceneMiB) << 20}
	if f.origins != "" {
		opts.Origins = append(append([]string(nil), foxglove.DefaultOrigins...), strings.Split(f.origins, ",")...)
	}
	srv, err := foxglove.Listen(opts, drv)
	if errors.Is(err, foxglove.ErrTokenRequired) {
		return nil, usagef("--foxglove %s is not a loopback address: give --foxglove-token or --foxglove-viewer-token ($SIMVIS_FOXGLOVE_TOKEN, $SIMVIS_FOXGLOVE_VIEWER_TOKEN)", f.addr)
	}
	if err != nil {
		return nil, fmt.Errorf("--foxglove %s: %w", f.addr, err)
	}
	l := &foxgloveLive{srv: srv, warn: warn, channels: map[string]uint32{}}
	if generated {
		remove, err := foxglove.WriteTokenFile(tokenPath, foxglove.TokenFile{URL: srv.URL(), Driver: f.token})
		if err != nil {
			srv.Close()
			return nil, err
		}
		l.removeToken = remove
		fmt.Fprintf(os.Stderr, "%s: Foxglove clients without a token watch; to drive, connect to %s/?token=%s (kept in %s, readable by you only; --foxglove-tokenless-driving lets every local user drive)\n",
			name, srv.URL(), f.token, tokenPath)
	}
	schema := func(typ string) string {
		b, _ := ros2.Schema(typ)
		return string(b)
	}
	tf := foxglove.Channel{Encoding: ros2.MessageEncoding, SchemaName: ros2.TypeTFMessage,
		Schema: schema(ros2.TypeTFMessage), SchemaEncoding: ros2.SchemaEncoding}
	tf.Topic = "/tf"
	l.tf = srv.Advertise(tf)
	tf.Topic = "/tf_static"
	l.tfs = srv.Advertise(tf)
	return l, nil
}

// startHost serves a host to Foxglove: its drivers act through a
// shared-memory client of the host's own region, as any other client.
// clock gives the scene time of the cycle that just ran (nil: the cycle
// number times the period, as serve's render gets it). name is the
// command, the server's name for clients.
func (f *foxgloveFlags) startHost(h *ipc.Host, name string, clock func() time.Duration, warnings func(kind, format string, args ...any)) (*foxgloveLive, func(), error) {
	c, err := ipc.Open(h.Region.Path())
	if err != nil {
		return nil, nil, fmt.Errorf("foxglove: attaching to the host's region: %w", err)
	}
	l, err := f.start(c, name, foxgloveTokenPath(h.Region.Path()), warnings)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	if clock == nil {
		period := h.Period()
		clock = func() time.Duration { return time.Duration(h.Region.Cycles()-1) * period }
	}
	h.AddHook(ipc.CycleHook{After: func() error {
		l.cycle(h.Scene, clock())
		return nil
	}})
	l.closeDriver = c.Close
	return l, l.close, nil
}

// cycle publishes the transforms (/tf every call, /tf_static when it
// changed) and the scene's state.
func (l *foxgloveLive) cycle(s *scene.Scene, t time.Duration) {
	l.last = int64(t)
	stamp := ros2.TimeFromNanos(int64(t))
	ts := uint64(stamp.Nanos())
	static, moving, err := ros2.SceneTransforms(s)
	if err != nil {
		l.warn("foxglove-tf", "foxglove: transforms not published: %v", err)
	} else {
		if len(moving) > 0 {
			m := ros2.TF(moving, stamp)
			l.srv.Publish(l.tf, ts, m.Marshal())
		}
		// Static transforms are stamped 0 in content comparisons: they
		// are resent only when a command changed them.
		key := ros2.TF(static, ros2.Time{})
		if k := string(key.Marshal()); k != l.static {
			l.static = k
			m := ros2.TF(static, stamp)
			l.srv.Publish(l.tfs, ts, m.Marshal())
		}
	}
	l.srv.Update(s, ts)
}

// emit publishes a sensor frame as its ROS 2 messages, advertising each
// topic the first time. A sensor whose namespace another sensor took
// first is reported and not published.
func (l *foxgloveLive) emit(se *scene.SensorEntry, f *sensors.Frame, st *sensors.Stamp) (int, error) {
	ns, err := l.names.Of(se.Name)
	if err != nil {
		return 0, fmt.Errorf("foxglove: %w", err)
	}
	ns2 := l.last
	if st != nil {
		ns2 = int64(math.Round(st.Time * 1e9)) // the cycle's time, as /tf has it
	}
	stamp := ros2.TimeFromNanos(ns2)
	msgs, err := ros2.FrameMessages(f, ns, stamp)
	if err != nil {
		return 0, err
	}
	for _, m := range msgs {
		id, ok := l.channels[m.Topic]
		if !ok {
			schema, err := ros2.Schema(m.Type)
			if err != nil {
				return 0, err
			}
			id = l.srv.Advertise(foxglove.Channel{Topic: m.Topic, Encoding: ros2.MessageEncoding, SchemaName: m.Type,
				Schema: string(schema), SchemaEncoding: ros2.SchemaEncoding})
			l.channels[m.Topic] = id
		}
		l.srv.Publish(id, uint64(stamp.Nanos()), m.Data)
	}
	return 0, nil
}

// summary sums up what the server did, for the command's last line.
func (l *foxgloveLive) summary() string {
	st := l.srv.Stats()
	return fmt.Sprintf("foxglove: %d frames sent, %d dropped for slow clients, %d clients disconnected as too slow, %d connections refused",
		st.Sent, st.Dropped, st.SlowClosed, st.Refused)
}

// reopening is a Foxglove driver through a client that follows its host
// across restarts (a mirror's host): an operation that finds the host
// replaced reopens the connection. A request (XML, no indices) is then
// tried once more; a write is not, since its index belongs to the old
// host's table: the driver gets the error and sets the name again once the
// replica was rebuilt.
type reopening struct {
	mu sync.RWMutex // Reopen excludes Set and Request; they may overlap
	c  *ipc.Client
}

func (r *reopening) retry(op func() error, again bool) error {
	r.mu.RLock()
	err := op()
	r.mu.RUnlock()
	if !errors.Is(err, ipc.ErrHostReplaced) {
		return err
	}
	r.mu.Lock()
	if rerr := r.c.Reopen(); rerr != nil {
		r.mu.Unlock()
		return fmt.Errorf("%w (reopening: %v)", err, rerr)
	}
	r.mu.Unlock()
	if !again {
		return err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return op()
}

func (r *reopening) Set(i int, v float64) error {
	return r.retry(func() error { return r.c.Set(i, v) }, false)
}

func (r *reopening) Request(xml string) (seq uint64, err error) {
	err = r.retry(func() error {
		seq, err = r.c.Request(xml)
		return err
	}, true)
	return seq, err
}

// startMirror serves a mirror's replica to Foxglove: its drivers act on
// the host through a connection of their own (the mirror's is busy
// syncing). The caller adds emit to the replica's sensor outputs.
func (f *foxgloveFlags) startMirror(hf *hostFlags) (*foxgloveLive, error) {
	c, err := hf.open()
	if err != nil {
		return nil, err
	}
	// A mirror has no region of its own: its token file is named by its
	// process, in the same directory.
	tokenPath := filepath.Join(foxglove.TokenDir, fmt.Sprintf("simvis-mirror-%d.foxglove", os.Getpid()))
	l, err := f.start(&reopening{c: c}, "simvis mirror", tokenPath, ipc.NewWarnings(warnings, "simvis mirror").Warn)
	if err != nil {
		c.Close()
		return nil, err
	}
	l.closeDriver = c.Close
	return l, nil
}

func (l *foxgloveLive) close() {
	l.srv.Close()
	if l.removeToken != nil {
		l.removeToken()
	}
	if l.closeDriver != nil {
		l.closeDriver()
	}
}

// foxReplay publishes a recording's sensor messages (ROS 2, CDR) to
// Foxglove clients as they are, each when the playback position reaches
// its log time: play without --rerender. /tf and /tf_static come from the
// rebuilt scene, simvis's own JSON channels from the server.
type foxReplay struct {
	l    *foxgloveLive
	file string
	step int64 // the position's advance per cycle, ns
	cur  *record.Cursor
	last int64 // the limit of the last upTo; -1 before the first
}

func (l *foxgloveLive) replay(file string, indexed bool, step time.Duration) *foxReplay {
	return &foxReplay{l: l, file: file, step: int64(step), cur: record.NewCursor(file, indexed), last: -1}
}

func (r *foxReplay) close() { r.cur.Close() }

// upTo publishes the messages logged at or before limit (ns); a position
// that went back or jumped ahead (a seek, a loop) starts reading there.
func (r *foxReplay) upTo(limit int64) error {
	if r.last < 0 || limit < r.last || limit-r.last > 4*r.step {
		if err := r.cur.SeekTo(limit - r.step); err != nil {
			return fmt.Errorf("%s: %w", r.file, err)
		}
	}
	r.last = limit
	err := r.cur.Until(limit, func(sc *mcap.Schema, ch *mcap.Channel, m *mcap.Message) {
		// simvis's own streams (simvis_msgs: changes, values, labels) are
		// the rebuilt host's to publish, as the tf tree is.
		if sc == nil || sc.Encoding != ros2.SchemaEncoding || ch.MessageEncoding != ros2.MessageEncoding || ch.Topic == "/tf" || ch.Topic == "/tf_static" ||
			strings.HasPrefix(sc.Name, "simvis_msgs/") {
			return
		}
		id, ok := r.l.channels[ch.Topic]
		if !ok {
			id = r.l.srv.Advertise(foxglove.Channel{Topic: ch.Topic, Encoding: ros2.MessageEncoding, SchemaName: sc.Name,
				Schema: string(sc.Data), SchemaEncoding: ros2.SchemaEncoding})
			r.l.channels[ch.Topic] = id
		}
		// Publish keeps the data for new subscribers: a copy of the
		// reader's buffer.
		r.l.srv.Publish(id, m.LogTime, bytes.Clone(m.Data))
	})
	if err != nil {
		return fmt.Errorf("%s: %w", r.file, err)
	}
	return nil
}
