package sensors_test

import (
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/testkit"
)

// A white 0.5 m plate on black, seen from 5 m above, moves 1 m along +y
// between two frames of a camera with motion_blur="8" shutter="1": the
// second frame averages 8 renders with the plate at y = t, t = 1/16, 3/16,
// ..., 15/16. A floor point at y covered for |y - t| < 0.25 gets the
// fraction of those instants: 4/8 at y = 0.5, 2/8 at y = 1, 1/8 at y =
// -0.1. The first frame (no previous one) and an unmoved frame are sharp;
// a camera without blur sees the plate where it is.
func TestMotionBlur(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "plate.glb", 0.5, 0.5, 0.001, [4]float32{1, 1, 1, 1})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="plate.glb" name="PLATE"/>
  <element type="pose" name="P" insert_at="PLATE"/>
  <element type="light" name="AMB" kind="ambient" intensity="1"/>
  <sensor type="camera" name="BLUR" width="200" height="200" fov="50" pose_offset="0 0.5 5 0 90 0" background="0 0 0" motion_blur="8" shutter="1"/>
  <sensor type="camera" name="SHARP" width="200" height="200" fov="50" pose_offset="0 0.5 5 0 90 0" background="0 0 0"/>
</scene>`)
	r := testkit.Renderer(t)
	blur, sharp := camera(t, s, "BLUR"), camera(t, s, "SHARP")
	img0, err := blur.Image(r, s) // first frame: sharp
	if err != nil {
		t.Fatal(err)
	}
	u, v := pixelOf(t, blur, mgl64.Vec3{0, 0, 0})
	if g := grayAt(img0, u, v); g != 255 {
		t.Errorf("first frame, plate center: %v, want 255", g)
	}
	if err := s.Set("P", "y", 1); err != nil {
		t.Fatal(err)
	}
	img1, err := blur.Image(r, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ y, want float64 }{{0.5, 4}, {1, 2}, {-0.1, 1}, {0.3, 4}, {1.3, 0}} {
		u, v := pixelOf(t, blur, mgl64.Vec3{0, c.y, 0})
		want := math.Round(255 * c.want / 8)
		if g := grayAt(img1, u, v); math.Abs(g-want) > 2 {
			t.Errorf("blurred frame at y = %g: %v, want %v (%g of 8 sub-frames)", c.y, g, want, c.want)
		}
	}
	imgS, err := sharp.Image(r, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ y, want float64 }{{1, 255}, {0.5, 0}} {
		u, v := pixelOf(t, sharp, mgl64.Vec3{0, c.y, 0})
		if g := grayAt(imgS, u, v); g != c.want {
			t.Errorf("camera without blur at y = %g: %v, want %v", c.y, g, c.want)
		}
	}
	// Nothing moved since: sharp again, and the scene is where it was left.
	img2, err := blur.Image(r, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ y, want float64 }{{1, 255}, {0.5, 0}} {
		u, v := pixelOf(t, blur, mgl64.Vec3{0, c.y, 0})
		if g := grayAt(img2, u, v); g != c.want {
			t.Errorf("unmoved frame at y = %g: %v, want %v", c.y, g, c.want)
		}
	}
}
