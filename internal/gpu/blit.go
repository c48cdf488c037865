package gpu

// glBlitFramebuffer is resolved here, in its own preamble, since cgo.go's
// C symbols are private to that file. Like cgo.go it goes through
// eglGetProcAddress: with glvnd the stub serves whatever context is
// current, a window's GLX one included.

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>

typedef void (*sv_blit_fn)(int, int, int, int, int, int, int, int, unsigned int, unsigned int);
static sv_blit_fn sv_blit;

static int sv_blit_load(void) {
	if (sv_blit) return 0;
	void *egl = dlopen("libEGL.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!egl) return -1;
	void *(*gpa)(const char *) = (void *(*)(const char *))dlsym(egl, "eglGetProcAddress");
	if (!gpa) return -1;
	sv_blit = (sv_blit_fn)gpa("glBlitFramebuffer");
	return sv_blit ? 0 : -1;
}

static void sv_Blit(int w, int h, unsigned int mask) {
	sv_blit(0, 0, w, h, 0, 0, w, h, mask, 0x2600); // GL_NEAREST
}
*/
import "C"

import (
	"errors"
	"fmt"

	"github.com/g3n/engine/gls"
)

// Blit copies src's color (and with depth its depth too) onto dst of the
// same size, or onto the default framebuffer (a window's back buffer) where
// dst is nil, pixel for pixel. A single-sampled source is replicated into
// every sample of a multisampled window. It leaves the default framebuffer
// bound.
func Blit(gs *gls.GLS, src, dst *Framebuffer, depth bool) error {
	if src == nil || src.fbo == 0 || (dst != nil && dst.fbo == 0) {
		return errDeleted
	}
	if dst != nil && (dst.Width != src.Width || dst.Height != src.Height) {
		return errors.New("gpu: Blit: framebuffers of different sizes")
	}
	if C.sv_blit_load() != 0 {
		return errors.New("gpu: Blit: no glBlitFramebuffer entry point")
	}
	var to uint32
	if dst != nil {
		to = dst.fbo
	}
	mask := uint32(gls.COLOR_BUFFER_BIT)
	if depth {
		mask |= gls.DEPTH_BUFFER_BIT
	}
	drainGLErrors()
	glBindFramebuffer(gls.READ_FRAMEBUFFER, src.fbo)
	glBindFramebuffer(gls.DRAW_FRAMEBUFFER, to)
	C.sv_Blit(C.int(src.Width), C.int(src.Height), C.uint(mask))
	err := glErrors()
	glBindFramebuffer(gls.FRAMEBUFFER, 0)
	if err != nil {
		return err
	}
	return nil
}

// ReadBGRA reads the color attachment as 8-bit BGRA (the byte order of an
// X11 TrueColor image on a little-endian machine) into dst, exactly
// Height rows of 4*Width bytes, top row first.
func (f *Framebuffer) ReadBGRA(gs *gls.GLS, dst []byte) error {
	if f.fbo == 0 {
		return errDeleted
	}
	if len(dst) != 4*f.Width*f.Height {
		return fmt.Errorf("gpu: ReadBGRA: want %d bytes, got %d", 4*f.Width*f.Height, len(dst))
	}
	return f.read(dst, gls.BGRA, gls.UNSIGNED_BYTE, 4*f.Width, "ReadBGRA")
}
