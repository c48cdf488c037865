package ros2_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/simvis/simvis/sensors/ros2"
)

// exact are every decoder of the package, each the inverse of a Marshal.
var exact = map[string]func([]byte) (marshaler, error){
	"LaserScan":        func(b []byte) (marshaler, error) { return ros2.DecodeLaserScan(b) },
	"Range":            func(b []byte) (marshaler, error) { return ros2.DecodeRange(b) },
	"Image":            func(b []byte) (marshaler, error) { return ros2.DecodeImage(b) },
	"PointCloud2":      func(b []byte) (marshaler, error) { return ros2.DecodePointCloud2(b) },
	"CameraInfo":       func(b []byte) (marshaler, error) { return ros2.DecodeCameraInfo(b) },
	"TFMessage":        func(b []byte) (marshaler, error) { return ros2.DecodeTFMessage(b) },
	"Change":           func(b []byte) (marshaler, error) { return ros2.DecodeChange(b) },
	"Values":           func(b []byte) (marshaler, error) { return ros2.DecodeValues(b) },
	"Labels":           func(b []byte) (marshaler, error) { return ros2.DecodeLabels(b) },
	"FrameDescription": func(b []byte) (marshaler, error) { return ros2.DecodeFrameDescription(b) },
}

// gen makes random messages of every type: empty and long sequences and
// strings, every float class (NaN, infinities, -0, subnormals) and
// odd lengths that move the alignment of what follows.
type gen struct{ r *rand.Rand }

func (g gen) n(max int) int {
	switch g.r.IntN(4) {
	case 0:
		return 0
	case 1:
		return max
	}
	return g.r.IntN(max + 1)
}

func (g gen) str() string {
	b := make([]byte, g.n(40))
	for i := range b {
		b[i] = byte(1 + g.r.IntN(255)) // CDR strings end at their NUL
	}
	return string(b)
}

var specials = []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 5e-324, math.MaxFloat64, 1.5, -2}

func (g gen) f64() float64 {
	if g.r.IntN(3) == 0 {
		return specials[g.r.IntN(len(specials))]
	}
	return math.Float64frombits(g.r.Uint64())
}

func (g gen) f32() float32 {
	if g.r.IntN(3) == 0 {
		return float32(specials[g.r.IntN(len(specials))])
	}
	return math.Float32frombits(g.r.Uint32())
}

func (g gen) f32s(max int) []float32 {
	v := make([]float32, g.n(max))
	for i := range v {
		v[i] = g.f32()
	}
	return v
}

func (g gen) f64s(max int) []float64 {
	v := make([]float64, g.n(max))
	for i := range v {
		v[i] = g.f64()
	}
	return v
}

func (g gen) header() ros2.Header {
	return ros2.Header{Stamp: ros2.Time{Sec: int32(g.r.Uint32()), Nanosec: g.r.Uint32()}, FrameID: g.str()}
}

func (g gen) bytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	return b
}

func (g gen) bool() bool { return g.r.IntN(2) == 0 }

// messages returns one random message of every type.
func (g gen) messages() map[string]marshaler {
	w, h := uint32(g.n(7)), uint32(g.n(5))
	step := uint32(g.n(4)) * w
	pc := &ros2.PointCloud2{Header: g.header(), Height: h, Width: w, IsBigendian: g.bool(), PointStep: uint32(g.n(24)), IsDense: g.bool()}
	pc.RowStep = pc.PointStep*w + uint32(g.n(3))
	pc.Data = g.bytes(int(pc.RowStep * h))
	for range g.n(6) {
		pc.Fields = append(pc.Fields, ros2.PointField{Name: g.str(), Offset: g.r.Uint32(), Datatype: uint8(g.r.Uint32()), Count: g.r.Uint32()})
	}
	ci := &ros2.CameraInfo{Header: g.header(), Height: g.r.Uint32(), Width: g.r.Uint32(), DistortionModel: g.str(), D: g.f64s(8)}
	for i := range ci.K {
		ci.K[i], ci.R[i] = g.f64(), g.f64()
	}
	for i := range ci.P {
		ci.P[i] = g.f64()
	}
	tf := &ros2.TFMessage{}
	for range g.n(5) {
		t := ros2.TransformStamped{Header: g.header(), ChildFrameID: g.str()}
		for i := range t.Translation {
			t.Translation[i] = g.f64()
		}
		for i := range t.Rotation {
			t.Rotation[i] = g.f64()
		}
		tf.Transforms = append(tf.Transforms, t)
	}
	vals := &ros2.Values{}
	for range g.n(6) {
		vals.Names, vals.Values = append(vals.Names, g.str()), append(vals.Values, g.f64())
	}
	lb := &ros2.Labels{Sensor: g.str()}
	for range g.n(5) {
		lb.Instances = append(lb.Instances, ros2.LabelInstance{ID: uint16(g.r.Uint32()), Name: g.str(), ClassName: g.str(), ClassID: uint16(g.r.Uint32())})
	}
	for range g.n(5) {
		lb.Classes = append(lb.Classes, ros2.LabelClass{ID: uint16(g.r.Uint32()), Name: g.str()})
	}
	return map[string]marshaler{
		"LaserScan": &ros2.LaserScan{Header: g.header(), AngleMin: g.f32(), AngleMax: g.f32(), AngleIncrement: g.f32(), TimeIncrement: g.f32(),
			ScanTime: g.f32(), RangeMin: g.f32(), RangeMax: g.f32(), Ranges: g.f32s(400), Intensities: g.f32s(3)},
		"Range": &ros2.Range{Header: g.header(), RadiationType: uint8(g.r.Uint32()), FieldOfView: g.f32(), MinRange: g.f32(), MaxRange: g.f32(), Range: g.f32()},
		"Image": &ros2.Image{Header: g.header(), Height: h, Width: w, Encoding: g.str(), IsBigendian: uint8(g.r.Uint32()), Step: step,
			Data: g.bytes(int(step * h))},
		"PointCloud2":      pc,
		"CameraInfo":       ci,
		"TFMessage":        tf,
		"Change":           &ros2.Change{Seq: g.r.Uint32(), Source: g.str(), Dir: g.str(), XML: g.str(), Reset: g.bool()},
		"Values":           vals,
		"Labels":           lb,
		"FrameDescription": &ros2.FrameDescription{Sensor: g.str(), Kind: g.str(), Info: g.str()},
	}
}

