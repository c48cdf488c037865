package ipc

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"
)

// ErrHostStopped means the host of a region stopped (or its process is gone).
var ErrHostStopped = errors.New("the host stopped")

// ErrHostVanished is an ErrHostStopped for a host that went without saying
// so (killed, or silent past its transport's timeout): a follower of its
// log cannot know that it read to the end.
var ErrHostVanished = fmt.Errorf("%w without saying so", ErrHostStopped)

// HostGoneError is a host that is not running, as a shared-memory client
// finds it: it stopped (Vanished false, an ErrHostStopped) or its process
// is gone (an ErrHostVanished).
type HostGoneError struct {
	Host     string // the region's name or path
	PID      int
	Vanished bool
}

func (e *HostGoneError) Error() string {
	if e.Vanished {
		return fmt.Sprintf("host %s is not running (pid %d gone)", e.Host, e.PID)
	}
	return fmt.Sprintf("host %s is not running (it stopped)", e.Host)
}

func (e *HostGoneError) Unwrap() error {
	if e.Vanished {
		return ErrHostVanished
	}
	return ErrHostStopped
}

// ErrHostReplaced means a new host took the region's name: the client's
// view is stale. Reopen attaches to the new one; value indices must be
// looked up again.
var ErrHostReplaced = errors.New("the host was restarted: reopen the region")

var errClosed = errors.New("ipc: the client was closed")

// Conn is a client's connection to a host: the shared-memory region (Open)
// or a network transport (Dial, for transports registered with
// RegisterDialer). Programs use Client; transports implement Conn.
type Conn interface {
	// Epoch identifies the host run connected to.
	Epoch() uint64
	// Check reports whether the host still serves this connection: nil,
	// or an error wrapping ErrHostReplaced or ErrHostStopped.
	Check() error
	// Reopen connects to the host now serving the name, after a restart.
	Reopen() error
	Close() error
	// Elements returns a consistent snapshot of the host's elements.
	Elements() ([]Descriptor, error)
	// Set writes value index i; Get reads it; ReadValues reads len(dst)
	// values from index start.
	Set(i int, v float64) error
	Get(i int) (float64, error)
	ReadValues(start int, dst []float64) error
	// Request has the host execute one XML command and returns its
	// change-log sequence number, or a *RequestError.
	Request(xml string, timeout time.Duration) (uint64, error)
	// ReadLog returns the change-log records available after cur and
	// advances cur past them, without waiting.
	ReadLog(cur *LogCursor) ([]LogRecord, error)
}

// LogCursor is a reader's position in a change log: the last sequence
// number read, and where the transport found it.
type LogCursor struct {
	Seq uint64
	Pos uint64 // transport-specific (a byte offset in a region)
}

// A Dialer connects to a host at a URL of its scheme.
type Dialer func(url string) (Conn, error)

var dialers = struct {
	sync.RWMutex
	m map[string]Dialer
}{m: map[string]Dialer{}}

// RegisterDialer makes Dial handle URLs of scheme (e.g. "nats"). Transport
// packages call it from an init function.
func RegisterDialer(scheme string, d Dialer) {
	dialers.Lock()
	defer dialers.Unlock()
	dialers.m[scheme] = d
}

// Client is a process's handle on a host: look elements up once, then read
// and write their values, send change requests, follow the change log. Set
// and Get may be called from many goroutines; the other methods from one
// at a time, and Reopen and Close not while Set or Get run.
type Client struct {
	conn Conn

	// RequestTimeout bounds how long Request waits for an outcome
	// (default 10 s).
	RequestTimeout time.Duration
}

// Open attaches to the shared-memory region of a running host by name (see
// Path).
func Open(name string) (*Client, error) {
	conn, err := openShm(name)
	if err != nil {
		return nil, err
	}
	return NewClient(conn), nil
}

// Dial connects to a host through a registered transport, by URL
// (nats://host:4222/NAME with the NATS transport).
func Dial(rawURL string) (*Client, error) {
	u, err := ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("ipc: %w", err)
	}
	dialers.RLock()
	d, ok := dialers.m[u.Scheme]
	dialers.RUnlock()
	if !ok {
		return nil, fmt.Errorf("ipc: no transport for %q URLs (is its package imported?)", u.Scheme)
	}
	conn, err := d(rawURL)
	if err != nil {
		return nil, err
	}
	return NewClient(conn), nil
}

// Connect is Dial for a target holding "://", else Open.
func Connect(target string) (*Client, error) {
	if strings.Contains(target, "://") {
		return Dial(target)
	}
	return Open(target)
}

// NewClient wraps a transport's connection.
func NewClient(conn Conn) *Client { return &Client{conn: conn, RequestTimeout: 10 * time.Second} }

