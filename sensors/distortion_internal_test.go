package sensors

import (
	"math"
	"testing"
)

// Distort computes what OpenCV 4.6 (Debian's python3-opencv) computes:
// cv2.projectPoints with K = I for plumb_bob and cv2.fisheye.projectPoints
// for equidistant, for the points (x, y, 1).
func TestDistortMatchesOpenCV(t *testing.T) {
	pts := [][2]float64{{0.3, 0.2}, {-0.7, 0.5}, {0.9, -0.6}}
	for _, c := range []struct {
		d    Distortion
		want [][2]float64
	}{
		{Distortion{Model: PlumbBob, K1: -0.1, K2: 0.01, P1: 0.001, P2: -0.002, K3: 0.003},
			[][2]float64{{0.2956526773, 0.1974051182}, {-0.6570241704, 0.46898583600000004}, {0.8046844551, -0.5368463034}}},
		{Distortion{Model: Equidistant, K1: 0.01, K2: -0.002, K3: 0.0003, K4: -0.00004},
			[][2]float64{{0.2882651289827977, 0.1921767526551985}, {-0.580723794898537, 0.4148027106418121}, {0.6902058506841453, -0.46013723378943017}}},
	} {
		for i, p := range pts {
			xd, yd := c.d.Distort(p[0], p[1])
			if math.Abs(xd-c.want[i][0]) > 1e-12 || math.Abs(yd-c.want[i][1]) > 1e-12 {
				t.Errorf("%s %v: Distort(%v) = (%.13g, %.13g), OpenCV (%.13g, %.13g)", c.d.ModelName(), c.d.D(), p, xd, yd, c.want[i][0], c.want[i][1])
			}
			x, y, ok := c.d.Undistort(xd, yd)
			if !ok || math.Abs(x-p[0]) > 1e-12 || math.Abs(y-p[1]) > 1e-12 {
				t.Errorf("%s: Undistort(Distort(%v)) = (%g, %g, %v)", c.d.ModelName(), p, x, y, ok)
			}
		}
	}
}

// Undistort inverts Distort to 1e-12 over a grid of rays out to 60
// degrees, for both models, with tangential terms.
func TestUndistortInverts(t *testing.T) {
	for _, d := range []Distortion{
		{Model: PlumbBob, K1: -0.2, K2: 0.05},
		{Model: PlumbBob, K1: 0.1, K2: -0.01, P1: 0.002, P2: -0.003, K3: 0.001},
		{Model: Equidistant, K1: -0.01, K2: 0.003},
	} {
		for i := -10; i <= 10; i++ {
			for j := -10; j <= 10; j++ {
				x, y := float64(i)*0.1, float64(j)*0.1
				if d.Model == PlumbBob && math.Hypot(x, y) > 0.9 {
					continue // past the radial term's maximum for k1 = -0.2 ... keep inside the monotonic range
				}
				xd, yd := d.Distort(x, y)
				ux, uy, ok := d.Undistort(xd, yd)
				if !ok || math.Abs(ux-x) > 1e-12 || math.Abs(uy-y) > 1e-12 {
					t.Errorf("%s %v: (%g, %g) -> (%g, %g) -> (%g, %g, %v)", d.ModelName(), d.D(), x, y, xd, yd, ux, uy, ok)
				}
			}
		}
	}
	// An equidistant lens maps theta_d >= pi/2 (k = 0) to no pinhole ray.
	if _, _, ok := (Distortion{Model: Equidistant}).Undistort(1.6, 0); ok {
		t.Error("equidistant: a ray 92 degrees off the axis undistorted to a pinhole ray")
	}
}

// Undistort never panics and, where it reports a ray, the ray maps back.
func FuzzUndistort(f *testing.F) {
	f.Add(false, -0.2, 0.05, 0.0, 0.0, 0.0, 0.0, 0.5, -0.3)
	f.Add(true, 0.01, -0.002, 0.0003, -0.00004, 0.0, 0.0, 1.2, 0.4)
	f.Add(false, -0.5, 0.0, 0.0, 0.0, 0.01, -0.02, 0.6, 0.6)
	f.Fuzz(func(t *testing.T, equi bool, k1, k2, k3, k4, p1, p2, xd, yd float64) {
		for _, v := range []float64{k1, k2, k3, k4, p1, p2, xd, yd} {
			if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e3 {
				return // readDistortion refuses these; pixels lie within the image
			}
		}
		d := Distortion{Model: PlumbBob, K1: k1, K2: k2, K3: k3, P1: p1, P2: p2}
		if equi {
			d = Distortion{Model: Equidistant, K1: k1, K2: k2, K3: k3, K4: k4}
		}
		x, y, ok := d.Undistort(xd, yd)
		if !ok {
			return
		}
		bx, by := d.Distort(x, y)
		// Twice Undistort's own tolerance: the equidistant check is on theta_d.
		if math.Abs(bx-xd)+math.Abs(by-yd) > 2e-12*math.Max(1, math.Abs(xd)+math.Abs(yd)) {
			t.Fatalf("%v: Undistort(%g, %g) = (%g, %g), which distorts to (%g, %g)", d, xd, yd, x, y, bx, by)
		}
	})
}
