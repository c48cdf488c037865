package gpu

import "github.com/g3n/engine/gls"

// DepthTarget is an offscreen target with only a depth attachment, a
// DEPTH_COMPONENT32F texture later passes sample (shadow maps). All methods
// must be called inside Context.Do.
type DepthTarget struct {
	Width, Height int
	targetObjects
}

// NewDepthTarget creates a width x height depth-only target and checks
// that it is complete. Its texture compares (GL_COMPARE_REF_TO_TEXTURE,
// LEQUAL) with linear filtering, for sampler2DShadow: a lookup returns the
// bilinearly weighted fraction of the 2x2 texels not nearer than the
// reference (hardware percentage-closer filtering). The
// caller's framebuffer and 2D texture bindings are left as they were.
func NewDepthTarget(gs *gls.GLS, width, height int) (*DepthTarget, error) {
	o, err := newTargetObjects("NewDepthTarget", width, height, attachments{depthTexture: true})
	if err != nil {
		return nil, err
	}
	return &DepthTarget{Width: width, Height: height, targetObjects: o}, nil
}

// Texture returns the GL name of the depth texture. It must not be sampled
// while d is the draw target.
func (d *DepthTarget) Texture() uint32 { return d.depthTex }

// BindTexture binds the depth texture to texture unit unit for sampling,
// leaving unit 0 the active one. It must not be sampled while d is the
// draw target.
func (d *DepthTarget) BindTexture(gs *gls.GLS, unit int) { bindTextureUnit(gs, unit, d.depthTex) }

// BindClear makes d the draw and read framebuffer, sets the viewport to
// cover it and clears its depth to 1 (the depth mask enabled through gs).
func (d *DepthTarget) BindClear(gs *gls.GLS) {
	d.bindClear(gs, d.Width, d.Height, gls.DEPTH_BUFFER_BIT, 1)
}

// Delete releases d's GL objects; calling it again does nothing.
func (d *DepthTarget) Delete(gs *gls.GLS) { d.delete() }

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

// MaxTextureSize returns GL_MAX_TEXTURE_SIZE, the largest side of a 2D
// texture.
func MaxTextureSize(gs *gls.GLS) int { return glGetInteger(gls.MAX_TEXTURE_SIZE) }
