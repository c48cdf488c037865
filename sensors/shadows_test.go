package sensors_test

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// shadowScene is a 1 m white box standing on a 12 m gray (0.5) plate, lit
// by an ambient light of 0.3 and a sun (azimuth, elevation in degrees),
// seen straight down by CAM from 6 m above (0, 0).
func shadowScene(t *testing.T, az, el float64, camAttrs string) *scene.Scene {
	t.Helper()
	return shadowSceneWith(t, az, el, camAttrs, "")
}

// shadowSceneWith is shadowScene with more sensors, before CAM.
func shadowSceneWith(t *testing.T, az, el float64, camAttrs, sensorsBefore string) *scene.Scene {
	t.Helper()
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "box.glb", 1, 1, 1, [4]float32{1, 1, 1, 1})
	testkit.WriteBox(t, dir, "plate.glb", 12, 12, 0.02, [4]float32{0.5, 0.5, 0.5, 1})
	return testkit.LoadXML(t, dir, fmt.Sprintf(`<scene>
  <part file="plate.glb" name="PLATE" pose_offset="0 0 -0.01 0 0 0"/>
  <part file="box.glb" name="BOX" pose_offset="0 0 0.5 0 0 0"/>
  <element type="light" name="AMB" kind="ambient" intensity="0.3"/>
  <element type="light" name="SUN" kind="sun" azimuth="%g" elevation="%g"/>
  %s
  <sensor type="camera" name="CAM" width="320" height="320" fov="70" pose_offset="0 0 6 0 90 0" %s/>
</scene>`, az, el, sensorsBefore, camAttrs))
}

// pixelOf projects a world point into the camera's image (pixel centers at
// integers), through the published intrinsics and optical pose.
func pixelOf(t *testing.T, c *sensors.Camera, p mgl64.Vec3) (float64, float64) {
	t.Helper()
	optical := c.View().Pose.Mul4(sensors.OpticalInBody())
	q := optical.Inv().Mul4x1(p.Vec4(1))
	in := c.Intrinsics()
	if q[2] <= 0 {
		t.Fatalf("%v is behind the camera", p)
	}
	return in.Fx*q[0]/q[2] + in.Cx, in.Fy*q[1]/q[2] + in.Cy
}

func grayAt(img *image.RGBA, u, v float64) float64 {
	c := img.RGBAAt(int(math.Round(u)), int(math.Round(v)))
	return float64(c.G)
}

