package layering

import (
	"slices"
	"time"

	"github.com/g3n/engine/core"
	"github.com/g3n/engine/graphic"
	"github.com/g3n/engine/light"
	"github.com/g3n/engine/math32"
	"github.com/simvis/simvis/scene"
)

// Cache decides which meshes a viewer draws from a cached picture of what
// stands still. On a software rasterizer (llvmpipe, SwiftShader) shading
// the pixels is a frame's cost, and in a browser every draw call crosses
// into JavaScript; most meshes show the lab, not the robot that moves. The
// opaque meshes that have not moved lately are drawn once into the cache
// (color and depth); a frame copies the cache and draws only the rest
// (what moves, transparent meshes, overlays whose geometry changes) over
// it, depth-tested against the cached depth. For opaque meshes the depth
// test, not the order of drawing, decides what is seen, so the picture is
// the one a full draw makes. Anything that could change how a cached mesh
// looks invalidates the cache: a new key (view, size, scene command,
// toggles: the viewer's), a light that moved, a value of an element that
// is not kinematic (a light's, an appearance's), shadow maps (a mesh
// moving casts shadows on the still ones).
//
// A frame: Plan; on Rebuild, HideMoving, draw the roots into the cache,
// Restore and Built; on Rebuild and Overlay, copy the cache, HideStill,
// draw the roots over the copy, Restore. K is the viewer's key: whatever
// else a cached picture depends on (comparable).
type Cache[K comparable] struct {
	valid     bool
	key       K
	prevKey   K // the last frame's
	static    map[*graphic.Graphic]math32.Matrix4
	values    []float64 // values the cache was drawn with
	lights    []math32.Matrix4
	last      map[*graphic.Graphic]math32.Matrix4 // world matrices the last frame
	movedAt   map[*graphic.Graphic]time.Time
	cur       []entry
	curLights []math32.Matrix4
	hidden    []*graphic.Graphic
	kinematic []bool // per value index: a joint's or pose's (moves meshes only)
	kinScene  *scene.Scene
	// Builds counts the cache's draws, Cached the frames drawn over it.
	Builds, Cached int
}

type entry struct {
	gr    *graphic.Graphic
	mw    math32.Matrix4
	still bool // opaque, fixed geometry, no recent motion: may be cached
}

// Step is how a frame is drawn.
type Step int

const (
	// DrawAll: every mesh, no cache (a view being turned: each frame
	// differs anyway; shadows; caching off).
	DrawAll Step = iota
	// Rebuild: the cache is stale; draw it, then draw over it.
	Rebuild
	// Overlay: copy the cache and draw the rest over it.
	Overlay
)

// StillAfter is how long a mesh must not move to be drawn into the cache
// again (a robot that moves now and then is not cached between moves).
const StillAfter = 2 * time.Second

// Plan looks at the meshes and lights under roots (the scene's first),
// updating their world matrices, and says how to draw this frame. off
// turns caching off.
func (c *Cache[K]) Plan(s *scene.Scene, key K, roots []core.INode, off bool) Step {
	if c.last == nil {
		c.last = map[*graphic.Graphic]math32.Matrix4{}
		c.movedAt = map[*graphic.Graphic]time.Time{}
	}
	if c.kinScene != s {
		c.kinScene = s
		c.kinematic = c.kinematic[:0]
		for _, e := range s.Elements() {
			k, ok := e.Element.(scene.Kinematic)
			kin := ok && k.Kinematic()
			for range e.Params {
				c.kinematic = append(c.kinematic, kin)
			}
		}
		clear(c.last)
		clear(c.movedAt)
		c.valid = false
	}
	shadows := c.collect(roots)
	now := time.Now()
	for i := range c.cur {
		g := &c.cur[i]
		if m, ok := c.last[g.gr]; ok && m != g.mw {
			c.movedAt[g.gr] = now
		}
		c.last[g.gr] = g.mw
		if t, ok := c.movedAt[g.gr]; ok && now.Sub(t) < StillAfter {
			g.still = false
		}
	}
	if len(c.last) > 2*len(c.cur)+64 {
		// Meshes of removed parts: forget them (bounded by the scene's).
		keep := make(map[*graphic.Graphic]bool, len(c.cur))
		for i := range c.cur {
			keep[c.cur[i].gr] = true
		}
		for gr := range c.last {
			if !keep[gr] {
				delete(c.last, gr)
				delete(c.movedAt, gr)
			}
		}
	}
	changing := key != c.prevKey
	c.prevKey = key
	switch {
	case shadows || changing || off:
		c.valid = false
		return DrawAll
	case !c.validFor(key, s):
		return Rebuild
	}
	return Overlay
}

