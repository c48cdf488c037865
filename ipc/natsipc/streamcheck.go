package natsipc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/simvis/simvis/ipc"
)

// After a reconnection (or a record stored out of its place) the host
// looks at its change-log stream, and recreates it where it was lost.
// Both run off the host's goroutine: during a JetStream leader election a
// request goes unanswered until its timeout, which the host's cycle must
// not wait for. At most one is under way; a later cycle takes its answer
// (checkStream), so that the host's state changes on its own goroutine
// only.
const (
	lookTimeout   = 2 * time.Second        // a look at the stream
	remakeTimeout = 2 * time.Second        // deleting and creating it
	lookEvery     = 100 * time.Millisecond // between the starts of two looks or remakes
	// confirmGone is how long after a first "no such stream" (one the
	// list of streams agrees with: listedGone) a second look must say so
	// too before the host recreates it: a cluster in the middle of an
	// election may answer so for a stream it has, and a recreation would
	// cost the stream its replicas where a server is down.
	confirmGone = time.Second
)

// checkResult is the answer of a look (info, err) or of a remake (made,
// err), for the run epoch it was asked for.
type checkResult struct {
	epoch  uint64
	remake bool
	info   *jetstream.StreamInfo
	last   *jetstream.RawStreamMsg // a look: the stream's last message, if any
	made   streamMade
	lost   uint64 // remake: records the stream had lost
	err    error
}

// checkStream runs on the host's goroutine every cycle: it follows a
// removal's new run, reports a lost server once, and after a
// reconnection (recheck) starts a look at the stream, or takes its
// answer: every record published is there (records stored whose
// acknowledgements were lost count as published), or the stream is
// recreated from the host's own log (a server restarted without its
// store, or one that lost it); then the recovery is reported, once.
func (p *Publisher) checkStream() {
	p.followRun()
	p.outageMu.Lock()
	lostAt, why, warned := p.lostAt, p.lostWhy, p.warnedAt
	if !lostAt.IsZero() && warned.IsZero() {
		p.warnedAt = time.Now()
	}
	p.outageMu.Unlock()
	if !lostAt.IsZero() && warned.IsZero() {
		p.h.Warn("nats-lost", "lost the NATS server (%v); values, changes and sensor frames wait until it is back", why)
	}
	if p.check != nil {
		select {
		case r := <-p.check:
			p.check = nil
			p.checked(r)
		default:
		}
		return
	}
	if !p.nc.IsConnected() || !p.recheck.Load() || time.Since(p.checkAt) < lookEvery {
		return
	}
	// Taken now: a reconnection or a record out of place while the look
	// is under way asks for another.
	p.recheck.Store(false)
	p.checkFrom = p.published
	js, name, logSubj, epoch := p.js, streamName(p.name), subject(p.name, "log"), p.epoch
	p.startCheck(func() checkResult {
		ctx, cancel := context.WithTimeout(context.Background(), lookTimeout)
		defer cancel()
		r := checkResult{epoch: epoch}
		var st jetstream.Stream
		if st, r.err = js.Stream(ctx, name); r.err == nil {
			r.info = st.CachedInfo()
			if r.info.State.LastSeq > 0 {
				r.last, r.err = st.GetMsg(ctx, r.info.State.LastSeq)
			}
		} else if errors.Is(r.err, jetstream.ErrStreamNotFound) {
			r.err = listedGone(ctx, js, name, logSubj)
		}
		return r
	})
}

// listedGone asks the server that keeps the list of streams (a
// cluster's meta leader) whether stream name is gone: a server that is
// one of the stream's replicas but has not loaded it yet (restarted a
// moment ago) answers "no such stream" while the replicas have no leader.
// It returns jetstream.ErrStreamNotFound only where the list agrees.
func listedGone(ctx context.Context, js jetstream.JetStream, name, subj string) error {
	names := js.StreamNames(ctx, jetstream.WithStreamListSubject(subj))
	for n := range names.Name() {
		if n == name {
			return fmt.Errorf("natsipc: stream %s is listed, though a server did not find it", name)
		}
	}
	if err := names.Err(); err != nil {
		return fmt.Errorf("natsipc: listing the streams: %w", err)
	}
	return jetstream.ErrStreamNotFound
}

// startCheck runs job off the host's goroutine; checkStream takes its
// answer.
func (p *Publisher) startCheck(job func() checkResult) {
	ch := make(chan checkResult, 1)
	p.check, p.checkAt = ch, time.Now()
	go func() { ch <- job() }()
}

// waitCheck waits for the look or remake under way, if any, and drops its
// answer: for a removal's new run, which makes its stream itself.
func (p *Publisher) waitCheck() {
	if p.check != nil {
		<-p.check
		p.check, p.remaking = nil, false
	}
}

