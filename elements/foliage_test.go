package elements_test

import (
	"image"
	"image/color"
	"math"
	"strings"
	"testing"

	"github.com/go-gl/mathgl/mgl64"

	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// foliageScene is a 1 m leaf card 2 m ahead of the origin, facing it, in
// front of a red wall (its face at x = 2.5). The card's alpha-masked
// texture is opaque green below its middle and transparent above. A
// foliage element LEAVES scopes the card; a laser at the origin, 0.3 m up,
// looks through the card's transparent half, another 0.3 m down at its
// leaves.
func foliageScene(t *testing.T) *scene.Scene {
	t.Helper()
	dir := t.TempDir()
	testkit.WriteModel(t, dir, "card.glb", func(m *models.Model) {
		tex := image.NewNRGBA(image.Rect(0, 0, 16, 16))
		for y := 0; y < 16; y++ {
			for x := 0; x < 8; x++ { // u < 0.5: the card's lower half
				tex.SetNRGBA(x, y, color.NRGBA{0, 255, 0, 255})
			}
		}
		card := models.Plane("card", 1, 1, [4]float32{1, 1, 1, 1})
		card.Primitives[0].Material = &models.Material{Name: "leaf", BaseColor: [4]float32{1, 1, 1, 1},
			BaseColorTexture: tex, AlphaMode: models.AlphaMask, AlphaCutoff: 0.5, DoubleSided: true, Roughness: 1}
		// Turned so that its +z normal faces the origin (-x) and its u
		// runs up.
		m.AddNode(nil, "card", mgl64.Translate3D(2, 0, 0).Mul4(mgl64.HomogRotate3DY(-math.Pi/2)), card)
	})
	testkit.WriteBox(t, dir, "wall.glb", 1, 3, 3, [4]float32{1, 0, 0, 1})
	return testkit.LoadXML(t, dir, `<scene>
  <part file="wall.glb" name="WALL" pose_offset="3 0 0 0 0 0"/>
  <part file="card.glb" name="CARD"/>
  <element type="foliage" name="LEAVES" insert_at="CARD"/>
  <sensor type="laser" name="L" pose_offset="0 0 0.3 0 0 0" angle_min="-1" angle_max="1" resolution="1"/>
  <sensor type="laser" name="LOW" pose_offset="0 0 -0.3 0 0 0" angle_min="-1" angle_max="1" resolution="1"/>
</scene>`)
}

// The foliage opacity: at 1 a pixel on the leaves shows them and one on
// the texture's transparent half the wall behind; at 0 both show the
// wall; at 0.5 the leaves are blended over it. Range sensors see the
// leaves cut out by their mask (the wall through the transparent half)
// until the foliage is switched off at 0.
func TestFoliageOpacity(t *testing.T) {
	s := foliageScene(t)
	leaf, hole := image.Pt(32, 40), image.Pt(32, 23) // 0.31 m below and above the card's middle
	high := s.Sensors()[0].Sensor.(*sensors.Laser)
	low := s.Sensors()[1].Sensor.(*sensors.Laser)
	for _, c := range []struct {
		opacity           float64
		leaf, hole        func(color.RGBA) bool
		lowRange, hiRange float64
		description       string
	}{
		{1, func(c color.RGBA) bool { return dominant(c, 1) }, func(c color.RGBA) bool { return dominant(c, 0) }, 2, 2.5, "leaves as modeled"},
		{0.5, func(c color.RGBA) bool { return c.R > 40 && c.G > 40 && c.B < 20 }, func(c color.RGBA) bool { return dominant(c, 0) }, 2, 2.5, "blended"},
		{0, func(c color.RGBA) bool { return dominant(c, 0) }, func(c color.RGBA) bool { return dominant(c, 0) }, 2.5, 2.5, "no leaves"},
	} {
		set(t, s, "LEAVES", "opacity", c.opacity)
		img := lookAt(t, s, scene.Pose{}, 64, 64, false)
		if got := img.RGBAAt(leaf.X, leaf.Y); !c.leaf(got) {
			t.Errorf("opacity %g (%s): pixel on the leaves is %v", c.opacity, c.description, got)
		}
		if got := img.RGBAAt(hole.X, hole.Y); !c.hole(got) {
			t.Errorf("opacity %g (%s): pixel through the mask is %v, want the red wall", c.opacity, c.description, got)
		}
		for _, l := range []struct {
			laser *sensors.Laser
			want  float64
		}{{low, c.lowRange}, {high, c.hiRange}} {
			sc, err := l.laser.Scan(testkit.Renderer(t), s)
			if err != nil {
				t.Fatal(err)
			}
			if got := sc.Ranges[1]; math.Abs(got-l.want) > 1e-6 {
				t.Errorf("opacity %g: laser %s range %v, want %v", c.opacity, sc.Sensor, got, l.want)
			}
		}
	}
}

// A bad opacity is refused with the element's message, at load from XML
// and at run time, where the table keeps the last good value.
func TestFoliageOpacityErrors(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteBox(t, dir, "b.glb", 1, 1, 1, [4]float32{1, 1, 1, 1})
	msg := loadErr(t, dir, "<scene>\n<part file=\"b.glb\" name=\"B\"/>\n<element type=\"foliage\" name=\"F\" insert_at=\"B\" opacity=\"2\"/>\n</scene>")
	if !strings.Contains(msg, "scene.xml:3:") || !strings.Contains(msg, `opacity = 2: want 0 (no leaves) .. 1 (leaves as modeled)`) {
		t.Errorf("opacity 2 in XML: %s", msg)
	}
	s := foliageScene(t)
	set(t, s, "LEAVES", "opacity", 0.25)
	if err := s.Update(); err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{-0.1, 1.5} {
		set(t, s, "LEAVES", "opacity", v)
		err := s.Update()
		if err == nil || !strings.Contains(err.Error(), "want 0 (no leaves) .. 1 (leaves as modeled)") {
			t.Errorf("opacity %v: error %v", v, err)
		}
		if got, _ := s.Value("LEAVES", "opacity"); got != 0.25 {
			t.Errorf("table holds %v after refusing %v, want 0.25", got, v)
		}
	}
}
