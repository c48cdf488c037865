package live

import (
	"bytes"
	"errors"
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

// FoxgloveOptions configure the Foxglove WebSocket server of a run
// (docs/foxglove.md). Zero bounds take the defaults in brackets.
type FoxgloveOptions struct {
	Addr string // "": no Foxglove server
	// Token is the driver token ($SIMVIS_FOXGLOVE_TOKEN when empty);
	// ViewerToken may only subscribe ($SIMVIS_FOXGLOVE_VIEWER_TOKEN).
	Token, ViewerToken string
	TLSCert, TLSKey    string
	// Origins are browser origins to accept besides Foxglove's app and
	// localhost: comma-separated host patterns ('*': any).
	Origins    string
	MaxClients int // clients at once [16]
	// TokenlessDriving lets loopback clients without a token drive.
	TokenlessDriving bool
	MaxMessageKiB    int // largest client message [1024]
	MaxQueue         int // control messages queued for one client [1024]
	MaxQueueMiB      int // their bytes [64]
	MaxPending       int // setParameters and service calls of one connection waiting for the host [64]
	MaxSetEntries    int // entries of one setParameters message [1024]
	MaxPendingSets   int // parameter writes of all clients waiting for the host [4096]
	MaxSceneMiB      int // models kept encoded for the scene channel [256]
}

// DefaultFoxglove are the bounds a zero FoxgloveOptions field takes.
var DefaultFoxglove = FoxgloveOptions{MaxClients: 16, MaxMessageKiB: 1024, MaxQueue: 1024, MaxQueueMiB: 64,
	MaxPending: 64, MaxSetEntries: 1024, MaxPendingSets: 4096, MaxSceneMiB: 256}

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

// Foxglove publishes one scene to Foxglove clients: as a Sink, sensor
// frames as ROS 2 messages; after every cycle or sync (Update) the
// transforms, the scene, the values and the parameters.
type Foxglove struct {
	srv      *foxglove.Server
	warn     func(kind, format string, args ...any)
	tf, tfs  uint32
	static   string          // the /tf_static message last sent
	names    ros2.Namespaces // each sensor's topic namespace
	channels map[string]uint32
	robots   map[string]string // each robot_description topic's part and file as last sent
	last     int64             // the last cycle's scene time, ns

	closeDriver func() error
	removeToken func()
}

// start listens for Foxglove clients; drv takes drivers' writes and
// requests to the host (nil: none). Without --foxglove-token (or
// $SIMVIS_FOXGLOVE_TOKEN) and --foxglove-tokenless-driving, a driver token
// is made up, written to tokenPath (0600) and printed on standard error
// for the user who started the command; clients without a token watch.
func (f FoxgloveOptions) start(drv foxglove.Driver, name, tokenPath string, warn func(kind, format string, args ...any)) (*Foxglove, error) {
	if f.Token == "" {
		f.Token = os.Getenv("SIMVIS_FOXGLOVE_TOKEN")
	}
	if f.ViewerToken == "" {
		f.ViewerToken = os.Getenv("SIMVIS_FOXGLOVE_VIEWER_TOKEN")
	}
	d := DefaultFoxglove
	for _, b := range []struct {
		v   *int
		def int
	}{{&f.MaxClients, d.MaxClients}, {&f.MaxMessageKiB, d.MaxMessageKiB},
		{&f.MaxQueue, d.MaxQueue}, {&f.MaxQueueMiB, d.MaxQueueMiB}, {&f.MaxPending, d.MaxPending},
		{&f.MaxSetEntries, d.MaxSetEntries}, {&f.MaxPendingSets, d.MaxPendingSets}, {&f.MaxSceneMiB, d.MaxSceneMiB}} {
		if *b.v == 0 {
			*b.v = b.def
		}
	}
	if f.MaxClients < 1 || f.MaxClients > 1000 {
		return nil, optionf("--foxglove-max-clients %d: want 1 to 1000", f.MaxClients)
	}
	for _, b := range []struct {
		name   string
		v, max int
	}{
		{"--foxglove-max-message-kib", f.MaxMessageKiB, 1 << 20}, {"--foxglove-max-queue", f.MaxQueue, 1 << 24},
		{"--foxglove-max-queue-mib", f.MaxQueueMiB, 1 << 16}, {"--foxglove-max-pending", f.MaxPending, 1 << 20},
		{"--foxglove-max-set-entries", f.MaxSetEntries, 1 << 24}, {"--foxglove-max-pending-sets", f.MaxPendingSets, 1 << 24},
		{"--foxglove-max-scene-mib", f.MaxSceneMiB, 1 << 20},
	} {
		if b.v < 1 || b.v > b.max {
			return nil, optionf("%s %d: want 1 to %d", b.name, b.v, b.max)
		}
	}
	if f.TokenlessDriving && f.Token != "" {
		return nil, optionf("--foxglove-tokenless-driving excludes a driver token (--foxglove-token, $SIMVIS_FOXGLOVE_TOKEN)")
	}
	if host, _, err := net.SplitHostPort(f.Addr); err == nil && f.Token == "" && f.ViewerToken == "" && !loopbackHost(host) {
		// A made-up driver token does not open other addresses: those
		// are the user's decision, with tokens of their own.
		return nil, optionf("--foxglove %s is not a loopback address: give --foxglove-token or --foxglove-viewer-token ($SIMVIS_FOXGLOVE_TOKEN, $SIMVIS_FOXGLOVE_VIEWER_TOKEN)", f.Addr)
	}
	generated := false
	if f.Token == "" && !f.TokenlessDriving {
		tok, err := foxglove.NewToken()
		if err != nil {
			return nil, fmt.Errorf("foxglove: %w", err)
		}
		f.Token, generated = tok, true
	}
	opts := foxglove.Options{Addr: f.Addr, Name: name, DriverToken: f.Token, ViewerToken: f.ViewerToken,
		TLSCert: f.TLSCert, TLSKey: f.TLSKey, MaxClients: f.MaxClients, Warn: warn,
		AnonymousDrivers: f.TokenlessDriving, MaxMessage: int64(f.MaxMessageKiB) << 10, MaxQueue: f.MaxQueue,
		MaxQueueBytes: f.MaxQueueMiB << 20, MaxPending: f.MaxPending, MaxSetEntries: f.MaxSetEntries,
		MaxPendingSets: f.MaxPendingSets, MaxSceneBytes: int64(f.MaxSceneMiB) << 20}
	if f.Origins != "" {
		opts.Origins = append(append([]string(nil), foxglove.DefaultOrigins...), strings.Split(f.Origins, ",")...)
	}
	srv, err := foxglove.Listen(opts, drv)
	if errors.Is(err, foxglove.ErrTokenRequired) {
		return nil, optionf("--foxglove %s is not a loopback address: give --foxglove-token or --foxglove-viewer-token ($SIMVIS_FOXGLOVE_TOKEN, $SIMVIS_FOXGLOVE_VIEWER_TOKEN)", f.Addr)
	}
	if err != nil {
		return nil, fmt.Errorf("--foxglove %s: %w", f.Addr, err)
	}
	l := &Foxglove{srv: srv, warn: warn, channels: map[string]uint32{}}
	if generated {
		remove, err := foxglove.WriteTokenFile(tokenPath, foxglove.TokenFile{URL: srv.URL(), Driver: f.Token})
		if err != nil {
			srv.Close()
			return nil, err
		}
		l.removeToken = remove
		fmt.Fprintf(os.Stderr, "%s: Foxglove clients without a token watch; to drive, connect to %s/?token=%s (kept in %s, readable by you only; --foxglove-tokenless-driving lets every local user drive)\n",
			name, srv.URL(), f.Token, tokenPath)
	}
	tf := foxglove.Channel{Encoding: ros2.MessageEncoding, SchemaName: ros2.TypeTFMessage,
		Schema: schemaText(ros2.TypeTFMessage), SchemaEncoding: ros2.SchemaEncoding}
	tf.Topic = "/tf"
	l.tf = srv.Advertise(tf)
	tf.Topic = "/tf_static"
	l.tfs = srv.Advertise(tf)
	return l, nil
}

// StartFoxglove serves host h to Foxglove clients (o.Addr) as Serve does:
// after every cycle the transforms, the scene and the values; the caller
// adds the *Foxglove to the sinks that get sensor frames, and closes it.
// clock gives the scene time of the cycle that just ran (nil: the cycle
// number times the period); name is the server's name for clients.
func StartFoxglove(h *ipc.Host, o FoxgloveOptions, name string, clock func() time.Duration, warn func(kind, format string, args ...any)) (*Foxglove, error) {
	return o.startHost(h, name, clock, warn)
}

// URL is where clients connect.
func (l *Foxglove) URL() string { return l.srv.URL() }

// Stats are what the server sent, dropped and refused so far.
func (l *Foxglove) Stats() foxglove.Stats { return l.srv.Stats() }

// startHost serves a host to Foxglove: its drivers act through a
// shared-memory client of the host's own region, as any other client.
// clock gives the scene time of the cycle that just ran (nil: the cycle
// number times the period, as serve's render gets it). name is the
// command, the server's name for clients.
func (f FoxgloveOptions) startHost(h *ipc.Host, name string, clock func() time.Duration, warnings func(kind, format string, args ...any)) (*Foxglove, error) {
	c, err := ipc.Open(h.Region.Path())
	if err != nil {
		return nil, fmt.Errorf("foxglove: attaching to the host's region: %w", err)
	}
	// A removal replaces the host's region (a new run): the drivers follow.
	l, err := f.start(&reopening{c: c}, name, foxgloveTokenPath(h.Region.Path()), warnings)
	if err != nil {
		c.Close()
		return nil, err
	}
	if clock == nil {
		period := h.Period()
		clock = func() time.Duration { return time.Duration(h.Region.Cycles()-1) * period }
	}
	h.AddHook(ipc.CycleHook{After: func() error {
		l.Update(h.Scene, clock())
		return nil
	}})
	l.closeDriver = c.Close
	return l, nil
}

// Update publishes the transforms (/tf every call, /tf_static when it
// changed), the joint states (ros2.JointStates, every call), each URDF
// robot's description (ros2.RobotParts) when the robot appears, and the
// scene's state. The parameters are read first: a client that sets a
// joint as soon as its joint states arrive finds it listed, even in the
// first cycle.
func (l *Foxglove) Update(s *scene.Scene, t time.Duration) {
	l.srv.UpdateParams(s)
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
	// Joint states every cycle, as /tf: a client subscribing late or
	// dropping frames gets the latest.
	for _, js := range ros2.JointStates(s, stamp) {
		id, ok := l.channels[js.Topic]
		if !ok {
			id = l.srv.Advertise(foxglove.Channel{Topic: js.Topic, Encoding: ros2.MessageEncoding, SchemaName: ros2.TypeJointState,
				Schema: schemaText(ros2.TypeJointState), SchemaEncoding: ros2.SchemaEncoding})
			l.channels[js.Topic] = id
		}
		l.srv.Publish(id, ts, js.Msg.Marshal())
	}
	l.publishRobots(s, ts)
	l.srv.Update(s, ts)
}

// publishRobots publishes a robot's description when its topic gets a
// robot: once, since the server keeps each channel's last message for
// clients that subscribe later, as a latched topic does in ROS. A file
// that cannot be read is reported and tried again next cycle.
func (l *Foxglove) publishRobots(s *scene.Scene, ts uint64) {
	for _, r := range ros2.RobotParts(s) {
		key := r.Part + "\n" + r.File
		if l.robots[r.Topic] == key {
			continue
		}
		m, err := r.Description()
		if err != nil {
			l.warn("foxglove-robot", "foxglove: %v", err)
			continue
		}
		id, ok := l.channels[r.Topic]
		if !ok {
			id = l.srv.Advertise(foxglove.Channel{Topic: r.Topic, Encoding: ros2.MessageEncoding, SchemaName: ros2.TypeString,
				Schema: schemaText(ros2.TypeString), SchemaEncoding: ros2.SchemaEncoding})
			l.channels[r.Topic] = id
		}
		if l.robots == nil {
			l.robots = map[string]string{}
		}
		l.robots[r.Topic] = key
		l.srv.Publish(id, ts, m.Marshal())
	}
}

// schemaText is the ros2msg schema of one of the package ros2's types.
func schemaText(typ string) string {
	b, _ := ros2.Schema(typ)
	return string(b)
}

// Frame publishes a sensor frame as its ROS 2 messages, advertising each
// topic the first time. A sensor whose namespace another sensor took
// first is reported and not published.
func (l *Foxglove) Frame(se *scene.SensorEntry, f *sensors.Frame, st *sensors.Stamp) error {
	ns, err := l.names.Of(se.Name)
	if err != nil {
		return fmt.Errorf("foxglove: %w", err)
	}
	ns2 := l.last
	if st != nil {
		ns2 = int64(math.Round(st.Time * 1e9)) // the cycle's time, as /tf has it
	}
	stamp := ros2.TimeFromNanos(ns2)
	msgs, err := ros2.FrameMessages(f, ns, stamp)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		id, ok := l.channels[m.Topic]
		if !ok {
			schema, err := ros2.Schema(m.Type)
			if err != nil {
				return err
			}
			id = l.srv.Advertise(foxglove.Channel{Topic: m.Topic, Encoding: ros2.MessageEncoding, SchemaName: m.Type,
				Schema: string(schema), SchemaEncoding: ros2.SchemaEncoding})
			l.channels[m.Topic] = id
		}
		l.srv.Publish(id, uint64(stamp.Nanos()), m.Data)
	}
	return nil
}

