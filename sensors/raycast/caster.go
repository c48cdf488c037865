package raycast

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/go-gl/mathgl/mgl64"
	"github.com/simvis/simvis/models"
	"github.com/simvis/simvis/scene"
)

// affine is an affine map p -> A p + b, its 3x4 rows (A | b): what a
// 4x4 transform of a scene holds, without the constant last row, so that
// mapping a ray costs 18 products and moves no 128-byte matrix.
type affine [12]float64

func affineOf(m mgl64.Mat4) affine {
	// mgl64 is column-major: m[c*4+r].
	return affine{
		m[0], m[4], m[8], m[12],
		m[1], m[5], m[9], m[13],
		m[2], m[6], m[10], m[14],
	}
}

// point maps p; the sums run in the order of mgl64's Mul4x1, so a ray is
// mapped to the same bits as before.
func (a *affine) point(p [3]float64) [3]float64 {
	return [3]float64{
		a[0]*p[0] + a[1]*p[1] + a[2]*p[2] + a[3],
		a[4]*p[0] + a[5]*p[1] + a[6]*p[2] + a[7],
		a[8]*p[0] + a[9]*p[1] + a[10]*p[2] + a[11],
	}
}

func (a *affine) vector(d [3]float64) [3]float64 {
	return [3]float64{
		a[0]*d[0] + a[1]*d[1] + a[2]*d[2],
		a[4]*d[0] + a[5]*d[1] + a[6]*d[2],
		a[8]*d[0] + a[9]*d[1] + a[10]*d[2],
	}
}

// instance is a geometry placed in the world, with the inverse of its
// placement computed once when it is placed.
type instance struct {
	geom    *Geometry
	toLocal affine
	// placement numbers the placements: the primitives of one mesh
	// instance share theirs, and a ray mapped into one of them is mapped
	// into all (a robot's parts often hold several primitives).
	placement int32
}

// placed is what the last Sync saw of one sensed primitive: when nothing
// of it changed, the hierarchy over the instances is kept.
type placed struct {
	mesh  *models.Mesh
	prim  *models.Primitive
	key   Key
	world mgl64.Mat4
}

// Caster intersects rays with a scene's sensed surfaces. Sync takes a
// snapshot of the scene; Cast and CastAll may then be called from many
// goroutines.
type Caster struct {
	geoms     map[Key]*Geometry
	instances []instance // in the leaf order of top
	top       []node4
	meshes    []scene.MeshInstance
	seen      []placed // what the hierarchy over the instances was built from
	scratch   []placed
	builds    int
	walks     int
	// version is the scene version (scene.Scene.Version) the last Sync
	// read; 0 when what the caster holds was read from no scene.
	version uint64
	// placedByHand is set by Place: what the caster holds is no scene's.
	placedByHand bool
	triangles    int
	placements   int32 // placements staged since the last rebuild, numbering them
	// Scratch for building the hierarchy over the instances.
	boxes  []box
	staged []instance
}

// New returns an empty caster.
func New() *Caster {
	return &Caster{geoms: map[Key]*Geometry{}, top: buildBVH(nil, 1, false).nodes}
}

// Sync takes the current world placement of every sensed mesh of s. Call
// s.Update first if parameters changed. Hierarchies over geometry are built
// once per distinct geometry and kept across calls; the one over the
// instances is rebuilt only when an instance moved, appeared, disappeared
// or changed its triangles, so that all the sensors of a simulation cycle
// share one. While the scene's version is the one the last Sync read,
// nothing is read at all: a cycle where nothing moved costs one walk of
// the scene, not one per sensor.
func (c *Caster) Sync(s *scene.Scene) {
	// Versions are unique over all scenes, so an equal one is this very
	// scene, unchanged since (a caster may serve several scenes in turn).
	v := s.Version()
	if !c.placedByHand && c.version != 0 && v == c.version {
		return
	}
	c.version = v
	c.walks++
	c.meshes = s.SensedMeshes(c.meshes[:0])
	c.scratch = c.scratch[:0]
	for _, m := range c.meshes {
		for _, p := range m.Mesh.Primitives {
			if len(p.Indices) < 3 {
				continue
			}
			c.scratch = append(c.scratch, placed{mesh: m.Mesh, prim: p, key: KeyOf(p), world: m.World})
		}
	}
	if !c.placedByHand && slices.Equal(c.scratch, c.seen) {
		return
	}
	c.seen, c.scratch = c.scratch, c.seen
	c.placedByHand = false
	c.staged = c.staged[:0]
	c.boxes = c.boxes[:0]
	c.triangles = 0
	c.placements = 0 // numbers need only differ within one hierarchy
	var inv mgl64.Mat4
	for i, pl := range c.seen {
		if i == 0 || pl.mesh != c.seen[i-1].mesh || pl.world != c.seen[i-1].world {
			// One inverse per mesh instance, shared by its primitives.
			inv = pl.world.Inv()
			c.placements++
		}
		g, ok := c.geoms[pl.key]
		if !ok {
			g = NewGeometry(pl.prim)
			c.geoms[pl.key] = g
		}
		c.stage(g, pl.world, inv)
	}
	c.commit()
}

