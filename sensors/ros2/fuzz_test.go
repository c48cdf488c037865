package ros2_test

import (
	"bytes"
	"testing"

	"github.com/simvis/simvis/sensors/ros2"
)

// marshaler is every decoded message.
type marshaler interface{ Marshal() []byte }

// decoders are the package's decoders, each as one function.
var decoders = map[string]func([]byte) (marshaler, error){
	"LaserScan": func(b []byte) (marshaler, error) { return ros2.DecodeLaserScan(b) },
	"Range":     func(b []byte) (marshaler, error) { return ros2.DecodeRange(b) },
	"Image":     func(b []byte) (marshaler, error) { return ros2.DecodeImage(b) },
	"PointCloud2": func(b []byte) (marshaler, error) {
		return ros2.DecodePointCloud2(b)
	},
}

// FuzzDecode feeds hostile bytes to every decoder (a recording's messages
// are read back by play): none panics, and what one accepts is a message
// whose encoding decodes again to the same encoding (no field read from
// bytes the message does not own). Seeds: testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	h := ros2.Header{Stamp: ros2.Time{Sec: 1, Nanosec: 2}, FrameID: "scan"}
	f.Add((&ros2.LaserScan{Header: h, Ranges: []float32{1, 2}, Intensities: []float32{3}}).Marshal())
	f.Add((&ros2.Range{Header: h, Range: 1}).Marshal())
	f.Add((&ros2.Image{Header: h, Height: 2, Width: 1, Encoding: "rgb8", Step: 3, Data: make([]byte, 6)}).Marshal())
	f.Add((&ros2.PointCloud2{Header: h, Height: 1, Width: 1, Fields: []ros2.PointField{{Name: "x", Datatype: ros2.Float32, Count: 1}},
		PointStep: 12, RowStep: 12, Data: make([]byte, 12)}).Marshal())
	f.Fuzz(func(t *testing.T, data []byte) {
		for name, decode := range decoders {
			m, err := decode(data)
			if err != nil {
				continue
			}
			enc := m.Marshal()
			m2, err := decode(enc)
			if err != nil {
				t.Fatalf("%s: decoded, but its own encoding does not decode: %v", name, err)
			}
			if enc2 := m2.Marshal(); !bytes.Equal(enc, enc2) {
				t.Fatalf("%s: encoding changed on a round trip", name)
			}
			switch m := m.(type) {
			case *ros2.Image:
				if uint64(m.Step)*uint64(m.Height) != uint64(len(m.Data)) {
					t.Fatalf("Image step %d x height %d with %d bytes", m.Step, m.Height, len(m.Data))
				}
			case *ros2.PointCloud2:
				if uint64(m.RowStep)*uint64(m.Height) != uint64(len(m.Data)) || uint64(m.PointStep)*uint64(m.Width) > uint64(m.RowStep) {
					t.Fatalf("PointCloud2 steps do not fit its data")
				}
			}
		}
	})
}