// Summary sums up what the server did, for the command's last line.
func (l *Foxglove) Summary() string {
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
// syncing). The caller adds it to the replica's sinks.
func (f FoxgloveOptions) startMirror(connect func() (*ipc.Client, error), warn func(kind, format string, args ...any)) (*Foxglove, error) {
	c, err := connect()
	if err != nil {
		return nil, err
	}
	// A mirror has no region of its own: its token file is named by its
	// process, in the same directory.
	tokenPath := filepath.Join(foxglove.TokenDir, fmt.Sprintf("simvis-mirror-%d.foxglove", os.Getpid()))
	l, err := f.start(&reopening{c: c}, "simvis mirror", tokenPath, warn)
	if err != nil {
		c.Close()
		return nil, err
	}
	l.closeDriver = c.Close
	return l, nil
}

func (l *Foxglove) Close() {
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
	l    *Foxglove
	file string
	step int64 // the position's advance per cycle, ns
	cur  *record.Cursor
	last int64 // the limit of the last upTo; -1 before the first
}

func (l *Foxglove) replay(file string, indexed bool, step time.Duration) *foxReplay {
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
		// the rebuilt host's to publish, as the tf tree, the joint
		// states and the robot descriptions are.
		if sc == nil || sc.Encoding != ros2.SchemaEncoding || ch.MessageEncoding != ros2.MessageEncoding || ch.Topic == "/tf" || ch.Topic == "/tf_static" ||
			sc.Name == ros2.TypeJointState || ros2.IsRobotDescription(ch.Topic, sc.Name) || strings.HasPrefix(sc.Name, "simvis_msgs/") {
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
