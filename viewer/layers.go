package viewer

import (
	"github.com/g3n/engine/camera"
	"github.com/g3n/engine/core"
	"github.com/g3n/engine/gls"
	"github.com/g3n/engine/renderer"
	"github.com/simvis/simvis/internal/gpu"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
	"github.com/simvis/simvis/viewer/layering"
)

// layers draws the scene through a cache of what stands still: which
// meshes are cached is layering.Cache's decision (it says why); layers owns
// the framebuffers, the cache's and the work one a frame is drawn in.
type layers struct {
	cache, work *gpu.Framebuffer
	plan        layering.Cache[layerKey]
	off         bool // no cache: every frame drawn in full
}

// layerKey is what a cached picture depends on besides the meshes, lights
// and values layering.Cache watches.
type layerKey struct {
	scene          *scene.Scene
	view           sensors.View
	commands       int
	grid, overlays bool
}

// draw draws roots (the scene first; they share the camera) into the work
// framebuffer and returns it. Runs on the render thread.
func (l *layers) draw(gs *gls.GLS, rend *renderer.Renderer, s *scene.Scene, key layerKey, cam camera.ICamera,
	bg [3]float32, roots []core.INode) (*gpu.Framebuffer, error) {
	w, h := key.view.Width, key.view.Height
	if l.work == nil || l.work.Width != w || l.work.Height != h {
		l.release(gs)
		var err error
		if l.work, err = gpu.NewFramebuffer(gs, w, h, gpu.ColorRGBA8); err != nil {
			return nil, err
		}
		if l.cache, err = gpu.NewFramebuffer(gs, w, h, gpu.ColorRGBA8); err != nil {
			return nil, err
		}
		l.plan.Invalidate()
	}
	step := l.plan.Plan(s, key, roots, l.off)
	if step == layering.DrawAll {
		clearTo(gs, l.work, bg)
		return l.work, render(rend, cam, roots)
	}
	if step == layering.Rebuild {
		clearTo(gs, l.cache, bg)
		l.plan.HideMoving()
		err := render(rend, cam, roots)
		l.plan.Restore()
		if err != nil {
			return nil, err
		}
		l.plan.Built(s, key)
	}
	if err := gpu.Blit(gs, l.cache, l.work, true); err != nil {
		return nil, err
	}
	l.work.Bind(gs)
	l.plan.HideStill()
	err := render(rend, cam, roots)
	l.plan.Restore()
	return l.work, err
}

func render(rend *renderer.Renderer, cam camera.ICamera, roots []core.INode) error {
	for _, r := range roots {
		if err := rend.Render(r, cam); err != nil {
			return err
		}
	}
	return nil
}

func clearTo(gs *gls.GLS, f *gpu.Framebuffer, bg [3]float32) {
	gs.Disable(gls.MULTISAMPLE) // the targets are single-sampled; see Viewer's frame
	f.Clear(gs, bg[0], bg[1], bg[2], 1)
}

func (l *layers) release(gs *gls.GLS) {
	if l.work != nil {
		l.work.Delete(gs)
	}
	if l.cache != nil {
		l.cache.Delete(gs)
	}
	l.work, l.cache = nil, nil
	l.plan.Invalidate()
}
