package natsipc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/models"
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

// SweepEvery is how often a host looks for durable consumers on its
// change log (a viewer may create them; they would outlive it) and removes
// them.
var SweepEvery = 2 * time.Second

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
	warnedAt  time.Time   // the outage reported
	backAt    time.Time   // reconnected (to another server of a cluster, or the same)
	backTo    string      // the server reconnected to, for the report
	recheck   atomic.Bool // (re)connected: check the stream survived
	storage   jetstream.StorageType
	replicas  int               // of the change-log stream
	logDown   time.Time         // the change log could not be stored since; zero while it can
	logWhy    error             // why, as first reported
	frames    map[string]uint64 // frames published, by sensor (host goroutine)
	published uint64            // change-log records stored in the stream

	reqs     map[string]*requestState // by Simvis-Request-Id, guarded by mu
	reqsDone []string                 // ids of answered requests, oldest first (at most rememberRequests)

	filesMu sync.Mutex
	files   map[string]map[string]bool // directory, then path: files logged commands loaded, the only ones served
}

// Stats returns the value writes applied to the host's table and those
// dropped (over the limit, for another host run, out of range) so far.
func (p *Publisher) Stats() (applied, dropped uint64) { return p.applied.Load(), p.dropped.Load() }

type reply struct {
	msg  *nats.Msg
	body requestReply
	id   string // Simvis-Request-Id, "" without one
}

// requestState is a change request the host took, by its
// Simvis-Request-Id: retries of a request (a client that had no outcome
// in time, across a server's failover) wait for the outcome of the first
// instead of executing it again, or get it at once when it is known.
type requestState struct {
	done    bool
	body    requestReply
	waiters []*nats.Msg // retries waiting for the outcome
}

// rememberRequests bounds the outcomes a host keeps for retries, and
// maxWaiters the retries of one request that wait for its outcome.
const (
	rememberRequests = 4096
	maxWaiters       = 16
	maxRequestID     = 64
)

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
	js, err := jetstream.New(nc)
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
	if err := p.publishLog(10 * time.Second); err != nil {
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

// sweep removes durable consumers from the change-log stream every
// SweepEvery until ctx ends: simvis clients follow the log with ordered
// consumers, which the server removes once unused, so a durable one was
// made by something else and would hold server memory for ever. How many
// went is reported on the host's goroutine (after).
func (p *Publisher) sweep(ctx context.Context) {
	t := time.NewTicker(SweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !p.nc.IsConnected() {
			continue
		}
		c, cancel := context.WithTimeout(ctx, time.Second)
		st, err := p.js.Stream(c, streamName(p.name))
		if err == nil {
			list := st.ListConsumers(c)
			var durable []string
			for info := range list.Info() {
				if info.Config.Durable != "" {
					durable = append(durable, info.Name)
				}
			}
			for _, name := range durable {
				if st.DeleteConsumer(c, name) == nil {
					p.swept.Add(1)
				}
			}
		}
		cancel()
	}
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

func (p *Publisher) queue(list *[]*nats.Msg, m *nats.Msg) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(*list) < p.limits.PendingRequests {
		*list = append(*list, m)
		return
	}
	p.lookups++ // unanswered: the client times out
}

// onSet queues a client's value writes for the next cycle; beyond the limit
// they are dropped and counted (and reported by the host).
func (p *Publisher) onSet(m *nats.Msg) {
	epoch, pairs, err := decodeSet(m.Data)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err != nil:
		p.malformed++
	case epoch != 0 && epoch != p.epoch:
		p.stale += uint64(len(pairs)) // indices of an earlier host run
	case len(p.writes)+len(pairs) > p.limits.PendingValues:
		p.over += uint64(len(pairs))
	default:
		p.writes = append(p.writes, pairs...)
	}
}

// MaxRequest bounds a remote change request's XML.
const MaxRequest = 1 << 20

