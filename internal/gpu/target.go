package gpu

import (
	"fmt"

	"github.com/g3n/engine/gls"
)

// attachments is what an offscreen target's framebuffer object holds.
type attachments struct {
	color *formatInfo // color texture of this format; nil: no color
	// depthTexture keeps depth in a comparing texture that later passes
	// sample (shadow maps) rather than in a renderbuffer.
	depthTexture bool
}

// targetObjects are the GL objects of an offscreen target (Framebuffer,
// DepthTarget): made in one place, newTargetObjects, and deleted in one.
type targetObjects struct {
	fbo      uint32
	colorTex uint32 // color attachment, 0 if none
	depthRB  uint32 // depth renderbuffer, or
	depthTex uint32 // depth texture
}

// newTargetObjects makes a width x height framebuffer object with the
// attachments and checks that it is complete; op names the constructor in
// errors. The bindings of the caller (framebuffers, renderbuffer, 2D
// texture of the active unit) are left as they were.
func newTargetObjects(op string, width, height int, a attachments) (targetObjects, error) {
	var o targetObjects
	if width <= 0 || height <= 0 {
		return o, fmt.Errorf("gpu: %s: invalid size %dx%d", op, width, height)
	}
	limit := glGetInteger(gls.MAX_TEXTURE_SIZE)
	if !a.depthTexture {
		limit = min(limit, glGetInteger(gls.MAX_RENDERBUFFER_SIZE))
	}
	if width > limit || height > limit {
		return o, fmt.Errorf("gpu: %s: size %dx%d exceeds the implementation limit %d", op, width, height, limit)
	}

	drainGLErrors()
	prevTex := uint32(glGetInteger(gls.TEXTURE_BINDING_2D))
	prevRB := uint32(glGetInteger(gls.RENDERBUFFER_BINDING))
	prevDraw := uint32(glGetInteger(gls.DRAW_FRAMEBUFFER_BINDING))
	prevRead := uint32(glGetInteger(gls.READ_FRAMEBUFFER_BINDING))
	defer func() {
		glBindTexture(gls.TEXTURE_2D, prevTex)
		glBindRenderbuffer(gls.RENDERBUFFER, prevRB)
		glBindFramebuffer(gls.DRAW_FRAMEBUFFER, prevDraw)
		glBindFramebuffer(gls.READ_FRAMEBUFFER, prevRead)
	}()

	if a.color != nil {
		// A texture rather than a renderbuffer so later passes can sample it.
		o.colorTex = newTargetTexture(width, height, a.color.internal, a.color.format, a.color.typ, gls.NEAREST)
	}
	if a.depthTexture {
		o.depthTex = newTargetTexture(width, height, gls.DEPTH_COMPONENT32F, gls.DEPTH_COMPONENT, gls.FLOAT, gls.LINEAR)
		// Lookups through sampler2DShadow compare against the reference:
		// with linear filtering, the bilinearly weighted fraction of the
		// 2x2 texels not nearer (hardware percentage-closer filtering).
		glTexParameteri(gls.TEXTURE_2D, gls.TEXTURE_COMPARE_MODE, gls.COMPARE_REF_TO_TEXTURE)
		glTexParameteri(gls.TEXTURE_2D, gls.TEXTURE_COMPARE_FUNC, gls.LEQUAL)
	} else {
		o.depthRB = glGenRenderbuffer()
		glBindRenderbuffer(gls.RENDERBUFFER, o.depthRB)
		glRenderbufferStorage(gls.RENDERBUFFER, gls.DEPTH_COMPONENT32F, width, height)
	}

	o.fbo = glGenFramebuffer()
	glBindFramebuffer(gls.FRAMEBUFFER, o.fbo)
	buffer := uint32(gls.NONE) // no color: a pass writes depth only
	if o.colorTex != 0 {
		glFramebufferTexture2D(gls.FRAMEBUFFER, gls.COLOR_ATTACHMENT0, gls.TEXTURE_2D, o.colorTex)
		buffer = gls.COLOR_ATTACHMENT0
	}
	if o.depthTex != 0 {
		glFramebufferTexture2D(gls.FRAMEBUFFER, gls.DEPTH_ATTACHMENT, gls.TEXTURE_2D, o.depthTex)
	} else {
		glFramebufferRenderbuffer(gls.FRAMEBUFFER, gls.DEPTH_ATTACHMENT, gls.RENDERBUFFER, o.depthRB)
	}
	// Draw and read buffer selection is per-framebuffer state: set it once.
	glDrawBuffer1(buffer)
	glReadBuffer(buffer)

	// Allocation failures (GL_OUT_OF_MEMORY) show up as errors, not as an
	// incomplete status, so check both.
	err := glErrors()
	if err == nil {
		if st := glCheckFramebufferStatus(gls.FRAMEBUFFER); st != gls.FRAMEBUFFER_COMPLETE {
			err = fmt.Errorf("framebuffer incomplete: %s", fbStatusName(st))
		}
	}
	if err != nil {
		o.delete()
		format := ""
		if a.color != nil {
			format = " " + a.color.name
		}
		return o, fmt.Errorf("gpu: %s %dx%d%s: %w", op, width, height, format, err)
	}
	return o, nil
}

// newTargetTexture makes a 2D texture of one level, without data, clamped
// at its edges, bound to the active unit.
func newTargetTexture(width, height int, internal, format, typ uint32, filter int32) uint32 {
	tex := glGenTexture()
	glBindTexture(gls.TEXTURE_2D, tex)
	glTexImage2DEmpty(gls.TEXTURE_2D, internal, width, height, format, typ)
	glTexParameteri(gls.TEXTURE_2D, gls.TEXTURE_MIN_FILTER, filter)
	glTexParameteri(gls.TEXTURE_2D, gls.TEXTURE_MAG_FILTER, filter)
	glTexParameteri(gls.TEXTURE_2D, gls.TEXTURE_WRAP_S, gls.CLAMP_TO_EDGE)
	glTexParameteri(gls.TEXTURE_2D, gls.TEXTURE_WRAP_T, gls.CLAMP_TO_EDGE)
	glTexParameteri(gls.TEXTURE_2D, gls.TEXTURE_MAX_LEVEL, 0) // no mipmaps
	return tex
}

// delete releases the objects; calling it again does nothing. Deleting a
// bound framebuffer rebinds 0, as GL specifies.
func (o *targetObjects) delete() {
	if o.fbo != 0 {
		glDeleteFramebuffer(o.fbo)
	}
	if o.colorTex != 0 {
		glDeleteTexture(o.colorTex)
	}
	if o.depthRB != 0 {
		glDeleteRenderbuffer(o.depthRB)
	}
	if o.depthTex != 0 {
		glDeleteTexture(o.depthTex)
	}
	*o = targetObjects{}
}

// bindClear binds the target's framebuffer, sets the viewport to cover
// width x height and clears the buffers in mask, depth to depth. The depth
// mask is enabled through gs first: g3n materials may leave it off, and a
// masked depth clear silently does nothing.
func (o *targetObjects) bindClear(gs *gls.GLS, width, height int, mask uint, depth float32) {
	glBindFramebuffer(gls.FRAMEBUFFER, o.fbo)
	gs.Viewport(0, 0, int32(width), int32(height))
	gs.ClearDepth(depth)
	gs.DepthMask(true)
	gs.Clear(mask)
}
