package natsipc

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
)

// Limits bound what clients can queue at the host, so that a flood from
// one of them costs it memory and messages, never its render loop.
type Limits struct {
	PendingValues   int // value writes queued between two cycles (default 1,000,000)
	PendingRequests int // change requests queued (default 256)
	// Consumers bounds the consumers of the change-log stream (default
	// 256): every client and mirror follows the log with one ordered
	// (ephemeral) consumer, which the server removes seconds after its
	// client leaves. Durable consumers, which no simvis client makes, are
	// removed by the host every SweepEvery.
	Consumers int
	// Replicas is how many servers of a cluster keep the change log
	// (JetStream stream replicas): 0 picks 3 where the server is one of a
	// cluster of three or more (ClusterSize), else 1. With 3, the log, and
	// the host, survive the loss of any one server.
	Replicas int
}

// Publisher serves a host's scene over NATS: it is the host's side of the
// transport, running in the host's cycles (ipc.Host.AddHook).
type Publisher struct {
	h      *ipc.Host
	nc     *nats.Conn
	js     jetstream.JetStream
	name   string
	limits Limits
	epoch  uint64
	subs   []*nats.Subscription

	mu        sync.Mutex // guards what NATS handlers queue
	writes    []pair
	over      uint64 // value writes beyond the pending limit
	stale     uint64 // value writes for an earlier host run
	malformed uint64 // set messages that did not decode
	lookups   uint64 // descriptor and snapshot requests beyond the limit
	requests  chan *nats.Msg
	describes []*nats.Msg
	snapshots []*nats.Msg
	syncs     []*nats.Msg // set messages asking when their writes are taken (onSet)
	syncing   []*nats.Msg // those whose writes this cycle applies (host goroutine)

	last        []float64       // values as last published
	logCur      ipc.LogCursor   // shared-memory change log published so far
	replies     []reply         // request outcomes, sent once their record is in the stream
	unpublished []ipc.LogRecord // change-log records not stored in the stream yet
	remote      uint64          // remote requests received
	rejSent     uint64          // the cycle of the last refusal of values published

	applied, dropped atomic.Uint64 // value writes taken into the table, dropped

	stopSweep context.CancelFunc
	swept     atomic.Uint64 // durable consumers removed from the change log
	sweptSaid uint64        // swept as last reported

	outageMu  sync.Mutex
	lostAt    time.Time // when the connection to the server was lost; zero while connected
	lostWhy   error
	warnedAt  time.Time        // the outage reported
	backAt    time.Time        // reconnected (to another server of a cluster, or the same)
	backTo    string           // the server reconnected to, for the report
	recheck   atomic.Bool      // (re)connected: check the stream survived
	check     chan checkResult // the look at the stream, or its remake, under way (streamcheck.go)
	checkAt   time.Time        // when it started
	checkFrom uint64           // records published when the look started
	remaking  bool             // the stream is being recreated: records and outcomes wait
	goneAt    time.Time        // the stream was first found missing, to be confirmed
	storage   jetstream.StorageType
	replicas  int                    // of the change-log stream
	logDown   time.Time              // the change log could not be stored since; zero while it can
	logWhy    error                  // why, as first reported
	probe     jetstream.PubAckFuture // while the log is down: the first record waiting, sent without waiting
	probeAt   time.Time              // when it was sent
	frames    map[string]uint64      // frames published, by sensor (host goroutine)
	published uint64                 // change-log records stored in the stream

	reqs     map[string]*requestState // by Simvis-Request-Id, guarded by mu
	reqsDone []string                 // ids of answered requests, oldest first (at most rememberRequests)

	filesMu sync.Mutex
	files   map[string]map[string]bool // directory, then path: files logged commands loaded, the only ones served
}

// Stats returns the value writes applied to the host's table and those
// dropped (over the limit, for another host run, out of range) so far.
func (p *Publisher) Stats() (applied, dropped uint64) { return p.applied.Load(), p.dropped.Load() }