// onRequest queues a change request; a full queue is an immediate error
// for the requester, and so is an oversized request.
func (p *Publisher) onRequest(m *nats.Msg) {
	if len(m.Data) > MaxRequest {
		respond(m, requestReply{Error: fmt.Sprintf("oversized: a request of %d bytes, at most %d", len(m.Data), MaxRequest)})
		return
	}
	id := m.Header.Get(hdrRequestID)
	if len(id) > maxRequestID {
		respond(m, requestReply{Error: fmt.Sprintf("a %s of %d bytes, at most %d", hdrRequestID, len(id), maxRequestID)})
		return
	}
	if id != "" {
		p.mu.Lock()
		if st := p.reqs[id]; st != nil {
			// A retry: the request is under way or done.
			body, done := st.body, st.done
			if !done && len(st.waiters) < maxWaiters {
				st.waiters = append(st.waiters, m)
			}
			p.mu.Unlock()
			if done {
				respond(m, body)
			}
			return
		}
		if p.reqs == nil {
			p.reqs = map[string]*requestState{}
		}
		p.reqs[id] = &requestState{}
		p.mu.Unlock()
	}
	select {
	case p.requests <- m:
	default:
		if id != "" {
			p.mu.Lock()
			delete(p.reqs, id) // not taken: a retry may be
			p.mu.Unlock()
		}
		respond(m, requestReply{Error: fmt.Sprintf("the host's request queue is full (%d pending)", p.limits.PendingRequests), Full: true})
	}
}

// answer sends a request's outcome to its requester and to the retries
// that wait for it, and keeps it for later retries.
func (p *Publisher) answer(r reply) {
	respond(r.msg, r.body)
	if r.id == "" {
		return
	}
	p.mu.Lock()
	st := p.reqs[r.id]
	var waiters []*nats.Msg
	if st != nil && !st.done {
		waiters, st.waiters = st.waiters, nil
		st.done, st.body = true, r.body
		p.reqsDone = append(p.reqsDone, r.id)
		if len(p.reqsDone) > rememberRequests {
			delete(p.reqs, p.reqsDone[0])
			p.reqsDone = p.reqsDone[1:]
		}
	}
	p.mu.Unlock()
	for _, m := range waiters {
		respond(m, r.body)
	}
}

func respond(m *nats.Msg, body requestReply) {
	data, _ := json.Marshal(body)
	m.Respond(data)
}

// before applies the queued value writes to the host's table and executes
// the queued requests, on the host's goroutine.
func (p *Publisher) before() error {
	p.mu.Lock()
	writes := p.writes
	p.writes = nil
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

// sanitize keeps a client-given name printable and short.
func sanitize(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 32 || r == 127 {
			return -1
		}
		return r
	}, s)
	if len(s) > 64 {
		s = s[:64]
	}
	if s == "" {
		return "an unnamed client"
	}
	return s
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
		return nil
	}
	// A change log that cannot be stored (its stream has no leader for a
	// few seconds after a cluster lost a server, or no quorum) is
	// reported once when it starts and once when it ends, not per record
	// or cycle.
	if err := p.publishLog(200 * time.Millisecond); err != nil {
		if p.logDown.IsZero() {
			p.logDown, p.logWhy = time.Now(), err
			p.h.Warn("nats-log", "the change log cannot be stored for now (%v): changes wait in the host's log, and their requesters for the outcome, until it can", err)
		}
	} else if !p.logDown.IsZero() {
		p.h.Warn("nats-log-back", "the change log is stored again after %v; %d change(s) stored in all", time.Since(p.logDown).Round(time.Millisecond), p.published)
		p.logDown, p.logWhy = time.Time{}, nil
	}
	if len(p.unpublished) == 0 {
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
		d.Sensors = append(d.Sensors, describeSensor{Name: se.Name, Type: se.Type, Kind: sensorKinds[se.Type], At: se.At,
			Subject: subject(p.name, "sensor."+se.Name), RateHz: rate})
	}
	return d
}

// createStream deletes the scene's change-log stream and creates it
// anew, on file storage where the server offers it (a server restarted
// with its store keeps it), else in memory; in memory on a server this
// process embeds. On a cluster it has Limits.Replicas replicas (by
// default 3 where the cluster has three or more servers): where the
// default cannot be had (a server of the cluster is down), the stream
// gets one and the host says so.
func (p *Publisher) createStream(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := p.js.DeleteStream(ctx, streamName(p.name)); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("natsipc: removing the previous change log: %w", err)
	}
	cfg := jetstream.StreamConfig{
		Name: streamName(p.name), Subjects: []string{subject(p.name, "log")},
		Storage: jetstream.FileStorage, Discard: jetstream.DiscardNew,
		MaxConsumers: p.limits.Consumers,
		Replicas:     p.limits.Replicas,
		// Records published twice (a retry after an acknowledgement
		// lost in a failover) are dropped by their Nats-Msg-Id for this
		// long; longer outages are covered by checkStream, which counts.
		Duplicates: 10 * time.Minute,
	}
	auto := cfg.Replicas <= 0
	if auto {
		cfg.Replicas = 1
		if ClusterSize(p.nc) >= 3 {
			cfg.Replicas = 3
		}
	}
	if _, ok := embedded.Load(p.nc.ConnectedServerId()); ok {
		cfg.Storage = jetstream.MemoryStorage // the server lives and dies with this process
	}
	_, err := p.js.CreateStream(ctx, cfg)
	if err != nil && auto && cfg.Replicas > 1 && ctx.Err() == nil {
		why := err
		cfg.Replicas = 1
		if _, err = p.js.CreateStream(ctx, cfg); err == nil {
			p.h.Warn("nats-replicas", "the change log has one replica, not 3 (%v): it does not survive the loss of its server; --replicas 3 insists", why)
		}
	}
	if err != nil && ctx.Err() == nil && cfg.Storage == jetstream.FileStorage {
		cfg.Storage = jetstream.MemoryStorage
		_, err = p.js.CreateStream(ctx, cfg)
	}
	if err != nil {
		return fmt.Errorf("natsipc: creating the change-log stream (%d replicas): %w", cfg.Replicas, err)
	}
	p.storage, p.replicas, p.published = cfg.Storage, cfg.Replicas, 0
	return nil
}

