package natsipc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/simvis/simvis/ipc"
)

// JetStreamPatience is how long a client waits for JetStream to answer
// (a cluster electing new leaders after losing a server takes seconds)
// before it reports the change log unavailable.
var JetStreamPatience = 30 * time.Second

// jsUnavailable tells a JetStream that does not answer now (no leader,
// no quorum yet) from errors waiting does not cure.
func jsUnavailable(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		// 503: "JetStream system temporarily unavailable", no leader yet.
		return apiErr.Code == 503 || apiErr.Code == 408
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, nats.ErrNoResponders)
}

// follow reads the change log from record from on, with an ordered
// consumer (stream sequence i holds record i: the host creates the stream
// for its run and stores each record once).
func (c *Conn) follow(ctx context.Context, from uint64) (*jetstream.StreamInfo, error) {
	stream, err := c.js.Stream(ctx, streamName(c.name))
	if err != nil {
		return nil, fmt.Errorf("natsipc: the change log: %w", err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("natsipc: the change log: %w", err)
	}
	cfg := jetstream.OrderedConsumerConfig{}
	if from > 1 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, from
	}
	cons, err := stream.OrderedConsumer(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("natsipc: following the change log: %w", err)
	}
	// Heartbeats every second: a consumer lost with its server (on a
	// cluster, the consumer lives on the stream's leader, which need not
	// be this client's server) is noticed within 2 s and the ordered
	// consumer made again from the next record (by default, only after
	// a minute).
	cc, err := cons.Consume(c.onLog, jetstream.PullExpiry(5*time.Second), jetstream.PullHeartbeat(time.Second), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		if errors.Is(err, nats.ErrConnectionReconnecting) || !c.nc.IsConnected() {
			return // the server is away: the reconnection follows again
		}
		// A missed heartbeat on a live connection: the consumer was lost
		// with another server of a cluster (the stream's leader). The
		// ordered consumer tries to make itself anew, but may hold on to
		// the lost leader; following again from the next record does not
		// depend on it.
		// The consumer or its stream is gone (a server restart without
		// its store, the host refilling the stream): follow again from
		// the next record.
		go c.refollow()
	}))
	if err != nil {
		return nil, fmt.Errorf("natsipc: following the change log: %w", err)
	}
	c.followMu.Lock()
	if c.consume != nil {
		stopConsuming(c.consume)
	}
	c.consume = cc
	c.followMu.Unlock()
	return info, nil
}

// stopConsuming stops a consumer of the change log without waiting for
// it: an ordered consumer that missed its heartbeat holds its lock while
// it tries to make itself anew on a server that may be out of reach (a
// cut link), and a mirror stopping it to reopen would hang with it. Its
// deliveries after this point go to a log the client no longer reads from
// it (follow starts the next one from the records it has).
func stopConsuming(cc jetstream.ConsumeContext) { go cc.Stop() }

// refollow follows the change log again from the next record after the
// server came back, trying for 30 s before it reports the log broken.
func (c *Conn) refollow() {
	if !c.refollowing.CompareAndSwap(false, true) {
		return
	}
	defer c.refollowing.Store(false)
	c.followMu.Lock()
	if c.consume != nil {
		stopConsuming(c.consume)
		c.consume = nil
	}
	c.followMu.Unlock()
	deadline := time.Now().Add(JetStreamPatience)
	for !c.closed.Load() {
		c.mu.Lock()
		from := uint64(len(c.log)) + 1
		c.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.follow(ctx, from)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.mu.Lock()
			c.logErr = err
			c.mu.Unlock()
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// logCheckEvery is how long a client goes without a record before it asks
// the stream whether it holds records the client lacks (watchLog).
var logCheckEvery = 5 * time.Second

// watchLog follows the log again where the stream holds records this
// client lacks and none arrived for logCheckEvery: a consumer can go
// silent with no error from the NATS library (seen when a robot's leaf
// node moved to another cluster server after two were killed,
// TestLeafNodeLinkCut), and a change would then never arrive. One stream
// info request per quiet interval.
func (c *Conn) watchLog() {
	t := time.NewTicker(logCheckEvery)
	defer t.Stop()
	for range t.C {
		if c.closed.Load() {
			return
		}
		c.mu.Lock()
		have, quiet, replaced := uint64(len(c.log)), time.Since(c.logAt) >= logCheckEvery, c.replaced
		c.mu.Unlock()
		if !quiet || replaced || c.refollowing.Load() || !c.nc.IsConnected() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		st, err := c.js.Stream(ctx, streamName(c.name))
		cancel()
		if err == nil && st.CachedInfo().State.LastSeq > have {
			go c.refollow()
		}
	}
}

func (c *Conn) onLog(m jetstream.Msg) {
	h := m.Headers()
	epoch, _ := strconv.ParseUint(h.Get(hdrEpoch), 10, 64)
	seq, _ := strconv.ParseUint(h.Get(hdrSeq), 10, 64)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.logAt = time.Now()
	if epoch != c.epoch {
		c.replaced = c.replaced || epoch > c.epoch
		return
	}
	if seq >= 1 && seq <= uint64(len(c.log)) {
		// Again, after the stream was refilled or a consumer restarted.
		return
	}
	if seq != uint64(len(c.log))+1 {
		c.logErr = fmt.Errorf("natsipc: change %d arrived after change %d", seq, len(c.log))
		return
	}
	files, err := ipc.DecodeFiles([]byte(h.Get(hdrFiles)))
	if err != nil {
		c.logErr = fmt.Errorf("natsipc: change %d: %w", seq, err)
		return
	}
	c.log = append(c.log, ipc.LogRecord{Seq: seq, Source: h.Get(hdrSource), Dir: h.Get(hdrDir), XML: string(m.Data()), Files: files})
}
