//go:build js && wasm

package main

import (
	"fmt"
	"syscall/js"

	"github.com/g3n/engine/camera"
	"github.com/g3n/engine/core"
	"github.com/g3n/engine/gls"
	"github.com/g3n/engine/renderer"
	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/viewer/layering"
)

// layers draws the replica as the desktop viewer does: through a cache of
// the meshes that stand still (layering.Cache decides which), copied and
// drawn over each frame, so that a frame with a moving robot draws the
// robot, not the lab. In the page this pays twice: fewer pixels shaded by
// a software WebGL, and fewer draw calls, each of which crosses from Go
// into JavaScript. g3n's WebGL gls has no framebuffer calls: the
// framebuffers here are WebGL's, called through syscall/js. The canvas is
// asked for without antialiasing (newPage): WebGL 2 cannot copy into a
// multisampled framebuffer, and the desktop viewer's pictures are
// single-sampled too.
type layers struct {
	gl          js.Value
	cache, work target
	w, h        int
	plan        layering.Cache[layerKey]
	order       layering.Orderer
	orderScene  *scene.Scene
	off         bool   // every frame drawn in full (#cache=off, or WebGL refused a framebuffer)
	checked     bool   // the first copy's errors were looked for
	failed      string // why the cache was turned off
}

// layerKey is what a cached picture depends on besides the meshes, lights
// and values layering.Cache watches.
type layerKey struct {
	scene    *scene.Scene
	commands int
	pose     mgl64.Mat4
	hfov     float64
	w, h     int
	grid     bool
}

// target is a WebGL framebuffer with color and depth renderbuffers.
type target struct{ fb, color, depth js.Value }

// draw draws roots (the scene first), then over (never cached: the
// grid's labels), with cam onto the canvas, whose drawing buffer is
// key.w x key.h; eye is the camera's position.
func (l *layers) draw(gs *gls.GLS, rend *renderer.Renderer, s *scene.Scene, key layerKey, cam camera.ICamera,
	bg [3]float32, roots, over []core.INode, eye mgl64.Vec3) error {
	if s != l.orderScene {
		l.order, l.orderScene = layering.Orderer{}, s
	}
	gs.Viewport(0, 0, int32(key.w), int32(key.h))
	step := l.plan.Plan(s, key, roots, l.off) // updates the world matrices
	if step != layering.Overlay {
		// Nearest first: the depth test spares a software rasterizer the
		// shading of hidden pixels (the desktop viewer measured 15-20%).
		// Over the cache only the few moving meshes are drawn.
		l.order.Apply(s.G3N(), eye)
	}
	if step != layering.DrawAll && (l.w != key.w || l.h != key.h) {
		l.release()
		if err := l.make(key.w, key.h); err != nil {
			l.off, l.failed = true, err.Error()
			l.release()
			step = layering.DrawAll
		}
	}
	if step == layering.DrawAll {
		l.bind(js.Null())
		clearTo(gs, bg)
		if err := render(rend, cam, roots); err != nil {
			return err
		}
		return render(rend, cam, over)
	}
	if step == layering.Rebuild {
		l.bind(l.cache.fb)
		clearTo(gs, bg)
		l.plan.HideMoving()
		err := render(rend, cam, roots)
		l.plan.Restore()
		if err != nil {
			return err
		}
		l.plan.Built(s, key)
	}
	l.plan.HideStill()
	if l.plan.Drawn() == 0 && len(over) == 0 {
		// Nothing to draw over the cache: the cache is the picture.
		l.plan.Restore()
		l.copy(l.cache.fb, js.Null(), gls.COLOR_BUFFER_BIT)
		l.bind(js.Null())
		return nil
	}
	l.copy(l.cache.fb, l.work.fb, gls.COLOR_BUFFER_BIT|gls.DEPTH_BUFFER_BIT)
	l.bind(l.work.fb)
	err := render(rend, cam, roots)
	l.plan.Restore()
	if err == nil {
		err = render(rend, cam, over)
	}
	// Not straight onto the canvas: SwiftShader's WebGL took a copy of
	// the cache's color and depth there without an error and left the
	// canvas black (Chromium 156), so the canvas gets only color.
	l.copy(l.work.fb, js.Null(), gls.COLOR_BUFFER_BIT)
	if !l.checked {
		// A WebGL that refuses these copies says so once; the page then
		// draws every frame in full.
		l.checked = true
		if e := l.gl.Call("getError").Int(); e != gls.NO_ERROR {
			l.off, l.failed = true, fmt.Sprintf("WebGL error %#x copying the cache", e)
			l.plan.Invalidate()
		}
	}
	l.bind(js.Null())
	return err
}

