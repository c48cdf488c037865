package record

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/foxglove/mcap/go/mcap"
)

// The MCAP library panics on some malformed files (a chunk whose
// compression name is longer than the library's buffer, found by
// FuzzRead); a recording is hostile input, so every call into the library
// on a file's contents goes through guard (or Read's own recover), which
// turns such a panic into an error naming the file. (recover works only in
// the deferred function itself, so guard is deferred directly.)
func guard(file string, err *error) {
	if r := recover(); r != nil {
		*err = malformed(file, r)
	}
}

func malformed(file string, r any) error {
	err := fmt.Errorf("malformed MCAP file (the reader failed: %v)", r)
	if file != "" {
		err = fmt.Errorf("%s: %w", file, err)
	}
	return err
}

// Messages iterates over a recording's messages (play's republishers).
// Its errors do not name the file: the callers do.
type Messages struct {
	f  *os.File
	it mcap.MessageIterator
}

// OpenMessages reads file's messages logged at or after from (ns): in log
// time order through the file's index when indexed (a complete file), in
// file order without the index otherwise (a file that ends early has none).
func OpenMessages(file string, indexed bool, from int64) (m *Messages, err error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
			m = nil
		}
	}()
	defer guard("", &err)
	rd, err := mcap.NewReader(f)
	if err != nil {
		return nil, err
	}
	opts := []mcap.ReadOpt{mcap.AfterNanos(uint64(max(from, 0)))}
	if indexed {
		opts = append(opts, mcap.InOrder(mcap.LogTimeOrder))
	} else {
		opts = append(opts, mcap.UsingIndex(false))
	}
	it, err := rd.Messages(opts...)
	if err != nil {
		return nil, err
	}
	return &Messages{f: f, it: it}, nil
}

// Next returns the next message with its channel and schema (nil for a
// channel without one); io.EOF at the end. The message is the caller's.
func (m *Messages) Next() (sc *mcap.Schema, ch *mcap.Channel, msg *mcap.Message, err error) {
	defer guard("", &err)
	sc, ch, msg, err = m.it.NextInto(nil)
	return sc, ch, msg, err
}

// Close closes the file; m may be nil.
func (m *Messages) Close() error {
	if m == nil || m.f == nil {
		return nil
	}
	err := m.f.Close()
	m.f = nil
	return err
}

// Cursor reads a recording's messages a playback position at a time:
// play's republishers, which publish what was logged up to each cycle's
// position.
type Cursor struct {
	file    string
	indexed bool
	msgs    *Messages
	next    *mcap.Message // read, not yet due
	nextCh  *mcap.Channel
	nextSc  *mcap.Schema
	done    bool
}

// NewCursor reads file (indexed: see OpenMessages); SeekTo starts it.
func NewCursor(file string, indexed bool) *Cursor {
	return &Cursor{file: file, indexed: indexed, done: true}
}

// SeekTo restarts at log time from (ns).
func (c *Cursor) SeekTo(from int64) error {
	c.Close()
	var err error
	c.msgs, err = OpenMessages(c.file, c.indexed, from)
	c.next, c.done = nil, err != nil
	return err
}

// Until calls fn with each message logged at or before limit (ns) that it
// has not seen, in order; the message is fn's. At the end of the file, or
// after an error reading it (returned once), it has nothing more until
// the next SeekTo.
func (c *Cursor) Until(limit int64, fn func(sc *mcap.Schema, ch *mcap.Channel, m *mcap.Message)) error {
	for !c.done {
		if c.next == nil {
			sc, ch, m, err := c.msgs.Next()
			if err != nil {
				c.done = true
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			c.next, c.nextCh, c.nextSc = m, ch, sc
		}
		if int64(c.next.LogTime) > limit {
			return nil
		}
		m, ch, sc := c.next, c.nextCh, c.nextSc
		c.next = nil
		fn(sc, ch, m)
	}
	return nil
}

// Close closes the file; c may be nil.
func (c *Cursor) Close() {
	if c != nil {
		c.msgs.Close()
		c.msgs, c.done = nil, true
	}
}