// Conn is the client's connection.
func (c *Client) Conn() Conn { return c.conn }

// Epoch identifies the host run the client is connected to.
func (c *Client) Epoch() uint64 { return c.conn.Epoch() }

// Check reports whether the host still serves the client: errors wrap
// ErrHostReplaced after a restart and ErrHostStopped after a stop or when
// the host is gone without saying so.
func (c *Client) Check() error { return c.conn.Check() }

// Reopen connects to the host now serving the client's name, after a
// restart.
func (c *Client) Reopen() error { return c.conn.Reopen() }

// Close ends the connection; Set and Get fail afterwards.
func (c *Client) Close() error { return c.conn.Close() }

// Elements returns the host's elements (a consistent snapshot).
func (c *Client) Elements() ([]Descriptor, error) { return c.conn.Elements() }

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

// Set writes value index i; the host's next cycle applies it. Non-finite
// values are refused here (the host would refuse them too). In shared
// memory it is one atomic 8-byte store.
func (c *Client) Set(i int, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("value index %d: %v is not finite", i, v)
	}
	return c.conn.Set(i, v)
}

// Get reads value index i: the last value written, which the host resets
// if it refused it.
func (c *Client) Get(i int) (float64, error) { return c.conn.Get(i) }

// ValueWrite is one value for SetConfirmed.
type ValueWrite struct {
	Index int
	Value float64
}

// Confirmer is a Conn that tells how many cycles the host had completed
// when its values were last read, and the host's last refusal of values:
// what SetConfirmed needs. Both transports implement it.
type Confirmer interface {
	HostCycles() uint64
	LastRejection() (Rejection, bool)
}

// SetConfirmed writes the values and waits (at most timeout) until the host
// has completed a cycle that started after them, then returns a
// *RefusedError for the first one it did not take, with the host's reason
// where the host's last refusal covers it. A value another client
// overwrote in between reads as not taken. flush runs after the writes:
// nil means the Conn's own Flush where it has one (a network transport's
// wait until its host took the writes: without it, the values of cycles
// before they arrived could pass for their confirmation or refusal).
func (c *Client) SetConfirmed(writes []ValueWrite, timeout time.Duration, flush func() error) error {
	cf, ok := c.conn.(Confirmer)
	if !ok {
		return fmt.Errorf("ipc: %T cannot confirm values", c.conn)
	}
	if fl, ok := c.conn.(interface{ Flush() error }); ok && flush == nil {
		flush = fl.Flush
	}
	start := cf.HostCycles()
	for _, w := range writes {
		if err := c.Set(w.Index, w.Value); err != nil {
			return err
		}
	}
	if flush != nil {
		if err := flush(); err != nil {
			return err
		}
	}
	// A cycle under way when the values were written may have read the
	// table before them: the one after it has taken them.
	for deadline := time.Now().Add(timeout); cf.HostCycles() < start+2; {
		if err := c.Check(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the host completed no cycle within %v (it took %d since the values were written)", timeout, cf.HostCycles()-start)
		}
		time.Sleep(time.Millisecond)
	}
	for _, w := range writes {
		now, err := c.Get(w.Index)
		if err != nil {
			return err
		}
		if math.Float64bits(now) == math.Float64bits(w.Value) {
			continue
		}
		e := &RefusedError{Index: w.Index, Value: w.Value, Now: now}
		if x, ok := cf.LastRejection(); ok && x.Cycle > start && w.Index >= x.First && w.Index < x.First+x.Count {
			e.Reason = x.Reason
		}
		return e
	}
	return nil
}

// Request sends one XML command (a part, element or sensor) to the host and
// waits until it was executed: it returns the command's change-log
// sequence number, or a *RequestError with the host's error text, or
// ErrRequestLogFull when the host takes no more requests now.
func (c *Client) Request(xml string) (uint64, error) {
	if err := c.Check(); err != nil {
		return 0, &notTakenError{0, err}
	}
	return c.conn.Request(xml, c.RequestTimeout)
}

// Follower reads the change log of one host run from a given sequence on.
type Follower struct {
	c    *Client
	cur  LogCursor
	from uint64 // skip records before this sequence
}

// Follow streams the change log from sequence fromSeq (1 or 0: from the
// start).
func (c *Client) Follow(fromSeq uint64) *Follower { return &Follower{c: c, from: fromSeq} }

// Poll returns the records published since the last call (none if
// nothing is new). After a host restart it returns ErrHostReplaced: the
// log of the new host starts over at 1, so a follower starts again.
func (f *Follower) Poll() ([]LogRecord, error) {
	if err := f.c.Check(); errors.Is(err, ErrHostReplaced) {
		return nil, err
	}
	recs, err := f.c.conn.ReadLog(&f.cur)
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