// Every message the encoders produce decodes to a message that encodes to
// the same bytes (the decoder is the encoder's exact inverse, NaN payloads
// and -0 included), and every cut of it, and every byte of it changed to
// what the encoder never writes there, is refused or decodes to a message
// that encodes back to the bytes given, never a panic.
func TestDecodeExactInverse(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(27, 2026))}
	for round := 0; round < 300; round++ {
		for name, m := range g.messages() {
			b := m.Marshal()
			got, err := exact[name](b)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !bytes.Equal(got.Marshal(), b) {
				t.Fatalf("%s: encode(decode(b)) != b", name)
			}
			if round%10 != 0 {
				continue
			}
			for cut := 0; cut < len(b); cut++ {
				if _, err := exact[name](b[:cut]); err == nil {
					t.Fatalf("%s cut at %d of %d bytes: decoded", name, cut, len(b))
				}
			}
			if _, err := exact[name](append(bytes.Clone(b), 0)); err == nil {
				t.Fatalf("%s with a byte after it: decoded", name)
			}
			for i := 0; i < len(b); i += 1 + len(b)/64 {
				c := bytes.Clone(b)
				c[i] ^= byte(1 + g.r.IntN(255))
				assertExact(t, name, c)
			}
		}
	}
}

func assertExact(t *testing.T, name string, b []byte) {
	t.Helper()
	m, err := exact[name](b)
	if err == nil && !bytes.Equal(m.Marshal(), b) {
		t.Fatalf("%s: accepted % x, which encodes back as % x", name, b, m.Marshal())
	}
}

// The sizes at the bounds: a sequence length that claims more elements
// than the bytes left, up to 2^32-1, is refused before anything is made
// of that size; a message of a megabyte's sequence round-trips.
func TestDecodeHostileLengths(t *testing.T) {
	big := &ros2.LaserScan{Ranges: make([]float32, 1<<18)}
	for i := range big.Ranges {
		big.Ranges[i] = float32(math.Inf(1))
	}
	b := big.Marshal()
	if m, err := ros2.DecodeLaserScan(b); err != nil || !bytes.Equal(m.Marshal(), b) {
		t.Fatalf("a scan of 2^18 ranges: %v", err)
	}
	for name, m := range (gen{rand.New(rand.NewPCG(1, 2))}).messages() {
		b := m.Marshal()
		// Every aligned 4 bytes made the largest count in turn.
		for i := 4; i+4 <= len(b); i += 4 {
			c := bytes.Clone(b)
			copy(c[i:], []byte{0xff, 0xff, 0xff, 0xff})
			assertExact(t, name, c)
			copy(c[i:], []byte{0xff, 0xff, 0xff, 0x7f})
			assertExact(t, name, c)
		}
	}
	// What the encoders never write: options, big-endian, padding, bools.
	scan := (&ros2.LaserScan{Header: ros2.Header{FrameID: "ab"}}).Marshal()
	for i, bad := range [][]byte{
		append([]byte{0, 1, 0, 3}, scan[4:]...),
		append([]byte{0, 0, 0, 0}, scan[4:]...),
		append(append([]byte{}, scan[:15]...), append([]byte{1}, scan[16:]...)...), // padding after "ab\0"
		{},
		{0, 1},
	} {
		if _, err := ros2.DecodeLaserScan(bad); err == nil {
			t.Errorf("case %d: decoded", i)
		}
	}
	change := (&ros2.Change{Source: "a", Dir: ".", XML: "<x/>", Reset: true}).Marshal()
	change[len(change)-1] = 2
	if _, err := ros2.DecodeChange(change); err == nil || !strings.Contains(err.Error(), "bool") {
		t.Errorf("a bool of 2: %v", err)
	}
	info := (&ros2.CameraInfo{DistortionModel: "plumb_bob"}).Marshal()
	info[len(info)-8] = 1 // the roi's width
	if _, err := ros2.DecodeCameraInfo(info); err == nil {
		t.Error("a CameraInfo with a region of interest decoded")
	}
}

// FuzzDecodeExact: whatever a decoder accepts encodes back to exactly the
// bytes it was given; nothing panics. Seeds: one message of each type.
func FuzzDecodeExact(f *testing.F) {
	for _, m := range (gen{rand.New(rand.NewPCG(3, 4))}).messages() {
		f.Add(m.Marshal())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for name := range exact {
			assertExact(t, name, data)
		}
	})
}
