package ipc

import (
	"fmt"
	"time"
)

// Submit sends a request without waiting for its outcome.
func (c *Client) Submit(xml string) (uint64, error) { return c.conn.(*shmConn).region.submit(xml) }

// Outcome waits for the outcome of a submitted request.
func (c *Client) Outcome(seq uint64) (uint64, error) {
	return c.conn.(*shmConn).region.outcome(seq, time.Now().Add(c.RequestTimeout), c.RequestTimeout, c.conn.Check)
}

// StallWriting claims a request slot, writes half of xml into it and
// returns without marking it ready: a producer killed mid-write.
func (c *Client) StallWriting(xml string) uint64 {
	r := c.conn.(*shmConn).region
	seq := r.get64(offReqClaim)
	r.store64(offReqClaim, seq+1)
	b := r.slot(seq)
	*slot32(b, slotState) = tagged(seq, slotWriting)
	copy(b[slotHeader:], xml[:len(xml)/2])
	return seq
}

// OnRequest sets a hook the host calls after each request.
func (h *Host) OnRequest(f func(LogRecord, error)) { h.requested = f }

// SubmitForged writes a ready request whose declared length is textLen,
// as a hostile or broken producer might.
func (c *Client) SubmitForged(textLen uint32) uint64 {
	r := c.conn.(*shmConn).region
	seq := r.get64(offReqClaim)
	r.store64(offReqClaim, seq+1)
	b := r.slot(seq)
	*slot64(b, slotSeq) = seq
	*slot32(b, slotTextLen) = textLen
	*slot32(b, slotState) = tagged(seq, slotReady)
	return seq
}

// Header field offsets and slot states, for the hostile tests.
const (
	OffDescOff, OffDescCap, OffDescSize    = offDescOff, offDescCap, offDescSize
	OffNamesOff, OffNamesCap               = offNamesOff, offNamesCap
	OffValuesOff, OffValuesCap             = offValuesOff, offValuesCap
	OffReqOff, OffReqSlots, OffReqSize     = offReqOff, offReqSlots, offReqSize
	OffLogOff, OffLogCap                   = offLogOff, offLogCap
	OffLogUsed, OffLogCount                = offLogUsed, offLogCount
	OffDescSeq, OffDescCount               = offDescSeq, offDescCount
	OffValuesUsed, OffNamesUsed            = offValuesUse, offNamesUsed
	OffRejected, OffReqClaim, OffReqDone   = offRejected, offReqClaim, offReqDone
	OffCycle, OffPeriod, OffCycleAt        = offCycle, offPeriod, offCycleAt
	OffState, OffPID, OffEpoch, OffVersion = offState, offPID, offEpoch, offVersion

	SlotFree, SlotWriting, SlotReady, SlotOK, SlotFailed, SlotExecuting, SlotCancelled = slotFree, slotWriting,
		slotReady, slotOK, slotFailed, slotExecuting, slotCancelled
)

// Poke32 and Poke64 write a raw header field, as any process mapping the
// region can.
func (r *Region) Poke32(off int, v uint32) { r.store32(off, v) }
func (r *Region) Poke64(off int, v uint64) { r.store64(off, v) }

// Peek32 and Peek64 read a raw header field.
func (r *Region) Peek32(off int) uint32 { return r.get32(off) }
func (r *Region) Peek64(off int) uint64 { return r.get64(off) }

// Slot is the raw request slot of sequence number seq.
func (r *Region) Slot(seq uint64) []byte { return r.slot(seq) }

// SlotCount is the number of request slots (from the layout read at
// attach).
func (r *Region) SlotCount() int { return r.lay.reqSlots }

// SetReadPatience sets how long clients retry reads of a damaged region,
// for the duration of a test, whether or not the host cycles meanwhile.
func SetReadPatience(d time.Duration) (restore func()) {
	old, oldMax := readPatience, maxPatience
	readPatience, maxPatience = d, d
	return func() { readPatience, maxPatience = old, oldMax }
}

// HostOwnedFieldsIntact reports the first header field of the host whose
// shared copy differs from its private one ("" if none).
func (h *Host) HostOwnedFieldsIntact() string {
	r := h.Region
	for _, f := range hostFields {
		if f[1] == 8 && r.get64(f[0]) != r.hget64(f[0]) || f[1] == 4 && r.get32(f[0]) != r.hget32(f[0]) {
			return fmt.Sprintf("field at %d: %d", f[0], r.get64(f[0]&^7))
		}
	}
	return ""
}

// SetClock replaces the host's clock.
func (h *Host) SetClock(now func() time.Time) { h.now = now }

// ClaimOnly advances request_claim and touches nothing else: a producer
// killed right after its claim.
func (c *Client) ClaimOnly() uint64 {
	r := c.conn.(*shmConn).region
	seq := r.get64(offReqClaim)
	r.store64(offReqClaim, seq+1)
	return seq
}

// LogSection and DescSection are the raw change log and descriptor
// records, as any process mapping the region sees them.
func (r *Region) LogSection() []byte {
	return r.mem[r.lay.logOff : r.lay.logOff+r.lay.logCap]
}
func (r *Region) DescSection() []byte {
	return r.mem[r.lay.descOff : r.lay.descOff+r.lay.descCap*descSize]
}
