package raycast

import (
	"github.com/simvis/simvis/models"
)

// triangle is stored as a vertex and two edges, the form the
// Möller-Trumbore test uses.
type triangle struct {
	v0, e1, e2 [3]float64
}

// Geometry is the hierarchy over one primitive's triangles, in the
// primitive's own coordinates; instances share it.
type Geometry struct {
	// packs holds the triangles in leaf order, a packet per leaf: leaf
	// refs name a packet and how many of its lanes hold triangles.
	packs []triPack
	// slot maps a triangle of the primitive to packet*4 + lane, or for a
	// triangle of no area, left out, to -1 - its index in flat.
	slot  []int32
	flat  [][3][3]float32
	ntris int // the primitive's, flat ones included
	nodes []node4
	// nodes8 is the same hierarchy 8-wide in float32, for packets
	// (intersectPacket8AVX2); nil for geometries of fewer than
	// wideMinTriangles triangles, with cut-outs, or without AVX2.
	nodes8 []node8f
	bounds box
	// cut is where the primitive's material lets rays through (nil: it
	// stops them everywhere); uvs holds each triangle's texture
	// coordinates in leaf order, for the hits it tests (models.Cutout).
	cut *models.Cutout
	uvs [][3][2]float32
}

// Key identifies what a Geometry is built from: the primitive's
// geometry, and for a material that may let rays through (MASK, BLEND)
// that material, whose cut-outs the hits obey. Primitives with equal keys
// share a Geometry.
type Key struct {
	geometry [32]byte
	material *models.Material
}

// KeyOf returns the key of the Geometry NewGeometry builds for p.
func KeyOf(p *models.Primitive) Key {
	k := Key{geometry: p.Key}
	if p.Material != nil && p.Material.AlphaMode != models.AlphaOpaque {
		k.material = p.Material
	}
	return k
}

// NewGeometry builds the hierarchy over a primitive's triangles.
func NewGeometry(p *models.Primitive) *Geometry {
	n := len(p.Indices) / 3
	g := &Geometry{ntris: n, slot: make([]int32, n), cut: p.Material.Cutout()}
	// Triangles of no area are left out: no ray hits them (the GPU draws
	// no pixel of them either), but the triangle test's rounding could
	// find a hit, anywhere along the ray, in a determinant that ought to
	// be 0. kept lists the others, as indices into the primitive.
	tris := make([]triangle, 0, n)
	kept := make([]int32, 0, n)
	boxes := make([]box, 0, n)
	for i := 0; i < n; i++ {
		var v [3][3]float32
		var w [3][3]float64
		bx := emptyBox()
		for k := 0; k < 3; k++ {
			q := p.Positions[p.Indices[3*i+k]]
			v[k] = [3]float32{q[0], q[1], q[2]}
			w[k] = [3]float64{float64(q[0]), float64(q[1]), float64(q[2])}
			bx.grow(w[k])
		}
		tr := triangle{v0: w[0], e1: sub(w[1], w[0]), e2: sub(w[2], w[0])}
		if cross(tr.e1, tr.e2) == [3]float64{} {
			g.flat = append(g.flat, v)
			g.slot[i] = -int32(len(g.flat))
			continue
		}
		tris = append(tris, tr)
		kept = append(kept, int32(i))
		boxes = append(boxes, bx)
	}
	// Large geometries get the 8-wide hierarchy for packets too, where the
	// assembly traverses it; small ones gain nothing from its preparation
	// (wideMinTriangles).
	b := buildBVH(boxes, maxLeafSize, useAVX2 && g.cut == nil && len(boxes) >= wideMinTriangles)
	g.nodes, g.nodes8, g.bounds = b.nodes, b.nodes8, b.bounds
	n = len(tris)
	// Each leaf's items become one packet, in leaf order; the leaf refs are
	// rewritten from item ranges to packets.
	packOf := make([]int32, n) // packet+1 of the leaf that starts at an item
	leaves := 0
	for i := range g.nodes {
		nd := &g.nodes[i]
		for k := 0; k < int(nd.n); k++ {
			if ref := nd.child[k]; ref < 0 {
				first := (^ref) >> 3
				packOf[first] = 1
				leaves++
			}
		}
	}
	g.packs = make([]triPack, leaves)
	next := int32(0)
	for i := range packOf {
		if packOf[i] != 0 {
			next++
			packOf[i] = next
		}
	}
	for i := range g.nodes {
		nd := &g.nodes[i]
		for k := 0; k < int(nd.n); k++ {
			if ref := nd.child[k]; ref < 0 {
				first, count := (^ref)>>3, (^ref)&7
				pk := packOf[first] - 1
				for l := int32(0); l < count; l++ {
					it := b.items[first+l]
					g.packs[pk].set(int(l), tris[it])
					g.slot[kept[it]] = pk*packLanes + l
					if g.cut != nil {
						g.setUVs(p, int(kept[it]), pk*packLanes+l)
					}
				}
				nd.child[k] = leafRef(pk, count)
			}
		}
	}
	for i := range g.nodes8 {
		nd := &g.nodes8[i]
		for k := 0; k < int(nd.n); k++ {
			if ref := nd.child[k]; ref < 0 {
				first, count := (^ref)>>3, (^ref)&7
				nd.child[k] = leafRef(packOf[first]-1, count)
			}
		}
	}
	return g
}

// setUVs keeps the texture coordinates of the primitive's triangle i for
// the triangle in leaf order at slot (0, 0 without any).
func (g *Geometry) setUVs(p *models.Primitive, i int, slot int32) {
	if g.uvs == nil {
		g.uvs = make([][3][2]float32, len(g.packs)*packLanes)
	}
	if len(p.TexCoords) != len(p.Positions) {
		return
	}
	for k := 0; k < 3; k++ {
		uv := p.TexCoords[p.Indices[3*i+k]]
		g.uvs[slot][k] = [2]float32{uv[0], uv[1]}
	}
}

// keeps reports whether triangle tri (leaf order) stops a ray at the
// barycentric coordinates (b1, b2) of its hit: its texture coordinates
// there, interpolated in float64, at a texel the material does not cut
// away.
func (g *Geometry) keeps(tri int32, b1, b2 float64) bool {
	uv := &g.uvs[tri]
	b0 := 1 - b1 - b2
	u := b0*float64(uv[0][0]) + b1*float64(uv[1][0]) + b2*float64(uv[2][0])
	v := b0*float64(uv[0][1]) + b1*float64(uv[1][1]) + b2*float64(uv[2][1])
	return g.cut.Keeps(u, v)
}

// hitTri is the triangle test on triangle tri (leaf order) with the
// material's cut-outs: a hit where the material lets the ray through is
// no hit.
func (g *Geometry) hitTri(tri int32, r *ray, tmax float64) (float64, bool) {
	tr := g.tri(tri)
	if g.cut == nil {
		return tr.hit(r, tmax)
	}
	t, b1, b2, ok := tr.hitBary(r, tmax)
	if !ok || !g.keeps(tri, b1, b2) {
		return 0, false
	}
	return t, true
}
