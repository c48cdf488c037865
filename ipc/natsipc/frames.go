package natsipc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
)

// Frame is one sensor frame as a consumer receives it from
// simvis.NAME.sensor.SENSOR (NATS.md, "Sensor frames").
type Frame struct {
	Sensor string // the subject's last token
	Kind   string // Simvis-Kind
	Epoch  uint64 // the host run
	Info   []byte // Simvis-Info: the JSON description of binary kinds; the frame itself for JSON kinds
	Data   []byte // binary kinds' data; nil for JSON kinds
}

// Assembler reassembles sensor frames from the messages of a subscription
// to one or more sensor subjects: a whole frame from a message of its own,
// a chunked one from its chunks, in order. Chunks of a frame that does not
// complete (one was lost, a newer frame began) are dropped and counted.
// Not safe for concurrent use: give each subscription its own.
type Assembler struct {
	// MaxBytes bounds one frame (default MaxFrameBytes): chunk headers
	// announcing more are refused.
	MaxBytes int
	// Dropped counts incomplete frames given up.
	Dropped int
	partial map[string]*partialFrame
}

type partialFrame struct {
	frame    string // Simvis-Frame
	next, of int
	size     int
	kind     string
	info     []byte
	buf      []byte
}

// Add takes one message. It returns a frame once complete, nil while a
// chunked one is still incomplete, and an error for a message that is no
// sensor frame or a chunk out of order (the frame is dropped).
func (a *Assembler) Add(m *nats.Msg) (*Frame, error) {
	if strings.HasPrefix(m.Reply, "$JS.") {
		return nil, errors.New("natsipc: a message JetStream delivered is no sensor frame")
	}
	sensor := m.Subject[strings.LastIndex(m.Subject, ".")+1:]
	kind := m.Header.Get(hdrKind)
	if kind == "" {
		return nil, fmt.Errorf("natsipc: %s: a message without %s", m.Subject, hdrKind)
	}
	epoch, err := strconv.ParseUint(m.Header.Get(hdrEpoch), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("natsipc: %s: bad %s %q", m.Subject, hdrEpoch, m.Header.Get(hdrEpoch))
	}
	info := []byte(m.Header.Get(hdrInfo))
	whole := func(payload []byte) *Frame {
		f := &Frame{Sensor: sensor, Kind: kind, Epoch: epoch}
		if m.Header.Get(hdrInfo) == "" {
			f.Info = payload
		} else {
			f.Info, f.Data = info, payload
		}
		return f
	}
	chunk := m.Header.Get(hdrChunk)
	if chunk == "" {
		return whole(m.Data), nil
	}
	if a.partial == nil {
		a.partial = map[string]*partialFrame{}
	}
	maxBytes := a.MaxBytes
	if maxBytes <= 0 {
		maxBytes = MaxFrameBytes
	}
	var i, n int
	if _, err := fmt.Sscanf(chunk, "%d/%d", &i, &n); err != nil || n < 2 || i < 0 || i >= n {
		return nil, fmt.Errorf("natsipc: %s: bad %s %q", m.Subject, hdrChunk, chunk)
	}
	size, err := strconv.Atoi(m.Header.Get(hdrSize))
	if err != nil || size < 0 || size > maxBytes {
		return nil, fmt.Errorf("natsipc: %s: frame size %q, at most %d", m.Subject, m.Header.Get(hdrSize), maxBytes)
	}
	id := m.Header.Get(hdrFrame)
	p := a.partial[m.Subject]
	if i == 0 {
		if p != nil {
			a.Dropped++
		}
		p = &partialFrame{frame: id, of: n, size: size, kind: kind, info: info, buf: make([]byte, 0, size)}
		a.partial[m.Subject] = p
	}
	if p == nil || p.frame != id || p.next != i || p.of != n || p.size != size || len(p.buf)+len(m.Data) > size {
		if p != nil {
			a.Dropped++
			delete(a.partial, m.Subject)
		}
		return nil, fmt.Errorf("natsipc: %s: chunk %d/%d of frame %s out of order: frame dropped", m.Subject, i, n, id)
	}
	p.buf = append(p.buf, m.Data...)
	p.next++
	if p.next < n {
		return nil, nil
	}
	delete(a.partial, m.Subject)
	if len(p.buf) != size {
		a.Dropped++
		return nil, fmt.Errorf("natsipc: %s: frame %s has %d bytes, its chunks said %d", m.Subject, id, len(p.buf), size)
	}
	return whole(p.buf), nil
}
