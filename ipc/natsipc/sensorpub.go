package natsipc

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
)

// ErrFrameTooBig is a sensor frame larger than MaxFrameBytes, or one whose
// description alone does not fit a message: the frame is not published.
var ErrFrameTooBig = errors.New("sensor frame larger than the NATS server's message limit")

// PublishSensor publishes one sensor frame on simvis.NAME.sensor.SENSOR
// (NATS.md): scans and PSD readings as their JSON, images, depth and
// clouds as binary data with their JSON description in a header. A frame
// larger than the server's message limit goes out in chunks that
// consumers reassemble (Assembler). Call it from the host's goroutine.
func (p *Publisher) PublishSensor(sensor, kind string, info, data []byte) error {
	if !p.nc.IsConnected() {
		return fmt.Errorf("natsipc: not connected to the NATS server (%v)", p.nc.Status())
	}
	switch kind {
	case "scan":
		info = withTooClose(info, "[]")
	case "psd":
		info = withTooClose(info, "false")
	}
	payload, header := data, info
	if len(data) == 0 {
		payload, header = info, nil // the JSON kinds: the description is the frame
	}
	if len(payload) > MaxFrameBytes {
		return fmt.Errorf("%w: a %s frame of %d bytes, at most %d", ErrFrameTooBig, kind, len(payload), MaxFrameBytes)
	}
	// Headers count against the server's limit too: room for them.
	room := int(p.nc.MaxPayload()) - len(header) - chunkHeaderRoom
	if room < minChunk {
		return fmt.Errorf("%w: a %s frame's description of %d bytes leaves no room under the server's limit of %d", ErrFrameTooBig, kind, len(header), p.nc.MaxPayload())
	}
	if p.frames == nil {
		p.frames = map[string]uint64{}
	}
	p.frames[sensor]++
	n := max(1, (len(payload)+room-1)/room)
	for i := 0; i < n; i++ {
		m := nats.NewMsg(subject(p.name, "sensor."+sensor))
		m.Header.Set(hdrEpoch, strconv.FormatUint(p.epoch, 10))
		m.Header.Set(hdrKind, kind)
		if header != nil {
			m.Header.Set(hdrInfo, string(header))
		}
		if n > 1 {
			m.Header.Set(hdrChunk, fmt.Sprintf("%d/%d", i, n))
			m.Header.Set(hdrFrame, strconv.FormatUint(p.frames[sensor], 10))
			m.Header.Set(hdrSize, strconv.Itoa(len(payload)))
		}
		m.Data = payload[i*room : min(len(payload), (i+1)*room)]
		if err := p.nc.PublishMsg(m); err != nil {
			return fmt.Errorf("natsipc: chunk %d of %d: %w", i+1, n, err)
		}
	}
	return nil
}

// withTooClose gives a scan's or PSD reading's JSON its too_close field
// even when it is empty or false, so that consumers find every field
// NATS.md lists.
func withTooClose(scan []byte, empty string) []byte {
	var fields map[string]json.RawMessage
	if json.Unmarshal(scan, &fields) != nil {
		return scan
	}
	if _, ok := fields["too_close"]; ok {
		return scan
	}
	fields["too_close"] = json.RawMessage(empty)
	out, err := json.Marshal(fields)
	if err != nil {
		return scan
	}
	return out
}

// Frame sizes: a frame is at most MaxFrameBytes; chunks leave
// chunkHeaderRoom bytes of a message for headers besides the description.
const (
	MaxFrameBytes   = 256 << 20
	chunkHeaderRoom = 1024
	minChunk        = 4096
)
