package ipc

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
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
	slotHeader  = 64

	slotFree    = 0 // no request, or its outcome was read
	slotWriting = 1 // claimed; the producer writes the text
	slotReady   = 2 // the text is complete; the host will execute it
	slotOK      = 3 // executed; the outcome is empty
	slotFailed  = 4 // refused; the outcome is the error text
)

// ErrRequestLogFull is returned to a producer when every request slot holds
// a pending request or an outcome not yet read: nothing was written.
var ErrRequestLogFull = errors.New("change-request log full")

// RequestError is a request the host refused: bad XML, an unknown type, a
// file outside the scene's directory, a full change log, ...
type RequestError struct {
	Seq uint64 // the request's sequence number
	Msg string // the host's error text
}

func (e *RequestError) Error() string { return "request refused: " + e.Msg }

func (r *Region) slot(seq uint64) []byte {
	n, size := uint64(r.get32(offReqSlots)), uint64(r.get32(offReqSize))
	off := r.get64(offReqOff) + seq%n*size
	return r.mem[off : off+size]
}

func slot32(b []byte, at int) *uint32 { return (*uint32)(unsafe.Pointer(&b[at])) }
func slot64(b []byte, at int) *uint64 { return (*uint64)(unsafe.Pointer(&b[at])) }

// submit claims the next request slot and writes text into it. The claim is
// a compare-and-swap on request_claim, allowed only while the slot is free
// and fewer than request_slots requests are ahead of the host.
func (r *Region) submit(text string) (uint64, error) {
	n := uint64(r.get32(offReqSlots))
	if room := int(r.get32(offReqSize)) - slotHeader; len(text) > room {
		return 0, fmt.Errorf("request of %d bytes is larger than a request slot (%d bytes)", len(text), room)
	}
	var seq uint64
	var b []byte
	for {
		seq = r.get64(offReqClaim)
		b = r.slot(seq)
		if seq-r.get64(offReqDone) >= n || atomic.LoadUint32(slot32(b, slotState)) != slotFree {
			return 0, fmt.Errorf("%w: %d slots hold pending requests or unread outcomes", ErrRequestLogFull, n)
		}
		if atomic.CompareAndSwapUint64(r.ptr64(offReqClaim), seq, seq+1) {
			break
		}
	}
	if !atomic.CompareAndSwapUint32(slot32(b, slotState), slotFree, slotWriting) {
		return 0, fmt.Errorf("request %d: the host gave up on it before it was written", seq)
	}
	*slot32(b, slotPID) = uint32(os.Getpid())
	*slot64(b, slotSeq) = seq
	*slot32(b, slotTextLen) = uint32(len(text))
	copy(b[slotHeader:], text)
	if !atomic.CompareAndSwapUint32(slot32(b, slotState), slotWriting, slotReady) {
		return 0, fmt.Errorf("request %d: the host gave up on it while it was being written (too slow)", seq)
	}
	return seq, nil
}

// outcome waits until the host has executed request seq, reads its outcome
// and frees the slot. alive is asked between polls whether to keep waiting.
func (r *Region) outcome(seq uint64, deadline time.Time, alive func() error) (uint64, error) {
	b := r.slot(seq)
	checked := time.Now()
	for {
		st := atomic.LoadUint32(slot32(b, slotState))
		if (st == slotOK || st == slotFailed) && atomic.LoadUint64(slot64(b, slotSeq)) == seq {
			logSeq := *slot64(b, slotLogSeq)
			var msg string
			if st == slotFailed {
				n := int(*slot32(b, slotOutLen))
				if n > len(b)-slotHeader {
					n = len(b) - slotHeader
				}
				msg = string(b[slotHeader : slotHeader+n])
			}
			// Freeing it is the proof that the outcome was still ours: the
			// host frees unread outcomes after a while.
			if !atomic.CompareAndSwapUint32(slot32(b, slotState), st, slotFree) {
				return 0, fmt.Errorf("request %d: its outcome was dropped before it was read", seq)
			}
			if st == slotFailed {
				return 0, &RequestError{Seq: seq, Msg: msg}
			}
			return logSeq, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("request %d: no outcome after the timeout (is the host running cycles?)", seq)
		}
		if time.Since(checked) > time.Millisecond {
			if err := alive(); err != nil {
				return 0, err
			}
			checked = time.Now()
		}
		if st == slotWriting || st == slotReady {
			// The host wakes this futex when it writes the outcome.
			futexWait(slot32(b, slotState), st, time.Millisecond)
		} else {
			time.Sleep(time.Millisecond) // not ours: a damaged or reused slot; the deadline decides
		}
	}
}

