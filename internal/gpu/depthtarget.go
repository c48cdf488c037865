package gpu

import (
	"fmt"

	"github.com/g3n/engine/gls"
)

// DepthTarget is an offscreen target with only a depth attachment, a
// DEPTH_COMPONENT32F texture later passes sample (shadow maps). All methods
// must be called inside Context.Do.
type DepthTarget struct {
	Width, Height int
	fbo, tex      uint32
}

// NewDepthTarget creates a width x height depth-only target and checks
// that it is complete. Its texture compares (GL_COMPARE_REF_TO_TEXTURE,
// LEQUAL) with linear filtering, for sampler2DShadow: a lookup returns the
// bilinearly weighted fraction of the 2x2 texels not nearer than the
// reference (hardware percentage-closer filtering). The
// caller's framebuffer and 2D texture bindings are left as they were.
func NewDepthTarget(gs *gls.GLS, width, height int) (*DepthTarget, error) {
	if width <= 0 || height <= 0 {
		return nil, fmt.Errorf("gpu: NewDepthTarget: invalid size %dx%d", width, height)
	}
	if limit := glGetInteger(gls.MAX_TEXTURE_SIZE); width > limit || height > limit {
		return nil, fmt.Errorf("gpu: NewDepthTarget: size %dx%d exceeds the implementation limit %d", width, height, limit)
	}
	drainGLErrors()
	prevTex := uint32(glGetInteger(gls.TEXTURE_BINDING_2D))
	prevDraw := uint32(glGetInteger(gls.DRAW_FRAMEBUFFER_BINDING))
	prevRead := uint32(glGetInteger(gls.READ_FRAMEBUFFER_BINDING))
	defer func() {
		glBindTexture(gls.TEXTURE_2D, prevTex)
		glBindFramebuffer(gls.DRAW_FRAMEBUFFER, prevDraw)
		glBindFramebuffer(gls.READ_FRAMEBUFFER, prevRead)
	}()
	d := &DepthTarget{Width: width, Height: height}
	d.tex = glGenTexture()
	glBindTexture(gls.TEXTURE_2D, d.tex)
	glTexImage2DEmpty(gls.TEXTURE_2D, gls.DEPTH_COMPONENT32F, width, height, gls.DEPTH_COMPONENT, gls.FLOAT)
	glTexParameteri(gls.TEXTURE_2D, gls.TEXTURE_MIN_FILTER, gls.LINEAR)
	glTexParameteri(gls.TEXTURE_2D, gls.TEXTURE_MAG_FILTER, gls.LINEAR)
	glTexParameteri(gls.TEXTURE_2D, gls.TEXTURE_WRAP_S, gls.CLAMP_TO_EDGE)
	glTexParameteri(gls.TEXTURE_2D, gls.TEXTURE_WRAP_T, gls.CLAMP_TO_EDGE)
	glTexParameteri(gls.TEXTURE_2D, gls.TEXTURE_MAX_LEVEL, 0)
	glTexParameteri(gls.TEXTURE_2D, gls.TEXTURE_COMPARE_MODE, gls.COMPARE_REF_TO_TEXTURE)
	glTexParameteri(gls.TEXTURE_2D, gls.TEXTURE_COMPARE_FUNC, gls.LEQUAL)
	d.fbo = glGenFramebuffer()
	glBindFramebuffer(gls.FRAMEBUFFER, d.fbo)
	glFramebufferTexture2D(gls.FRAMEBUFFER, gls.DEPTH_ATTACHMENT, gls.TEXTURE_2D, d.tex)
	glDrawBuffer1(gls.NONE) // no color: the pass writes depth only
	glReadBuffer(gls.NONE)
	err := glErrors()
	if err == nil {
		if st := glCheckFramebufferStatus(gls.FRAMEBUFFER); st != gls.FRAMEBUFFER_COMPLETE {
			err = fmt.Errorf("framebuffer incomplete: %s", fbStatusName(st))
		}
	}
	if err != nil {
		d.Delete(gs)
		return nil, fmt.Errorf("gpu: NewDepthTarget %dx%d: %w", width, height, err)
	}
	return d, nil
}

// Texture returns the GL name of the depth texture. It must not be sampled
// while d is the draw target.
func (d *DepthTarget) Texture() uint32 { return d.tex }

// BindClear makes d the draw and read framebuffer, sets the viewport to
// cover it and clears its depth to 1 (the depth mask enabled through gs).
func (d *DepthTarget) BindClear(gs *gls.GLS) {
	glBindFramebuffer(gls.FRAMEBUFFER, d.fbo)
	gs.Viewport(0, 0, int32(d.Width), int32(d.Height))
	gs.ClearDepth(1)
	gs.DepthMask(true)
	gs.Clear(gls.DEPTH_BUFFER_BIT)
}

// Delete releases d's GL objects; calling it again does nothing.
func (d *DepthTarget) Delete(gs *gls.GLS) {
	if d.fbo != 0 {
		glDeleteFramebuffer(d.fbo)
		d.fbo = 0
	}
	if d.tex != 0 {
		glDeleteTexture(d.tex)
		d.tex = 0
	}
}

// maxTextureMaxAnisotropy is GL_MAX_TEXTURE_MAX_ANISOTROPY(_EXT): the same
// value in EXT_texture_filter_anisotropic and GL 4.6.
const maxTextureMaxAnisotropy = 0x84FF

// MaxAnisotropy returns the most samples anisotropic texture filtering may
// take on this context, 0 where the GL offers none (neither GL 4.6 nor
// EXT_texture_filter_anisotropic: the query is then an invalid enum).
func MaxAnisotropy(gs *gls.GLS) float32 {
	drainGLErrors()
	n := glGetInteger(maxTextureMaxAnisotropy)
	if glGetError() != gls.NO_ERROR || n < 1 {
		drainGLErrors()
		return 0
	}
	return float32(n)
}

// SetUnpackAlignment sets GL_UNPACK_ALIGNMENT, the row alignment of pixel
// data uploaded from memory (4 by default; 1 for rows of single bytes).
func SetUnpackAlignment(n int) { glPixelStorei(gls.UNPACK_ALIGNMENT, int32(n)) }

// MaxTextureSize returns GL_MAX_TEXTURE_SIZE, the largest side of a 2D
// texture.
func MaxTextureSize(gs *gls.GLS) int { return glGetInteger(gls.MAX_TEXTURE_SIZE) }
