package sensors_test

import (
	"errors"
	"math"
	"testing"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// A frame decoded from its encoding gives the returns and the picture the
// rendered frame gives: what a player shows pages from a recording.
func TestDecodeFrameRoundTrip(t *testing.T) {
	s := roomScene(t, `
  <sensor type="camera" name="CAM" pose_offset="0 0 1.5 0 0 30" width="32" height="24"/>
  <sensor type="laser" name="SCAN" pose_offset="0.3 0.2 1 0 0 20" angle_min="-60" angle_max="60" resolution="5"/>
  <sensor type="laser3d" name="CLOUD" pose_offset="0 0 1 0 0 0" layers="2" angle_min="-10" angle_max="10"/>
  <sensor type="psd" name="PSD" pose_offset="0 0 1 0 90 0" range_max="2"/>
  <sensor type="depth" name="DEPTH" pose_offset="0 0 1.5 0 0 0" width="8" height="6"/>`)
	r := testkit.Renderer(t)
	for _, se := range s.Sensors() {
		f, err := sensors.RenderFrame(r, s, se, &sensors.Stamp{Frame: 1, Time: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		info, data, err := f.Encode()
		if err != nil {
			t.Fatal(err)
		}
		g, err := sensors.DecodeFrame(se.Name, f.Kind, info, data)
		if f.Kind == sensors.KindDepth {
			if !errors.Is(err, sensors.ErrNotDecoded) {
				t.Errorf("%s: a depth frame decoded: %v", se.Name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", se.Name, err)
		}
		if g.Kind != f.Kind || g.Sensor != se.Name {
			t.Errorf("%s: decoded %q of %q", se.Name, g.Kind, g.Sensor)
		}
		if img, _ := f.ImageData(); img != nil {
			got, info := g.ImageData()
			if got == nil || got.Bounds() != img.Bounds() || string(got.Pix) != string(img.Pix) || info.Intrinsics.Width != 32 {
				t.Errorf("%s: the decoded picture differs", se.Name)
			}
			continue
		}
		want, _ := f.Returns()
		got, ok := g.Returns()
		// Clouds travel as float32: millimeters agree.
		tol := 1e-12
		if f.Kind == sensors.KindCloud {
			tol = 1e-4
		}
		if !ok || len(got.Points) != len(want.Points) || len(want.Points) == 0 || got.Origin.Sub(want.Origin).Len() > 1e-12 {
			t.Fatalf("%s: %d returns from %v decoded, want %d from %v", se.Name, len(got.Points), got.Origin, len(want.Points), want.Origin)
		}
		for i := range want.Points {
			if d := got.Points[i].Sub(want.Points[i]).Len(); d > tol {
				t.Errorf("%s: return %d at %v, want %v", se.Name, i, got.Points[i], want.Points[i])
				break
			}
		}
	}
}

// nonFiniteScan is the encoding of a scan with a beam without a return,
// one too close and a pose that is not finite.
func nonFiniteScan(tb testing.TB) (info, data []byte) {
	tb.Helper()
	sc := &sensors.Scan{Sensor: "S", AngleMin: -0.1, AngleMax: 0.2, AngleIncrement: 0.1, RangeMin: 0.1, RangeMax: 5,
		Ranges: []float64{1, math.Inf(1), math.Inf(-1), 2.5}, Pose: scene.Pose{X: 1, Yaw: math.NaN()}}
	info, data, err := sensors.NewFrame("S", sc, nil).Encode()
	if err != nil {
		tb.Fatal(err)
	}
	return info, data
}

// Beams without a return and beams too close stay so (JSON's nulls), and
// a pose that is not finite comes back NaN.
func TestDecodeFrameNonFinite(t *testing.T) {
	info, data := nonFiniteScan(t)
	f, err := sensors.DecodeFrame("S", sensors.KindScan, info, data)
	if err != nil {
		t.Fatal(err)
	}
	got := f.ScanData()
	if got.Ranges[0] != 1 || !math.IsInf(got.Ranges[1], 1) || !math.IsInf(got.Ranges[2], -1) || got.Ranges[3] != 2.5 ||
		got.Pose.X != 1 || !math.IsNaN(got.Pose.Yaw) || got.AngleIncrement != 0.1 {
		t.Errorf("decoded %+v", got)
	}
	if _, err := sensors.DecodeFrame("S", sensors.KindImage, []byte(`{"width":2,"height":2}`), make([]byte, 5)); err == nil {
		t.Error("an image of 5 bytes for 2x2 decoded")
	}
}

// A recording's hostile header cannot pass sizes whose product wraps
// around to the bytes it holds (4294967296 x 4294967296 x 3 is 0 in 64
// bits): an error, never a panic in image.NewRGBA.
func TestDecodeFrameHostileSizes(t *testing.T) {
	for _, tc := range []struct {
		kind, info string
		data       []byte
		want       string
	}{
		{sensors.KindImage, `{"sensor":"C","width":4294967296,"height":4294967296}`, nil,
			`sensor "S": a image frame: 0 bytes of RGB for 4294967296x4294967296`},
		{sensors.KindImage, `{"sensor":"C","width":6148914691236517206,"height":1}`, make([]byte, 2),
			`sensor "S": a image frame: 2 bytes of RGB for 6148914691236517206x1`},
		{sensors.KindImage, `{"sensor":"C","width":-1,"height":-3}`, make([]byte, 9),
			`sensor "S": a image frame: 9 bytes of RGB for -1x-3`},
		{sensors.KindCloud, `{"sensor":"L","width":4294967296,"height":4294967296}`, nil,
			`sensor "S": a cloud frame: 0 bytes of points for 4294967296x4294967296`},
		{sensors.KindCloud, `{"sensor":"L","width":1537228672809129302,"height":1}`, make([]byte, 8),
			`sensor "S": a cloud frame: 8 bytes of points for 1537228672809129302x1`},
	} {
		_, err := sensors.DecodeFrame("S", tc.kind, []byte(tc.info), tc.data)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s %s with %d bytes: %v, want %q", tc.kind, tc.info, len(tc.data), err, tc.want)
		}
	}
	if f, err := sensors.DecodeFrame("C", sensors.KindImage, []byte(`{"sensor":"C","width":2,"height":3}`), make([]byte, 18)); err != nil {
		t.Errorf("a 2x3 picture of 18 bytes: %v", err)
	} else if img, _ := f.ImageData(); img == nil || img.Rect.Dx() != 2 || img.Rect.Dy() != 3 {
		t.Errorf("a 2x3 picture decoded as %v", img)
	}
}

// DecodeFrame reads recordings, which are hostile: whatever a frame's
// header and data hold, it returns a frame or an error, never panics, and
// a frame it returns encodes and decodes again as the same kind.
func FuzzDecodeFrame(f *testing.F) {
	info, data := nonFiniteScan(f)
	f.Add(sensors.KindScan, info, data)
	f.Add(sensors.KindImage, []byte(`{"sensor":"C","width":2,"height":3}`), make([]byte, 18))
	f.Add(sensors.KindImage, []byte(`{"sensor":"C","width":4294967296,"height":4294967296}`), []byte{})
	f.Add(sensors.KindCloud, []byte(`{"sensor":"L","width":2,"height":1,"origin":[0,0,1]}`), make([]byte, 24))
	f.Add(sensors.KindCloud, []byte(`{"sensor":"L","width":1537228672809129302,"height":1}`), make([]byte, 8))
	f.Add(sensors.KindPSD, []byte(`{"sensor":"P","range":1.5,"range_max":2}`), []byte{})
	f.Add(sensors.KindDepth, []byte(`{}`), []byte{})
	f.Fuzz(func(t *testing.T, kind string, info, data []byte) {
		fr, err := sensors.DecodeFrame("S", kind, info, data)
		if err != nil {
			return
		}
		fr.Returns()
		fr.ImageData()
		info2, data2, err := fr.Encode()
		if err != nil {
			t.Fatalf("a decoded %s frame does not encode: %v", kind, err)
		}
		again, err := sensors.DecodeFrame("S", fr.Kind, info2, data2)
		if err != nil {
			t.Fatalf("a decoded %s frame, encoded, does not decode: %v\n%.300s", kind, err, info2)
		}
		if again.Kind != fr.Kind {
			t.Fatalf("decoded as %q, then as %q", fr.Kind, again.Kind)
		}
	})
}