// pendingRequest is the request the host is to execute next.
type pendingRequest struct {
	seq  uint64
	pid  uint32
	text string
	bad  string // why it cannot be executed, if it cannot
}

// nextRequest returns the next complete request, or ok false when there is
// none yet. A request whose producer has not finished writing it within
// abandon of being seen is failed (the producer was probably killed) so
// that the requests behind it are not held up.
func (r *Region) nextRequest(now time.Time, stalled *time.Time, abandon time.Duration) (pendingRequest, bool) {
	done := r.get64(offReqDone)
	if done == r.get64(offReqClaim) {
		*stalled = time.Time{}
		return pendingRequest{}, false
	}
	b := r.slot(done)
	st := atomic.LoadUint32(slot32(b, slotState))
	if st != slotReady {
		if stalled.IsZero() {
			*stalled = now
			return pendingRequest{}, false
		}
		if now.Sub(*stalled) < abandon {
			return pendingRequest{}, false
		}
		// Failing it first makes the producer's own later state change
		// fail, so it cannot finish writing into a slot given up on.
		if st != slotFree && st != slotWriting || !atomic.CompareAndSwapUint32(slot32(b, slotState), st, slotFailed) {
			return pendingRequest{}, false // it changed meanwhile; look again next time
		}
		*stalled = time.Time{}
		return pendingRequest{seq: done, bad: fmt.Sprintf("abandoned: its producer did not finish writing it within %v (killed while writing?)", abandon)}, true
	}
	*stalled = time.Time{}
	p := pendingRequest{seq: done, pid: *slot32(b, slotPID)}
	n := int(*slot32(b, slotTextLen))
	switch {
	case *slot64(b, slotSeq) != done:
		p.bad = fmt.Sprintf("slot holds sequence %d, expected %d (damaged request)", *slot64(b, slotSeq), done)
	case n > len(b)-slotHeader:
		p.bad = fmt.Sprintf("oversized: %d bytes declared, a slot holds %d", n, len(b)-slotHeader)
	default:
		p.text = string(b[slotHeader : slotHeader+n])
	}
	return p, true
}

// finishRequest writes the outcome of the request nextRequest returned and
// moves on to the next one. msg "" means success.
func (r *Region) finishRequest(seq, logSeq uint64, msg string) {
	b := r.slot(seq)
	*slot64(b, slotSeq) = seq
	*slot64(b, slotLogSeq) = logSeq
	state := uint32(slotOK)
	if msg != "" {
		state = slotFailed
		if room := len(b) - slotHeader; len(msg) > room {
			msg = msg[:room]
		}
		copy(b[slotHeader:], msg)
	}
	*slot32(b, slotOutLen) = uint32(len(msg))
	atomic.StoreUint32(slot32(b, slotState), state)
	r.store64(offReqDone, seq+1)
	futexWake(slot32(b, slotState))
}

// reclaim frees the slot of request seq if its outcome was never read.
func (r *Region) reclaim(seq uint64) {
	b := r.slot(seq)
	if atomic.LoadUint64(slot64(b, slotSeq)) != seq {
		return
	}
	for _, st := range []uint32{slotOK, slotFailed} {
		if atomic.CompareAndSwapUint32(slot32(b, slotState), st, slotFree) {
			return
		}
	}
}
