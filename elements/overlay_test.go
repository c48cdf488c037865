package elements_test

import (
	"math"
	"testing"

	"github.com/simvis/simvis/internal/testkit"

	"github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/scene"
)

// 160x120 views at 60° from the origin: fx = fy = 80 / tan 30° = 138.56, so
// a point (x, y, z) is drawn at u = 80 - 138.56 y/x, v = 60 - 138.56 z/x.

func TestPointCloud(t *testing.T) {
	s := testkit.LoadXML(t, t.TempDir(), `<scene>
  <element type="pointcloud" name="SCAN" max_points="3" point_size="0.2" color="0 0 1" points="3 1 0  3 0 0.8"/>
</scene>`)
	img := lookAt(t, s, scene.Pose{}, 160, 120, false)
	// (3, 1, 0) -> (33.8, 60); (3, 0, 0.8) -> (80, 23.1); nothing at (3, 0, 0).
	if c := img.RGBAAt(34, 60); !dominant(c, 2) {
		t.Errorf("point 0 at (34,60): %v, want blue", c)
	}
	if c := img.RGBAAt(80, 23); !dominant(c, 2) {
		t.Errorf("point 1 at (80,23): %v, want blue", c)
	}
	if c := img.RGBAAt(80, 60); !isBlack(c) {
		t.Errorf("(80,60): %v, want nothing (count = 2)", c)
	}
	set(t, s, "SCAN", "count", 3)
	set(t, s, "SCAN", "x2", 3)
	set(t, s, "SCAN", "z0", 0.8) // point 0 moves up
	img = lookAt(t, s, scene.Pose{}, 160, 120, false)
	if c := img.RGBAAt(80, 60); !dominant(c, 2) {
		t.Errorf("point 2 at (80,60): %v, want blue", c)
	}
	if c := img.RGBAAt(34, 60); !isBlack(c) {
		t.Errorf("point 0 moved away from (34,60): %v", c)
	}
	if c := img.RGBAAt(34, 23); !dominant(c, 2) {
		t.Errorf("point 0 at (34,23): %v, want blue", c)
	}
	set(t, s, "SCAN", "count", 0)
	img = lookAt(t, s, scene.Pose{}, 160, 120, false)
	for i := 0; i < len(img.Pix); i += 4 {
		if img.Pix[i] > 3 || img.Pix[i+1] > 3 || img.Pix[i+2] > 3 {
			t.Fatalf("count = 0 still draws at pixel %d", i/4)
		}
	}
	set(t, s, "SCAN", "count", 1.5)
	if err := s.Update(); err == nil {
		t.Error("count = 1.5 accepted")
	}
}

// Noise is gaussian with the given sigma, drawn from the seed: the same
// seed draws the same cloud, another seed another one; the table keeps the
// noise-free positions.
func TestPointCloudNoise(t *testing.T) {
	const n = 2000
	cloud := func(seed string) (*scene.Scene, []float64) {
		s := testkit.LoadXML(t, t.TempDir(), `<element type="pointcloud" name="SCAN" max_points="2000" count="2000" noise="0.05" seed="`+seed+`"/>`)
		e, _ := s.Element("SCAN")
		var out []float64
		for _, p := range elements.DrawnPoints(e.Element) {
			out = append(out, p[0], p[1], p[2])
		}
		return s, out
	}
	s, a := cloud("7")
	_, b := cloud("7")
	_, c := cloud("8")
	if len(a) != 3*n {
		t.Fatalf("%d coordinates drawn, want %d", len(a), 3*n)
	}
	same, differ := true, false
	var sum, sq float64
	for i := range a {
		same = same && a[i] == b[i]
		differ = differ || a[i] != c[i]
		sum += a[i]
		sq += a[i] * a[i]
	}
	if !same || !differ {
		t.Errorf("same seed reproduces: %v (want true); another seed differs: %v (want true)", same, differ)
	}
	mean := sum / float64(len(a))
	sigma := math.Sqrt(sq/float64(len(a)) - mean*mean)
	// 6000 samples: the sample sigma is within 3% of 0.05 with near certainty.
	if math.Abs(mean) > 0.003 || math.Abs(sigma-0.05) > 0.0015 {
		t.Errorf("noise mean %.4f sigma %.4f, want 0 and 0.05", mean, sigma)
	}
	if v, _ := s.Value("SCAN", "x5"); v != 0 {
		t.Errorf("table x5 = %v, want the noise-free 0", v)
	}
}

