package natsipc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/simvis/simvis/ipc"
)

// SweepEvery is how often a host looks for durable consumers on its
// change log (a viewer may create them; they would outlive it) and removes
// them.
var SweepEvery = 2 * time.Second

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

// createStream deletes the scene's change-log stream and creates it
// anew (makeStream), on the host's goroutine: at Publish and for a
// removal's new run.
func (p *Publisher) createStream(timeout time.Duration) error {
	made, err := p.makeStream(timeout, true)
	if err != nil {
		return err
	}
	p.madeStream(made)
	return nil
}

// streamMade is what makeStream made: the host takes it on its own
// goroutine (madeStream).
type streamMade struct {
	storage  jetstream.StorageType
	replicas int
	why1     error // why the stream has one replica, not the default 3
}

// madeStream takes a stream makeStream made as the change log, empty.
func (p *Publisher) madeStream(m streamMade) {
	p.storage, p.replicas, p.published = m.storage, m.replicas, 0
	if m.why1 != nil {
		p.h.Warn("nats-replicas", "the change log has one replica, not 3 (%v): it does not survive the loss of its server; --replicas 3 insists", m.why1)
	}
}

// makeStream creates the scene's change-log stream, after deleting the
// one there if drop (a new host run starts a new log: readers of the old
// stream notice its deletion and the new epoch), on file storage where
// the server offers it (a server restarted with its store keeps it), else
// in memory; in memory on a server this process embeds. On a cluster it
// has Limits.Replicas replicas (by default 3 where the cluster has three
// or more servers): where the default cannot be had (a server of the
// cluster is down), the stream gets one and the host says so. It touches
// no state of the host's: it also runs off the host's goroutine
// (remakeStream).
func (p *Publisher) makeStream(timeout time.Duration, drop bool) (streamMade, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if drop {
		err := jsCall(ctx, func(c context.Context) error { return p.js.DeleteStream(c, streamName(p.name)) })
		if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return streamMade{}, fmt.Errorf("natsipc: removing the previous change log: %w", err)
		}
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
	var made streamMade
	create := func() error {
		return jsCall(ctx, func(c context.Context) error { _, err := p.js.CreateStream(c, cfg); return err })
	}
	err := create()
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		// Not dropped, and there after all (with another configuration):
		// the caller looks at it again.
		return streamMade{}, fmt.Errorf("natsipc: creating the change-log stream: %w", err)
	}
	// A cluster that is still forming (its servers just started) has
	// JetStream answering before its meta leader knows every server:
	// three replicas cannot be placed yet, and will be in a moment.
	// Asked again for half the time given before settling for one.
	for err != nil && auto && cfg.Replicas > 1 && ctx.Err() == nil && time.Since(start) < timeout/2 {
		time.Sleep(250 * time.Millisecond)
		err = create()
	}
	if err != nil && auto && cfg.Replicas > 1 && ctx.Err() == nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		why := err
		cfg.Replicas = 1
		if err = create(); err == nil {
			made.why1 = why
		}
	}
	if err != nil && ctx.Err() == nil && cfg.Storage == jetstream.FileStorage {
		cfg.Storage = jetstream.MemoryStorage
		err = create()
	}
	if err != nil {
		return streamMade{}, fmt.Errorf("natsipc: creating the change-log stream (%d replicas): %w", cfg.Replicas, err)
	}
	made.storage, made.replicas = cfg.Storage, cfg.Replicas
	return made, nil
}

// jsLeaderWait spaces the first record's tries while a stream just made
// has no leader.
const jsLeaderWait = 100 * time.Millisecond

// leaderRetry has the NATS library send a record again every jsLeaderWait
// for as long as timeout while no stream answers: a stream the host has
// just made, with nothing in it that a copy could land behind, elects
// its leader (the same Nats-Msg-Id keeps it stored once).
func leaderRetry(timeout time.Duration) []jetstream.PublishOpt {
	return []jetstream.PublishOpt{jetstream.WithRetryAttempts(int(timeout / jsLeaderWait)), jetstream.WithRetryWait(jsLeaderWait)}
}

// jsAttempt is how long one JetStream API request of the change log's
// setup waits for its answer before it is sent again.
const jsAttempt = 2 * time.Second

