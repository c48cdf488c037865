package raycast

// packLanes is how many triangles a packet holds: a geometry's leaf is one
// packet, tested with one vector test where the CPU has one.
const packLanes = 4

// triPack is up to four triangles side by side, coordinate by coordinate
// (v0[axis][lane]), in the vertex-and-edges form of triangle. Lanes that
// hold no triangle are all zero: their determinant is 0, so no ray hits
// them. The vector test (traverse_amd64.s) reads it by offset:
// TestAssemblyLayout holds the two to the same layout. (Float32 vertices, from
// which the edges are computed as they are read, halve a packet's bytes but
// were slower: a leaf is reached once or twice per ray.)
type triPack struct {
	v0, e1, e2 [3][packLanes]float64
}

// set stores tr in lane l.
func (p *triPack) set(l int, tr triangle) {
	for a := 0; a < 3; a++ {
		p.v0[a][l], p.e1[a][l], p.e2[a][l] = tr.v0[a], tr.e1[a], tr.e2[a]
	}
}

// tri returns triangle i of g, numbered in leaf order: lane i%4 of packet
// i/4.
func (g *Geometry) tri(i int32) triangle {
	p, l := &g.packs[i/packLanes], i%packLanes
	return triangle{
		v0: [3]float64{p.v0[0][l], p.v0[1][l], p.v0[2][l]},
		e1: [3]float64{p.e1[0][l], p.e1[1][l], p.e1[2][l]},
		e2: [3]float64{p.e2[0][l], p.e2[1][l], p.e2[2][l]},
	}
}

// hitLeaf returns the nearest hit closer than tmax among the count
// triangles of packet pack, and its number (tmax and -1 if none), testing
// one after the other: the Go loop's leaf test (intersectGo), where the
// assembly cannot run.
func (g *Geometry) hitLeaf(r *ray, pack, count int32, tmax float64) (float64, int32) {
	best := int32(-1)
	for i := pack * packLanes; i < pack*packLanes+count; i++ {
		if t, ok := g.hitTri(i, r, tmax); ok {
			tmax, best = t, i
		}
	}
	return tmax, best
}