// Builds returns how many times the hierarchy over the instances was built:
// Sync leaves it alone while nothing moved.
func (c *Caster) Builds() int { return c.builds }

// Walks returns how many times Sync read the scene: it reads nothing while
// the scene's version is the one it read last.
func (c *Caster) Walks() int { return c.walks }

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
	c.version = 0
	c.meshes = c.meshes[:0]
	c.seen = c.seen[:0]
	c.staged = c.staged[:0]
	c.boxes = c.boxes[:0]
	c.triangles = 0
	c.placements = 0 // numbers need only differ within one hierarchy
	for _, p := range ps {
		c.placements++
		c.stage(p.Geom, p.FromLocal, p.ToLocal)
	}
	c.commit()
	c.placedByHand = true // the next Sync rebuilds
}

func (c *Caster) stage(g *Geometry, fromLocal, toLocal mgl64.Mat4) {
	c.triangles += g.ntris
	if len(g.packs) == 0 {
		// No triangle a ray can hit (all of no area): no instance. Its
		// empty box, mapped, would be NaN, and so would the boxes above it,
		// which every ray enters.
		return
	}
	c.staged = append(c.staged, instance{geom: g, toLocal: affineOf(toLocal), placement: c.placements})
	c.boxes = append(c.boxes, transformBox(g.bounds, fromLocal))
}

// commit builds the hierarchy over the staged instances and stores them in
// its leaf order.
func (c *Caster) commit() {
	top := buildBVH(c.boxes, 1, false)
	c.instances = c.instances[:0]
	for _, it := range top.items {
		c.instances = append(c.instances, c.staged[it])
	}
	c.top = top.nodes
	c.builds++
}

// Triangles returns the number of triangles placed by the last Sync.
func (c *Caster) Triangles() int { return c.triangles }

// Cast returns the distance along the unit direction dir from origin to
// the first surface within tmax, and whether there is one. Distances are
// exact to float64 rounding.
func (c *Caster) Cast(origin, dir mgl64.Vec3, tmax float64) (float64, bool) {
	if best := c.cast(origin, dir, tmax); best < tmax {
		return best, true
	}
	return math.Inf(1), false
}

// cast returns the nearest hit closer than tmax (tmax if none).
func (c *Caster) cast(origin, dir [3]float64, tmax float64) float64 {
	var h hint
	st := traversals.Get().(*traversal)
	t := c.castHinted(origin, dir, tmax, &h, st)
	traversals.Put(st)
	return t
}

// traversal is the scratch of one goroutine's casts: the stacks of nodes
// left for later in the hierarchy over instances and in a geometry's, and
// a packet's rays in the world and in the placement mapped last (w, p),
// kept from ray to ray so that no ray clears them anew (clearing the two
// packets took half of castPacketOn's own time on a scan). out holds a
// batch's beams' distances until they are all cast (castJob.castChunk).
type traversal struct {
	top, geom   [fixedStack]stackEntry
	ptop, pgeom [fixedStack]packetEntry
	w, p        packet
	out         [chunk]float64
}

// pushFar leaves the entered children refs[1:m] (sorted nearest first) on
// a Go traversal's stack of sp entries, farthest first, growing it on the
// heap where it is full; it returns the stack, its height and the nearest
// child, to visit next.
func pushFar(stack []stackEntry, sp, m int, refs *[4]int32, ts *[4]float64) ([]stackEntry, int, int32) {
	for k := m - 1; k > 0; k-- {
		if sp == len(stack) {
			stack = append(stack, stackEntry{})
		}
		stack[sp] = stackEntry{refs[k], ts[k]}
		sp++
	}
	return stack, sp, refs[0]
}