// Invalidate makes the next frame that may cache rebuild it (the viewer's
// framebuffers were made again).
func (c *Cache[K]) Invalidate() { c.valid = false }

// collect lists the renderable graphics and lights under roots, with their
// world matrices, and reports whether any material draws shadows.
func (c *Cache[K]) collect(roots []core.INode) (shadows bool) {
	c.cur = c.cur[:0]
	c.curLights = c.curLights[:0]
	for _, r := range roots {
		r.UpdateMatrixWorld()
		walkVisible(r, func(n core.INode) {
			if ig, ok := n.(graphic.IGraphic); ok && ig.Renderable() {
				gr := ig.GetGraphic()
				still := gr.Cullable() && Opaque(gr)
				for _, m := range gr.Materials() {
					if _, ok := m.IMaterial().GetMaterial().ShaderDefines["SIMVIS_SHADOWS"]; ok {
						shadows = true
					}
				}
				c.cur = append(c.cur, entry{gr: gr, mw: gr.MatrixWorld(), still: still})
			} else if _, ok := n.(light.ILight); ok {
				c.curLights = append(c.curLights, n.GetNode().MatrixWorld())
			}
		})
	}
	return shadows
}

// validFor reports whether the cache still shows the still meshes as they
// are now.
func (c *Cache[K]) validFor(key K, s *scene.Scene) bool {
	if !c.valid || key != c.key || !slices.Equal(c.lights, c.curLights) {
		return false
	}
	vals := s.Values()
	if len(vals) != len(c.values) || len(vals) != len(c.kinematic) {
		return false
	}
	for i, x := range vals {
		if x != c.values[i] && !c.kinematic[i] {
			return false
		}
	}
	seen := 0
	for i := range c.cur {
		g := &c.cur[i]
		if m, ok := c.static[g.gr]; ok {
			if m != g.mw {
				return false
			}
			seen++
		}
	}
	return seen == len(c.static) // none gone
}

// HideMoving takes the still meshes as the cache's and makes every other
// mesh not renderable until Restore: what the cache is drawn with.
func (c *Cache[K]) HideMoving() {
	if c.static == nil {
		c.static = map[*graphic.Graphic]math32.Matrix4{}
	}
	clear(c.static)
	for i := range c.cur {
		if g := &c.cur[i]; g.still {
			c.static[g.gr] = g.mw
		}
	}
	c.hide(func(g *entry) bool { return !g.still })
}

// Built records that the cache now shows the still meshes of s as seen
// with key.
func (c *Cache[K]) Built(s *scene.Scene, key K) {
	c.valid, c.key = true, key
	c.values = append(c.values[:0], s.Values()...)
	c.lights = append(c.lights[:0], c.curLights...)
	c.Builds++
}

// HideStill makes the cache's meshes not renderable until Restore: what is
// drawn over a copy of the cache.
func (c *Cache[K]) HideStill() {
	c.hide(func(g *entry) bool { _, ok := c.static[g.gr]; return ok })
	c.Cached++
}

// Drawn is how many meshes a draw of the roots draws now (between a Hide
// and Restore: the ones not hidden).
func (c *Cache[K]) Drawn() int { return len(c.cur) - len(c.hidden) }

func (c *Cache[K]) hide(skip func(g *entry) bool) {
	c.hidden = c.hidden[:0]
	for i := range c.cur {
		if g := &c.cur[i]; skip(g) {
			g.gr.SetRenderable(false)
			c.hidden = append(c.hidden, g.gr)
		}
	}
}

// Restore makes the meshes a Hide hid renderable again.
func (c *Cache[K]) Restore() {
	for _, gr := range c.hidden {
		gr.SetRenderable(true) // collect listed renderable graphics only
	}
	c.hidden = c.hidden[:0]
}