// jsCall runs a JetStream API call, sent again after jsAttempt without an
// answer while ctx allows: a cluster electing its meta leader (a server
// just restarted) answers a request sent meanwhile never, and one such
// request must not spend all the time a host has to start.
func jsCall(ctx context.Context, call func(context.Context) error) error {
	for {
		try, cancel := context.WithTimeout(ctx, jsAttempt)
		err := call(try)
		cancel()
		if err == nil || !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return err
		}
	}
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

// publishLog copies the shared-memory change log's new records into the
// stream, in order, each stored before the next. At attach time (fresh:
// the stream was just made) a failure is an error, but a stream that
// answers nothing yet is sent to again until the timeout: on a cluster a
// stream just made elects its leader a moment after its creation was
// acknowledged. Later, records that could not be stored (the server is
// unreachable) wait for the next cycle, with a warning, so that the host's
// cycle is held up by at most a short timeout and no record is skipped.
func (p *Publisher) publishLog(timeout time.Duration, fresh bool) error {
	if err := p.readLog(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	retry := []jetstream.PublishOpt{noRetry}
	if fresh {
		retry = leaderRetry(timeout)
	}
	for len(p.unpublished) > 0 {
		rec := p.unpublished[0]
		p.serveFiles(rec)
		m := logMsg(p.name, p.epoch, rec)
		// A retry of a record whose acknowledgement was lost (the server
		// died after storing it) carries the same Nats-Msg-Id: the stream
		// acknowledges it again without storing it twice.
		ack, err := p.js.PublishMsg(ctx, m, retry...)
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
		p.storedInPlace()
	}
	return nil
}

// readLog takes the shared-memory change log's new records into those
// waiting to be stored.
func (p *Publisher) readLog() error {
	recs, err := p.h.Region.ReadLog(&p.logCur)
	if err != nil {
		return err
	}
	p.unpublished = append(p.unpublished, recs...)
	return nil
}

// serveFiles adds the files a record's command loaded to those served.
func (p *Publisher) serveFiles(rec ipc.LogRecord) {
	p.filesMu.Lock()
	defer p.filesMu.Unlock()
	if p.files == nil {
		p.files = map[string]map[string]bool{}
	}
	for _, f := range rec.Files {
		if p.files[rec.Dir] == nil {
			p.files[rec.Dir] = map[string]bool{}
		}
		p.files[rec.Dir][f.Path] = true
	}
}

// probeEvery spaces the records storeLog sends while the change log
// cannot be stored.
const probeEvery = 250 * time.Millisecond

// storeLog stores the new change-log records, each cycle, waiting at most
// 200 ms. Once that failed (the stream has no leader, or no quorum: two
// servers of three down, for as long as they are), waiting every cycle
// would hold the host's cycle to a few a second: until the log can be
// stored again the first record waiting is sent without waiting, and its
// acknowledgement looked for in later cycles; once it came the others
// follow as before. A record sent twice is stored once (Nats-Msg-Id).
func (p *Publisher) storeLog() error {
	if p.logDown.IsZero() {
		return p.publishLog(200*time.Millisecond, false)
	}
	if err := p.readLog(); err != nil {
		return err
	}
	if p.probe != nil {
		select {
		case ack := <-p.probe.Ok():
			p.probe = nil
			if len(p.unpublished) == 0 || ack.Sequence != p.unpublished[0].Seq {
				// Another stream, or one that lost records: checkStream
				// recreates it.
				p.recheck.Store(true)
				return fmt.Errorf("natsipc: a change was stored as stream message %d, not in its place", ack.Sequence)
			}
			p.published++
			p.unpublished = p.unpublished[1:]
			p.storedInPlace()
			return p.publishLog(200*time.Millisecond, false)
		case err := <-p.probe.Err():
			p.probe = nil
			if errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) {
				p.recheck.Store(true)
			}
			return err
		default:
			return p.logWhy
		}
	}
	if len(p.unpublished) == 0 || time.Since(p.probeAt) < probeEvery {
		return p.logWhy
	}
	rec := p.unpublished[0]
	p.serveFiles(rec)
	f, err := p.js.PublishMsgAsync(logMsg(p.name, p.epoch, rec), noRetry)
	if err != nil {
		return err
	}
	p.probe, p.probeAt = f, time.Now()
	return p.logWhy
}

// noRetry keeps a record's publication from being sent again by the
// NATS library when no stream answers (it does so twice, 250 ms apart, by
// default): a copy sent again after the host recreated the stream would
// land in it out of its place. The host sends records again itself.
var noRetry = jetstream.WithRetryAttempts(0)

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