// popNear pops the next node left for later that the ray enters no
// farther than tmax, passing over the others; it returns the stack's
// height and the node, or false when none is left.
func popNear(stack []stackEntry, sp int, tmax float64) (int, int32, bool) {
	for sp > 0 {
		sp--
		if e := stack[sp]; e.t <= tmax {
			return sp, e.node, true
		}
	}
	return 0, 0, false
}

// hint is the triangle the previous ray of a scan hit (instance and
// triangle in leaf order; inst is the instance's index + 1, 0 for none).
// Neighbouring beams mostly hit the same triangle: testing it first gives
// the traversal a near bound from the start, so that it skips what lies
// behind. The result is the same hit (a triangle at the bound itself is
// not taken again, and its distance is the bound), but where triangles
// overlap or meet at the hit point: a box whose rounded entry lies past
// the bound is skipped, and a hit in it a rounding nearer with it.
type hint struct{ inst, tri int32 }

func (c *Caster) castHinted(origin, dir [3]float64, tmax float64, h *hint, st *traversal) float64 {
	top := c.top
	if len(top) == 0 || len(c.instances) == 0 {
		return tmax // an empty tree's root is no leaf; its empty box need not stop every ray
	}
	if h.inst > 0 && int(h.inst) <= len(c.instances) {
		in := &c.instances[h.inst-1]
		// The triangle test reads no reciprocal: none is computed.
		lr := ray{o: in.toLocal.point(origin), d: in.toLocal.vector(dir)}
		if t, ok := in.geom.hitTri(h.tri, &lr, tmax); ok {
			tmax = t
		} else {
			h.inst = 0
		}
	}
	r := newRay(origin, dir)
	var lr ray          // the ray in the placement mapped last
	mapped := int32(-1) // that placement
	stack, sp := st.top[:], 0
	var refs [4]int32
	var ts [4]float64
	cur := int32(0)
	for {
		if cur >= 0 {
			if m := r.visit(&top[cur], tmax, &refs, &ts); m > 0 {
				stack, sp, cur = pushFar(stack, sp, m, &refs, &ts)
				continue
			}
		} else {
			l := ^cur
			for i := l >> 3; i < l>>3+l&7; i++ {
				in := &c.instances[i]
				if in.placement != mapped {
					lr.set(in.toLocal.point(origin), in.toLocal.vector(dir))
					mapped = in.placement
				}
				if t, tri := in.geom.intersect(&lr, tmax, st); tri >= 0 {
					tmax, h.inst, h.tri = t, i+1, tri
				}
			}
		}
		var ok bool
		if sp, cur, ok = popNear(stack, sp, tmax); !ok {
			return tmax
		}
	}
}

// castRun casts neighbouring beams from one origin on this goroutine,
// writing distances (+Inf where nothing is hit within the beam's bound:
// bounds[i] where bounds is not nil, else tmax) into out: in packets of
// four where the CPU has the vector tests, else one by one, each beam
// trying the triangle its neighbour hit first.
func (c *Caster) castRun(origin [3]float64, dirs []mgl64.Vec3, tmax float64, bounds []float64, out []float64, st *traversal) {
	if useAVX2 {
		tm := [packLanes]float64{tmax, tmax, tmax, tmax}
		for i := 0; i < len(dirs); i += packLanes {
			hi := min(i+packLanes, len(dirs))
			if bounds != nil {
				for l := range tm {
					tm[l] = bounds[min(i+l, hi-1)]
				}
			}
			c.castPacket(origin, dirs[i:hi], tm, out[i:hi], st)
		}
		if bounds == nil {
			for i, t := range out[:len(dirs)] {
				if t >= tmax {
					out[i] = math.Inf(1)
				}
			}
			return
		}
		for i, t := range out[:len(dirs)] {
			if t >= bounds[i] {
				out[i] = math.Inf(1)
			}
		}
		return
	}
	var h hint
	for i, d := range dirs {
		b := tmax
		if bounds != nil {
			b = bounds[i]
		}
		if t := c.castHinted(origin, d, b, &h, st); t < b {
			out[i] = t
		} else {
			out[i] = math.Inf(1)
		}
	}
}

