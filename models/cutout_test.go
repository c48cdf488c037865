package models

import (
	"image"
	"image/color"
	"math"
	"testing"
)

// cutoutAlphas is the alpha of a 4x2 test texture, top row first.
var cutoutAlphas = [2][4]uint8{
	{0, 51, 102, 153},
	{204, 255, 10, 20},
}

func cutoutTexture() *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, 4, 2))
	for y, row := range cutoutAlphas {
		for x, a := range row {
			img.SetNRGBA(x, y, color.NRGBA{R: 10, G: 20, B: 30, A: a})
		}
	}
	return img
}

// maskMaterial is a MASK material with the test texture, factor alpha 1.
func maskMaterial(s Sampler) *Material {
	return &Material{Name: "leaf", BaseColor: [4]float32{1, 1, 1, 1}, BaseColorTexture: cutoutTexture(),
		Sampler: s, AlphaMode: AlphaMask, AlphaCutoff: 0.5}
}

func alphaNear(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }

// NEAREST reads texel (floor(u W), floor(v H)), v = 0 the top row.
func TestCutoutNearest(t *testing.T) {
	c := maskMaterial(Sampler{MagFilter: FilterNearest}).Cutout()
	if c == nil {
		t.Fatal("Cutout nil for a texture with alpha below the cutoff")
	}
	for _, tc := range []struct {
		u, v float64
		want uint8
	}{
		{0.1, 0.1, 0}, {0.3, 0.2, 51}, {0.25, 0, 51}, {0.2499, 0.4999, 0}, {0.5, 0.25, 102},
		{0.99, 0.49, 153}, {0.1, 0.5, 204}, {0.3, 0.7, 255}, {0.6, 0.7, 10}, {0.99, 0.99, 20},
	} {
		if got := c.Alpha(tc.u, tc.v); !alphaNear(got, float64(tc.want)/255) {
			t.Errorf("Alpha(%g, %g) = %g, want %d/255", tc.u, tc.v, got, tc.want)
		}
	}
}

// LINEAR mixes the four texels around (u W - 1/2, v H - 1/2) bilinearly.
func TestCutoutLinear(t *testing.T) {
	for _, s := range []Sampler{{}, {MagFilter: FilterLinear, MinFilter: FilterNearest}} {
		c := maskMaterial(s).Cutout()
		for _, tc := range []struct {
			u, v, want255 float64
		}{
			// Texel centers read the texel.
			{0.375, 0.25, 51}, {0.625, 0.75, 10}, {0.125, 0.75, 204},
			// Halfway between two texels of a row, of a column.
			{0.5, 0.25, (51 + 102) / 2.0}, {0.375, 0.5, (51 + 255) / 2.0},
			// Halfway between four.
			{0.5, 0.5, (51 + 102 + 255 + 10) / 4.0},
			// A quarter of the way right and down from texel (1, 0)'s center:
			// rows 51 + (102-51)/4 = 63.75 and 255 + (10-255)/4 = 193.75.
			{0.4375, 0.375, 63.75 + (193.75-63.75)/4},
		} {
			if got := c.Alpha(tc.u, tc.v); !alphaNear(got, tc.want255/255) {
				t.Errorf("sampler %+v: Alpha(%g, %g) = %g, want %g/255", s, tc.u, tc.v, got, tc.want255)
			}
		}
	}
}

