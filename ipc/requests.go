package ipc

import (
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Request slot fields (LAYOUT.md).
const (
	slotState   = 0  // u32, one of the slot states below
	slotPID     = 4  // u32 producer's process id
	slotSeq     = 8  // u64 request sequence number
	slotTextLen = 16 // u32 bytes of the request text
	slotOutLen  = 20 // u32 bytes of the outcome text
	slotLogSeq  = 24 // u64 change-log sequence of the executed command, 0 if refused
	slotTextCRC = 32 // u32 CRC-32 (IEEE) of the request text, as its producer meant it
	slotHeader  = 64

	// The state word's low byte is one of these; in every state but free,
	// its upper 24 bits are the low 24 bits of the request's number (see
	// tagged), and free is the whole word 0.
	slotFree      = 0 // no request, or its outcome was read
	slotWriting   = 1 // claimed; the producer writes the text
	slotReady     = 2 // the text is complete; the host will execute it
	slotOK        = 3 // executed; the outcome is empty
	slotFailed    = 4 // refused; the outcome is the error text
	slotExecuting = 5 // the host took it and is executing it
	slotCancelled = 6 // its requester gave up before the host took it
)

// tagged is the state word of request seq in state kind. The request's
// number in the word makes every compare-and-swap name the request it
// means: a party that stalled while the slot was freed and taken by a
// later request (seq + request_slots, a different tag) fails its next
// compare-and-swap instead of moving that request's state (making a
// half-written request ready, or freeing and reading another requester's
// outcome).
func tagged(seq uint64, kind uint32) uint32 { return uint32(seq)<<8 | kind }

// ErrRequestLogFull is returned to a producer when every request slot holds
// a pending request or an outcome not yet read: nothing was written.
var ErrRequestLogFull = errors.New("change-request log full")

// notTakenError is a request its host never took before it went (or its
// run was replaced), or never sent: it was not executed. It reads as the
// host's error; errors.Is finds ErrNotExecuted in it.
type notTakenError struct {
	seq uint64 // 0: not sent
	err error
}

func (e *notTakenError) Error() string { return e.err.Error() }

func (e *notTakenError) Unwrap() []error { return []error{e.err, ErrNotExecuted} }

// ErrNotExecuted marks a request's error after which the request was
// certainly not executed: its host was replaced or went before it took
// it (or before it was sent). Sending it again, to the host now at the
// name, is safe: `simvis request` does so once.
var ErrNotExecuted = errors.New("the request was not executed")

// ErrRequestCancelled is returned when a request got no outcome within the
// timeout and was cancelled before the host took it: it was never
// executed and never will be.
var ErrRequestCancelled = errors.New("request cancelled")

// RequestError is a request the host refused: bad XML, an unknown type, a
// file outside the scene's directory, a full change log, ...
type RequestError struct {
	Seq uint64 // the request's sequence number
	Msg string // the host's error text
}

func (e *RequestError) Error() string { return "request refused: " + e.Msg }

// slot is the request slot of sequence number seq (the layout cached at
// Create or Attach: never the header's current figures).
func (r *Region) slot(seq uint64) []byte {
	off := r.lay.reqOff + int(seq%uint64(r.lay.reqSlots))*r.lay.reqSize
	return r.mem[off : off+r.lay.reqSize]
}

func slot32(b []byte, at int) *uint32 { return (*uint32)(unsafe.Pointer(&b[at])) }
func slot64(b []byte, at int) *uint64 { return (*uint64)(unsafe.Pointer(&b[at])) }

func slotLoad(b []byte) uint32 { return atomic.LoadUint32(slot32(b, slotState)) }
func slotCAS(b []byte, from, to uint32) bool {
	return atomic.CompareAndSwapUint32(slot32(b, slotState), from, to)
}

// requestSource names a request in errors and in the change log.
func requestSource(seq uint64, pid uint32) string {
	return fmt.Sprintf("request %d from pid %d", seq, pid)
}

// stallSubmit and stallOutcome, when set (by tests), run inside submit
// just before the request is marked ready and inside outcome just after an
// outcome was found: a producer or requester that stalls there.
var stallSubmit, stallOutcome func(seq uint64)

// submit claims the next request slot and writes text into it. The claim is
// a compare-and-swap on request_claim, allowed only while the slot is free
// and fewer than request_slots requests are ahead of the host.
func (r *Region) submit(text string) (uint64, error) {
	n := uint64(r.lay.reqSlots)
	if room := r.lay.reqSize - slotHeader; len(text) > room {
		return 0, fmt.Errorf("request of %d bytes is larger than a request slot (%d bytes)", len(text), room)
	}
	var seq uint64
	var b []byte
	for try := 0; ; try++ {
		seq = r.get64(offReqClaim)
		b = r.slot(seq)
		if seq-r.get64(offReqDone) >= n || slotLoad(b) != slotFree {
			return 0, fmt.Errorf("%w: %d slots hold pending requests or unread outcomes", ErrRequestLogFull, n)
		}
		if atomic.CompareAndSwapUint64(r.ptr64(offReqClaim), seq, seq+1) {
			break
		}
		if try == 10000 {
			return 0, fmt.Errorf("ipc: %s: request_claim keeps changing under this producer", r.path)
		}
	}
	if !slotCAS(b, slotFree, tagged(seq, slotWriting)) {
		return 0, fmt.Errorf("request %d: the host gave up on it before it was written (not executed)", seq)
	}
	*slot32(b, slotPID) = uint32(os.Getpid())
	*slot64(b, slotSeq) = seq
	*slot32(b, slotTextLen) = uint32(len(text))
	copy(b[slotHeader:], text)
	// The checksum of the text this producer means, not of what the slot
	// holds: stray stores of a producer that stalled in its own step 3
	// past being given up on would otherwise pass for this request.
	*slot32(b, slotTextCRC) = crc32.ChecksumIEEE([]byte(text))
	if stallSubmit != nil {
		stallSubmit(seq)
	}
	if !slotCAS(b, tagged(seq, slotWriting), tagged(seq, slotReady)) {
		return 0, fmt.Errorf("request %d: the host gave up on it while it was being written, too slowly (not executed)", seq)
	}
	return seq, nil
}

// outcome waits until the host has executed request seq, reads its outcome
// and frees the slot. alive is asked between polls whether to keep waiting.
// At the deadline a request the host has not taken yet is cancelled
// (ErrRequestCancelled: never executed); one the host is executing is
// waited for, so the outcome is never in doubt.
func (r *Region) outcome(seq uint64, deadline time.Time, timeout time.Duration, alive func() error) (uint64, error) {
	b := r.slot(seq)
	checked := time.Now()
	for {
		st := slotLoad(b)
		ours := atomic.LoadUint64(slot64(b, slotSeq)) == seq
		if ours && (st == tagged(seq, slotOK) || st == tagged(seq, slotFailed)) {
			if stallOutcome != nil {
				stallOutcome(seq)
			}
			logSeq := atomic.LoadUint64(slot64(b, slotLogSeq))
			var msg string
			if st == tagged(seq, slotFailed) {
				n := min(int(atomic.LoadUint32(slot32(b, slotOutLen))), len(b)-slotHeader)
				msg = string(b[slotHeader : slotHeader+n])
			}
			// Freeing it is the proof that the outcome was still ours: the
			// host frees unread outcomes after a while.
			if !slotCAS(b, st, slotFree) {
				return r.lostOutcome(seq) // freed under us: the log tells
			}
			if st == tagged(seq, slotFailed) {
				return 0, &RequestError{Seq: seq, Msg: msg}
			}
			return logSeq, nil
		}
		if err := ctxAlive(&checked, alive); err != nil {
			if slotLoad(b) != st {
				// The host wrote the outcome just before it went, or
				// before a removal replaced its run: it is still ours.
				continue
			}
			switch {
			case ours && st == tagged(seq, slotReady) && slotCAS(b, st, tagged(seq, slotCancelled)):
				// Never taken, and now never will be.
				return 0, &notTakenError{seq, err}
			case ours && st == tagged(seq, slotExecuting) && errors.Is(err, ErrHostReplaced):
				// Its host lives and writes the outcome when done (a
				// removal replaces the run before it answers).
			default:
				return 0, err
			}
		}
		if time.Now().After(deadline) {
			switch {
			case ours && st == tagged(seq, slotReady):
				if slotCAS(b, st, tagged(seq, slotCancelled)) {
					return 0, fmt.Errorf("request %d: %w after %v without an outcome: the host never executed it (is it running cycles?)",
						seq, ErrRequestCancelled, timeout)
				}
				continue // the host took it meanwhile
			case ours && st == tagged(seq, slotExecuting):
				// The host is executing it: its outcome comes at the end.
			default:
				return r.lostOutcome(seq)
			}
		}
		if st == tagged(seq, slotReady) || st == tagged(seq, slotExecuting) {
			// The host wakes this futex when it writes the outcome.
			futexWait(slot32(b, slotState), st, time.Millisecond)
		} else {
			time.Sleep(time.Millisecond) // not ours: the deadline decides
		}
	}
}

// ctxAlive asks alive at most once a millisecond.
func ctxAlive(checked *time.Time, alive func() error) error {
	if time.Since(*checked) < time.Millisecond {
		return nil
	}
	*checked = time.Now()
	return alive()
}

// lostOutcome settles a request whose slot no longer holds it at the
// deadline (its outcome was freed unread, or the slot was damaged): the
// change log says whether the host executed it.
func (r *Region) lostOutcome(seq uint64) (uint64, error) {
	source := requestSource(seq, uint32(os.Getpid()))
	var cur LogCursor
	recs, err := r.ReadLog(&cur)
	if err != nil {
		return 0, fmt.Errorf("request %d: its outcome was lost and the change log cannot be read: %w", seq, err)
	}
	for _, rec := range recs {
		if rec.Source == source {
			return rec.Seq, nil
		}
	}
	return 0, fmt.Errorf("request %d: not executed (its slot was taken over before an outcome was read, and the change log has no record of it)", seq)
}

// pendingRequest is a request the host took for execution.
type pendingRequest struct {
	seq  uint64
	pid  uint32
	text string
	bad  string // why it cannot be executed, if it cannot
}

// slotWatch is the host's private record of one slot: since when it has
// been pending without being ready, or (when idle) not free.
type slotWatch struct {
	seq     uint64
	pending bool
	since   time.Time // zero: nothing to watch
	// An outcome the host wrote and nobody read yet.
	outcome bool
	outSeq  uint64
	outAt   time.Time
	outPID  uint32
	pidAt   time.Time // when outPID was last looked for (zero: never)
}

// requestLog is the host's private state of the change-request log: the
// next request to execute and a watch on every slot. None of it is read
// back from the region.
type requestLog struct {
	done  uint64
	watch []slotWatch
}

// requestEvent tells the host about a request or slot it gave up on or
// repaired: kind "abandoned", "cancelled" or "repair".
type requestEvent struct {
	kind string
	seq  uint64
	msg  string
}

// serveRequests executes the requests pending now, in order, and keeps the
// slots moving: a request not ready within abandon of being seen pending,
// and an idle slot not free for that long, are freed, all in the same
// cycle, so a producer that claimed every slot and died blocks the log for
// about abandon, not abandon per slot. exec runs a request's text and
// returns its change-log sequence or error text. Everything read from the
// region (request_claim, slot fields) is checked.
func (r *Region) serveRequests(q *requestLog, now time.Time, abandon, keep time.Duration,
	exec func(pendingRequest) (uint64, string), event func(requestEvent)) {
	n := uint64(r.lay.reqSlots)
	if q.watch == nil {
		q.watch = make([]slotWatch, n)
	}
	claim := r.get64(offReqClaim)
	if claim-q.done > n {
		// Rewound below request_done (the difference wraps) or beyond the
		// slots: producers never claim like that. Pull it back to just
		// after the last slot a producer is writing or has made ready, so
		// their requests go on; a producer that claimed but had not taken
		// its slot yet finds it given up on.
		fix := q.done
		for k := uint64(0); k < n; k++ {
			if st := slotLoad(r.slot(q.done + k)); st == tagged(q.done+k, slotWriting) || st == tagged(q.done+k, slotReady) {
				fix = q.done + k + 1
			}
		}
		atomic.CompareAndSwapUint64(r.ptr64(offReqClaim), claim, fix)
		event(requestEvent{"repair", 0, fmt.Sprintf("request_claim %d is out of range (request_done %d, %d slots): set to %d", claim, q.done, n, fix)})
		claim = fix
	}
	for seq := q.done; seq < claim; seq++ {
		w := &q.watch[seq%n]
		if !w.pending || w.seq != seq {
			w.seq, w.pending, w.since = seq, true, now
		}
	}
	// Each slot is looked at a few times at most: a state that keeps
	// changing under the host waits for the next cycle.
head:
	for tries := 0; q.done < claim && tries < 4*int(n); tries++ {
		seq := q.done
		b := r.slot(seq)
		w := &q.watch[seq%n]
		st := slotLoad(b)
		switch st {
		case tagged(seq, slotReady):
			if !slotCAS(b, st, tagged(seq, slotExecuting)) {
				continue // cancelled meanwhile: look again
			}
			p := readRequest(b, seq)
			logSeq, msg := exec(p)
			r.finishRequest(b, seq, logSeq, msg)
			w.outcome, w.outSeq, w.outAt, w.outPID, w.pidAt = true, seq, now, p.pid, time.Time{}
		case tagged(seq, slotCancelled):
			if !slotCAS(b, st, slotFree) {
				continue
			}
			event(requestEvent{"cancelled", seq, fmt.Sprintf("request %d was cancelled by its requester before it ran", seq)})
		default:
			if now.Sub(w.since) < abandon {
				break head // requests run in order: wait for this one
			}
			// Freed at once: its producer's next compare-and-swap fails,
			// so it learns the request was given up on.
			if !slotCAS(b, st, slotFree) {
				continue
			}
			event(requestEvent{"abandoned", seq, fmt.Sprintf("request %d abandoned: not ready within %v of being claimed (its producer was killed while writing it?); slot state %#x",
				seq, abandon, st)})
		}
		w.pending, w.since = false, time.Time{}
		q.done++
		r.hput64(offReqDone, q.done)
	}
	r.hput64(offReqDone, q.done)
	r.sweepIdle(q, claim, now, abandon, keep, event)
}

// sweepIdle looks at the slots no pending request holds: an outcome the
// host wrote is freed after keep, or sooner once its requester's process
// is gone (looked for every abandon from abandon on); anything else not
// free is freed after abandon.
func (r *Region) sweepIdle(q *requestLog, claim uint64, now time.Time, abandon, keep time.Duration, event func(requestEvent)) {
	n := uint64(r.lay.reqSlots)
	for i := uint64(0); i < n; i++ {
		if (i+n-q.done%n)%n < claim-q.done {
			continue // pending
		}
		w := &q.watch[i]
		w.pending = false
		b := r.mem[r.lay.reqOff+int(i)*r.lay.reqSize : r.lay.reqOff+int(i+1)*r.lay.reqSize]
		st := slotLoad(b)
		if st == slotFree {
			w.outcome, w.since = false, time.Time{}
			continue
		}
		if w.outcome && (st == tagged(w.outSeq, slotOK) || st == tagged(w.outSeq, slotFailed)) && atomic.LoadUint64(slot64(b, slotSeq)) == w.outSeq {
			age := now.Sub(w.outAt)
			// Looked for once every abandon, not every cycle: a requester
			// that dies while its outcome waits frees the slot within
			// about 2*abandon, at one kill(pid, 0) a second.
			gone := false
			if age >= abandon && now.Sub(w.pidAt) >= abandon {
				w.pidAt = now
				gone = processGone(w.outPID)
			}
			if (age >= keep || gone) && slotCAS(b, st, slotFree) {
				w.outcome = false
			}
			continue
		}
		w.outcome = false
		if w.since.IsZero() {
			w.since = now
			continue
		}
		if now.Sub(w.since) >= abandon && slotCAS(b, st, slotFree) {
			w.since = time.Time{}
			event(requestEvent{"repair", 0, fmt.Sprintf("request slot %d held state %#x outside any pending request for %v: freed", i, st, abandon)})
		}
	}
}

// processGone reports whether pid names no process (a plausible pid only:
// kill with 0 or a negative number addresses process groups).
func processGone(pid uint32) bool {
	if pid == 0 || pid > 1<<22 {
		return false
	}
	return errors.Is(syscall.Kill(int(pid), 0), syscall.ESRCH)
}

// readRequest copies request seq out of its slot, which the host holds in
// state executing, checking every field.
func readRequest(b []byte, seq uint64) pendingRequest {
	p := pendingRequest{seq: seq, pid: atomic.LoadUint32(slot32(b, slotPID))}
	n := atomic.LoadUint32(slot32(b, slotTextLen))
	switch got := atomic.LoadUint64(slot64(b, slotSeq)); {
	case got != seq:
		p.bad = fmt.Sprintf("slot holds sequence %d, expected %d (damaged request)", got, seq)
	case uint64(n) > uint64(len(b)-slotHeader):
		p.bad = fmt.Sprintf("oversized: %d bytes declared, a slot holds %d", n, len(b)-slotHeader)
	default:
		p.text = string(b[slotHeader : slotHeader+int(n)]) // a copy: what is checked is what runs
		if sum := atomic.LoadUint32(slot32(b, slotTextCRC)); crc32.ChecksumIEEE([]byte(p.text)) != sum {
			p.bad = fmt.Sprintf("damaged: the text's CRC-32 is not the %#08x its producer wrote (another process wrote into the slot)", sum)
			p.text = ""
		}
	}
	return p
}

// finishRequest writes the outcome of request seq into its slot and wakes
// its requester. msg "" means success.
func (r *Region) finishRequest(b []byte, seq, logSeq uint64, msg string) {
	atomic.StoreUint64(slot64(b, slotSeq), seq)
	atomic.StoreUint64(slot64(b, slotLogSeq), logSeq)
	state := tagged(seq, slotOK)
	if msg != "" {
		state = tagged(seq, slotFailed)
		if room := len(b) - slotHeader; len(msg) > room {
			msg = msg[:room]
		}
		copy(b[slotHeader:], msg)
	}
	atomic.StoreUint32(slot32(b, slotOutLen), uint32(len(msg)))
	atomic.StoreUint32(slot32(b, slotState), state)
	futexWake(slot32(b, slotState))
}
