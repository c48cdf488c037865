package client

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/scene"
)

// Subprotocol is the WebSocket subprotocol of the web viewer's protocol
// (docs/web.md); a client must offer it.
const Subprotocol = "simvis.web.v1"

// Bounds of the protocol: the largest message either side sends (a
// server's file chunk, records and values are split to stay under it),
// and the largest a server reads from a client.
const (
	MaxServerMessage = 8 << 20
	MaxClientMessage = 1 << 20
	// FileChunk is the most bytes of a file one reply carries.
	FileChunk = 1 << 20
)

// Ops of the JSON text messages.
const (
	OpWelcome = "welcome" // server: the first message, Welcome
	OpReply   = "reply"   // server: the outcome of a client's command, Reply
	OpSet     = "set"     // client: write a value (drivers)
	OpRequest = "request" // client: have the host execute an XML command (drivers)
	OpFile    = "file"    // client: a chunk of a model file the change log names
	OpInset   = "inset"   // client: send (or stop sending) a camera's pictures
)

// MaxInsets bounds the cameras one page gets pictures of at once.
const MaxInsets = 4

// Kinds of the binary messages (their first byte).
const (
	KindState = 'S' // a State header, then its values
	KindFile  = 'F' // a FileReply header, then the chunk's bytes
	KindImage = 'I' // an Image header, then a camera's picture as JPEG
)

// Image heads a camera's newest picture (an inset), JPEG-encoded after it.
type Image struct {
	Sensor        string `json:"sensor"`
	Width, Height int
}

// Role is what a connection may do: watch, or also drive.
type Role string

// The roles.
const (
	Viewer Role = "viewer"
	Driver Role = "driver"
)

// View is a viewpoint in world coordinates: position in meters, roll,
// pitch and yaw in degrees (the scene XML's pose), horizontal field of view
// in degrees.
type View struct {
	X, Y, Z          float64
	Roll, Pitch, Yaw float64
	FOV              float64
	Near, Far        float64    // clip planes, meters
	Background       [3]float32 // linear RGB, as the desktop viewer clears
}

// Welcome is the server's first message.
type Welcome struct {
	Op       string  `json:"op"`
	Protocol int     `json:"protocol"`
	Role     Role    `json:"role"`
	Scene    string  `json:"scene"`    // what the page's title shows
	View     View    `json:"view"`     // where the page's camera starts
	Rate     float64 `json:"rate"`     // states a second the server sends at most
	Requests bool    `json:"requests"` // the host takes requests (a recording being played does not)
	// SensorTypes are the host's sensor types: the page, which renders no
	// sensor, knows them by name (their frames and attributes).
	SensorTypes []string `json:"sensor_types"`
}

// Command is a client's message.
type Command struct {
	Op     string  `json:"op"`
	ID     uint64  `json:"id"`
	Epoch  uint64  `json:"epoch,string,omitempty"` // set: the run whose value table Index is in
	Index  int     `json:"index,omitempty"`
	Value  float64 `json:"value"`
	XML    string  `json:"xml,omitempty"`
	Dir    string  `json:"dir,omitempty"`
	Path   string  `json:"path,omitempty"`
	Offset int64   `json:"offset,omitempty"`
	Sensor string  `json:"sensor,omitempty"` // inset: the camera
	On     bool    `json:"on,omitempty"`     // inset: send its pictures (false: stop)
}

// Reply is the outcome of a set or a request. A set is answered only when
// it fails.
type Reply struct {
	Op    string `json:"op"`
	ID    uint64 `json:"id"`
	Seq   uint64 `json:"seq,omitempty"`   // a request's change-log sequence number
	Error string `json:"error,omitempty"` // empty: done
	// Refused: the host refused the request (ipc.RequestError); NotExecuted:
	// the host never took it and it may be sent again (ipc.ErrNotExecuted).
	Refused     bool `json:"refused,omitempty"`
	NotExecuted bool `json:"not_executed,omitempty"`
}

// Status of the host a server follows.
const (
	Running = "running"
	Stopped = "stopped" // no host now; a new one under the name is followed when it comes
)

// Record is a change-log record on the wire (ipc.LogRecord).
type Record struct {
	Seq    uint64         `json:"seq"`
	Source string         `json:"source"`
	Dir    string         `json:"dir"`
	XML    string         `json:"xml"`
	Files  []ipc.FileHash `json:"files,omitempty"`
}

// Element is an element descriptor on the wire (ipc.Descriptor).
type Element struct {
	Name   string   `json:"name"`
	At     string   `json:"at"`
	Type   string   `json:"type"`
	Start  int      `json:"start"`
	Params []string `json:"params"`
}