// Built and Cached count the cache's draws and the frames drawn over it.
func (l *layers) Built() int  { return l.plan.Builds }
func (l *layers) Cached() int { return l.plan.Cached }

func render(rend *renderer.Renderer, cam camera.ICamera, roots []core.INode) error {
	for _, r := range roots {
		if err := rend.Render(r, cam); err != nil {
			return err
		}
	}
	return nil
}

// clearTo clears the bound framebuffer to bg, through gls so that its
// cache of the depth mask (a transparent material may have turned writes
// off) stays true.
func clearTo(gs *gls.GLS, bg [3]float32) {
	gs.DepthMask(true)
	gs.ClearColor(bg[0], bg[1], bg[2], 1)
	gs.Clear(gls.COLOR_BUFFER_BIT | gls.DEPTH_BUFFER_BIT)
}

func (l *layers) bind(fb js.Value) { l.gl.Call("bindFramebuffer", gls.FRAMEBUFFER, fb) }

// copy copies a whole picture between framebuffers (js.Null(): the
// canvas's).
func (l *layers) copy(from, to js.Value, mask int) {
	l.gl.Call("bindFramebuffer", gls.READ_FRAMEBUFFER, from)
	l.gl.Call("bindFramebuffer", gls.DRAW_FRAMEBUFFER, to)
	l.gl.Call("blitFramebuffer", 0, 0, l.w, l.h, 0, 0, l.w, l.h, mask, gls.NEAREST)
}

func (l *layers) make(w, h int) error {
	l.w, l.h = w, h
	var err error
	if l.cache, err = l.target(); err != nil {
		return err
	}
	l.work, err = l.target()
	l.bind(js.Null())
	l.plan.Invalidate()
	return err
}

func (l *layers) target() (target, error) {
	gl := l.gl
	t := target{fb: gl.Call("createFramebuffer"), color: gl.Call("createRenderbuffer"), depth: gl.Call("createRenderbuffer")}
	gl.Call("bindRenderbuffer", gls.RENDERBUFFER, t.color)
	gl.Call("renderbufferStorage", gls.RENDERBUFFER, gls.RGBA8, l.w, l.h)
	gl.Call("bindRenderbuffer", gls.RENDERBUFFER, t.depth)
	gl.Call("renderbufferStorage", gls.RENDERBUFFER, gls.DEPTH_COMPONENT24, l.w, l.h)
	gl.Call("bindRenderbuffer", gls.RENDERBUFFER, js.Null())
	l.bind(t.fb)
	gl.Call("framebufferRenderbuffer", gls.FRAMEBUFFER, gls.COLOR_ATTACHMENT0, gls.RENDERBUFFER, t.color)
	gl.Call("framebufferRenderbuffer", gls.FRAMEBUFFER, gls.DEPTH_ATTACHMENT, gls.RENDERBUFFER, t.depth)
	if st := gl.Call("checkFramebufferStatus", gls.FRAMEBUFFER).Int(); st != gls.FRAMEBUFFER_COMPLETE {
		return t, fmt.Errorf("WebGL framebuffer %dx%d incomplete (%#x)", l.w, l.h, st)
	}
	return t, nil
}

func (l *layers) release() {
	for _, t := range []target{l.cache, l.work} {
		if !t.fb.Truthy() {
			continue
		}
		l.gl.Call("deleteFramebuffer", t.fb)
		l.gl.Call("deleteRenderbuffer", t.color)
		l.gl.Call("deleteRenderbuffer", t.depth)
	}
	l.cache, l.work, l.w, l.h = target{}, target{}, 0, 0
	l.plan.Invalidate()
}
