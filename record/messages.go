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
// Its errors do not name the file: the callers do. Chunks are
// decompressed as a stream; one message's data is held at a time, at most
// MaxRecordBytes (ReadOptions.RecordBytes).
type Messages struct {
	f        *os.File
	s        *scanner
	from     uint64
	limit    int64
	schemas  map[uint16]*mcap.Schema
	channels map[uint16]*mcap.Channel
	done     bool
}

// OpenMessages reads file's messages logged at or after from (ns) in file
// order (simvis writes log times that never decrease). A complete file
// (indexed) starts at the first chunk that its index says holds a message
// logged at or after from, with the schemas and channels of its summary; a
// file that ends early (it has no index) is read from its start.
func OpenMessages(file string, indexed bool, from int64) (*Messages, error) {
	return OpenMessagesWith(file, indexed, from, ReadOptions{})
}

// OpenMessagesWith is OpenMessages within opts' RecordBytes.
func OpenMessagesWith(file string, indexed bool, from int64, opts ReadOptions) (m *Messages, err error) {
	opts = opts.withDefaults()
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
	m = &Messages{f: f, from: uint64(max(from, 0)), limit: opts.RecordBytes,
		schemas: map[uint16]*mcap.Schema{}, channels: map[uint16]*mcap.Channel{}}
	start, end := int64(0), int64(-1)
	if indexed {
		st, err := f.Stat()
		if err != nil {
			return nil, err
		}
		sm, err := readSummary(f, st.Size(), opts)
		if err != nil {
			return nil, err
		}
		if sm != nil && len(sm.chunks) > 0 {
			m.schemas, m.channels, end = sm.schemas, sm.channels, sm.dataEnd
			start = end
			for _, c := range sm.chunks {
				if c.MessageEndTime >= m.from {
					start = int64(c.ChunkStartOffset)
					break
				}
			}
		}
	}
	m.s = newScanner(f, start, end)
	if start == 0 {
		if err := m.s.magic(); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Next returns the next message with its channel and schema (nil for a
// channel without one); io.EOF at the end. The message is the caller's.
func (m *Messages) Next() (sc *mcap.Schema, ch *mcap.Channel, msg *mcap.Message, err error) {
	defer guard("", &err)
	for !m.done {
		op, _, err := m.s.next()
		if err != nil {
			m.done = true
			if err == errTruncated {
				err = io.EOF // a file cut short: everything whole was read
			}
			return nil, nil, nil, err
		}
		switch op {
		case mcap.OpSchema:
			v, err := parseRecord(m.s, m.limit, mcap.ParseSchema)
			if err != nil {
				return nil, nil, nil, err
			}
			m.schemas[v.ID] = v
		case mcap.OpChannel:
			v, err := parseRecord(m.s, m.limit, mcap.ParseChannel)
			if err != nil {
				return nil, nil, nil, err
			}
			m.channels[v.ID] = v
		case mcap.OpMessage:
			msg, err := m.s.messageHeader()
			if err != nil {
				return nil, nil, nil, err
			}
			ch := m.channels[msg.ChannelID]
			if ch == nil {
				return nil, nil, nil, fmt.Errorf("a message on channel %d, which is not defined before it", msg.ChannelID)
			}
			if msg.LogTime < m.from {
				continue // next skips its data
			}
			if m.s.left() > m.limit {
				return nil, nil, nil, fmt.Errorf("%s message %d (log time %.9f s): %d bytes, %s", ch.Topic, msg.Sequence,
					float64(msg.LogTime)/1e9, m.s.left(), over("one record", m.limit, "RecordBytes", FlagRecordMiB))
			}
			if msg.Data, err = m.s.rest(); err != nil {
				m.done = true
				if err == errTruncated {
					err = io.EOF
				}
				return nil, nil, nil, err
			}
			return m.schemas[ch.SchemaID], ch, msg, nil
		case mcap.OpFooter, mcap.OpDataEnd:
			m.done = true
		}
	}
	return nil, nil, nil, io.EOF
}

// Close closes the file; m may be nil.
func (m *Messages) Close() error {
	if m == nil || m.f == nil {
		return nil
	}
	m.s.close()
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
