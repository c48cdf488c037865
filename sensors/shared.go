package sensors

import (
	"fmt"

	"github.com/g3n/engine/camera"
	"github.com/g3n/engine/gls"
	"github.com/g3n/engine/renderer"
	"github.com/simvis/simvis/internal/gpu"
)

// NewRendererOn makes a Renderer on an existing context, such as a window's
// (gpu.NewExternal): the sensors then render into offscreen framebuffers of
// that context and share its meshes with whatever else draws there. The
// Renderer owns ctx from now on: Close closes it. On error ctx stays open.
func NewRendererOn(ctx *gpu.Context) (*Renderer, error) {
	r := &Renderer{ctx: ctx, fbos: map[fboKey]*gpu.Framebuffer{}}
	err := ctx.Do(func(gs *gls.GLS) error {
		var err error
		r.g3n, err = NewG3NRenderer(gs)
		if err != nil {
			return err
		}
		r.reversedZ = gpu.HasZeroToOneDepth(gs)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// NewG3NRenderer makes a g3n renderer on gs set up as the sensors' own: the
// default shaders, objects sorted (only blending needs it; opaque ones rely
// on the depth test). A window drawing the scene uses one so that its
// picture is made the way a camera's is. Call it on gs's thread.
func NewG3NRenderer(gs *gls.GLS) (*renderer.Renderer, error) {
	rend := renderer.NewRenderer(gs)
	if err := rend.AddDefaultShaders(); err != nil {
		return nil, fmt.Errorf("sensors: compiling shaders: %w", err)
	}
	rend.SetObjectSorting(true)
	return rend, nil
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
