package models

import (
	"image"
	"math"
)

// Sampler is how a material's base color texture is sampled, as a glTF
// sampler gives it: filters and wrap modes in glTF's (OpenGL's) numbers, 0
// where the file sets none. Cameras draw with it, and range sensors choose
// the texel that decides a cut-out with it (Cutout).
type Sampler struct {
	MagFilter, MinFilter int // FilterNearest, FilterLinear (mag); the mipmap filters too (min); 0: linear
	WrapS, WrapT         int // WrapRepeat (0 too), WrapClampToEdge, WrapMirroredRepeat
}

// Sampler filters and wrap modes, as glTF numbers them.
const (
	FilterNearest              = 9728
	FilterLinear               = 9729
	FilterNearestMipmapNearest = 9984
	FilterLinearMipmapNearest  = 9985
	FilterNearestMipmapLinear  = 9986
	FilterLinearMipmapLinear   = 9987
	WrapClampToEdge            = 33071
	WrapMirroredRepeat         = 33648
	WrapRepeat                 = 10497
)

// BlendThreshold is the alpha from which a BLEND surface stops a beam: a
// range sensor sees a blended surface where its alpha (base color factor
// times texel alpha) is at least one half, and looks through it elsewhere.
const BlendThreshold = 0.5

// Cutout is where a material lets beams through: the one rule that every
// sensor that measures or labels geometry (lasers, 3D lidars, range
// sensors, depth cameras, segmentation), on every backend, applies at the
// exact point a ray meets a triangle. A surface stops a beam where
//
//	alpha = baseColorFactor.a * texel.a >= cut
//
// (alpha computed in float64, compared in float32 as a shader compares
// it with a float32 cutoff)
// with cut the material's alphaCutoff for MASK and BlendThreshold for
// BLEND; OPAQUE materials stop every beam. The texel is the texture's
// full-resolution image (a ray has no footprint, so no mipmap level; a GPU
// at level of detail 0 uses the magnification filter likewise), at the
// texture coordinates interpolated at the hit in float64, chosen by the
// sampler's magnification filter:
//
//   - NEAREST: texel (floor(u W), floor(v H));
//   - LINEAR (the default): the bilinear mix of the four texels around
//     (u W - 1/2, v H - 1/2), with weights in float64;
//
// with texel indices wrapped by the sampler's wrap modes (REPEAT by
// default), v = 0 the image's top row as in glTF, and texel alphas read as
// a / 255 from the image's 8 bits. GPUs weight bilinear samples in a few
// fixed-point bits, so a GPU's alpha test at a pixel can differ from this
// rule where alpha lies within about 1/256 of the cut; range sensors hold
// to the rule, not to a GPU.
type Cutout struct {
	w, h         int
	alpha        []uint8 // w*h, top row first; nil: every point is cut away
	factor, cut  float64
	nearest      bool
	wrapS, wrapT int
}

// Cutout returns the rule of where m lets beams through, or nil where it
// stops every beam everywhere: an OPAQUE material, or one whose least
// alpha (factor times the least texel alpha) reaches the cut.
func (m *Material) Cutout() *Cutout {
	if m == nil || m.AlphaMode == AlphaOpaque {
		return nil
	}
	c := &Cutout{factor: float64(m.BaseColor[3]), cut: float64(m.AlphaCutoff)}
	if m.AlphaMode == AlphaBlend {
		c.cut = BlendThreshold
	}
	if m.BaseColorTexture == nil {
		if float32(c.factor) >= float32(c.cut) {
			return nil
		}
		return c // cut everywhere
	}
	b := m.BaseColorTexture.Bounds()
	c.w, c.h = b.Dx(), b.Dy()
	if c.w == 0 || c.h == 0 {
		if float32(c.factor) >= float32(c.cut) {
			return nil
		}
		return c
	}
	c.alpha = alphaPlane(m.BaseColorTexture)
	least := uint8(255)
	for _, a := range c.alpha {
		least = min(least, a)
	}
	if float32(c.factor*float64(least)/255) >= float32(c.cut) {
		return nil // a convex mix of texels is never below the least
	}
	s := m.Sampler
	c.nearest = s.MagFilter == FilterNearest
	c.wrapS, c.wrapT = s.WrapS, s.WrapT
	return c
}

