package raycast

import (
	"math"
	"runtime"
	"sync"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// triangle is stored as a vertex and two edges, the form the
// Möller-Trumbore test uses.
type triangle struct {
	v0, e1, e2 [3]float64
}

// Geometry is the hierarchy over one primitive's triangles, in the
// primitive's own coordinates; instances share it.
type Geometry struct {
	tris   []triangle // in leaf order
	slot   []int32    // triangle index in the primitive -> index in tris
	bvh    *bvh
	bounds box
}

// NewGeometry builds the hierarchy over a primitive's triangles.
func NewGeometry(p *models.Primitive) *Geometry {
	n := len(p.Indices) / 3
	tris := make([]triangle, n)
	boxes := make([]box, n)
	for i := 0; i < n; i++ {
		var v [3][3]float64
		bx := emptyBox()
		for k := 0; k < 3; k++ {
			q := p.Positions[p.Indices[3*i+k]]
			v[k] = [3]float64{float64(q[0]), float64(q[1]), float64(q[2])}
			bx.grow(v[k])
		}
		tris[i] = triangle{v0: v[0], e1: sub(v[1], v[0]), e2: sub(v[2], v[0])}
		boxes[i] = bx
	}
	g := &Geometry{bvh: buildBVH(boxes)}
	g.tris = make([]triangle, n)
	g.slot = make([]int32, n)
	for i, it := range g.bvh.items {
		g.tris[i] = tris[it]
		g.slot[it] = int32(i)
		g.bvh.items[i] = int32(i)
	}
	g.bounds = g.bvh.nodes[0].bounds
	return g
}

// instance is a geometry placed in the world.
type instance struct {
	geom    *Geometry
	toLocal mgl64.Mat4
}

// Caster intersects rays with a scene's sensed surfaces. Sync takes a
// snapshot of the scene; Cast may then be called from many goroutines.
type Caster struct {
	geoms     map[[32]byte]*Geometry
	instances []instance
	top       *bvh
	meshes    []scene.MeshInstance
	boxes     []box // scratch for the hierarchy over the instances
	triangles int
}

// New returns an empty caster.
func New() *Caster {
	return &Caster{geoms: map[[32]byte]*Geometry{}, top: buildBVH(nil)}
}

// Sync takes the current world placement of every sensed mesh of s. Call
// s.Update first if parameters changed. Hierarchies over geometry are built
// once per distinct geometry and kept across calls; only the one over the
// instances is rebuilt.
func (c *Caster) Sync(s *scene.Scene) {
	c.meshes = s.SensedMeshes(c.meshes[:0])
	c.instances = c.instances[:0]
	c.triangles = 0
	c.boxes = c.boxes[:0]
	for _, m := range c.meshes {
		inv := m.World.Inv()
		for _, p := range m.Mesh.Primitives {
			if len(p.Indices) < 3 {
				continue
			}
			g, ok := c.geoms[p.Key]
			if !ok {
				g = NewGeometry(p)
				c.geoms[p.Key] = g
			}
			c.add(g, m.World, inv)
		}
	}
	c.top = buildBVH(c.boxes)
}

// Placement is a geometry placed in the frame a caster casts in: FromLocal
// maps the geometry's coordinates into that frame, ToLocal back (its
// inverse, given so that the caller's own inverse is the one used).
type Placement struct {
	Geom               *Geometry
	FromLocal, ToLocal mgl64.Mat4
}

// Place replaces what the caster holds by the given placements, in
// whatever frame they share (a sensor's, say); rays cast afterwards are in
// that frame.
func (c *Caster) Place(ps []Placement) {
	c.meshes = c.meshes[:0]
	c.instances = c.instances[:0]
	c.triangles = 0
	c.boxes = c.boxes[:0]
	for _, p := range ps {
		c.add(p.Geom, p.FromLocal, p.ToLocal)
	}
	c.top = buildBVH(c.boxes)
}

func (c *Caster) add(g *Geometry, fromLocal, toLocal mgl64.Mat4) {
	c.instances = append(c.instances, instance{geom: g, toLocal: toLocal})
	c.boxes = append(c.boxes, transformBox(g.bounds, fromLocal))
	c.triangles += len(g.tris)
}

// Triangles returns the number of triangles placed by the last Sync.
func (c *Caster) Triangles() int { return c.triangles }

// Cast returns the distance along the unit direction dir from origin to
// the first surface within tmax, and whether there is one. Distances are
// exact to float64 rounding.
func (c *Caster) Cast(origin, dir mgl64.Vec3, tmax float64) (float64, bool) {
	r := newRay(origin, dir)
	best := tmax
	best = c.top.traverse(&r, best, func(items []int32, tmax float64) float64 {
		for _, it := range items {
			in := &c.instances[it]
			lo := in.toLocal.Mul4x1(origin.Vec4(1)).Vec3()
			ld := in.toLocal.Mul4x1(dir.Vec4(0)).Vec3()
			lr := newRay(lo, ld)
			tmax = in.geom.intersect(&lr, tmax)
		}
		return tmax
	})
	if best < tmax {
		return best, true
	}
	return math.Inf(1), false
}

// CastAll casts rays from one origin along dirs, writing distances (+Inf
// where nothing is hit within tmax) into out, on all cores.
func (c *Caster) CastAll(origin mgl64.Vec3, dirs []mgl64.Vec3, tmax float64, out []float64) {
	workers := min(runtime.GOMAXPROCS(0), (len(dirs)+63)/64)
	if workers <= 1 {
		for i, d := range dirs {
			out[i], _ = c.Cast(origin, d, tmax)
		}
		return
	}
	var wg sync.WaitGroup
	chunk := (len(dirs) + workers - 1) / workers
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(dirs))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				out[i], _ = c.Cast(origin, dirs[i], tmax)
			}
		}()
	}
	wg.Wait()
}