func TestLines(t *testing.T) {
	s := testkit.LoadXML(t, t.TempDir(), `<element type="lines" name="BEAMS" max_lines="2" color="1 1 0" width="3" points="3 -1 0 3 1 0"/>`)
	img := lookAt(t, s, scene.Pose{}, 160, 120, false)
	if c := img.RGBAAt(80, 60); c.R < 200 || c.G < 200 || c.B > 20 {
		t.Errorf("on the beam (80,60): %v, want yellow", c)
	}
	if c := img.RGBAAt(80, 50); !isBlack(c) {
		t.Errorf("off the beam (80,50): %v, want black", c)
	}
	// A second, vertical segment through (3, 0.5, ±1) -> u = 56.9.
	for i, v := range []float64{3, 0.5, -1, 3, 0.5, 1} {
		set(t, s, "BEAMS", []string{"x2", "y2", "z2", "x3", "y3", "z3"}[i], v)
	}
	set(t, s, "BEAMS", "count", 2)
	img = lookAt(t, s, scene.Pose{}, 160, 120, false)
	if c := img.RGBAAt(57, 30); c.R < 200 || c.G < 200 {
		t.Errorf("on the vertical beam (57,30): %v, want yellow", c)
	}
	set(t, s, "BEAMS", "count", 0)
	img = lookAt(t, s, scene.Pose{}, 160, 120, false)
	if c := img.RGBAAt(80, 60); !isBlack(c) {
		t.Errorf("count = 0: (80,60) %v, want nothing drawn", c)
	}
}

func TestGraph(t *testing.T) {
	s := testkit.LoadXML(t, t.TempDir(), `<element type="graph" name="NAV" nodes="DOOR LAB-1" edges="DOOR-LAB-1" marker_size="0.3"
    color="0 0 1" edge_color="1 1 0" width="3" DOOR_x="3" DOOR_y="-1" LAB-1_x="3" LAB-1_y="1"/>`)
	img := lookAt(t, s, scene.Pose{}, 160, 120, false)
	// DOOR at (3, -1, 0) -> u = 126.2; LAB-1 at (3, 1, 0) -> u = 33.8.
	if c := img.RGBAAt(126, 60); !dominant(c, 2) {
		t.Errorf("DOOR marker (126,60): %v, want blue", c)
	}
	if c := img.RGBAAt(34, 60); !dominant(c, 2) {
		t.Errorf("LAB-1 marker (34,60): %v, want blue", c)
	}
	if c := img.RGBAAt(80, 60); c.R < 200 || c.G < 200 || c.B > 20 {
		t.Errorf("edge midpoint (80,60): %v, want yellow", c)
	}
	set(t, s, "NAV", "LAB-1_z", 0.8) // -> v = 23.1
	img = lookAt(t, s, scene.Pose{}, 160, 120, false)
	if c := img.RGBAAt(34, 23); !dominant(c, 2) {
		t.Errorf("moved LAB-1 marker (34,23): %v, want blue", c)
	}
	if c := img.RGBAAt(34, 60); !isBlack(c) {
		t.Errorf("old LAB-1 place (34,60): %v, want empty", c)
	}
	// The edge now runs from (126,60) to (34,23): its midpoint (80, 41.5).
	if c := img.RGBAAt(80, 41); c.R < 150 || c.G < 150 {
		t.Errorf("moved edge midpoint (80,41): %v, want yellow", c)
	}
}

// A label faces the viewer, is size meters tall and drawn in its color.
func TestLabel(t *testing.T) {
	s := testkit.LoadXML(t, t.TempDir(), `<element type="label" name="NAME" text="HHHH" color="1 0 0" x="3" size="0.5"/>`)
	img := lookAt(t, s, scene.Pose{}, 160, 120, false)
	// 0.5 m at 3 m is 23 px tall: rows 48.5 to 71.5.
	red, outside := 0, 0
	for y := 0; y < 120; y++ {
		for x := 0; x < 160; x++ {
			c := img.RGBAAt(x, y)
			if isBlack(c) {
				continue
			}
			if y < 47 || y > 73 {
				outside++
			}
			if dominant(c, 0) {
				red++
			}
		}
	}
	if red < 100 || outside > 0 {
		t.Errorf("%d red pixels (want many), %d drawn outside the label's rows (want 0)", red, outside)
	}
	// Seen from the side (looking along +y from (3, -3, 0)), the billboard
	// still faces the viewer.
	img = lookAt(t, s, scene.Pose{X: 3, Y: -3, Yaw: 90}, 160, 120, false)
	side := 0
	for y := 47; y <= 73; y++ {
		for x := 0; x < 160; x++ {
			if dominant(img.RGBAAt(x, y), 0) {
				side++
			}
		}
	}
	if math.Abs(float64(side-red)) > float64(red)/5 {
		t.Errorf("from the side %d red pixels, head-on %d: want about the same", side, red)
	}
}