// Publish attaches a publisher for scene name to host h over connection
// nc: it (re)creates the change-log stream, publishes the log so far and
// serves clients from the next cycle on.
func Publish(h *ipc.Host, nc *nats.Conn, name string, limits Limits) (*Publisher, error) {
	if !validName(name) {
		return nil, fmt.Errorf("natsipc: scene name %q: want letters, digits, '_' and '-'", name)
	}
	if limits.PendingValues <= 0 {
		limits.PendingValues = 1_000_000
	}
	if limits.PendingRequests <= 0 {
		limits.PendingRequests = 256
	}
	if limits.Consumers <= 0 {
		limits.Consumers = 256
	}
	// An acknowledgement that never comes (a stream without a leader)
	// fails the record sent without waiting (storeLog) after this long.
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(2*time.Second))
	if err != nil {
		return nil, fmt.Errorf("natsipc: %w", err)
	}
	p := &Publisher{h: h, nc: nc, js: js, name: name, limits: limits, epoch: h.Region.Epoch(),
		requests: make(chan *nats.Msg, limits.PendingRequests)}
	// A new host run starts a new log: readers of the old stream notice
	// its deletion and the new epoch.
	if err := p.createStream(10 * time.Second); err != nil {
		return nil, err
	}
	if err := p.publishLog(10*time.Second, true); err != nil {
		return nil, err
	}
	// The server going away and coming back is reported on the host's
	// warnings (from its own goroutine: see after), and checked for a
	// change log lost with it.
	nc.SetDisconnectErrHandler(func(_ *nats.Conn, err error) {
		p.outageMu.Lock()
		if p.lostAt.IsZero() {
			p.lostAt, p.lostWhy = time.Now(), err
		}
		p.outageMu.Unlock()
	})
	nc.SetReconnectHandler(func(nc *nats.Conn) {
		p.outageMu.Lock()
		p.backAt, p.backTo = time.Now(), nc.ConnectedServerName()
		if a := nc.ConnectedAddr(); a != "" {
			p.backTo += " at " + a
		}
		p.outageMu.Unlock()
		p.recheck.Store(true)
	})
	handlers := map[string]nats.MsgHandler{
		"desc":     func(m *nats.Msg) { p.queue(&p.describes, m) },
		"snapshot": func(m *nats.Msg) { p.queue(&p.snapshots, m) },
		"set":      p.onSet,
		"request":  p.onRequest,
		"file":     p.onFile,
	}
	for what, fn := range handlers {
		sub, err := nc.Subscribe(subject(name, what), fromClients(fn))
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("natsipc: %w", err)
		}
		p.subs = append(p.subs, sub)
	}
	if err := nc.Flush(); err != nil {
		p.Close()
		return nil, fmt.Errorf("natsipc: %w", err)
	}
	h.AddHook(ipc.CycleHook{Before: p.before, After: p.after})
	ctx, stop := context.WithCancel(context.Background())
	p.stopSweep = stop
	go p.sweep(ctx)
	return p, nil
}

// fromClients drops messages JetStream delivers: a client may create a
// push consumer on the change log whose deliver subject is one of the
// host's (NATS checks no permission on it), replaying logged commands as
// requests. Its messages carry a $JS.ACK reply subject.
func fromClients(fn nats.MsgHandler) nats.MsgHandler {
	return func(m *nats.Msg) {
		if !strings.HasPrefix(m.Reply, "$JS.") {
			fn(m)
		}
	}
}

func validName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// before applies the queued value writes to the host's table and executes
// the queued requests, on the host's goroutine.
func (p *Publisher) before() error {
	p.mu.Lock()
	// The writes and the syncs that came after them, together.
	writes := p.writes
	p.writes = nil
	p.syncing = append(p.syncing, p.syncs...)
	p.syncs = nil
	over, stale, malformed, lookups := p.over, p.stale, p.malformed, p.lookups
	p.over, p.stale, p.malformed, p.lookups = 0, 0, 0, 0
	p.mu.Unlock()
	values := p.h.Scene.Values()
	bad := 0
	for _, w := range writes {
		if int(w.index) >= len(values) {
			bad++
			continue
		}
		values[w.index] = w.value // Update applies it, or refuses and counts it
	}
	p.applied.Add(uint64(len(writes) - bad))
	p.dropped.Add(over + stale + uint64(bad))
	if over+stale+uint64(bad)+malformed+lookups > 0 {
		p.h.Warn("nats-drops", "dropped remote value writes: %d over the limit of %d pending, %d for an earlier host run, %d beyond the values in use; %d malformed set messages, %d lookups over the limit of %d pending",
			over, p.limits.PendingValues, stale, bad, malformed, lookups, p.limits.PendingRequests)
	}
	for {
		select {
		case m := <-p.requests:
			p.remote++
			client := sanitize(m.Header.Get(hdrClient))
			seq, err := p.h.Execute(string(m.Data), fmt.Sprintf("remote request %d from %s", p.remote, client))
			body := requestReply{Seq: seq}
			if err != nil {
				body = requestReply{Error: err.Error()}
			}
			p.replies = append(p.replies, reply{m, body, m.Header.Get(hdrRequestID)})
		default:
			return nil
		}
	}
}

