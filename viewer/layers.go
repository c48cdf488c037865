package viewer

import (
	"slices"
	"time"

	"github.com/g3n/engine/camera"
	"github.com/g3n/engine/core"
	"github.com/g3n/engine/gls"
	"github.com/g3n/engine/graphic"
	"github.com/g3n/engine/light"
	"github.com/g3n/engine/math32"
	"github.com/g3n/engine/renderer"
	"github.com/simvis/simvis/internal/gpu"
	"github.com/simvis/simvis/scene"
	"github.com/simvis/simvis/sensors"
)

// layers draws the scene through a cache of what stands still. On llvmpipe
// shading the pixels is a frame's cost, and most of them show the lab, not
// the robot that moves: the opaque meshes that have not moved lately are
// drawn once into the cache framebuffer (color and depth); a frame copies
// the cache and draws only the rest (what moves, transparent meshes,
// overlays whose geometry changes) over it, depth-tested against the
// cached depth. For opaque meshes the depth test, not the order of
// drawing, decides what is seen, so the picture is the one a full draw
// makes. Anything that could change how a cached mesh looks invalidates
// the cache: a new view or size, a scene command, the grid or overlays
// toggled, a light that moved, a value of an element that is not a joint
// or pose (a light's, an appearance's), shadow maps (a mesh moving casts
// shadows on the still ones).
type layers struct {
	cache, work *gpu.Framebuffer
	valid       bool
	key         layerKey
	prevKey     layerKey // the last frame's
	static      map[*graphic.Graphic]math32.Matrix4
	values      []float64 // values the cache was drawn with
	lights      []math32.Matrix4
	last        map[*graphic.Graphic]math32.Matrix4 // world matrices the last frame
	movedAt     map[*graphic.Graphic]time.Time
	cur         []layerGraphic
	curLights   []math32.Matrix4
	hidden      []*graphic.Graphic
	kinematic   []bool // per value index: a joint's or pose's (moves meshes only)
	kinScene    *scene.Scene
	off         bool // no cache: every frame drawn in full
	// Builds counts the cache's draws, Cached the frames drawn over it.
	Builds, Cached int
}

type layerKey struct {
	scene          *scene.Scene
	view           sensors.View
	commands       int
	grid, overlays bool
}

type layerGraphic struct {
	gr    *graphic.Graphic
	mw    math32.Matrix4
	still bool // opaque, fixed geometry, no recent motion: may be cached
}

// stillAfter is how long a mesh must not move to be drawn into the cache
// again (a robot that moves now and then is not cached between moves).
const stillAfter = 2 * time.Second

// kinematic reports whether an element's values only move meshes, as the
// element says (scene.Kinematic).
func kinematic(e scene.Element) bool {
	k, ok := e.(scene.Kinematic)
	return ok && k.Kinematic()
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
		l.valid = false
	}
	if l.last == nil {
		l.last = map[*graphic.Graphic]math32.Matrix4{}
		l.movedAt = map[*graphic.Graphic]time.Time{}
	}
	if l.kinScene != s {
		l.kinScene = s
		l.kinematic = l.kinematic[:0]
		for _, e := range s.Elements() {
			kin := kinematic(e.Element)
			for range e.Params {
				l.kinematic = append(l.kinematic, kin)
			}
		}
		clear(l.last)
		clear(l.movedAt)
		l.valid = false
	}
	shadows := l.collect(roots)
	now := time.Now()
	for i := range l.cur {
		g := &l.cur[i]
		if m, ok := l.last[g.gr]; ok && m != g.mw {
			l.movedAt[g.gr] = now
		}
		l.last[g.gr] = g.mw
		if t, ok := l.movedAt[g.gr]; ok && now.Sub(t) < stillAfter {
			g.still = false
		}
	}
	if len(l.last) > 2*len(l.cur)+64 {
		// Meshes of removed parts: forget them (bounded by the scene's).
		keep := make(map[*graphic.Graphic]bool, len(l.cur))
		for i := range l.cur {
			keep[l.cur[i].gr] = true
		}
		for gr := range l.last {
			if !keep[gr] {
				delete(l.last, gr)
				delete(l.movedAt, gr)
			}
		}
	}
	changing := key != l.prevKey
	l.prevKey = key
	if shadows || changing || l.off {
		// A view being turned: each frame differs anyway; no cache.
		l.valid = false
		return l.work, l.full(gs, rend, cam, bg, roots)
	}
	if !l.validFor(key, s) {
		if err := l.build(gs, rend, cam, bg, roots, key, s); err != nil {
			return nil, err
		}
	}
	if err := gpu.Blit(gs, l.cache, l.work, true); err != nil {
		return nil, err
	}
	l.work.Bind(gs)
	l.hide(func(g *layerGraphic) bool { _, ok := l.static[g.gr]; return ok })
	err := l.render(rend, cam, roots)
	l.restore()
	l.Cached++
	return l.work, err
}