// On the plate, the box's shadow is the ambient light alone, 0.3 of the
// gray (38 of 255); around it the sun adds sin(elevation): at 45°, (0.3 +
// 0.707) 0.5 = 128 of 255; the box's shadow reaches 1/tan(elevation) beyond
// its far edge, away from the sun.
func TestShadowOfABox(t *testing.T) {
	s := shadowScene(t, 0, 45, "")
	cam := camera(t, s, "CAM")
	img, err := cam.Image(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	shadowed := 0.3 * 0.5 * 255
	lit := (0.3 + math.Sin(math.Pi/4)) * 0.5 * 255
	// The sun is at +x: the shadow covers x in [-1.5, -0.5], y in [-0.5, 0.5].
	for _, p := range [][2]float64{{-1, 0}, {-0.7, 0.3}, {-1.3, -0.3}} {
		u, v := pixelOf(t, cam, mgl64.Vec3{p[0], p[1], 0})
		if g := grayAt(img, u, v); math.Abs(g-shadowed) > 4 {
			t.Errorf("in the shadow at %v (pixel %.0f, %.0f): %.0f, want %.0f", p, u, v, g, shadowed)
		}
	}
	for _, p := range [][2]float64{{-1, 0.8}, {-1.8, 0}, {1.5, 0}, {0, -2}, {-1, -0.8}} {
		u, v := pixelOf(t, cam, mgl64.Vec3{p[0], p[1], 0})
		if g := grayAt(img, u, v); math.Abs(g-lit) > 4 {
			t.Errorf("in the sun at %v (pixel %.0f, %.0f): %.0f, want %.0f", p, u, v, g, lit)
		}
	}

	// A camera with shadows="false" sees the sun everywhere.
	s = shadowScene(t, 0, 45, `shadows="false"`)
	cam = camera(t, s, "CAM")
	if img, err = cam.Image(testkit.Renderer(t), s); err != nil {
		t.Fatal(err)
	}
	u, v := pixelOf(t, cam, mgl64.Vec3{-1, 0, 0})
	if g := grayAt(img, u, v); math.Abs(g-lit) > 4 {
		t.Errorf("shadows off, behind the box: %.0f, want %.0f", g, lit)
	}
}

// Moving the sun moves the shadow: its far edge lies at 0.5 + 1/tan(el)
// from the box's center, away from the sun's azimuth, within 2 pixels.
func TestSunMovesTheShadow(t *testing.T) {
	// Alone, and drawn in a cycle after another camera, which shares the
	// walk of the scene and the search for its lights (RenderFrames).
	for _, inCycle := range []bool{false, true} {
		sunMovesTheShadow(t, inCycle)
	}
}

func sunMovesTheShadow(t *testing.T, inCycle bool) {
	s := shadowSceneWith(t, 0, 45, "", `<sensor type="camera" name="SIDE" width="32" height="32" fov="60" pose_offset="-5 0 3 0 30 0"/>`)
	cam := camera(t, s, "CAM")
	r := testkit.Renderer(t)
	for _, sun := range [][2]float64{{0, 45}, {0, 30}, {90, 40}, {180, 60}, {-90, 35}} {
		set := func(p string, v float64) {
			if err := s.Set("SUN", p, v); err != nil {
				t.Fatal(err)
			}
		}
		set("azimuth", sun[0])
		set("elevation", sun[1])
		var img *image.RGBA
		var err error
		if !inCycle {
			img, err = cam.Image(r, s)
		} else {
			entries := s.Sensors()
			frames, errs := sensors.RenderFrames(r, s, entries, make([]*sensors.Stamp, len(entries)))
			if entries[1].Name != "CAM" {
				t.Fatalf("the sensors are %s, %s: want CAM second", entries[0].Name, entries[1].Name)
			}
			if err = errs[1]; err == nil {
				img = frames[1].Payload().(*sensors.CameraImage).Image
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		az, el := mgl64.DegToRad(sun[0]), mgl64.DegToRad(sun[1])
		away := mgl64.Vec3{-math.Cos(az), -math.Sin(az), 0}
		edge := 0.5 + 1/math.Tan(el)
		// Walk outward in 2 mm steps from where the box's top (0.6 m out,
		// seen from 6 m up) stops hiding the plate to where the plate
		// turns from shadowed to lit (half way between the levels).
		mid := (0.3 + (0.3 + math.Sin(el))) / 2 * 0.5 * 255
		found := -1.0
		for d := 0.7; d < edge+1; d += 0.002 {
			u, v := pixelOf(t, cam, away.Mul(d))
			if grayAt(img, u, v) > mid {
				found = d
				break
			}
		}
		// Pixel size on the plate: 6 m · 2 tan(35°) / 320.
		px := 6 * 2 * math.Tan(mgl64.DegToRad(35)) / 320
		if math.Abs(found-edge) > 2*px {
			t.Errorf("in a cycle %v, sun at azimuth %g, elevation %g: shadow ends %.3f m from the box center, want %.3f (±%.3f)",
				inCycle, sun[0], sun[1], found, edge, 2*px)
		}
	}
}

// A 1 m plate 1 m above the floor whose texture is transparent (alpha 0,
// MASK) on its -x half casts the shadow of its opaque half only: with the
// sun at azimuth 0, elevation 60, the shadow is the plate moved by
// 1/tan(60°) = 0.577 m toward -x, so the floor at x = -0.3 is shaded and at
// x = -0.85 (under the transparent half's shadow) lit.
func TestMaskedCasterLeavesHoles(t *testing.T) {
	dir := t.TempDir()
	tex := image.NewNRGBA(image.Rect(0, 0, 2, 2))
	for x := 0; x < 2; x++ {
		for y := 0; y < 2; y++ {
			tex.SetNRGBA(x, y, color.NRGBA{255, 255, 255, uint8(255 * x)})
		}
	}
	testkit.WriteModel(t, dir, "leaf.glb", func(m *models.Model) {
		m.AddNode(nil, "leaf", mgl64.Ident4(), texturedPlane("leaf", 1, 1, tex, models.AlphaMask))
	})
	testkit.WriteBox(t, dir, "plate.glb", 12, 12, 0.02, [4]float32{0.5, 0.5, 0.5, 1})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="plate.glb" name="PLATE" pose_offset="0 0 -0.01 0 0 0"/>
  <part file="leaf.glb" name="LEAF" pose_offset="0 0 1 0 0 0"/>
  <element type="light" name="AMB" kind="ambient" intensity="0.3"/>
  <element type="light" name="SUN" kind="sun" azimuth="0" elevation="60"/>
  <sensor type="camera" name="CAM" width="320" height="320" fov="70" pose_offset="0 0 6 0 90 0"/>
</scene>`)
	cam := camera(t, s, "CAM")
	img, err := cam.Image(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	shadowed := 0.3 * 0.5 * 255
	lit := (0.3 + math.Sin(math.Pi/3)) * 0.5 * 255
	for _, c := range []struct {
		x, y, want float64
	}{{-0.3, 0, shadowed}, {-0.3, 0.3, shadowed}, {-0.85, 0, lit}, {-0.85, -0.3, lit}} {
		u, v := pixelOf(t, cam, mgl64.Vec3{c.x, c.y, 0})
		if g := grayAt(img, u, v); math.Abs(g-c.want) > 4 {
			t.Errorf("floor at (%g, %g): %.0f, want %.0f", c.x, c.y, g, c.want)
		}
	}
}

// A spot light (no decay) at (2.5, 0, 3) aimed 45° down toward -x throws
// the box's shadow as a point light does: the box's far top edge (x = -0.5,
// z = 1) lands at x = 2.5 + 1.5 (-0.5 - 2.5) = -2 on the floor. Inside the
// shadow only the ambient light remains; outside, the spot adds the cosine
// of its ray to the floor's normal.
func TestSpotLightShadow(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "box.glb", 1, 1, 1, [4]float32{1, 1, 1, 1})
	testkit.WriteBox(t, dir, "plate.glb", 12, 12, 0.02, [4]float32{0.5, 0.5, 0.5, 1})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="plate.glb" name="PLATE" pose_offset="0 0 -0.01 0 0 0"/>
  <part file="box.glb" name="BOX" pose_offset="0 0 0.5 0 0 0"/>
  <element type="light" name="AMB" kind="ambient" intensity="0.3"/>
  <element type="light" name="SPOT" kind="spot" x="2.5" z="3" pitch="45" yaw="180" cutoff="60" angular_decay="0" quadratic_decay="0"/>
  <sensor type="camera" name="CAM" width="320" height="320" fov="70" pose_offset="0 0 6 0 90 0"/>
</scene>`)
	cam := camera(t, s, "CAM")
	img, err := cam.Image(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	light := mgl64.Vec3{2.5, 0, 3}
	for _, c := range []struct {
		x, y   float64
		shadow bool
	}{{-1.2, 0, true}, {-1.9, 0, true}, {-1.2, 0.3, true}, {-2.1, 0, false}, {-1.2, 1.2, false}, {-2.6, -0.6, false}} {
		p := mgl64.Vec3{c.x, c.y, 0}
		want := 0.3 * 0.5 * 255
		if !c.shadow {
			want = (0.3 + light.Sub(p).Normalize().Z()) * 0.5 * 255
		}
		u, v := pixelOf(t, cam, p)
		if g := grayAt(img, u, v); math.Abs(g-want) > 4 {
			t.Errorf("floor at (%g, %g), shadowed %v: %.0f, want %.0f", c.x, c.y, c.shadow, g, want)
		}
	}
}

// Two lights cast their own shadows, each from its own map, whatever lights
// without maps come before them: an unshadowed directional light (dark),
// a sun at azimuth 0, elevation 45 (the box's shadow toward -x) and a spot
// light at (-4, 0, 3) aimed 35° down toward +x (its shadow toward +x,
// reaching x = -4 + 1.5 (0.5 + 4) = 2.75; its highlight, mirrored into
// the camera, falls near x = -2.7, away from the points checked). Behind the box from the sun
// the floor has the ambient light and the spot's; behind it from the spot,
// the ambient light and the sun's; elsewhere all three.
func TestShadowsOfTwoLights(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "box.glb", 1, 1, 1, [4]float32{1, 1, 1, 1})
	testkit.WriteBox(t, dir, "plate.glb", 12, 12, 0.02, [4]float32{0.5, 0.5, 0.5, 1})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="plate.glb" name="PLATE" pose_offset="0 0 -0.01 0 0 0"/>
  <part file="box.glb" name="BOX" pose_offset="0 0 0.5 0 0 0"/>
  <element type="light" name="AMB" kind="ambient" intensity="0.3"/>
  <element type="light" name="DARK" kind="directional" shadows="false" intensity="0"/>
  <element type="light" name="SPOT" kind="spot" x="-4" z="3" pitch="35" cutoff="60" angular_decay="0" quadratic_decay="0" intensity="0.5"/>
  <element type="light" name="SUN" kind="sun" azimuth="0" elevation="45" intensity="0.5"/>
  <sensor type="camera" name="CAM" width="320" height="320" fov="70" pose_offset="0 0 6 0 90 0"/>
</scene>`)
	cam := camera(t, s, "CAM")
	img, err := cam.Image(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	spot := mgl64.Vec3{-4, 0, 3}
	for _, c := range []struct {
		x, y          float64
		inSun, inSpot bool
	}{{-0.8, 0, false, true}, {-1.3, 0.3, false, true}, {1.2, 0, true, false}, {2.4, -0.2, true, false}, {0, 2, true, true}, {0, -2.5, true, true}} {
		p := mgl64.Vec3{c.x, c.y, 0}
		want := 0.3
		if c.inSun {
			want += 0.5 * math.Sin(math.Pi/4)
		}
		if c.inSpot {
			want += 0.5 * spot.Sub(p).Normalize().Z()
		}
		want *= 0.5 * 255
		u, v := pixelOf(t, cam, p)
		if g := grayAt(img, u, v); math.Abs(g-want) > 4 {
			t.Errorf("floor at (%g, %g), sunlit %v, spotlit %v: %.0f, want %.0f", c.x, c.y, c.inSun, c.inSpot, g, want)
		}
	}
}

// With nothing that casts (the only mesh is blended), a sun's shadow map is
// empty and every surface gets its full light.
func TestNothingCasts(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "glass.glb", 4, 4, 0.02, [4]float32{0.5, 0.5, 0.5, 0.999})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="glass.glb" name="GLASS"/>
  <element type="light" name="SUN" kind="sun" azimuth="0" elevation="90"/>
  <sensor type="camera" name="CAM" width="64" height="64" fov="40" pose_offset="0 0 5 0 90 0" background="0 0 0"/>
</scene>`)
	img, err := camera(t, s, "CAM").Image(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	// 0.5 gray fully lit plus the highlight (0.1: the sun straight above
	// reflects into the camera above), blended at 0.999 over black: 153.
	if g := img.RGBAAt(32, 32).G; absDiff(g, 153) > 3 {
		t.Errorf("center %d, want 153 (lit)", g)
	}
}
