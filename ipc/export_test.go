package ipc

import "time"

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
	*slot32(b, slotState) = slotWriting
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
	*slot32(b, slotState) = slotReady
	return seq
}