// after publishes the cycle's changed values (every cycle, so that clients
// also hear the host is alive), the new change-log records, then the
// request outcomes, descriptions and snapshots.
func (p *Publisher) after() error {
	p.checkStream()
	if n := p.swept.Load(); n != p.sweptSaid {
		p.h.Warn("nats-durable", "removed %d durable consumer(s) from the change log (%d in all): simvis clients make none", n-p.sweptSaid, n)
		p.sweptSaid = n
	}
	if !p.nc.IsConnected() {
		// Nothing to publish to: records wait in the host's log, values
		// go out whole to clients that ask for a snapshot when back.
		p.mu.Lock()
		p.describes, p.snapshots = nil, nil
		p.mu.Unlock()
		p.syncing = p.syncing[:0] // their clients stop waiting (Conn.Flush)
		return nil
	}
	// A change log that cannot be stored (its stream has no leader for a
	// few seconds after a cluster lost a server, or no quorum) is
	// reported once when it starts and once when it ends, not per record
	// or cycle. While its stream is being recreated, records wait.
	if p.remaking {
		// Nothing stored, nothing answered.
	} else if err := p.storeLog(); err != nil {
		if p.logDown.IsZero() {
			p.logDown, p.logWhy = time.Now(), err
			p.h.Warn("nats-log", "the change log cannot be stored for now (%v): changes wait in the host's log, and their requesters for the outcome, until it can", err)
		}
	} else if !p.logDown.IsZero() {
		p.h.Warn("nats-log-back", "the change log is stored again after %v; %d change(s) stored in all", time.Since(p.logDown).Round(time.Millisecond), p.published)
		p.logDown, p.logWhy = time.Time{}, nil
	}
	if len(p.unpublished) == 0 && !p.remaking {
		// Outcomes go out once their commands are in the stream.
		for _, r := range p.replies {
			p.answer(r)
		}
		p.replies = p.replies[:0]
	}
	values := p.h.Scene.Values()
	msg := valuesMsg{epoch: p.epoch, cycle: p.h.Region.Cycles(), used: uint32(len(values)), state: stateRunning}
	for i, v := range values {
		if i >= len(p.last) || math.Float64bits(p.last[i]) != math.Float64bits(v) {
			msg.pairs = append(msg.pairs, pair{uint32(i), v})
		}
	}
	p.last = append(p.last[:0], values...)
	if err := p.nc.Publish(subject(p.name, "values"), msg.encode()); err != nil {
		p.h.Warn("nats", "publishing values: %v", err)
	}
	if x := p.h.LastRejection(); x.Cycle > p.rejSent {
		p.rejSent = x.Cycle
		data, err := json.Marshal(rejectedMsg{Cycle: x.Cycle, First: x.First, Count: x.Count, Reason: x.Reason})
		if err == nil {
			err = p.nc.Publish(subject(p.name, "rejected"), data)
		}
		if err != nil {
			p.h.Warn("nats", "publishing a refusal: %v", err)
		}
	}
	if len(p.syncing) > 0 {
		// After the values and the refusal of this cycle, which took
		// the writes sent before each sync.
		data, _ := json.Marshal(syncReply{Cycle: msg.cycle, Rejected: p.rejSent == msg.cycle})
		for _, m := range p.syncing {
			m.Respond(data)
		}
		p.syncing = p.syncing[:0]
	}
	p.mu.Lock()
	describes, snapshots := p.describes, p.snapshots
	p.describes, p.snapshots = nil, nil
	p.mu.Unlock()
	if len(describes) > 0 {
		data, err := json.Marshal(p.describe())
		if err != nil {
			return err
		}
		for _, m := range describes {
			m.Respond(data)
		}
	}
	if len(snapshots) > 0 {
		snap := valuesMsg{epoch: p.epoch, cycle: msg.cycle, used: msg.used, state: stateRunning}
		for i, v := range values {
			snap.pairs = append(snap.pairs, pair{uint32(i), v})
		}
		data := snap.encode()
		for _, m := range snapshots {
			m.Respond(data)
		}
	}
	return nil
}

func (p *Publisher) describe() describeReply {
	d := describeReply{Epoch: p.epoch, ValuesUsed: len(p.h.Scene.Values()), PeriodNS: int64(p.h.Period())}
	for _, e := range p.h.Scene.Elements() {
		r := describeRecord{Name: e.Name, At: e.At, Type: e.Type, Start: e.Start}
		for _, prm := range e.Params {
			r.Params = append(r.Params, prm.Name)
		}
		d.Elements = append(d.Elements, r)
	}
	d.Sensors = []describeSensor{}
	for _, se := range p.h.Scene.Sensors() {
		rate := se.Rate
		if rate <= 0 && p.h.Period() > 0 {
			rate = float64(time.Second) / float64(p.h.Period()) // every host cycle
		}
		d.Sensors = append(d.Sensors, describeSensor{Name: se.Name, Type: se.Type, Kind: frameKind(se), At: se.At,
			Subject: subject(p.name, "sensor."+se.Name), RateHz: rate})
	}
	return d
}

// frameKind is the kind of frames a sensor publishes, as the sensor says
// (scene.FrameKinder): "" where it does not.
func frameKind(se *scene.SensorEntry) string {
	if fk, ok := se.Sensor.(scene.FrameKinder); ok {
		return fk.FrameKind()
	}
	return ""
}

// Close tells clients the host stopped and stops serving.
func (p *Publisher) Close() error {
	if p.stopSweep != nil {
		p.stopSweep()
	}
	for _, s := range p.subs {
		s.Unsubscribe()
	}
	if !p.nc.IsConnected() {
		// No server to tell (an outage): clients notice the silence.
		return fmt.Errorf("natsipc: the NATS server is away (%v): clients were not told the host stopped", p.nc.Status())
	}
	msg := valuesMsg{epoch: p.epoch, cycle: p.h.Region.Cycles(), used: uint32(len(p.h.Scene.Values())), state: stateStopped}
	p.nc.Publish(subject(p.name, "values"), msg.encode())
	return p.nc.FlushTimeout(2 * time.Second)
}
