package sensors

import (
	"github.com/g3n/engine/camera"
	"github.com/g3n/engine/renderer"
	"github.com/simvis/simvis/internal/gpu"
)

// NewRendererOn makes a Renderer on an existing context, such as a window's
// (gpu.NewExternal): the sensors then render into offscreen framebuffers of
// that context and share its meshes with whatever else draws there. The
// Renderer owns ctx from now on: Close closes it. On error ctx stays open.
func NewRendererOn(ctx *gpu.Context) (*Renderer, error) {
	r := &Renderer{ctx: ctx, fbos: map[fboKey]*gpu.Framebuffer{}}
	if err := ctx.Do(r.initGL); err != nil {
		return nil, err
	}
	return r, nil
}

// Context returns the GL context the renderer draws on, for work that must
// run on its thread (a window's drawing).
func (r *Renderer) Context() *gpu.Context { return r.ctx }

// Camera returns g3n's camera for the view, with the matrices RenderRGBA
// uses, for drawing the view somewhere else (a window).
func (v View) Camera() camera.ICamera { return v.camera() }

// G3N returns the renderer's g3n renderer, for drawing on the same context
// (a window). Everything drawn on one context must go through one g3n
// renderer: its shader manager remembers which program it made current and
// skips switching back, so a second renderer's draws in between would leave
// the first drawing with the wrong program. Use it only on the context's
// thread (inside Context().Do).
func (r *Renderer) G3N() *renderer.Renderer { return r.g3n }