// CastAll casts rays from one origin along dirs, writing distances (+Inf
// where nothing is hit within tmax) into out, on all cores (GOMAXPROCS):
// the calling goroutine and helpers take chunks of consecutive beams (see
// CastBatch, which casts several such sets in one go).
func (c *Caster) CastAll(origin mgl64.Vec3, dirs []mgl64.Vec3, tmax float64, out []float64) {
	if len(dirs) == 0 {
		return
	}
	checkOut("CastAll", dirs, out)
	j := newJob(c, nil, false)
	j.one[0] = Rays{Origin: origin, Dirs: dirs, TMax: tmax, Out: out}
	j.sets = j.one[:]
	j.plan()
	j.cast()
	err := j.errs[0]
	j.release()
	if err != nil {
		panic(err) // where it happened on a helper, the caller's own recovery sees it
	}
}

// CastSerial is CastAll on the calling goroutine alone: for callers that
// spread their own work over the cores (several sensors at once).
func (c *Caster) CastSerial(origin mgl64.Vec3, dirs []mgl64.Vec3, tmax float64, out []float64) {
	checkOut("CastSerial", dirs, out)
	st := traversals.Get().(*traversal)
	for lo := 0; lo < len(dirs); lo += chunk {
		hi := min(lo+chunk, len(dirs))
		c.castRun(origin, dirs[lo:hi], tmax, nil, out[lo:hi], st)
	}
	traversals.Put(st)
}

// checkOut panics, before any beam is cast, where out has no room for a
// distance per direction.
func checkOut(call string, dirs []mgl64.Vec3, out []float64) {
	if len(out) < len(dirs) {
		panic(fmt.Sprintf("raycast: %s of %d directions into %d distances", call, len(dirs), len(out)))
	}
}

// traversals keeps scratch stacks for Cast, CastSerial and Intersect,
// which would clear 4 KiB per call otherwise.
var traversals = sync.Pool{New: func() any { return new(traversal) }}

// Intersect returns the distance along dir from origin (both in the
// primitive's coordinates) to the nearest triangle within tmax, and whether
// there is one. dir need not be unit length: t is in units of dir, so a ray
// mapped from another frame keeps that frame's distances.
func (g *Geometry) Intersect(origin, dir mgl64.Vec3, tmax float64) (float64, bool) {
	r := newRay(origin, dir)
	st := traversals.Get().(*traversal)
	t, _ := g.intersect(&r, tmax, st)
	traversals.Put(st)
	return t, t < tmax
}

// IntersectTriangle is Intersect for one triangle, the i-th of the
// primitive's index list (the number a GPU calls gl_PrimitiveID), with the
// very arithmetic Intersect and Cast apply to it: a ray that one calls a
// hit, the other does too, to the last bit where the ray is the same. A
// triangle of no area is never hit.
func (g *Geometry) IntersectTriangle(i int, origin, dir mgl64.Vec3, tmax float64) (float64, bool) {
	if i < 0 || i >= len(g.slot) || g.slot[i] < 0 {
		return tmax, false // no triangle, or one of no area
	}
	r := ray{o: origin, d: dir}
	return g.hitTri(g.slot[i], &r, tmax)
}

// Triangle returns the vertices of triangle i of the primitive's index
// list, as NewGeometry read them.
func (g *Geometry) Triangle(i int) (v0, v1, v2 mgl64.Vec3, ok bool) {
	if i < 0 || i >= len(g.slot) {
		return v0, v1, v2, false
	}
	if sl := g.slot[i]; sl < 0 {
		v := &g.flat[-1-sl]
		for a := 0; a < 3; a++ {
			v0[a], v1[a], v2[a] = float64(v[0][a]), float64(v[1][a]), float64(v[2][a])
		}
		return v0, v1, v2, true
	}
	tr := g.tri(g.slot[i])
	v0 = tr.v0
	return v0, v0.Add(tr.e1), v0.Add(tr.e2), true
}

// Bounds returns the box around the triangles, in the primitive's
// coordinates.
func (g *Geometry) Bounds() (lo, hi mgl64.Vec3) {
	return g.bounds.min, g.bounds.max
}

// Triangles returns the number of triangles.
func (g *Geometry) Triangles() int { return g.ntris }