// Texel indices outside the texture wrap as GL wraps them.
func TestCutoutWrap(t *testing.T) {
	row0 := func(x int) float64 { return float64(cutoutAlphas[0][x]) / 255 }
	col0 := func(y int) float64 { return float64(cutoutAlphas[y][0]) / 255 }
	for _, tc := range []struct {
		mode       int
		s0, s1, s2 int // texel column at u = -0.1, 1.1, 1.9 (x = -0.4, 4.4, 7.6)
		t0, t1     int // texel row at v = -0.1, 1.1 (y = -0.2, 2.2)
		linearEdge float64
	}{
		// At u = 0 the bilinear mix is half texel -1, half texel 0.
		{0, 3, 0, 3, 1, 0, (153 + 0) / 2.0 / 255},
		{WrapRepeat, 3, 0, 3, 1, 0, (153 + 0) / 2.0 / 255},
		{WrapClampToEdge, 0, 3, 3, 0, 1, 0},
		{WrapMirroredRepeat, 0, 3, 0, 0, 1, 0},
	} {
		c := maskMaterial(Sampler{MagFilter: FilterNearest, WrapS: tc.mode, WrapT: tc.mode}).Cutout()
		for _, p := range []struct {
			u    float64
			want float64
		}{{-0.1, row0(tc.s0)}, {1.1, row0(tc.s1)}, {1.9, row0(tc.s2)}} {
			if got := c.Alpha(p.u, 0.25); !alphaNear(got, p.want) {
				t.Errorf("wrap %d: Alpha(%g, 0.25) = %g, want %g", tc.mode, p.u, got, p.want)
			}
		}
		for _, p := range []struct {
			v    float64
			want float64
		}{{-0.1, col0(tc.t0)}, {1.1, col0(tc.t1)}} {
			if got := c.Alpha(0.1, p.v); !alphaNear(got, p.want) {
				t.Errorf("wrap %d: Alpha(0.1, %g) = %g, want %g", tc.mode, p.v, got, p.want)
			}
		}
		lin := maskMaterial(Sampler{WrapS: tc.mode, WrapT: tc.mode}).Cutout()
		if got := lin.Alpha(0, 0.25); !alphaNear(got, tc.linearEdge) {
			t.Errorf("wrap %d, linear: Alpha(0, 0.25) = %g, want %g", tc.mode, got, tc.linearEdge)
		}
	}
	// Further out, REPEAT and MIRRORED_REPEAT keep their periods (4 and
	// 8 texels): at u = -2.1 (x = -8.4), REPEAT reads column 3 and
	// MIRRORED_REPEAT column 0 (-2.1 is 1.9 mirrored, 0.1).
	if got := maskMaterial(Sampler{MagFilter: FilterNearest}).Cutout().Alpha(-2.1, 0.25); !alphaNear(got, row0(3)) {
		t.Errorf("repeat at u = -2.1: %g, want %g", got, row0(3))
	}
	if got := maskMaterial(Sampler{MagFilter: FilterNearest, WrapS: WrapMirroredRepeat}).Cutout().Alpha(-2.1, 0.25); !alphaNear(got, row0(0)) {
		t.Errorf("mirrored repeat at u = -2.1: %g, want %g", got, row0(0))
	}
	// S and T wrap independently.
	c := maskMaterial(Sampler{MagFilter: FilterNearest, WrapS: WrapClampToEdge, WrapT: WrapRepeat}).Cutout()
	if got := c.Alpha(1.1, -0.1); !alphaNear(got, 20.0/255) {
		t.Errorf("clamp S, repeat T: Alpha(1.1, -0.1) = %g, want 20/255 (texel 3, 1)", got)
	}
	// Not finite: no alpha.
	if got := c.Alpha(math.NaN(), 0.5); got != 0 {
		t.Errorf("Alpha(NaN, 0.5) = %g, want 0", got)
	}
}

