package sensors_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// BenchmarkQuickstartCamera renders the quickstart scene's 640x480 camera and
// reads the image back, the work `simvis capture` does per camera frame.
func BenchmarkQuickstartCamera(b *testing.B) {
	s, err := scene.Load("../scenes/quickstart/scene.xml", scene.Options{})
	if err != nil {
		b.Fatal(err)
	}
	r, err := sensors.NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	cam := s.Sensors()[0].Sensor.(*sensors.Camera)
	yaw := 0.0
	b.ResetTimer()
	for b.Loop() {
		// Move the robot every frame so nothing is cached between frames.
		yaw += 1
		if err := s.Set("R_POSE", "yaw", yaw); err != nil {
			b.Fatal(err)
		}
		if _, err := cam.Image(r, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}

// BenchmarkShowcaseCamera renders the showcase scene's 640x480 mast camera
// (own lights: a sun, an ambient light and a spot headlight) while the pan
// joint turns, and reads the image back.
func BenchmarkShowcaseCamera(b *testing.B) {
	s, err := scene.Load("../scenes/showcase/scene.xml", scene.Options{})
	if err != nil {
		b.Fatal(err)
	}
	r, err := sensors.NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var cam *sensors.Camera
	for _, se := range s.Sensors() {
		if se.Name == "MAST_CAM" {
			cam = se.Sensor.(*sensors.Camera)
		}
	}
	angle := 0.0
	for b.Loop() {
		angle = math.Mod(angle+1, 90)
		if err := s.Set("PAN", "angle", angle-45); err != nil {
			b.Fatal(err)
		}
		if _, err := cam.Image(r, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}

// BenchmarkLaserCulling scans a room holding 20 dense objects (10,000
// triangles each) either 1 m above the scan plane, outside the scanner's
// one-row views and culled, or in the plane, drawn: the cost of a planar
// scan follows the triangles in its thin frustum, not the scene.
func BenchmarkLaserCulling(b *testing.B) {
	for _, placement := range []struct {
		name string
		z    float64
	}{{"above_plane", 1.3}, {"in_plane", 0.3}} {
		b.Run(placement.name, func(b *testing.B) {
			dir := b.TempDir()
			room := models.NewModel("room")
			room.AddNode(nil, "room", mgl64.Translate3D(0, 0, 1.5), models.Box("room", 12, 8, 3, [4]float32{1, 1, 1, 1}))
			if err := models.Write(filepath.Join(dir, "room.glb"), room); err != nil {
				b.Fatal(err)
			}
			dense := models.NewModel("dense")
			dense.AddNode(nil, "dense", mgl64.Ident4(), models.Cylinder("dense", 0.2, 0.1, 2500, [4]float32{1, 0, 0, 1}))
			if err := models.Write(filepath.Join(dir, "dense.glb"), dense); err != nil {
				b.Fatal(err)
			}
			var xml strings.Builder
			xml.WriteString(`<scene><part file="room.glb" name="ROOM"/>`)
			for i := 0; i < 20; i++ {
				fmt.Fprintf(&xml, `<part file="dense.glb" name="D%d" pose_offset="%g %g %g 0 0 0"/>`, i, 1+float64(i%5), -2+float64(i/5), placement.z)
			}
			xml.WriteString(`<sensor type="laser" name="L" pose_offset="-3 0 0.3 0 0 0"/></scene>`)
			path := filepath.Join(dir, "scene.xml")
			if err := os.WriteFile(path, []byte(xml.String()), 0o644); err != nil {
				b.Fatal(err)
			}
			s, err := scene.Load(path, scene.Options{})
			if err != nil {
				b.Fatal(err)
			}
			r, err := sensors.NewRenderer()
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			l := s.Sensors()[0].Sensor.(*sensors.Laser)
			for b.Loop() {
				if _, err := l.Scan(r, s); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "scans/s")
		})
	}
}

// BenchmarkMarvinScan scans MARVIN's front scanner (361 beams) on the GPU
// backend, the scene unchanged between scans, as `simvis bench` does.
func BenchmarkMarvinScan(b *testing.B) {
	s, err := scene.Load("../scenes/marvin/scene.xml", scene.Options{})
	if err != nil {
		b.Fatal(err)
	}
	r, err := sensors.NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var l *sensors.Laser
	for _, se := range s.Sensors() {
		if se.Name == "FRONT_LASER" {
			l = se.Sensor.(*sensors.Laser)
		}
	}
	for b.Loop() {
		if _, err := l.Scan(r, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "scans/s")
}

// Bench reports, per range sensor, the hit/miss disagreements with the
// exact caster (none for the 3D scanner whose beams graze a wall's top
// edge, where the plane of the wall's triangle once gave 5-7 m) and how
// many GPU candidates the caster overruled.
func TestBenchReportsHitMiss(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "wall.glb", func(m *models.Model) {
		m.AddNode(nil, "wall", mgl64.Ident4(), models.Box("wall", 0.2, 20, 5, [4]float32{1, 1, 1, 1}))
	})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="wall.glb" name="WALL" pose_offset="5 0 -2 0 0 0"/>
  <sensor type="laser3d" name="V" vertical_min="2" vertical_max="6" vertical_resolution="0.25"
          angle_min="-60" angle_max="60" resolution="0.1" range_max="100"/>
  <sensor type="camera" name="C" width="32" height="24"/>
</scene>`)
	res, err := sensors.Bench(testkit.Renderer(t), s, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[1].HitMiss != nil {
		t.Fatalf("results %+v: want the scanner's, then the camera's without accuracy", res)
	}
	v := res[0]
	if v.HitMiss == nil || *v.HitMiss != 0 || v.Within1mm != 1 || v.MaxError > 1e-9 {
		t.Errorf("scanner: hit/miss %v, within 1 mm %v, max error %v; want 0, 1, exact", v.HitMiss, v.Within1mm, v.MaxError)
	}
	// Over the edge, the GPU sees the wall around beams that miss it: their
	// candidates are none (the exact test on the wall misses), which the
	// caster confirms; no surface hides from the render here.
	if v.ExactBeams != 0 {
		t.Errorf("scanner: the caster overruled %d of %d GPU candidates, want none", v.ExactBeams, v.Beams)
	}
}

// BenchmarkQuickstartLidar scans a default 3D lidar (16 x 900 beams) on the
// quickstart robot's mast on the GPU backend.
func BenchmarkQuickstartLidar(b *testing.B) {
	dir := b.TempDir()
	for _, f := range []string{"world.gltf", "robot.gltf"} {
		data, err := os.ReadFile(filepath.Join("../scenes/quickstart", f))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	s := testkit.LoadXML(b, dir, `<scene>
  <part file="world.gltf" name="WORLD"/>
  <part file="robot.gltf" name="ROBOT" insert_at="WORLD"/>
  <element type="pose" name="R_POSE" insert_at="ROBOT" x="-2" y="-1" yaw="20"/>
  <sensor type="laser3d" name="LIDAR" insert_at="ROBOT/MAST_TOP"/>
</scene>`)
	r, err := sensors.NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	l := s.Sensors()[0].Sensor.(*sensors.Laser3D)
	for b.Loop() {
		if _, err := l.Scan(r, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "scans/s")
}

// TestBenchSetRefusesASensorTwice: a cycle renders each sensor once, and
// RenderFrames writes a sensor's frame state while the batch is cast, so a
// set naming one twice is refused with the name.
func TestBenchSetRefusesASensorTwice(t *testing.T) {
	s := testkit.LoadXML(t, t.TempDir(), `<scene>
  <sensor type="laser" name="L" backend="cpu"/>
</scene>`)
	_, err := sensors.BenchSet(testkit.Renderer(t), s, []string{"L", "L"}, time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), `"L" named twice`) {
		t.Fatalf("BenchSet with L twice: %v, want an error naming L", err)
	}
	if _, err := sensors.BenchSet(testkit.Renderer(t), s, []string{"L"}, time.Millisecond); err != nil {
		t.Fatalf("BenchSet with L once: %v", err)
	}
}
