package sensors_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/simvis/simvis/internal/testkit"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/simvis/simvis/sensors"
)

// boxRange is the closed-form range from o along unit d to the inside of
// the room of roomScene (x ±4, y ±3, z 0..3).
func boxRange(o, d mgl64.Vec3) float64 {
	lo, hi := mgl64.Vec3{-4, -3, 0}, mgl64.Vec3{4, 3, 3}
	r := math.Inf(1)
	for k := 0; k < 3; k++ {
		switch {
		case d[k] > 1e-12:
			r = math.Min(r, (hi[k]-o[k])/d[k])
		case d[k] < -1e-12:
			r = math.Min(r, (lo[k]-o[k])/d[k])
		}
	}
	return r
}

// A 16-layer scanner in the room: ranges on both backends against the
// closed form over all six walls, and the cloud as organized PCD.
func TestLaser3DInRoom(t *testing.T) {
	for _, backend := range []string{"cpu", "gpu"} {
		s := roomScene(t, `<sensor type="laser3d" name="VLP" pose_offset="-1 0.5 1.2 0 0 30" resolution="1" backend="`+backend+`"/>`)
		var l *sensors.Laser3D
		for _, se := range s.Sensors() {
			l = se.Sensor.(*sensors.Laser3D)
		}
		cl, err := l.Scan(testkit.Renderer(t), s)
		if err != nil {
			t.Fatal(err)
		}
		if cl.Width != 360 || cl.Height != 16 || len(cl.Points) != 5760 {
			t.Fatalf("%s: %dx%d cloud of %d points", backend, cl.Width, cl.Height, len(cl.Points))
		}
		world := cl.Pose.Matrix()
		o := world.Col(3).Vec3()
		want := make([]float64, len(cl.Ranges))
		for i, p := range cl.Points {
			d := p.Normalize()
			if math.IsNaN(p[0]) {
				t.Fatalf("%s: beam %d returned nothing inside a closed room", backend, i)
			}
			want[i] = boxRange(o, world.Mul4x1(d.Vec4(0)).Vec3())
		}
		share, worst := errorStats(cl.Ranges, want)
		tol := 1e-9 // both backends intersect the exact beams with the triangles
		if share < 0.99 || worst > tol {
			t.Errorf("%s: %.2f %% within 1 mm, worst %.3g m", backend, 100*share, worst)
		}
		t.Logf("%s: %.2f %% within 1 mm, worst %.3g m", backend, 100*share, worst)
		// The layers are at -15..15° every 2°: layer 0 of column 0 (azimuth
		// -180°) points down at -15°.
		if el := math.Asin(cl.Points[0].Normalize()[2]) * 180 / math.Pi; math.Abs(el+15) > 1e-9 {
			t.Errorf("%s: first point at elevation %v°, want -15°", backend, el)
		}
		if backend == "gpu" {
			path := filepath.Join(t.TempDir(), "c.pcd")
			if err := cl.WritePCD(path); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			header, body, ok := bytes.Cut(data, []byte("DATA binary\n"))
			if !ok || !bytes.Contains(header, []byte("WIDTH 360\nHEIGHT 16\n")) || !bytes.Contains(header, []byte("POINTS 5760\n")) || len(body) != 12*5760 {
				t.Errorf("PCD header %q and %d data bytes", header, len(body))
			}
		}
	}
}