// Which materials cut beams at all, and at which alpha.
func TestCutoutRules(t *testing.T) {
	opaque := maskMaterial(Sampler{})
	opaque.AlphaMode = AlphaOpaque
	if c := opaque.Cutout(); c != nil {
		t.Error("OPAQUE material has a cutout")
	}
	if c := (*Material)(nil).Cutout(); c != nil {
		t.Error("nil material has a cutout")
	}

	// Every texel at or above the cutoff: nothing is cut.
	solid := image.NewNRGBA(image.Rect(0, 0, 2, 2))
	for i := range solid.Pix {
		solid.Pix[i] = 200 // alpha 200/255 = 0.784
	}
	high := &Material{BaseColor: [4]float32{1, 1, 1, 1}, BaseColorTexture: solid, AlphaMode: AlphaMask, AlphaCutoff: 0.5}
	if c := high.Cutout(); c != nil {
		t.Error("MASK with every alpha above the cutoff has a cutout")
	}
	high.AlphaCutoff = 0.79
	if c := high.Cutout(); c == nil || c.Keeps(0.5, 0.5) {
		t.Errorf("MASK cutoff 0.79, alpha 0.784: cutout %v, want one that keeps nothing", c)
	}
	// The factor multiplies the texel alpha: 0.784 * 0.6 = 0.47 < 0.5.
	high.AlphaCutoff, high.BaseColor[3] = 0.5, 0.6
	if c := high.Cutout(); c == nil || c.Keeps(0.25, 0.25) {
		t.Error("factor 0.6 times alpha 0.784 kept against cutoff 0.5")
	}

	// With the test texture and factor 0.6: texel 255 gives 0.6, kept;
	// texel 204 gives 0.48, cut.
	m := maskMaterial(Sampler{MagFilter: FilterNearest})
	m.BaseColor[3] = 0.6
	c := m.Cutout()
	if !c.Keeps(0.3, 0.7) || c.Keeps(0.1, 0.7) {
		t.Errorf("factor 0.6: Keeps at texel 255 %v (want true), at texel 204 %v (want false)", c.Keeps(0.3, 0.7), c.Keeps(0.1, 0.7))
	}
	if got := c.Alpha(0.3, 0.7); got != 1 {
		t.Errorf("Alpha gives the texel's alpha without the factor: %g, want 1", got)
	}
	// MASK with factor 1 and cutoff 0.5: texel 153 (0.6) kept, 102 (0.4) cut.
	m.BaseColor[3] = 1
	c = m.Cutout()
	if !c.Keeps(0.9, 0.25) || c.Keeps(0.6, 0.25) {
		t.Error("cutoff 0.5: texel 153 not kept or texel 102 kept")
	}

	// BLEND cuts at one half whatever the alphaCutoff.
	m.AlphaMode, m.AlphaCutoff = AlphaBlend, 0.9
	c = m.Cutout()
	if c == nil || !c.Keeps(0.9, 0.25) || c.Keeps(0.6, 0.25) {
		t.Error("BLEND: texel 153 not kept or texel 102 kept")
	}
	m.AlphaMode = AlphaMask
	if c = m.Cutout(); c.Keeps(0.9, 0.25) {
		t.Error("MASK cutoff 0.9 keeps texel 153")
	}

	// No texture: the factor alone decides, everywhere.
	plain := &Material{BaseColor: [4]float32{1, 1, 1, 0.3}, AlphaMode: AlphaMask, AlphaCutoff: 0.5}
	c = plain.Cutout()
	if c == nil {
		t.Fatal("MASK, no texture, factor 0.3 below cutoff 0.5: no cutout")
	}
	for _, uv := range [][2]float64{{0, 0}, {0.5, 0.5}, {-3, 7}} {
		if c.Keeps(uv[0], uv[1]) {
			t.Errorf("factor 0.3 below the cutoff kept at %v", uv)
		}
	}
	plain.BaseColor[3] = 0.7
	if c := plain.Cutout(); c != nil {
		t.Error("MASK, no texture, factor 0.7 above cutoff 0.5: has a cutout")
	}
	plain.AlphaMode, plain.BaseColor[3] = AlphaBlend, 0.4
	if c := plain.Cutout(); c == nil || c.Keeps(0.5, 0.5) {
		t.Error("BLEND, no texture, factor 0.4: not cut")
	}
	plain.BaseColor[3] = 0.5
	if c := plain.Cutout(); c != nil {
		t.Error("BLEND, no texture, factor 0.5: cut (the threshold keeps alpha 0.5)")
	}
}

// Textures other than NRGBA give the same alphas.
func TestCutoutImageKinds(t *testing.T) {
	src := cutoutTexture()
	rgba := image.NewRGBA(src.Rect)
	gray := image.NewAlpha(src.Rect)
	for y := range 2 {
		for x := range 4 {
			rgba.Set(x, y, src.At(x, y))
			gray.SetAlpha(x, y, color.Alpha{A: cutoutAlphas[y][x]})
		}
	}
	for _, img := range []image.Image{rgba, gray, src.SubImage(src.Rect)} {
		m := maskMaterial(Sampler{MagFilter: FilterNearest})
		m.BaseColorTexture = img
		c := m.Cutout()
		for y := range 2 {
			for x := range 4 {
				u, v := (float64(x)+0.5)/4, (float64(y)+0.5)/2
				if got := c.Alpha(u, v); !alphaNear(got, float64(cutoutAlphas[y][x])/255) {
					t.Errorf("%T: texel (%d, %d) alpha %g, want %d/255", img, x, y, got, cutoutAlphas[y][x])
				}
			}
		}
	}
	// A sub-image starting away from the origin reads its own texels.
	sub := src.SubImage(image.Rect(1, 1, 3, 2))
	m := maskMaterial(Sampler{MagFilter: FilterNearest})
	m.BaseColorTexture = sub
	c := m.Cutout()
	if a, b := c.Alpha(0.25, 0.5), c.Alpha(0.75, 0.5); !alphaNear(a, 1) || !alphaNear(b, 10.0/255) {
		t.Errorf("sub-image alphas %g, %g, want 1 and 10/255", a, b)
	}
}