// ClusterSize is how many servers the server nc is connected to knows in
// its cluster: 1 for a server in no cluster, else the servers the
// connection knows (those of its URL list and those the cluster
// advertises to clients, INFO connect_urls), counted once per address.
func ClusterSize(nc *nats.Conn) int {
	if nc.ConnectedClusterName() == "" {
		return 1
	}
	seen := map[string]bool{}
	for _, s := range nc.Servers() {
		u, err := url.Parse(s)
		if err != nil {
			continue
		}
		seen[u.Host] = true
	}
	return max(1, len(seen))
}

// Replicas is how many servers keep the change-log stream.
func (p *Publisher) Replicas() int { return p.replicas }

// Storage is where the server keeps the change-log stream.
func (p *Publisher) Storage() jetstream.StorageType { return p.storage }

// checkStream runs on the host's goroutine after the connection to the
// server was lost: it reports the outage once, and when the server is back
// makes sure the stream still holds every record published, recreating it
// from the host's own log if not (a server restarted without its store,
// or one that lost it), then reports the recovery.
func (p *Publisher) checkStream() {
	p.outageMu.Lock()
	lostAt, why, warned := p.lostAt, p.lostWhy, p.warnedAt
	if !lostAt.IsZero() && warned.IsZero() {
		p.warnedAt = time.Now()
	}
	p.outageMu.Unlock()
	if !lostAt.IsZero() && warned.IsZero() {
		p.h.Warn("nats-lost", "lost the NATS server (%v); values, changes and sensor frames wait until it is back", why)
	}
	if !p.nc.IsConnected() || !p.recheck.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	what := "intact"
	st, err := p.js.Stream(ctx, streamName(p.name))
	var info *jetstream.StreamInfo
	if err == nil {
		info, err = st.Info(ctx)
	}
	switch {
	case err == nil && info.State.Msgs == info.State.LastSeq && info.State.Msgs >= p.published &&
		info.State.Msgs-p.published <= uint64(len(p.unpublished)):
		// Every record acknowledged is there; records after them were
		// stored but their acknowledgements lost with the server: they
		// are not published again.
		extra := info.State.Msgs - p.published
		p.unpublished = p.unpublished[extra:]
		p.published += extra
	case err == nil || errors.Is(err, jetstream.ErrStreamNotFound):
		// Gone or short: the host's own log has every record.
		lost := p.published
		if err == nil {
			lost -= min(lost, info.State.Msgs)
		}
		if err := p.createStream(time.Second); err != nil {
			p.h.Warn("nats-stream", "the NATS server lost the change log and it could not be recreated yet: %v", err)
			return
		}
		var all ipc.LogCursor
		recs, err := p.h.Region.ReadLog(&all)
		if err != nil {
			p.h.Warn("nats-stream", "reading the host's change log: %v", err)
			return
		}
		p.logCur, p.unpublished = all, recs
		what = fmt.Sprintf("recreated (%d of its records were lost), refilled with %d records from the host's log", lost, len(recs))
	default:
		return // JetStream not ready yet: the next cycle asks again
	}
	p.recheck.Store(false)
	p.outageMu.Lock()
	backAt, backTo := p.backAt, p.backTo
	p.lostAt, p.warnedAt = time.Time{}, time.Time{}
	p.outageMu.Unlock()
	if backAt.Before(lostAt) {
		backAt = time.Now()
	}
	if !lostAt.IsZero() {
		p.h.Warn("nats-back", "the NATS server is back after %v (%s); the change-log stream is %s", backAt.Sub(lostAt).Round(time.Millisecond), backTo, what)
	} else if what != "intact" {
		p.h.Warn("nats-back", "the change-log stream was %s", what)
	}
}

