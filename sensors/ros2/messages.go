package ros2

import (
	"math"
	"time"
)

// Time is builtin_interfaces/msg/Time: seconds and nanoseconds since an
// epoch the caller chooses (simvis recordings: see docs/recordings.md).
type Time struct {
	Sec     int32
	Nanosec uint32
}

// TimeFromNanos splits ns nanoseconds since the epoch into a Time; ns is
// clamped to what Time holds (0 to 2^31 s).
func TimeFromNanos(ns int64) Time {
	ns = max(0, min(ns, math.MaxInt32*int64(time.Second)))
	return Time{Sec: int32(ns / 1e9), Nanosec: uint32(ns % 1e9)}
}

// Nanos returns the time in nanoseconds since the epoch.
func (t Time) Nanos() int64 { return int64(t.Sec)*1e9 + int64(t.Nanosec) }

// Header is std_msgs/msg/Header.
type Header struct {
	Stamp   Time
	FrameID string
}

func (w *writer) header(h Header) {
	w.i32(h.Stamp.Sec)
	w.u32(h.Stamp.Nanosec)
	w.str(h.FrameID)
}

// LaserScan is sensor_msgs/msg/LaserScan: angles in radians from +x toward
// +y, ranges in meters, +Inf no return within RangeMax and -Inf closer
// than RangeMin (REP-117).
type LaserScan struct {
	Header                                                      Header
	AngleMin, AngleMax, AngleIncrement, TimeIncrement, ScanTime float32
	RangeMin, RangeMax                                          float32
	Ranges, Intensities                                         []float32
}

// Marshal returns the message as CDR with its encapsulation header.
func (m *LaserScan) Marshal() []byte {
	w := newWriter(64 + 4*len(m.Ranges) + 4*len(m.Intensities))
	w.header(m.Header)
	for _, v := range []float32{m.AngleMin, m.AngleMax, m.AngleIncrement, m.TimeIncrement, m.ScanTime, m.RangeMin, m.RangeMax} {
		w.f32(v)
	}
	w.f32seq(m.Ranges)
	w.f32seq(m.Intensities)
	return w.b
}

// PointField datatypes.
const (
	Uint16  uint8 = 4
	Float32 uint8 = 7
)

// PointField is sensor_msgs/msg/PointField.
type PointField struct {
	Name     string
	Offset   uint32
	Datatype uint8
	Count    uint32
}

// PointCloud2 is sensor_msgs/msg/PointCloud2.
type PointCloud2 struct {
	Header             Header
	Height, Width      uint32
	Fields             []PointField
	IsBigendian        bool
	PointStep, RowStep uint32
	Data               []byte
	IsDense            bool
}

// Marshal returns the message as CDR with its encapsulation header.
func (m *PointCloud2) Marshal() []byte {
	w := newWriter(128 + len(m.Data))
	w.header(m.Header)
	w.u32(m.Height)
	w.u32(m.Width)
	w.u32(uint32(len(m.Fields)))
	for _, f := range m.Fields {
		w.str(f.Name)
		w.u32(f.Offset)
		w.u8(f.Datatype)
		w.u32(f.Count)
	}
	w.boolean(m.IsBigendian)
	w.u32(m.PointStep)
	w.u32(m.RowStep)
	w.bytes(m.Data)
	w.boolean(m.IsDense)
	return w.b
}

// Image is sensor_msgs/msg/Image; Encoding one of "rgb8", "32FC1",
// "mono16" here.
type Image struct {
	Header        Header
	Height, Width uint32
	Encoding      string
	IsBigendian   uint8
	Step          uint32
	Data          []byte
}

// Marshal returns the message as CDR with its encapsulation header.
func (m *Image) Marshal() []byte {
	w := newWriter(64 + len(m.Data))
	w.header(m.Header)
	w.u32(m.Height)
	w.u32(m.Width)
	w.str(m.Encoding)
	w.u8(m.IsBigendian)
	w.u32(m.Step)
	w.bytes(m.Data)
	return w.b
}

// CameraInfo is sensor_msgs/msg/CameraInfo (binning 0 and an empty region
// of interest: the full, unbinned image).
type CameraInfo struct {
	Header          Header
	Height, Width   uint32
	DistortionModel string
	D               []float64
	K, R            [9]float64
	P               [12]float64
}

// Marshal returns the message as CDR with its encapsulation header.
func (m *CameraInfo) Marshal() []byte {
	w := newWriter(512)
	w.header(m.Header)
	w.u32(m.Height)
	w.u32(m.Width)
	w.str(m.DistortionModel)
	w.f64seq(m.D)
	w.f64arr(m.K[:])
	w.f64arr(m.R[:])
	w.f64arr(m.P[:])
	w.u32(0) // binning_x
	w.u32(0) // binning_y
	for i := 0; i < 4; i++ {
		w.u32(0) // roi x_offset, y_offset, height, width
	}
	w.boolean(false) // roi do_rectify
	return w.b
}

// Range radiation types.
const (
	Ultrasound uint8 = 0
	Infrared   uint8 = 1
)

// Range is sensor_msgs/msg/Range: Range +Inf beyond MaxRange, -Inf closer
// than MinRange (REP-117).
type Range struct {
	Header                                 Header
	RadiationType                          uint8
	FieldOfView, MinRange, MaxRange, Range float32
}

// Marshal returns the message as CDR with its encapsulation header.
func (m *Range) Marshal() []byte {
	w := newWriter(64)
	w.header(m.Header)
	w.u8(m.RadiationType)
	w.f32(m.FieldOfView)
	w.f32(m.MinRange)
	w.f32(m.MaxRange)
	w.f32(m.Range)
	return w.b
}

// TransformStamped is geometry_msgs/msg/TransformStamped: the pose of
// ChildFrameID in Header.FrameID (it maps child coordinates to parent
// coordinates); Rotation is the unit quaternion x, y, z, w.
type TransformStamped struct {
	Header       Header
	ChildFrameID string
	Translation  [3]float64
	Rotation     [4]float64
}

// TFMessage is tf2_msgs/msg/TFMessage.
type TFMessage struct {
	Transforms []TransformStamped
}

// Marshal returns the message as CDR with its encapsulation header.
func (m *TFMessage) Marshal() []byte {
	w := newWriter(128 * len(m.Transforms))
	w.u32(uint32(len(m.Transforms)))
	for _, t := range m.Transforms {
		w.header(t.Header)
		w.str(t.ChildFrameID)
		w.f64arr(t.Translation[:])
		w.f64arr(t.Rotation[:])
	}
	return w.b
}