// intersect returns the nearest hit closer than tmax and its triangle in
// leaf order (tmax and -1 if none).
func (g *Geometry) intersect(r *ray, tmax float64, st *traversal) (float64, int32) {
	if len(g.packs) == 0 {
		return tmax, -1
	}
	if useAVX2 && g.cut == nil { // the assembly knows no cut-outs

		if t, tri, ok := intersectAVX2(&g.nodes[0], &g.packs[0], r, tmax, &st.geom[0], len(st.geom)); ok {
			return t, tri
		}
		// Deeper than the scratch stack: the Go loop, whose stack grows.
	}
	return g.intersectGo(r, tmax, st)
}

// intersectGo is intersect in Go: cast's loop with triangle packets in the
// leaves, on st's geometry stack.
func (g *Geometry) intersectGo(r *ray, tmax float64, st *traversal) (float64, int32) {
	nodes := g.nodes
	best := int32(-1)
	stack, sp := st.geom[:], 0
	var refs [4]int32
	var ts [4]float64
	cur := int32(0)
	for {
		if cur >= 0 {
			if m := r.visit(&nodes[cur], tmax, &refs, &ts); m > 0 {
				stack, sp, cur = pushFar(stack, sp, m, &refs, &ts)
				continue
			}
		} else {
			l := ^cur
			if t, tri := g.hitLeaf(r, l>>3, l&7, tmax); tri >= 0 {
				tmax, best = t, tri
			}
		}
		var ok bool
		if sp, cur, ok = popNear(stack, sp, tmax); !ok {
			return tmax, best
		}
	}
}

// hit is the Möller-Trumbore test, two-sided, with the barycentric tests
// on the numerators (exact comparisons, no rounded reciprocal) and one
// division, only for a ray inside the triangle.
func (tr *triangle) hit(r *ray, tmax float64) (float64, bool) {
	t, _, _, ok := tr.hitBary(r, tmax)
	return t, ok
}

// hitBary is hit, also returning the hit's barycentric coordinates: the
// weights of the triangle's second and third vertices.
func (tr *triangle) hitBary(r *ray, tmax float64) (t, b1, b2 float64, ok bool) {
	p := cross(r.d, tr.e2)
	det := dot(tr.e1, p)
	if det == 0 {
		return 0, 0, 0, false
	}
	s := sub(r.o, tr.v0)
	un := dot(s, p)
	adet, sign := det, 1.0
	if det < 0 {
		adet, sign, un = -det, -1, -un
	}
	if un < 0 || un > adet {
		return 0, 0, 0, false
	}
	q := cross(s, tr.e1)
	vn := float64(sign * dot(r.d, q)) // exact (sign is 1 or -1); kept unfused all the same
	if vn < 0 || un+vn > adet {
		return 0, 0, 0, false
	}
	t = dot(tr.e2, q) / det
	if t <= 0 || t >= tmax {
		return 0, 0, 0, false
	}
	return t, un / adet, vn / adet, true
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

// The products are rounded on their own (float64 conversions: Go may fuse
// a product into the following sum otherwise, as with GOAMD64=v3), so
// that the triangle test computes what the assembly's separate multiplies
// and adds compute, bit for bit.
func sub(a, b [3]float64) [3]float64 { return [3]float64{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func dot(a, b [3]float64) float64 {
	return float64(a[0]*b[0]) + float64(a[1]*b[1]) + float64(a[2]*b[2])
}
func cross(a, b [3]float64) [3]float64 {
	return [3]float64{
		float64(a[1]*b[2]) - float64(a[2]*b[1]),
		float64(a[2]*b[0]) - float64(a[0]*b[2]),
		float64(a[0]*b[1]) - float64(a[1]*b[0]),
	}
}

// Near reports whether a triangle may lie within distance r of p: it is
// false only when every triangle's bounding box is farther than r, so a
// sensor can skip a mesh whose bounds merely surround it (a robot's body
// around its own camera) when looking for surfaces right in front of it.
func (g *Geometry) Near(p mgl64.Vec3, r float64) bool {
	q := [3]float64{p[0], p[1], p[2]}
	r2 := r * r
	if len(g.packs) == 0 {
		return false
	}
	var fixed [fixedStack]int32
	stack := append(fixed[:0], 0)
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if cur >= 0 {
			nd := &g.nodes[cur]
			for k := 0; k < int(nd.n); k++ {
				nb := nd.box(k)
				if boxDist2(&nb, q) <= r2 {
					stack = append(stack, nd.child[k])
				}
			}
			continue
		}
		l := ^cur
		for i := (l >> 3) * packLanes; i < (l>>3)*packLanes+l&7; i++ {
			tr := g.tri(i)
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
