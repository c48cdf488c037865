package gpu

import (
	"fmt"

	"github.com/g3n/engine/gls"
)

// Filter is how a Texture is sampled between texels.
type Filter int

const (
	// Nearest takes the nearest texel of level 0.
	Nearest Filter = iota
	// Linear interpolates the four nearest texels of level 0.
	Linear
	// Trilinear makes mipmaps at upload and, when minifying, blends
	// bilinear samples of the two nearest levels.
	Trilinear
)

// Sampling is how a Texture is filtered and wrapped.
type Sampling struct {
	Filter       Filter
	WrapS, WrapT uint32 // GL wrap modes: gls.REPEAT, gls.CLAMP_TO_EDGE, gls.MIRRORED_REPEAT
}

// Texture is a 2D texture uploaded from memory for passes to sample. It
// is made with g3n's wrappers, so that g3n's object counts include it.
// All methods must be called inside Context.Do.
type Texture struct {
	id uint32
}

// NewTextureR8 uploads a width x height texture of one 8-bit channel
// (shaders read it as .r in [0, 1]) from pix, rows of width bytes, the
// first row at texture coordinate t = 0. The 2D texture binding of the
// active unit is left as it was.
func NewTextureR8(gs *gls.GLS, width, height int, pix []byte, s Sampling) (*Texture, error) {
	if width <= 0 || height <= 0 || len(pix) != width*height {
		return nil, fmt.Errorf("gpu: NewTextureR8: %d bytes for %dx%d texels", len(pix), width, height)
	}
	drainGLErrors()
	prev := uint32(glGetInteger(gls.TEXTURE_BINDING_2D))
	t := &Texture{id: gs.GenTexture()}
	gs.BindTexture(gls.TEXTURE_2D, t.id)
	setUnpackAlignment(1) // rows of one byte per texel
	gs.TexImage2D(gls.TEXTURE_2D, 0, gls.R8, int32(width), int32(height), gls.RED, gls.UNSIGNED_BYTE, pix)
	setUnpackAlignment(4)
	minFilter, magFilter := int32(gls.NEAREST), int32(gls.NEAREST)
	switch s.Filter {
	case Linear:
		minFilter, magFilter = gls.LINEAR, gls.LINEAR
	case Trilinear:
		gs.GenerateMipmap(gls.TEXTURE_2D)
		minFilter, magFilter = gls.LINEAR_MIPMAP_LINEAR, gls.LINEAR
	}
	gs.TexParameteri(gls.TEXTURE_2D, gls.TEXTURE_MIN_FILTER, minFilter)
	gs.TexParameteri(gls.TEXTURE_2D, gls.TEXTURE_MAG_FILTER, magFilter)
	gs.TexParameteri(gls.TEXTURE_2D, gls.TEXTURE_WRAP_S, int32(s.WrapS))
	gs.TexParameteri(gls.TEXTURE_2D, gls.TEXTURE_WRAP_T, int32(s.WrapT))
	gs.BindTexture(gls.TEXTURE_2D, prev)
	if err := glErrors(); err != nil {
		t.Delete(gs)
		return nil, fmt.Errorf("gpu: NewTextureR8 %dx%d: %w", width, height, err)
	}
	return t, nil
}

// Bind binds t to texture unit unit (0, 1, ...) for sampling, leaving
// unit 0 the active one.
func (t *Texture) Bind(gs *gls.GLS, unit int) { bindTextureUnit(gs, unit, t.id) }

// Delete releases the texture; calling it again does nothing.
func (t *Texture) Delete(gs *gls.GLS) {
	if t.id != 0 {
		gs.DeleteTextures(t.id)
		t.id = 0
	}
}

// bindTextureUnit binds the 2D texture id to a unit through gs, which
// caches the active unit.
func bindTextureUnit(gs *gls.GLS, unit int, id uint32) {
	gs.ActiveTexture(gls.TEXTURE0 + uint32(unit))
	gs.BindTexture(gls.TEXTURE_2D, id)
	gs.ActiveTexture(gls.TEXTURE0)
}

// setUnpackAlignment sets GL_UNPACK_ALIGNMENT, the row alignment of pixel
// data uploaded from memory (4 by default, which g3n's uploads assume).
func setUnpackAlignment(n int) { glPixelStorei(gls.UNPACK_ALIGNMENT, int32(n)) }