// Intersect returns the distance along dir from origin (both in the
// primitive's coordinates) to the nearest triangle within tmax, and whether
// there is one. dir need not be unit length: t is in units of dir, so a ray
// mapped from another frame keeps that frame's distances.
func (g *Geometry) Intersect(origin, dir mgl64.Vec3, tmax float64) (float64, bool) {
	r := newRay(origin, dir)
	t := g.intersect(&r, tmax)
	return t, t < tmax
}

// IntersectTriangle is Intersect for one triangle, the i-th of the
// primitive's index list (the number a GPU calls gl_PrimitiveID), with the
// very arithmetic Intersect and Cast apply to it: a ray that one calls a
// hit, the other does too, to the last bit where the ray is the same.
func (g *Geometry) IntersectTriangle(i int, origin, dir mgl64.Vec3, tmax float64) (float64, bool) {
	if i < 0 || i >= len(g.slot) {
		return tmax, false
	}
	r := ray{o: origin, d: dir}
	return g.tris[g.slot[i]].hit(&r, tmax)
}

// Triangle returns the vertices of triangle i of the primitive's index
// list, as NewGeometry read them.
func (g *Geometry) Triangle(i int) (v0, v1, v2 mgl64.Vec3, ok bool) {
	if i < 0 || i >= len(g.slot) {
		return v0, v1, v2, false
	}
	tr := &g.tris[g.slot[i]]
	v0 = tr.v0
	return v0, v0.Add(tr.e1), v0.Add(tr.e2), true
}

// Bounds returns the box around the triangles, in the primitive's
// coordinates.
func (g *Geometry) Bounds() (lo, hi mgl64.Vec3) {
	return g.bounds.min, g.bounds.max
}

// Triangles returns the number of triangles.
func (g *Geometry) Triangles() int { return len(g.tris) }

// intersect returns the nearest hit closer than tmax (tmax if none).
func (g *Geometry) intersect(r *ray, tmax float64) float64 {
	return g.bvh.traverse(r, tmax, func(items []int32, tmax float64) float64 {
		for _, it := range items {
			if t, ok := g.tris[it].hit(r, tmax); ok {
				tmax = t
			}
		}
		return tmax
	})
}

// hit is the Möller-Trumbore test, two-sided.
func (tr *triangle) hit(r *ray, tmax float64) (float64, bool) {
	p := cross(r.d, tr.e2)
	det := dot(tr.e1, p)
	if det == 0 {
		return 0, false
	}
	inv := 1 / det
	s := sub(r.o, tr.v0)
	u := dot(s, p) * inv
	if u < 0 || u > 1 {
		return 0, false
	}
	q := cross(s, tr.e1)
	v := dot(r.d, q) * inv
	if v < 0 || u+v > 1 {
		return 0, false
	}
	t := dot(tr.e2, q) * inv
	if t <= 0 || t >= tmax {
		return 0, false
	}
	return t, true
}

func transformBox(b box, m mgl64.Mat4) box {
	out := emptyBox()
	for i := 0; i < 8; i++ {
		p := mgl64.Vec4{b.min[0], b.min[1], b.min[2], 1}
		if i&1 != 0 {
			p[0] = b.max[0]
		}
		if i&2 != 0 {
			p[1] = b.max[1]
		}
		if i&4 != 0 {
			p[2] = b.max[2]
		}
		w := m.Mul4x1(p)
		out.grow([3]float64{w[0], w[1], w[2]})
	}
	return out
}

func sub(a, b [3]float64) [3]float64 { return [3]float64{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func dot(a, b [3]float64) float64    { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }
func cross(a, b [3]float64) [3]float64 {
	return [3]float64{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}

// Near reports whether a triangle may lie within distance r of p: it is
// false only when every triangle's bounding box is farther than r, so a
// sensor can skip a mesh whose bounds merely surround it (a robot's body
// around its own camera) when looking for surfaces right in front of it.
func (g *Geometry) Near(p mgl64.Vec3, r float64) bool {
	q := [3]float64{p[0], p[1], p[2]}
	r2 := r * r
	stack := make([]int32, 0, 64)
	stack = append(stack, 0)
	for len(stack) > 0 {
		n := &g.bvh.nodes[stack[len(stack)-1]]
		stack = stack[:len(stack)-1]
		if boxDist2(&n.bounds, q) > r2 {
			continue
		}
		if n.count == 0 {
			stack = append(stack, n.first, n.first+1)
			continue
		}
		for i := n.first; i < n.first+n.count; i++ {
			tr := &g.tris[g.bvh.items[i]]
			b := emptyBox()
			b.grow(tr.v0)
			b.grow(add(tr.v0, tr.e1))
			b.grow(add(tr.v0, tr.e2))
			if boxDist2(&b, q) <= r2 {
				return true
			}
		}
	}
	return false
}

// boxDist2 is the squared distance from q to the box (0 inside it).
func boxDist2(b *box, q [3]float64) float64 {
	d2 := 0.0
	for k := 0; k < 3; k++ {
		if g := math.Max(0, math.Max(b.min[k]-q[k], q[k]-b.max[k])); g > 0 {
			d2 += g * g
		}
	}
	return d2
}

func add(a, b [3]float64) [3]float64 { return [3]float64{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }
