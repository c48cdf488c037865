package sensors_test

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"strings"
	"testing"

	"github.com/simvis/simvis/internal/testkit"

	"github.com/go-gl/mathgl/mgl64"

	_ "github.com/simvis/simvis/elements"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// One GL context serves every test in the package: creating one per test
// costs llvmpipe start-up time and proves nothing more.

// sensorOf returns the scene's sensor name as its concrete type.
func sensorOf[T scene.Sensor](t testing.TB, s *scene.Scene, name string) T {
	t.Helper()
	for _, se := range s.Sensors() {
		if se.Name == name {
			if v, ok := se.Sensor.(T); ok {
				return v
			}
			t.Fatalf("sensor %q is a %T", name, se.Sensor)
		}
	}
	t.Fatalf("no sensor %q", name)
	var zero T
	return zero
}

func camera(t *testing.T, s *scene.Scene, name string) *sensors.Camera {
	t.Helper()
	return sensorOf[*sensors.Camera](t, s, name)
}

var background = color.RGBA{51, 102, 153, 255} // the scenes' background="0.2 0.4 0.6"

func isBackground(c color.RGBA) bool {
	return absDiff(c.R, background.R) <= 1 && absDiff(c.G, background.G) <= 1 && absDiff(c.B, background.B) <= 1
}

func absDiff(a, b uint8) int { return int(math.Abs(float64(a) - float64(b))) }

// Channels are compared as ints: 3 * a uint8 overflows.
func reddish(c color.RGBA) bool { return c.R > 80 && int(c.R) > 3*int(uint8Max(c.G, c.B)) }

func greenish(c color.RGBA) bool { return c.G > 80 && int(c.G) > 3*int(uint8Max(c.R, c.B)) }

func uint8Max(a, b uint8) uint8 {
	if a > b {
		return a
	}
	return b
}

// A red box straight ahead of the camera colors the center; the corners keep
// the background. A green box to the camera's left (+y) appears in the left
// half of the image, and a box above the axis in the top half.
func TestCameraSeesBoxes(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "red.glb", func(m *models.Model) {
		m.AddNode(nil, "red", mgl64.Ident4(), models.Box("red", 0.5, 0.5, 0.5, [4]float32{1, 0, 0, 1}))
	})
	testkit.WriteModel(t, dir, "green.glb", func(m *models.Model) {
		m.AddNode(nil, "green", mgl64.Ident4(), models.Box("green", 0.3, 0.3, 0.3, [4]float32{0, 1, 0, 1}))
	})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="red.glb" name="RED" pose_offset="3 0 1 0 0 0"/>
  <part file="green.glb" name="LEFT" pose_offset="3 1.2 1 0 0 0"/>
  <part file="green.glb" name="ABOVE" pose_offset="3 0 1.9 0 0 0"/>
  <sensor type="camera" name="CAM" pose_offset="0 0 1 0 0 0" width="160" height="120" fov="60" background="0.2 0.4 0.6"/>
</scene>`)
	img, err := camera(t, s, "CAM").Image(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	at := func(x, y int) color.RGBA { return img.RGBAAt(x, y) }
	if c := at(80, 60); !reddish(c) {
		t.Errorf("center pixel %v, want red", c)
	}
	for _, p := range []image.Point{{0, 0}, {159, 0}, {0, 119}, {159, 119}} {
		if c := at(p.X, p.Y); !isBackground(c) {
			t.Errorf("corner %v = %v, want background %v", p, c, background)
		}
	}
	// Pinhole projection: a point (3, 1.2, 0) relative to the camera maps to
	// u = cx - fx*y/x. fx = 80/tan(30°) = 138.56 -> u = 80 - 55.4 = 24.6.
	if c := at(25, 60); !greenish(c) {
		t.Errorf("pixel (25,60) = %v, want the green box on the left", c)
	}
	if c := at(135, 60); !isBackground(c) {
		t.Errorf("pixel (135,60) = %v, want background on the right", c)
	}
	// ABOVE is 0.9 m above the axis at 3 m: v = cy - fy*0.9/3 = 60 - 41.6 = 18.4.
	if c := at(80, 18); !greenish(c) {
		t.Errorf("pixel (80,18) = %v, want the green box above", c)
	}
	if c := at(80, 110); !isBackground(c) {
		t.Errorf("pixel (80,110) = %v, want background below", c)
	}
}

// The camera follows the pose element it is attached after: yawing the robot
// by 90 degrees turns the camera away from the box.
func TestCameraFollowsPoseElement(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "red.glb", func(m *models.Model) {
		m.AddNode(nil, "red", mgl64.Ident4(), models.Box("red", 0.5, 0.5, 0.5, [4]float32{1, 0, 0, 1}))
	})
	testkit.WriteModel(t, dir, "robot.glb", func(m *models.Model) {
		m.AddNode(nil, "body", mgl64.Ident4(), models.Box("body", 0.01, 0.01, 0.01, [4]float32{0, 0, 1, 1}))
	})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="red.glb" name="RED" pose_offset="0 3 1 0 0 0"/>
  <part file="robot.glb" name="ROBOT"/>
  <element type="pose" name="R_POSE" insert_at="ROBOT"/>
  <sensor type="camera" name="CAM" insert_at="ROBOT" pose_offset="0 0 1 0 0 0" width="64" height="48" background="0.2 0.4 0.6"/>
</scene>`)
	cam := camera(t, s, "CAM")
	img, err := cam.Image(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	if c := img.RGBAAt(32, 24); !isBackground(c) {
		t.Fatalf("box visible before turning: center %v", c)
	}
	if err := s.Set("R_POSE", "yaw", 90); err != nil {
		t.Fatal(err)
	}
	img, err = cam.Image(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	if c := img.RGBAAt(32, 24); !reddish(c) {
		t.Errorf("after yaw 90 the center is %v, want the red box", c)
	}
}

// 100 parts from one file upload one set of GPU buffers.
func TestSharedModelUploadsOnce(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "chair.glb", func(m *models.Model) {
		m.AddNode(nil, "seat", mgl64.Translate3D(0, 0, 0.45), models.Box("seat", 0.45, 0.45, 0.05, [4]float32{0.6, 0.4, 0.2, 1}))
		m.AddNode(nil, "back", mgl64.Translate3D(-0.2, 0, 0.7), models.Box("back", 0.05, 0.45, 0.5, [4]float32{0.6, 0.4, 0.2, 1}))
	})
	var b strings.Builder
	b.WriteString("<scene>\n")
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, `<part file="chair.glb" name="CHAIR%d" pose_offset="%d %d 0 0 0 0"/>`+"\n", i, 2+i%10, i/10-5)
	}
	b.WriteString(`<sensor type="camera" name="CAM" pose_offset="-2 0 3 0 30 0" width="64" height="48" fov="90"/>` + "\n</scene>")
	s := testkit.LoadXML(t, dir, b.String())
	r := testkit.Renderer(t)
	before, err := r.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := camera(t, s, "CAM").Image(r, s); err != nil {
		t.Fatal(err)
	}
	after, err := r.Stats()
	if err != nil {
		t.Fatal(err)
	}
	st := s.MeshStats()
	if st.Instances != 200 || st.Geometries != 2 {
		t.Fatalf("mesh stats %+v, want 200 instances of 2 geometries", st)
	}
	// One vertex array per distinct geometry, not per part.
	if got := after.Vaos - before.Vaos; got != 2 {
		t.Errorf("rendering 100 chairs created %d vertex arrays, want 2", got)
	}
}

func TestCameraIntrinsics(t *testing.T) {
	dir := t.TempDir()
	s := testkit.LoadXML(t, dir, `<sensor type="camera" name="CAM" width="640" height="480" fov="90"/>`)
	in := camera(t, s, "CAM").Intrinsics()
	// fx = W / (2 tan(hfov/2)) = 320; square pixels give fy = fx; the
	// principal point is the image center with pixel centers at integers.
	if math.Abs(in.Fx-320) > 1e-9 || math.Abs(in.Fy-320) > 1e-9 || in.Cx != 319.5 || in.Cy != 239.5 {
		t.Errorf("intrinsics %+v", in)
	}
}

// A part marked sensed="false" is drawn in viewer renders and absent from
// sensor renders; the same part sensed stays in both.
func TestUnsensedPartOnlyForViewers(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "red.glb", func(m *models.Model) {
		m.AddNode(nil, "red", mgl64.Ident4(), models.Box("red", 0.5, 0.5, 0.5, [4]float32{1, 0, 0, 1}))
	})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="red.glb" name="OVERLAY" pose_offset="3 0 1 0 0 0" sensed="false"/>
  <part file="red.glb" name="SOLID" pose_offset="3 1.2 1 0 0 0"/>
  <sensor type="camera" name="CAM" pose_offset="0 0 1 0 0 0" width="160" height="120" fov="60" background="0.2 0.4 0.6"/>
</scene>`)
	cam := camera(t, s, "CAM")
	img, err := cam.Image(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	if c := img.RGBAAt(80, 60); !isBackground(c) {
		t.Errorf("sensor render: center %v, want background (OVERLAY is not sensed)", c)
	}
	if c := img.RGBAAt(25, 60); !reddish(c) {
		t.Errorf("sensor render: (25,60) %v, want SOLID", c)
	}
	view := cam.View()
	view.Viewer = true
	img, err = testkit.Renderer(t).RenderRGBA(s, view)
	if err != nil {
		t.Fatal(err)
	}
	if c := img.RGBAAt(80, 60); !reddish(c) {
		t.Errorf("viewer render: center %v, want OVERLAY", c)
	}
	// And back: the flag is applied per render, not left over.
	img, err = cam.Image(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	if c := img.RGBAAt(80, 60); !isBackground(c) {
		t.Errorf("sensor render after viewer render: center %v, want background", c)
	}
}

// Pixel noise: gaussian with the set stddev (in 0..1 intensity), the same
// image for the same seed, another for another seed.
func TestCameraPixelNoise(t *testing.T) {
	dir := t.TempDir()
	img := func(seed string) *image.RGBA {
		s := testkit.LoadXML(t, dir, `<sensor type="camera" name="CAM" width="64" height="48" background="0.5 0.5 0.5" noise_stddev="0.02" seed="`+seed+`"/>`)
		im, err := camera(t, s, "CAM").Image(testkit.Renderer(t), s)
		if err != nil {
			t.Fatal(err)
		}
		return im
	}
	a, b, c := img("3"), img("3"), img("4")
	var sum, sq float64
	n := 0
	for i := range a.Pix {
		if i%4 == 3 {
			continue
		}
		if a.Pix[i] != b.Pix[i] {
			t.Fatalf("byte %d differs with the same seed", i)
		}
		e := float64(a.Pix[i]) - 128 // the background 0.5 is stored as 128
		sum += e
		sq += e * e
		n++
	}
	sigma := math.Sqrt(sq/float64(n)-(sum/float64(n))*(sum/float64(n))) / 255
	if math.Abs(sigma-0.02) > 0.002 {
		t.Errorf("pixel noise stddev %.4f, want 0.02", sigma)
	}
	if string(a.Pix) == string(c.Pix) {
		t.Error("another seed gives the same noise")
	}
}
