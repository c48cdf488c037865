package sensors_test

import (
	"encoding/binary"
	"math"
	"os"
	"testing"

	"github.com/simvis/simvis/internal/testkit"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

func depthCamera(t *testing.T, s *scene.Scene, name string) *sensors.DepthCamera {
	t.Helper()
	return sensorOf[*sensors.DepthCamera](t, s, name)
}

// A wall 4 m ahead, turned 25° about z and 10° about y, seen by a depth
// camera: every pixel's depth is the closed form c / n·(1, y, z) of the
// pixel center's ray, on both backends.
func TestDepthCameraTiltedWall(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "wall.glb", func(m *models.Model) {
		m.AddNode(nil, "wall", mgl64.Ident4(), models.Box("wall", 0.2, 40, 40, [4]float32{1, 1, 1, 1}))
	})
	for _, backend := range []string{"gpu", "cpu"} {
		s := testkit.LoadXML(t, dir, `<scene>
  <part file="wall.glb" name="WALL" pose_offset="4.1 0 0 0 10 25"/>
  <sensor type="depth" name="D" width="160" height="120" fov="70" range_max="20" backend="`+backend+`"/>
</scene>`)
		cam := depthCamera(t, s, "D")
		img, err := cam.Depth(testkit.Renderer(t), s)
		if err != nil {
			t.Fatal(err)
		}
		rot := scene.Pose{Pitch: 10, Yaw: 25}.Matrix()
		n := rot.Mul4x1(mgl64.Vec4{1, 0, 0, 0}).Vec3()
		c := mgl64.Vec3{4.1, 0, 0}.Dot(n) - 0.1
		in := cam.Intrinsics()
		worst := 0.0
		for j := 0; j < in.Height; j++ {
			for i := 0; i < in.Width; i++ {
				b := mgl64.Vec3{1, (in.Cx - float64(i)) / in.Fx, (in.Cy - float64(j)) / in.Fy}
				want := c / n.Dot(b)
				worst = math.Max(worst, math.Abs(float64(img.Depth[j*in.Width+i])-want))
			}
		}
		// The target is 1 mm; interpolation on llvmpipe gives 2 µm, on an
		// NVIDIA H100 (reversed-Z, GL 4.5) 0.13 mm.
		tol := 1e-3
		if backend == "cpu" {
			tol = 1e-6
		}
		if worst > tol {
			t.Errorf("%s: worst depth error %.3g m, want <= %g", backend, worst, tol)
		}
		t.Logf("%s: worst depth error %.3g m", backend, worst)
	}
}

// Capture writes the 16-bit millimeter PNG, the float32 file and the
// metadata; nothing in view is +Inf in the float file and 0 in the PNG.
func TestDepthCapture(t *testing.T) {
	s := roomScene(t, `<sensor type="depth" name="D" pose_offset="0 0 1.5 0 0 0" width="64" height="48" fov="60" range_max="20"/>
  <sensor type="depth" name="SKY" pose_offset="0 0 1.5 0 -90 0" width="8" height="8" range_max="1"/>`)
	dir := t.TempDir()
	files, err := sensors.CaptureAll(testkit.Renderer(t), s, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 8 { // 4 each: PNG, float32, preview, JSON
		t.Fatalf("files %v", files)
	}
	img := testkit.ReadPNG(t, files[0])
	// The center pixel looks at the wall 4 m ahead (a hair off axis).
	if r, _, _, _ := img.At(32, 24).RGBA(); math.Abs(float64(r)-4000) > 1 {
		t.Errorf("PNG center %d mm, want 4000", r)
	}
	raw, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 4*64*48 {
		t.Fatalf("float file has %d bytes", len(raw))
	}
	z := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*(24*64+32):]))
	if math.Abs(float64(z)-4) > 1e-4 {
		t.Errorf("float center %v, want 4", z)
	}
	// SKY looks up at the ceiling 1.5 m away, beyond its 1 m range.
	raw, err = os.ReadFile(files[5]) // SKY.depth.f32
	if err != nil {
		t.Fatal(err)
	}
	if z := math.Float32frombits(binary.LittleEndian.Uint32(raw)); !math.IsInf(float64(z), 1) {
		t.Errorf("beyond range_max: %v, want +Inf", z)
	}
}

// A surface in front of the GPU view's near plane (half of range_min) is
// clipped from the render, which then shows what lies behind it: the
// depth camera still reads it as too close, as the exact backend does.
func TestDepthSurfaceCloserThanRangeMin(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "room.glb", func(m *models.Model) {
		m.AddNode(nil, "room", mgl64.Translate3D(0, 0, 1.5), models.Box("room", 8, 6, 3, [4]float32{1, 1, 1, 1}))
	})
	testkit.WriteModel(t, dir, "plate.glb", func(m *models.Model) {
		m.AddNode(nil, "plate", mgl64.Ident4(), models.Box("plate", 0.02, 0.1, 0.1, [4]float32{1, 1, 1, 1}))
	})
	depth := map[string][]float32{}
	for _, backend := range []string{"gpu", "cpu"} {
		s := testkit.LoadXML(t, dir, `<scene>
  <part file="room.glb" name="ROOM"/>
  <part file="plate.glb" name="PLATE" pose_offset="0.21 0 1 0 0 0"/>
  <sensor type="depth" name="D" pose_offset="0 0 1 0 0 0" width="64" height="48" fov="60" range_min="0.5" backend="`+backend+`"/>
</scene>`)
		cam := s.Sensors()[0].Sensor.(*sensors.DepthCamera)
		img, err := cam.Depth(testkit.Renderer(t), s)
		if err != nil {
			t.Fatal(err)
		}
		depth[backend] = img.Depth
	}
	close := 0
	for k, c := range depth["cpu"] {
		g := depth["gpu"][k]
		if math.IsInf(float64(c), -1) {
			close++
			if !math.IsInf(float64(g), -1) {
				t.Errorf("pixel %d, %d: gpu %v where the plate 0.2 m ahead is too close", k%64, k/64, g)
			}
		} else if math.IsInf(float64(g), -1) {
			t.Errorf("pixel %d, %d: gpu too close, cpu %v", k%64, k/64, c)
		}
	}
	// The plate, 0.1 m wide at 0.2 m, spans about 27 of 64 columns.
	if close < 100 {
		t.Fatalf("only %d pixels see the plate: the test misses its point", close)
	}
}