// alphaPlane returns the image's alpha channel, 8 bits a texel, top row
// first.
func alphaPlane(img image.Image) []uint8 {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	out := make([]uint8, w*h)
	switch im := img.(type) {
	case *image.NRGBA:
		for y := 0; y < h; y++ {
			row := im.Pix[y*im.Stride:]
			for x := 0; x < w; x++ {
				out[y*w+x] = row[4*x+3]
			}
		}
	case *image.RGBA:
		for y := 0; y < h; y++ {
			row := im.Pix[y*im.Stride:]
			for x := 0; x < w; x++ {
				out[y*w+x] = row[4*x+3]
			}
		}
	default:
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				_, _, _, a := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
				out[y*w+x] = uint8(a >> 8)
			}
		}
	}
	return out
}

// Keeps reports whether the surface stops a beam at texture coordinates
// (u, v): alpha there at least the cut.
func (c *Cutout) Keeps(u, v float64) bool {
	if c.alpha == nil {
		return false
	}
	return float32(c.factor*c.Alpha(u, v)) >= float32(c.cut)
}

// Alpha returns the texture's alpha at (u, v) by the rule Cutout gives, in
// [0, 1] (0 for a material without a texture, whose alpha is its factor's).
func (c *Cutout) Alpha(u, v float64) float64 {
	if c.alpha == nil {
		return 0
	}
	if math.IsNaN(u) || math.IsNaN(v) || math.IsInf(u, 0) || math.IsInf(v, 0) {
		return 0
	}
	x, y := u*float64(c.w), v*float64(c.h)
	if c.nearest {
		return c.texel(math.Floor(x), math.Floor(y))
	}
	x, y = x-0.5, y-0.5
	x0, y0 := math.Floor(x), math.Floor(y)
	fx, fy := x-x0, y-y0
	a00, a10 := c.texel(x0, y0), c.texel(x0+1, y0)
	a01, a11 := c.texel(x0, y0+1), c.texel(x0+1, y0+1)
	top := a00 + fx*(a10-a00)
	bottom := a01 + fx*(a11-a01)
	return top + fy*(bottom-top)
}

// texel returns the alpha of texel (i, j), indices wrapped.
func (c *Cutout) texel(i, j float64) float64 {
	x := wrapIndex(i, c.w, c.wrapS)
	y := wrapIndex(j, c.h, c.wrapT)
	return float64(c.alpha[y*c.w+x]) / 255
}

// wrapIndex maps a texel index (an integer in float64, possibly far out of
// range) into [0, n) by the wrap mode, as GL does.
func wrapIndex(i float64, n int, mode int) int {
	fn := float64(n)
	switch mode {
	case WrapClampToEdge:
		return int(math.Min(math.Max(i, 0), fn-1))
	case WrapMirroredRepeat:
		// Period 2n: i and 2n-1-i read the same texel.
		k := math.Mod(i, 2*fn)
		if k < 0 {
			k += 2 * fn
		}
		if k >= fn {
			k = 2*fn - 1 - k
		}
		return min(max(int(k), 0), n-1)
	}
	k := math.Mod(i, fn)
	if k < 0 {
		k += fn
	}
	return min(max(int(k), 0), n-1)
}

// Everywhere reports whether the material cuts every point away (no
// texture, and a factor below the cut).
func (c *Cutout) Everywhere() bool { return c.alpha == nil }

// CutoutTexture is what a GPU needs to apply a Cutout in a shader: the
// alpha plane (Width x Height, top row first), sampled at level 0 with
// the magnification filter (Nearest or linear) and wrap modes, a point
// kept where the sampled alpha is at least MinAlpha (the cut over the
// factor). Factor and Cut are the rule's own numbers, for a shader that
// applies Keeps exactly: float32(Factor*alpha) >= float32(Cut).
type CutoutTexture struct {
	Alpha         []uint8
	Width, Height int
	Nearest       bool
	WrapS, WrapT  int
	MinAlpha      float32
	Factor, Cut   float64
}

// Texture returns the cut-out as a texture for shaders (Alpha nil where
// Everywhere).
func (c *Cutout) Texture() CutoutTexture {
	return CutoutTexture{Alpha: c.alpha, Width: c.w, Height: c.h, Nearest: c.nearest,
		WrapS: c.wrapS, WrapT: c.wrapT, MinAlpha: float32(c.cut / max(c.factor, 1e-9)),
		Factor: c.factor, Cut: c.cut}
}
