package ros2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Decoding reads back what this package encodes (CDR little-endian with
// its encapsulation header); the input is hostile: every length is
// checked against the bytes that remain. Each decoder is the exact inverse
// of its Marshal: it refuses what Marshal never writes (options in the
// encapsulation header, padding that is not zero, a bool other than 0 or
// 1, a string without its NUL, bytes after the message), so that what it
// accepts marshals back to the same bytes and a player republishes what
// was recorded.

var errShort = errors.New("ros2: message ends early")

type reader struct {
	b   []byte
	off int // within b, which starts after the encapsulation header
	err error
}

func newReader(data []byte) (*reader, error) {
	if len(data) < 4 {
		return nil, errShort
	}
	if data[0] != 0 || data[1] != 1 {
		return nil, fmt.Errorf("ros2: encapsulation %#x %#x: want CDR little-endian (0x00 0x01)", data[0], data[1])
	}
	if data[2] != 0 || data[3] != 0 {
		return nil, fmt.Errorf("ros2: encapsulation options %#x %#x: want none", data[2], data[3])
	}
	return &reader{b: data[4:]}, nil
}

func (r *reader) take(n, align int) []byte {
	if r.err != nil {
		return nil
	}
	for align > 1 && r.off%align != 0 {
		if r.off < len(r.b) && r.b[r.off] != 0 {
			r.err = errors.New("ros2: padding that is not zero")
			return nil
		}
		r.off++
	}
	if n < 0 || r.off+n > len(r.b) || r.off+n < r.off {
		r.err = errShort
		return nil
	}
	out := r.b[r.off : r.off+n]
	r.off += n
	return out
}

func (r *reader) u8() uint8 {
	if b := r.take(1, 1); b != nil {
		return b[0]
	}
	return 0
}

// boolean reads a bool, refusing bytes other than 0 and 1.
func (r *reader) boolean() bool {
	v := r.u8()
	if v > 1 && r.err == nil {
		r.err = fmt.Errorf("ros2: bool %d: want 0 or 1", v)
	}
	return v == 1
}

func (r *reader) u32() uint32 {
	if b := r.take(4, 4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) f32() float32 { return math.Float32frombits(r.u32()) }

func (r *reader) f64() float64 {
	if b := r.take(8, 8); b != nil {
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	}
	return 0
}

// count reads a sequence length of elements of size bytes each, refusing
// one longer than the bytes left.
func (r *reader) count(size int) int {
	n := int(r.u32())
	if r.err == nil && (n < 0 || n > (len(r.b)-r.off)/max(size, 1)) {
		r.err = errShort
		return 0
	}
	return n
}

func (r *reader) str() string {
	n := r.count(1)
	if n == 0 && r.err == nil {
		r.err = errors.New("ros2: string of length 0 (without its terminating NUL)")
	}
	b := r.take(n, 1)
	if len(b) == 0 {
		return ""
	}
	if b[len(b)-1] != 0 {
		r.err = errors.New("ros2: string without its terminating NUL")
		return ""
	}
	return string(b[:len(b)-1])
}

func (r *reader) header() Header {
	return Header{Stamp: Time{Sec: int32(r.u32()), Nanosec: r.u32()}, FrameID: r.str()}
}

func (r *reader) f32seq() []float32 {
	n := r.count(4)
	out := make([]float32, n)
	for i := range out {
		out[i] = r.f32()
	}
	return out
}

func (r *reader) bytes() []byte {
	n := r.count(1)
	return append([]byte(nil), r.take(n, 1)...)
}

func (r *reader) done(typ string) error {
	if r.err != nil {
		return fmt.Errorf("%s: %w", typ, r.err)
	}
	if r.off != len(r.b) {
		return fmt.Errorf("ros2: %s: %d bytes after the message", typ, len(r.b)-r.off)
	}
	return nil
}

// DecodeLaserScan reads a LaserScan.
func DecodeLaserScan(data []byte) (*LaserScan, error) {
	r, err := newReader(data)
	if err != nil {
		return nil, err
	}
	m := &LaserScan{Header: r.header()}
	for _, p := range []*float32{&m.AngleMin, &m.AngleMax, &m.AngleIncrement, &m.TimeIncrement, &m.ScanTime, &m.RangeMin, &m.RangeMax} {
		*p = r.f32()
	}
	m.Ranges, m.Intensities = r.f32seq(), r.f32seq()
	return m, r.done(TypeLaserScan)
}

// DecodeRange reads a Range.
func DecodeRange(data []byte) (*Range, error) {
	r, err := newReader(data)
	if err != nil {
		return nil, err
	}
	m := &Range{Header: r.header(), RadiationType: r.u8()}
	m.FieldOfView, m.MinRange, m.MaxRange, m.Range = r.f32(), r.f32(), r.f32(), r.f32()
	return m, r.done(TypeRange)
}

// DecodeImage reads an Image; Data is a copy.
func DecodeImage(data []byte) (*Image, error) {
	r, err := newReader(data)
	if err != nil {
		return nil, err
	}
	m := &Image{Header: r.header(), Height: r.u32(), Width: r.u32(), Encoding: r.str(), IsBigendian: r.u8(), Step: r.u32()}
	m.Data = r.bytes()
	if err := r.done(TypeImage); err != nil {
		return nil, err
	}
	if uint64(m.Step)*uint64(m.Height) != uint64(len(m.Data)) {
		return nil, fmt.Errorf("ros2: Image %dx%d step %d with %d bytes of data", m.Width, m.Height, m.Step, len(m.Data))
	}
	return m, nil
}

// DecodePointCloud2 reads a PointCloud2; Data is a copy.
func DecodePointCloud2(data []byte) (*PointCloud2, error) {
	r, err := newReader(data)
	if err != nil {
		return nil, err
	}
	m := &PointCloud2{Header: r.header(), Height: r.u32(), Width: r.u32()}
	n := r.count(13) // the least a field takes
	for i := 0; i < n && r.err == nil; i++ {
		m.Fields = append(m.Fields, PointField{Name: r.str(), Offset: r.u32(), Datatype: r.u8(), Count: r.u32()})
	}
	m.IsBigendian = r.boolean()
	m.PointStep, m.RowStep = r.u32(), r.u32()
	m.Data = r.bytes()
	m.IsDense = r.boolean()
	if err := r.done(TypePointCloud2); err != nil {
		return nil, err
	}
	if uint64(m.RowStep)*uint64(m.Height) != uint64(len(m.Data)) || uint64(m.PointStep)*uint64(m.Width) > uint64(m.RowStep) {
		return nil, fmt.Errorf("ros2: PointCloud2 %dx%d, point step %d, row step %d with %d bytes of data", m.Width, m.Height, m.PointStep, m.RowStep, len(m.Data))
	}
	return m, nil
}

func (r *reader) u16() uint16 {
	if b := r.take(2, 2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *reader) f64seq() []float64 {
	n := r.count(8)
	out := make([]float64, n)
	for i := range out {
		out[i] = r.f64()
	}
	return out
}

func (r *reader) f64arr(out []float64) {
	for i := range out {
		out[i] = r.f64()
	}
}

// DecodeCameraInfo reads a CameraInfo, refusing binning and a region of
// interest (what CameraInfo cannot hold: Marshal writes them zero).
func DecodeCameraInfo(data []byte) (*CameraInfo, error) {
	r, err := newReader(data)
	if err != nil {
		return nil, err
	}
	m := &CameraInfo{Header: r.header(), Height: r.u32(), Width: r.u32(), DistortionModel: r.str(), D: r.f64seq()}
	r.f64arr(m.K[:])
	r.f64arr(m.R[:])
	r.f64arr(m.P[:])
	var rest [6]uint32 // binning x, y; roi x_offset, y_offset, height, width
	for i := range rest {
		rest[i] = r.u32()
	}
	rectify := r.boolean()
	if err := r.done(TypeCameraInfo); err != nil {
		return nil, err
	}
	if rest != [6]uint32{} || rectify {
		return nil, fmt.Errorf("ros2: %s with binning %d %d or a region of interest %v %v: want none", TypeCameraInfo, rest[0], rest[1], rest[2:], rectify)
	}
	return m, nil
}

// DecodeTFMessage reads a TFMessage.
func DecodeTFMessage(data []byte) (*TFMessage, error) {
	r, err := newReader(data)
	if err != nil {
		return nil, err
	}
	m := &TFMessage{}
	// The least a transform takes: stamp, two one-byte strings, 7 float64.
	n := r.count(8 + 5 + 5 + 56)
	for i := 0; i < n && r.err == nil; i++ {
		t := TransformStamped{Header: r.header(), ChildFrameID: r.str()}
		r.f64arr(t.Translation[:])
		r.f64arr(t.Rotation[:])
		m.Transforms = append(m.Transforms, t)
	}
	return m, r.done(TypeTFMessage)
}
