package ipc

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// ErrHostStopped means the host of a region stopped (or its process is gone).
var ErrHostStopped = errors.New("the host stopped")

// ErrHostReplaced means a new host took the region's name: the client's
// mapping is stale. Reopen attaches to the new one; value indices must be
// looked up again.
var ErrHostReplaced = errors.New("the host was restarted: reopen the region")

var errClosed = errors.New("ipc: the client was closed")

// Client is a process's handle on a host's region: look elements up once,
// then read and write their values in place, send change requests, follow
// the change log. Set and Get may be called from many goroutines; the
// other methods from one at a time, and Reopen and Close not while Set or
// Get run.
type Client struct {
	name   string
	region *Region
	values []float64

	// RequestTimeout bounds how long Request waits for an outcome
	// (default 10 s).
	RequestTimeout time.Duration
}

// Open attaches to the region of a running host by name (see Path).
func Open(name string) (*Client, error) {
	c := &Client{name: name, RequestTimeout: 10 * time.Second}
	if err := c.attach(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Client) attach() error {
	r, err := Attach(Path(c.name))
	if err != nil {
		return fmt.Errorf("%w (is 'simvis serve' running with --shm %s?)", err, c.name)
	}
	c.region, c.values = r, r.Values()
	return nil
}

// Region is the mapped region, for direct access to the arrays.
func (c *Client) Region() *Region { return c.region }

// Epoch identifies the host run the client is attached to.
func (c *Client) Epoch() uint64 { return c.region.Epoch() }

// Check reports whether the host is still serving this region:
// ErrHostReplaced after a restart, ErrHostStopped after a stop or when the
// host process is gone without saying so (killed).
func (c *Client) Check() error {
	switch c.region.get32(offState) {
	case stateRunning:
		pid := int(c.region.get32(offPID))
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("%w: its process %d is gone", ErrHostStopped, pid)
		}
		return nil
	case stateReplaced:
		return ErrHostReplaced
	default:
		return ErrHostStopped
	}
}

// Reopen attaches to the region now at the client's name, after a host
// restart.
func (c *Client) Reopen() error {
	old := c.region
	if err := c.attach(); err != nil {
		return err
	}
	return old.Close()
}

// Close unmaps the region; Set and Get fail afterwards.
func (c *Client) Close() error {
	c.values = nil
	return c.region.Close()
}

// Elements returns the host's elements (a consistent snapshot).
func (c *Client) Elements() ([]Descriptor, error) {
	d, _, err := c.region.Descriptors()
	return d, err
}

// Element returns the descriptor of one element.
func (c *Client) Element(name string) (Descriptor, error) {
	ds, err := c.Elements()
	if err != nil {
		return Descriptor{}, err
	}
	for _, d := range ds {
		if d.Name == name {
			return d, nil
		}
	}
	return Descriptor{}, fmt.Errorf("the host has no element %q", name)
}

// Param returns the value index of element.param: look it up once, then
// Set and Get by index.
func (c *Client) Param(element, param string) (int, error) {
	d, err := c.Element(element)
	if err != nil {
		return 0, err
	}
	if i, ok := d.Param(param); ok {
		return i, nil
	}
	return 0, fmt.Errorf("element %q (%s) has no parameter %q (has %s)", element, d.Type, param, strings.Join(d.Params, ", "))
}

// Param returns the value index of one of the element's parameters.
func (d Descriptor) Param(name string) (int, bool) {
	for i, p := range d.Params {
		if p == name {
			return d.Start + i, true
		}
	}
	return 0, false
}

// Set writes value index i in place: one atomic 8-byte store, picked up by
// the host's next cycle. Non-finite values are refused here (the host
// would refuse them too).
func (c *Client) Set(i int, v float64) error {
	if c.values == nil {
		return errClosed
	}
	if uint(i) >= uint(c.region.get32(offValuesUse)) {
		return fmt.Errorf("value index %d: the host uses %d", i, c.region.get32(offValuesUse))
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("value index %d: %v is not finite", i, v)
	}
	if c.region.get32(offState) != stateRunning {
		return c.Check()
	}
	atomic.StoreUint64((*uint64)(unsafe.Pointer(&c.values[i])), math.Float64bits(v))
	return nil
}

// Get reads value index i: the last value written, which the host resets
// if it refused it.
func (c *Client) Get(i int) (float64, error) {
	if c.values == nil {
		return 0, errClosed
	}
	if uint(i) >= uint(c.region.get32(offValuesUse)) {
		return 0, fmt.Errorf("value index %d: the host uses %d", i, c.region.get32(offValuesUse))
	}
	return math.Float64frombits(atomic.LoadUint64((*uint64)(unsafe.Pointer(&c.values[i])))), nil
}

// Request sends one XML command (a part, element or sensor) to the host and
// waits until it was executed: it returns the command's change-log sequence
// number, or a *RequestError with the host's error text, or
// ErrRequestLogFull when no slot is free.
func (c *Client) Request(xml string) (uint64, error) {
	if err := c.Check(); err != nil {
		return 0, err
	}
	seq, err := c.region.submit(xml)
	if err != nil {
		return 0, err
	}
	return c.region.outcome(seq, time.Now().Add(c.RequestTimeout), c.Check)
}

// Follower reads the change log of one host run from a given sequence on.
type Follower struct {
	c    *Client
	off  uint64 // byte offset of the next record to read
	from uint64 // skip records before this sequence
}

// Follow streams the change log from sequence fromSeq (1 or 0: from the
// start).
func (c *Client) Follow(fromSeq uint64) *Follower { return &Follower{c: c, from: fromSeq} }

// Poll returns the records published since the last call (none if
// nothing is new). After a host restart it returns ErrHostReplaced: the
// log of the new host starts over at 1, so a follower starts again.
func (f *Follower) Poll() ([]LogRecord, error) {
	if st := f.c.region.get32(offState); st == stateReplaced {
		return nil, ErrHostReplaced
	}
	recs, off, err := f.c.region.readLog(f.off)
	f.off = off
	for len(recs) > 0 && recs[0].Seq < f.from {
		recs = recs[1:]
	}
	return recs, err
}

// Next waits up to timeout for the next records.
func (f *Follower) Next(timeout time.Duration) ([]LogRecord, error) {
	deadline := time.Now().Add(timeout)
	for {
		recs, err := f.Poll()
		if len(recs) > 0 || err != nil {
			return recs, err
		}
		if err := f.c.Check(); err != nil {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, nil
		}
		time.Sleep(time.Millisecond)
	}
}