// State is what a server sends as the host goes on: the run (epoch), the
// change-log records the client has not had yet, the element table when
// it changed, and the values [ValuesFrom, ValuesFrom+n) that follow the
// header. Records and values beyond a message's bound come in the next
// ones.
type State struct {
	Epoch      uint64    `json:"epoch,string"`
	Status     string    `json:"status"`
	Cycle      uint64    `json:"cycle"`       // the host's cycle count, where its transport tells
	SentAt     int64     `json:"sent_at_ms"`  // the server's clock, Unix milliseconds
	Records    []Record  `json:"records"`     // after the client's last, in order
	Elements   []Element `json:"elements"`    // nil: unchanged since the last state
	ValuesFrom int       `json:"values_from"` // index of the first value that follows
	Values     int       `json:"values"`      // how many values follow
	Returns    []Returns `json:"returns"`     // range sensors' newest returns the page lacks
	// Sights are what each sensor sees (scene.Sighted), for the page's
	// field-of-view lines; nil: unchanged since the last state.
	Sights   map[string]scene.FieldOfView `json:"sights,omitempty"`
	Complete bool                         `json:"complete"`       // the client has every record of the run now
	Dropped  uint64                       `json:"dropped_states"` // states this client missed (latest wins)
}

// Returns heads one range sensor's newest returns (what the scan overlay
// draws): its world position and how many world points, float32 x y z
// each, follow the values in the message's tail, in the order of State's
// Returns.
type Returns struct {
	Sensor string     `json:"sensor"`
	Origin [3]float64 `json:"origin"`
	Points int        `json:"points"`
}

// FileReply heads a file chunk: the file's size and the chunk's offset;
// the chunk's bytes follow.
type FileReply struct {
	ID     uint64 `json:"id"`
	Size   int64  `json:"size"`
	Offset int64  `json:"offset"`
	Error  string `json:"error,omitempty"`
}

// EncodeBinary lays out a binary message: kind, the JSON header's length
// (uint32, little-endian), the header, then tail.
func EncodeBinary(kind byte, header any, tail []byte) ([]byte, error) {
	var hb bytes.Buffer
	enc := json.NewEncoder(&hb)
	enc.SetEscapeHTML(false) // records are XML: escaped, each < > & would take 6 bytes
	if err := enc.Encode(header); err != nil {
		return nil, err
	}
	h := bytes.TrimSuffix(hb.Bytes(), []byte("\n"))
	buf := make([]byte, 5, 5+len(h)+len(tail))
	buf[0] = kind
	binary.LittleEndian.PutUint32(buf[1:], uint32(len(h)))
	buf = append(buf, h...)
	return append(buf, tail...), nil
}

// DecodeBinary splits a binary message into its kind, header (decoded into
// header) and tail.
func DecodeBinary(msg []byte, header any) (kind byte, tail []byte, err error) {
	if len(msg) < 5 {
		return 0, nil, errors.New("web: binary message shorter than its header")
	}
	n := binary.LittleEndian.Uint32(msg[1:])
	if uint64(n) > uint64(len(msg)-5) {
		return 0, nil, fmt.Errorf("web: binary header of %d bytes in a message of %d", n, len(msg))
	}
	if err := json.Unmarshal(msg[5:5+n], header); err != nil {
		return 0, nil, fmt.Errorf("web: binary header: %w", err)
	}
	return msg[0], msg[5+n:], nil
}

// PutValues appends values as little-endian float64s.
func PutValues(dst []byte, values []float64) []byte {
	for _, v := range values {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
	}
	return dst
}

// ReadValues decodes little-endian float64s.
func ReadValues(b []byte) ([]float64, error) {
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("web: %d value bytes, not a whole number of float64s", len(b))
	}
	out := make([]float64, len(b)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out, nil
}

// ToRecord is rec on the wire.
func ToRecord(rec ipc.LogRecord) Record {
	return Record{Seq: rec.Seq, Source: rec.Source, Dir: rec.Dir, XML: rec.XML, Files: rec.Files}
}

// ToElement is d on the wire.
func ToElement(d ipc.Descriptor) Element {
	return Element{Name: d.Name, At: d.At, Type: d.Type, Start: d.Start, Params: d.Params}
}

// PutPoints appends world points as little-endian float32 x y z.
func PutPoints(dst []byte, pts []mgl64.Vec3) []byte {
	for _, p := range pts {
		for _, v := range p {
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(v)))
		}
	}
	return dst
}

// ReadPoints decodes n points PutPoints wrote.
func ReadPoints(b []byte, n int) ([]mgl64.Vec3, error) {
	if n < 0 || len(b) != 12*n {
		return nil, fmt.Errorf("web: %d point bytes for %d points", len(b), n)
	}
	out := make([]mgl64.Vec3, n)
	for i := range out {
		for k := range 3 {
			out[i][k] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[12*i+4*k:])))
		}
	}
	return out, nil
}