// collect lists the renderable graphics and lights under roots, with their
// world matrices, and reports whether any material draws shadows.
func (l *layers) collect(roots []core.INode) (shadows bool) {
	l.cur = l.cur[:0]
	l.curLights = l.curLights[:0]
	var walk func(n core.INode)
	walk = func(n core.INode) {
		node := n.GetNode()
		if !node.Visible() {
			return
		}
		if ig, ok := n.(graphic.IGraphic); ok && ig.Renderable() {
			gr := ig.GetGraphic()
			still := gr.Cullable() && opaque(gr)
			for _, m := range gr.Materials() {
				if _, ok := m.IMaterial().GetMaterial().ShaderDefines["SIMVIS_SHADOWS"]; ok {
					shadows = true
				}
			}
			l.cur = append(l.cur, layerGraphic{gr: gr, mw: gr.MatrixWorld(), still: still})
		} else if _, ok := n.(light.ILight); ok {
			l.curLights = append(l.curLights, node.MatrixWorld())
		}
		for _, c := range node.Children() {
			walk(c)
		}
	}
	for _, r := range roots {
		r.UpdateMatrixWorld()
		walk(r)
	}
	return shadows
}

// validFor reports whether the cache still shows the still meshes as they
// are now.
func (l *layers) validFor(key layerKey, s *scene.Scene) bool {
	if !l.valid || key != l.key || !slices.Equal(l.lights, l.curLights) {
		return false
	}
	vals := s.Values()
	if len(vals) != len(l.values) || len(vals) != len(l.kinematic) {
		return false
	}
	for i, x := range vals {
		if x != l.values[i] && !l.kinematic[i] {
			return false
		}
	}
	seen := 0
	for i := range l.cur {
		g := &l.cur[i]
		if m, ok := l.static[g.gr]; ok {
			if m != g.mw {
				return false
			}
			seen++
		}
	}
	return seen == len(l.static) // none gone
}

// build draws the still meshes into the cache.
func (l *layers) build(gs *gls.GLS, rend *renderer.Renderer, cam camera.ICamera, bg [3]float32,
	roots []core.INode, key layerKey, s *scene.Scene) error {
	if l.static == nil {
		l.static = map[*graphic.Graphic]math32.Matrix4{}
	}
	clear(l.static)
	for i := range l.cur {
		if g := &l.cur[i]; g.still {
			l.static[g.gr] = g.mw
		}
	}
	clearTo(gs, l.cache, bg)
	l.hide(func(g *layerGraphic) bool { return !g.still })
	err := l.render(rend, cam, roots)
	l.restore()
	if err != nil {
		return err
	}
	l.valid, l.key = true, key
	l.values = append(l.values[:0], s.Values()...)
	l.lights = append(l.lights[:0], l.curLights...)
	l.Builds++
	return nil
}

// full draws everything into the work framebuffer.
func (l *layers) full(gs *gls.GLS, rend *renderer.Renderer, cam camera.ICamera, bg [3]float32, roots []core.INode) error {
	clearTo(gs, l.work, bg)
	return l.render(rend, cam, roots)
}

func (l *layers) render(rend *renderer.Renderer, cam camera.ICamera, roots []core.INode) error {
	for _, r := range roots {
		if err := rend.Render(r, cam); err != nil {
			return err
		}
	}
	return nil
}

// hide makes the graphics for which skip holds not renderable until
// restore.
func (l *layers) hide(skip func(g *layerGraphic) bool) {
	l.hidden = l.hidden[:0]
	for i := range l.cur {
		if g := &l.cur[i]; skip(g) {
			g.gr.SetRenderable(false)
			l.hidden = append(l.hidden, g.gr)
		}
	}
}

func (l *layers) restore() {
	for _, gr := range l.hidden {
		gr.SetRenderable(true) // collect listed renderable graphics only
	}
	l.hidden = l.hidden[:0]
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
	l.work, l.cache, l.valid = nil, nil, false
}