// publishLog copies the shared-memory change log's new records into the
// stream, in order, each stored before the next. At attach time a failure
// is an error; later, records that could not be stored (the server is
// unreachable) wait for the next cycle, with a warning, so that the host's
// cycle is held up by at most a short timeout and no record is skipped.
func (p *Publisher) publishLog(timeout time.Duration) error {
	recs, err := p.h.Region.ReadLog(&p.logCur)
	if err != nil {
		return err
	}
	p.unpublished = append(p.unpublished, recs...)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for len(p.unpublished) > 0 {
		rec := p.unpublished[0]
		p.filesMu.Lock()
		if p.files == nil {
			p.files = map[string]map[string]bool{}
		}
		for _, f := range rec.Files {
			if p.files[rec.Dir] == nil {
				p.files[rec.Dir] = map[string]bool{}
			}
			p.files[rec.Dir][f.Path] = true
		}
		p.filesMu.Unlock()
		m := logMsg(p.name, p.epoch, rec)
		// A retry of a record whose acknowledgement was lost (the server
		// died after storing it) carries the same Nats-Msg-Id: the stream
		// acknowledges it again without storing it twice.
		ack, err := p.js.PublishMsg(ctx, m)
		if err != nil {
			if errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) {
				p.recheck.Store(true) // the stream is gone
			}
			return fmt.Errorf("natsipc: publishing change %d: %w", rec.Seq, err)
		}
		if ack.Sequence != rec.Seq {
			// Stream sequence i holds record i: another stream, or one
			// that lost records. checkStream recreates it.
			p.recheck.Store(true)
			return fmt.Errorf("natsipc: change %d was stored as stream message %d", rec.Seq, ack.Sequence)
		}
		p.published++
		p.unpublished = p.unpublished[1:]
	}
	return nil
}

// logMsg is a change-log record as the stream holds it. Its message id
// lets JetStream drop a record published twice (a retry after a lost
// acknowledgement).
func logMsg(name string, epoch uint64, rec ipc.LogRecord) *nats.Msg {
	m := nats.NewMsg(subject(name, "log"))
	m.Header.Set(hdrEpoch, strconv.FormatUint(epoch, 10))
	m.Header.Set(hdrSeq, strconv.FormatUint(rec.Seq, 10))
	m.Header.Set(hdrSource, rec.Source)
	m.Header.Set(hdrDir, rec.Dir)
	if len(rec.Files) > 0 {
		files, _ := json.Marshal(rec.Files)
		m.Header.Set(hdrFiles, string(files))
	}
	m.Header.Set("Nats-Msg-Id", fmt.Sprintf("%d-%d", epoch, rec.Seq))
	m.Data = []byte(rec.XML)
	return m
}

// ErrFrameTooBig is a sensor frame larger than MaxFrameBytes, or one whose
// description alone does not fit a message: the frame is not published.
var ErrFrameTooBig = errors.New("sensor frame larger than the NATS server's message limit")

// fileChunk bounds a file reply, well under the server's message limit.
const fileChunk = 512 << 10

// fileRequest asks for part of a file in one of the log's directories.
type fileRequest struct {
	Dir    string `json:"dir"`
	Path   string `json:"path"` // relative, slash-separated
	Offset int64  `json:"offset"`
}

