package sensors_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/sensors/raycast"
)

// The benchmark scenes are what they claim: 50 MARVINs with three
// 361-beam scanners each, and a closed cave of a million triangles whose
// scanner sees a wall within the cave's radii in every beam.
func TestBenchScenes(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and loads a million triangles")
	}
	files, err := sensors.WriteBenchScenes(t.TempDir(), "../scenes/marvin")
	if err != nil {
		t.Fatal(err)
	}
	s, err := scene.Load(files[0], scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lasers, robots := 0, 0
	for _, se := range s.Sensors() {
		if _, ok := se.Sensor.(*sensors.Laser); ok && se.Type == "laser" {
			lasers++
		}
	}
	for _, p := range s.Parts() {
		if filepath.Base(p.File) == "marvin.gltf" {
			robots++
		}
	}
	if lasers != 150 || robots != 50 {
		t.Errorf("marvin50: %d scanners on %d robots, want 150 on 50", lasers, robots)
	}

	s, err = scene.Load(files[2], scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The ring: every camera on MARVIN's mount, 640x480, a yaw of its own.
	mount, ok := s.InsertionPoint("MARVIN/CAMERA_MOUNT")
	if !ok {
		t.Fatal("cameras.xml: no MARVIN/CAMERA_MOUNT")
	}
	yaws := map[int]bool{}
	for _, se := range s.Sensors() {
		cam, ok := se.Sensor.(*sensors.Camera)
		if !ok || cam.View().Width != 640 || cam.View().Height != 480 {
			t.Fatalf("cameras.xml: sensor %s is not a 640x480 camera", se.Name)
		}
		in := mount.World().Inv().Mul4(cam.View().Pose)
		yaws[int(math.Round(math.Atan2(in.At(1, 0), in.At(0, 0))*180/math.Pi))] = true
	}
	if len(s.Sensors()) != sensors.BenchCameraRing || len(yaws) != sensors.BenchCameraRing {
		t.Errorf("cameras.xml: %d cameras, %d yaws, want %d of each", len(s.Sensors()), len(yaws), sensors.BenchCameraRing)
	}

	s, err = scene.Load(files[1], scene.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := raycast.New()
	c.Sync(s)
	if c.Triangles() != 1_000_000 {
		t.Fatalf("mesh1m: %d triangles", c.Triangles())
	}
	f, err := s.Frame("SCAN")
	if err != nil {
		t.Fatal(err)
	}
	o := f.World().Col(3).Vec3()
	// The cave's radius is 5 m (1 ± 0.13) around the origin.
	lo, hi := 5*0.87-o.Len(), 5*1.13+o.Len()
	for a := -90.0; a <= 90; a += 0.5 {
		rad := a * math.Pi / 180
		d := f.World().Mul4x1(mgl64.Vec4{math.Cos(rad), math.Sin(rad), 0, 0}).Vec3()
		if r, ok := c.Cast(o, d, math.Inf(1)); !ok || r < lo || r > hi {
			t.Fatalf("beam at %v°: range %v (hit %v), want within [%.2f, %.2f]", a, r, ok, lo, hi)
		}
	}
}
