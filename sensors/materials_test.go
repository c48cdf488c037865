package sensors_test

import (
	"image"
	"image/color"
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/internal/testkit"
	"github.com/simvis/simvis/models"
)

// texturedPlane returns an sx x sy plane facing +z whose material is mat
// with tex as its base color texture (u along x, v along y).
func texturedPlane(name string, sx, sy float64, tex image.Image, mode models.AlphaMode) *models.Mesh {
	m := models.Plane(name, sx, sy, [4]float32{1, 1, 1, 1})
	mat := m.Primitives[0].Material
	mat.BaseColorTexture = tex
	mat.AlphaMode = mode
	mat.AlphaCutoff = 0.5
	mat.DoubleSided = true
	return m
}

// Seen from above under a white ambient light (radiance = color): a red
// plate whose texture's alpha is 0, 0.4, 0.6 and 1 in four columns, in
// MASK mode with cutoff 0.5, over a green floor. Below the cutoff the floor
// shows through untouched, above it the plate is opaque red: a test, not a
// blend. A BLEND plate of alpha 0.5 mixes the two; an emissive black box
// shows its emission in the dark.
func TestAlphaMaskBlendEmissive(t *testing.T) {
	dir := t.TempDir()
	tex := image.NewNRGBA(image.Rect(0, 0, 4, 4))
	for x := 0; x < 4; x++ {
		for y := 0; y < 4; y++ {
			tex.SetNRGBA(x, y, color.NRGBA{255, 0, 0, []uint8{0, 102, 153, 255}[x]})
		}
	}
	testkit.WriteModel(t, dir, "mask.glb", func(m *models.Model) {
		m.AddNode(nil, "mask", mgl64.Ident4(), texturedPlane("mask", 2, 2, tex, models.AlphaMask))
	})
	testkit.WriteModel(t, dir, "glass.glb", func(m *models.Model) {
		m.AddNode(nil, "glass", mgl64.Ident4(), models.Plane("glass", 1, 1, [4]float32{1, 0, 0, 0.5}))
	})
	testkit.WriteModel(t, dir, "lamp.glb", func(m *models.Model) {
		b := models.Box("lamp", 0.5, 0.5, 0.5, [4]float32{0, 0, 0, 1})
		b.Primitives[0].Material.Emissive = [3]float32{0, 0, 0.6}
		m.AddNode(nil, "lamp", mgl64.Ident4(), b)
	})
	testkit.WriteBox(t, dir, "floor.glb", 8, 8, 0.02, [4]float32{0, 1, 0, 1})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="floor.glb" name="FLOOR" pose_offset="0 0 -0.01 0 0 0"/>
  <part file="mask.glb" name="MASK" pose_offset="0 0 0.5 0 0 0"/>
  <part file="glass.glb" name="GLASS" pose_offset="0 2 0.5 0 0 0"/>
  <part file="lamp.glb" name="LAMP" pose_offset="0 -2 0.5 0 0 0"/>
  <element type="light" name="AMB" kind="ambient" intensity="1"/>
  <sensor type="camera" name="CAM" width="320" height="320" fov="80" pose_offset="0 0 5 0 90 0"/>
</scene>`)
	cam := camera(t, s, "CAM")
	img, err := cam.Image(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	at := func(x, y, z float64) color.RGBA {
		u, v := pixelOf(t, cam, mgl64.Vec3{x, y, z})
		return img.RGBAAt(int(math.Round(u)), int(math.Round(v)))
	}
	near := func(c color.RGBA, r, g, b int) bool {
		return absDiff(c.R, uint8(r)) <= 3 && absDiff(c.G, uint8(g)) <= 3 && absDiff(c.B, uint8(b)) <= 3
	}
	// Texel column i covers x in [-1 + i/2, -0.5 + i/2].
	for i, want := range [][3]int{{0, 255, 0}, {0, 255, 0}, {255, 0, 0}, {255, 0, 0}} {
		for _, y := range []float64{-0.7, 0, 0.6} {
			x := -0.75 + 0.5*float64(i)
			if c := at(x, y, 0.5); !near(c, want[0], want[1], want[2]) {
				t.Errorf("mask column %d (alpha %d/255) at (%g, %g): %v, want %v", i, []int{0, 102, 153, 255}[i], x, y, c, want)
			}
		}
	}
	if c := at(0, 2, 0.5); !near(c, 128, 128, 0) {
		t.Errorf("blended plate (alpha 0.5, red over green): %v, want (128, 128, 0)", c)
	}
	if c := at(0, -2, 0.75); !near(c, 0, 0, 153) {
		t.Errorf("emissive box (0, 0, 0.6): %v, want (0, 0, 153)", c)
	}
}

// A 512 x 512 checker of one-texel squares on a 40 m floor, seen at a
// grazing angle, averages to gray with mipmaps (and anisotropic filtering):
// far pixels each cover many texels. Point sampling would alias, leaving
// black and white pixels in the far rows.
func TestMipmappedCheckerAtGrazingAngle(t *testing.T) {
	dir := t.TempDir()
	tex := image.NewNRGBA(image.Rect(0, 0, 512, 512))
	for x := 0; x < 512; x++ {
		for y := 0; y < 512; y++ {
			v := uint8(0)
			if (x+y)%2 == 0 {
				v = 255
			}
			tex.SetNRGBA(x, y, color.NRGBA{v, v, v, 255})
		}
	}
	testkit.WriteModel(t, dir, "checker.glb", func(m *models.Model) {
		m.AddNode(nil, "checker", mgl64.Ident4(), texturedPlane("checker", 40, 40, tex, models.AlphaOpaque))
	})
	s := testkit.LoadXML(t, dir, `<scene>
  <part file="checker.glb" name="FLOOR"/>
  <element type="light" name="AMB" kind="ambient" intensity="1"/>
  <sensor type="camera" name="CAM" width="320" height="240" fov="60" pose_offset="-19 0 0.6 0 4 0" background="1 0 1"/>
</scene>`)
	cam := camera(t, s, "CAM")
	img, err := cam.Image(testkit.Renderer(t), s)
	if err != nil {
		t.Fatal(err)
	}
	// Rows showing the floor 8 to 30 m away (grazing at 1-4°).
	var sum, sq float64
	n := 0
	for d := 8.0; d <= 30; d += 0.5 {
		_, v := pixelOf(t, cam, mgl64.Vec3{-19 + d, 0, 0})
		row := int(math.Round(v))
		for u := 40; u < 280; u++ {
			c := img.RGBAAt(u, row)
			if c.R != c.G || c.B != c.G {
				t.Fatalf("pixel (%d, %d) = %v is not floor", u, row, c)
			}
			g := float64(c.G)
			sum += g
			sq += g * g
			n++
		}
	}
	mean := sum / float64(n)
	sd := math.Sqrt(sq/float64(n) - mean*mean)
	if math.Abs(mean-127.5) > 12 || sd > 20 {
		t.Errorf("far floor: mean %.1f, standard deviation %.1f over %d pixels; want gray 127.5 ± 12, deviation < 20", mean, sd, n)
	}
}

// Metallic-roughness, reduced to Phong: lit head-on by a light behind the
// camera, a face reflects its diffuse color (0.3) plus the highlight,
// specular 0.1 + 0.8 metallic (1 - roughness)^2: 0.1 for glTF's default
// rough material, 0.612 for a smooth metal (roughness 0.2).
func TestMetallicRoughnessHighlight(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		metallic, roughness, spec float64
	}{{1, 1, 0.1}, {0, 0.2, 0.1}, {1, 0.2, 0.612}, {0.5, 0.5, 0.2}} {
		testkit.WriteModel(t, dir, "box.glb", func(m *models.Model) {
			b := models.Box("box", 1, 1, 1, [4]float32{0.3, 0.3, 0.3, 1})
			b.Primitives[0].Material.Metallic = float32(c.metallic)
			b.Primitives[0].Material.Roughness = float32(c.roughness)
			m.AddNode(nil, "box", mgl64.Ident4(), b)
		})
		s := testkit.LoadXML(t, dir, `<scene>
  <part file="box.glb" name="BOX" pose_offset="3 0 0 0 0 0"/>
  <element type="light" name="SUN" kind="directional"/>
  <sensor type="camera" name="CAM" width="65" height="49"/>
</scene>`)
		// Pixel (32, 24) is on the axis: its highlight is the full specular.
		img, err := camera(t, s, "CAM").Image(testkit.Renderer(t), s)
		if err != nil {
			t.Fatal(err)
		}
		want := math.Round(255 * (0.3 + c.spec))
		if g := float64(img.RGBAAt(32, 24).G); math.Abs(g-want) > 3 {
			t.Errorf("metallic %g, roughness %g: %v, want %v", c.metallic, c.roughness, g, want)
		}
	}
}