// onFile serves model files to mirrors on other machines: only the files
// that logged commands loaded (their records' file lists), only where they
// stay inside the record's directory (symbolic links included), at most
// fileChunk bytes a reply.
func (p *Publisher) onFile(m *nats.Msg) {
	reply := nats.NewMsg(m.Reply)
	fail := func(format string, args ...any) {
		reply.Header.Set(hdrError, fmt.Sprintf(format, args...))
		m.RespondMsg(reply)
	}
	var req fileRequest
	if err := json.Unmarshal(m.Data, &req); err != nil {
		fail("bad file request: %v", err)
		return
	}
	p.filesMu.Lock()
	known := p.files[req.Dir][req.Path]
	p.filesMu.Unlock()
	rel := filepath.FromSlash(req.Path)
	if !known {
		fail("%s in %s is not a file the scene's logged commands loaded", req.Path, req.Dir)
		return
	}
	if !filepath.IsLocal(rel) {
		fail("%q leaves the scene's directory", req.Path)
		return
	}
	path := filepath.Join(req.Dir, rel)
	real, err := filepath.EvalSymlinks(path)
	base, berr := filepath.EvalSymlinks(req.Dir)
	if err != nil || berr != nil {
		fail("%s: not found", req.Path)
		return
	}
	if r, err := filepath.Rel(base, real); err != nil || !filepath.IsLocal(r) {
		fail("%q leads out of the scene's directory", req.Path)
		return
	}
	if req.Offset < 0 {
		fail("%s: negative offset %d", req.Path, req.Offset)
		return
	}
	// Opened without blocking and checked on the descriptor: a FIFO
	// would otherwise stall this handler, and every later file request,
	// for good. Replies are chunked, so any size can be served.
	f, size, err := models.OpenRegular(real, -1)
	if err != nil {
		if errors.Is(err, models.ErrNotRegular) {
			// Without the host's path, which is not the client's to know.
			fail("%s: %s", req.Path, strings.TrimPrefix(err.Error(), real+": "))
		} else {
			fail("%s: %v", req.Path, errors.Unwrap(err))
		}
		return
	}
	defer f.Close()
	buf := make([]byte, min(fileChunk, max(0, size-req.Offset)))
	n, err := f.ReadAt(buf, req.Offset)
	if err != nil && err != io.EOF {
		fail("%s: %v", req.Path, err)
		return
	}
	reply.Header.Set(hdrSize, strconv.FormatInt(size, 10))
	reply.Data = buf[:n]
	m.RespondMsg(reply)
}

// PublishSensor publishes one sensor frame on simvis.NAME.sensor.SENSOR
// (NATS.md): scans and PSD readings as their JSON, images, depth and
// clouds as binary data with their JSON description in a header. A frame
// larger than the server's message limit goes out in chunks that
// consumers reassemble (Assembler). Call it from the host's goroutine.
func (p *Publisher) PublishSensor(sensor, kind string, info, data []byte) error {
	if !p.nc.IsConnected() {
		return fmt.Errorf("natsipc: not connected to the NATS server (%v)", p.nc.Status())
	}
	switch kind {
	case "scan":
		info = withTooClose(info, "[]")
	case "psd":
		info = withTooClose(info, "false")
	}
	payload, header := data, info
	if len(data) == 0 {
		payload, header = info, nil // the JSON kinds: the description is the frame
	}
	if len(payload) > MaxFrameBytes {
		return fmt.Errorf("%w: a %s frame of %d bytes, at most %d", ErrFrameTooBig, kind, len(payload), MaxFrameBytes)
	}
	// Headers count against the server's limit too: room for them.
	room := int(p.nc.MaxPayload()) - len(header) - chunkHeaderRoom
	if room < minChunk {
		return fmt.Errorf("%w: a %s frame's description of %d bytes leaves no room under the server's limit of %d", ErrFrameTooBig, kind, len(header), p.nc.MaxPayload())
	}
	if p.frames == nil {
		p.frames = map[string]uint64{}
	}
	p.frames[sensor]++
	n := max(1, (len(payload)+room-1)/room)
	for i := 0; i < n; i++ {
		m := nats.NewMsg(subject(p.name, "sensor."+sensor))
		m.Header.Set(hdrEpoch, strconv.FormatUint(p.epoch, 10))
		m.Header.Set(hdrKind, kind)
		if header != nil {
			m.Header.Set(hdrInfo, string(header))
		}
		if n > 1 {
			m.Header.Set(hdrChunk, fmt.Sprintf("%d/%d", i, n))
			m.Header.Set(hdrFrame, strconv.FormatUint(p.frames[sensor], 10))
			m.Header.Set(hdrSize, strconv.Itoa(len(payload)))
		}
		m.Data = payload[i*room : min(len(payload), (i+1)*room)]
		if err := p.nc.PublishMsg(m); err != nil {
			return fmt.Errorf("natsipc: chunk %d of %d: %w", i+1, n, err)
		}
	}
	return nil
}

// withTooClose gives a scan's or PSD reading's JSON its too_close field
// even when it is empty or false, so that consumers find every field
// NATS.md lists.
func withTooClose(scan []byte, empty string) []byte {
	var fields map[string]json.RawMessage
	if json.Unmarshal(scan, &fields) != nil {
		return scan
	}
	if _, ok := fields["too_close"]; ok {
		return scan
	}
	fields["too_close"] = json.RawMessage(empty)
	out, err := json.Marshal(fields)
	if err != nil {
		return scan
	}
	return out
}

// Frame sizes: a frame is at most MaxFrameBytes; chunks leave
// chunkHeaderRoom bytes of a message for headers besides the description.
const (
	MaxFrameBytes   = 256 << 20
	chunkHeaderRoom = 1024
	minChunk        = 4096
)

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
