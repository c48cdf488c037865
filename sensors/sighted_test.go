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

// scenes/ravon/lidar128.xml's lidar is the 128 x 2048 one issue 31 measures
// (scripts/gpu-check.sh): 128 layers from -22.5 to 22.5 degrees, 2048
// beams a layer around the circle.
func TestRavonLidar128(t *testing.T) {
	s, err := scene.Load(ravonDir+"/lidar128.xml", scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	se := s.Sensors()
	if len(se) != 1 || se[0].Name != "LIDAR128" {
		t.Fatalf("sensors %v, want LIDAR128 alone", se)
	}
	f := se[0].Sensor.(scene.Sighted).FieldOfView()
	d := se[0].Sensor.Describe()
	els := f.Elevations
	if len(els) != 128 || math.Abs(els[0]+22.5) > 1e-9 || math.Abs(els[127]-22.5) > 1e-9 || d["beams_per_layer"] != 2048 {
		t.Errorf("%d layers from %v to %v, %v beams a layer; want 128 from -22.5 to 22.5, 2048", len(els), els[0], els[len(els)-1], d["beams_per_layer"])
	}
	if f.AngleMin != -180 || math.Abs(f.AngleMax-(180-360.0/2048)) > 1e-9 {
		t.Errorf("sweep %v to %v, want -180 to %v", f.AngleMin, f.AngleMax, 180-360.0/2048)
	}
}