// checked takes the answer of a look or a remake, on the host's goroutine.
// Records were published meanwhile (during a look, not a remake): those
// acknowledged were by the stream looked at, so a stream holding at least
// the records published when the look started is intact.
func (p *Publisher) checked(r checkResult) {
	if r.remake {
		p.remade(r)
		return
	}
	if r.epoch != p.epoch || !p.nc.IsConnected() {
		// Another run's stream, or a server gone since: look again
		// (once reconnected).
		p.recheck.Store(true)
		return
	}
	info, err := r.info, r.err
	total := p.published + uint64(len(p.unpublished))
	switch {
	case err == nil && info.State.Msgs == info.State.LastSeq && info.State.Msgs >= p.checkFrom && info.State.Msgs <= total && p.isLast(r.last, info.State.LastSeq):
		// Every record acknowledged is there; records after them were
		// stored but their acknowledgements lost with the server: they
		// are not published again.
		if extra := info.State.Msgs - min(info.State.Msgs, p.published); extra > 0 {
			p.unpublished = p.unpublished[extra:]
			p.published += extra
		}
		p.goneAt = time.Time{}
		p.settled("intact")
	case err == nil && info.Cluster != nil && info.Cluster.Leader == "":
		// A replica answering while the replicas have no leader (one
		// restarted a moment ago, not caught up yet): short is not
		// believed; the leader, once there, is asked.
		p.recheck.Store(true)
	case err == nil || errors.Is(err, jetstream.ErrStreamNotFound):
		// Gone or short: the host's own log has every record.
		lost := p.published
		if err == nil {
			lost -= min(lost, info.State.Msgs)
		} else if p.goneAt.IsZero() || time.Since(p.goneAt) < confirmGone {
			if p.goneAt.IsZero() {
				p.goneAt = time.Now()
			}
			p.recheck.Store(true) // believed once confirmed
			return
		}
		p.goneAt = time.Time{}
		p.remakeStream(lost, err == nil)
	default:
		p.recheck.Store(true) // JetStream not ready yet: look again
	}
}

// isLast tells whether m, the stream's message seq, holds record seq of
// this run (none: an empty stream). A stream whose records are not where
// their numbers say (a copy of a record stored after the stream was
// recreated) is recreated rather than taken as intact.
func (p *Publisher) isLast(m *jetstream.RawStreamMsg, seq uint64) bool {
	if m == nil {
		return seq == 0
	}
	return m.Header.Get(hdrSeq) == strconv.FormatUint(seq, 10) && m.Header.Get(hdrEpoch) == strconv.FormatUint(p.epoch, 10)
}

// storedInPlace is told that a record was stored where its number says:
// the stream holds every record before it (stream sequence i holds record
// i), which is what a look asks. After a reconnection this settles the
// outage without the look, whose request a cluster may leave unanswered
// for seconds after electing a new leader (nats-server 2.9.10 answered a
// stream's records for 10 s and more before its info, measured in
// TestClusterServerKilled).
func (p *Publisher) storedInPlace() {
	if !p.recheck.Load() && p.check == nil {
		return
	}
	p.recheck.Store(false)
	p.check = nil // the look under way is left to finish unread
	p.goneAt = time.Time{}
	p.settled("intact")
}

// remakeStream recreates the change-log stream off the host's goroutine,
// after deleting it if it is there (short): until it is made records
// and request outcomes wait (after).
func (p *Publisher) remakeStream(lost uint64, drop bool) {
	p.remaking, p.probe = true, nil // the probe's record is sent again
	epoch := p.epoch
	p.startCheck(func() checkResult {
		made, err := p.makeStream(remakeTimeout, drop)
		return checkResult{epoch: epoch, remake: true, made: made, lost: lost, err: err}
	})
}

// remade takes a remade stream as the change log and refills it from the
// host's own log, from its first record.
func (p *Publisher) remade(r checkResult) {
	p.remaking = false
	if r.err != nil {
		p.h.Warn("nats-stream", "the NATS server lost the change log and it could not be recreated yet: %v", r.err)
		p.recheck.Store(true)
		return
	}
	p.madeStream(r.made)
	var all ipc.LogCursor
	recs, err := p.h.Region.ReadLog(&all)
	if err != nil {
		p.h.Warn("nats-stream", "reading the host's change log: %v", err)
		p.recheck.Store(true)
		return
	}
	p.logCur, p.unpublished = all, recs
	p.settled(fmt.Sprintf("recreated (%d of its records were lost), refilled with %d records from the host's log", r.lost, len(recs)))
}

// settled reports the end of an outage once, with what became of the
// stream (what).
func (p *Publisher) settled(what string) {
	p.probe = nil // counted, or to be sent again
	p.outageMu.Lock()
	lostAt, backAt, backTo := p.lostAt, p.backAt, p.backTo
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
