package natsipc

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
)

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
	if m.Reply != "" {
		// A client asking when the writes it sent so far are taken
		// (Conn.Flush): answered after the cycle that applies them,
		// once its values are published (after).
		if len(p.syncs) < p.limits.PendingRequests {
			p.syncs = append(p.syncs, m)
		} else {
			p.lookups++
		}
	}
}

// syncReply answers a set message that has a reply subject: the cycle
// whose values message is the first to show the writes sent before it,
// and whether that cycle refused values (its rejected message came
// before this reply).
type syncReply struct {
	Cycle    uint64 `json:"cycle"`
	Rejected bool   `json:"rejected,omitempty"`
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
