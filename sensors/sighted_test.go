package sensors_test

import (
	"math"
	"slices"
	"testing"

	"github.com/simvis/simvis/scene"
)

// Each built-in sensor tells viewers what it sees (scene.Sighted), from
// its attributes as its constructor read them, defaults included: a
// camera's frustum with the vertical angle its aspect gives, a scan's fan
// from the first beam to the last, a 3D scanner's layers, a PSD's beam.
func TestSensorsTellFieldOfView(t *testing.T) {
	s := roomScene(t, `<sensor type="camera" name="CAM" width="640" height="480" fov="90"/>
  <sensor type="depth" name="DEPTH" width="200" height="100" fov="60"/>
  <sensor type="laser" name="LASER" angle_min="-45" angle_max="45" resolution="0.5"/>
  <sensor type="laser" name="FULL" angle_min="-180" angle_max="180" resolution="1"/>
  <sensor type="laser3d" name="VLP" vertical_min="-10" vertical_max="10" vertical_resolution="5" angle_min="-60" angle_max="60" resolution="2"/>
  <sensor type="psd" name="PSD"/>`)
	vfov := func(h, w, hfov float64) float64 {
		return 2 * math.Atan(math.Tan(hfov*math.Pi/360)*h/w) * 180 / math.Pi
	}
	want := map[string]scene.FieldOfView{
		"CAM":   {HFOV: 90, VFOV: vfov(480, 640, 90)},
		"DEPTH": {HFOV: 60, VFOV: vfov(100, 200, 60)},
		"LASER": {AngleMin: -45, AngleMax: 45},
		"FULL":  {AngleMin: -180, AngleMax: 179}, // a full circle leaves out the beam that would repeat the first
		"VLP":   {AngleMin: -60, AngleMax: 60, Elevations: []float64{-10, -5, 0, 5, 10}},
		"PSD":   {},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for _, se := range s.Sensors() {
		w, ok := want[se.Name]
		if !ok {
			continue
		}
		delete(want, se.Name)
		sg, ok := se.Sensor.(scene.Sighted)
		if !ok {
			t.Errorf("%s (%s) does not tell its field of view", se.Name, se.Type)
			continue
		}
		g := sg.FieldOfView()
		if !near(g.HFOV, w.HFOV) || !near(g.VFOV, w.VFOV) || !near(g.AngleMin, w.AngleMin) || !near(g.AngleMax, w.AngleMax) ||
			!slices.EqualFunc(g.Elevations, w.Elevations, near) {
			t.Errorf("%s: %+v, want %+v", se.Name, g, w)
		}
	}
	for name := range want {
		t.Errorf("no sensor %s in the scene", name)
	}
}
