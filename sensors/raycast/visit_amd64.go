package raycast

import "golang.org/x/sys/cpu"

// useAVX2 selects the vector node test; without AVX2 the scalar one runs.
var useAVX2 = cpu.X86.HasAVX2

// visitAVX2 is visitScalar's box tests for the four children at once: it
// writes each child's entry distance into ts and returns the bit set of the
// children entered before tmax (bit k for child k). The arithmetic is the
// scalar test's, operation for operation, so that both enter the same
// children.
//
//go:noescape
func visitAVX2(r *ray, nd *node4, tmax float64, ts *[4]float64) uint64

// visit tests the ray against the children of nd and returns those it
// enters before tmax, nearest first, with their entry distances (see
// visitScalar).
func (r *ray) visit(nd *node4, tmax float64, refs *[4]int32, ts *[4]float64) int {
	if !useAVX2 {
		return r.visitScalar(nd, tmax, refs, ts)
	}
	var t [4]float64
	bits := visitAVX2(r, nd, tmax, &t)
	return sortEntered(bits, &t, nd, refs, ts)
}

// hitPackAVX2 is triangle.hit for the four lanes of p at once, with the
// same operations in the same order (no fused multiply-adds), so that it
// hits what the scalar test hits at the very same distance. It writes each
// lane's distance into ts and returns the bit set of the lanes hit before
// tmax.
//
//go:noescape
func hitPackAVX2(r *ray, p *triPack, tmax float64, ts *[packLanes]float64) uint64

// hitLeaf returns the nearest hit closer than tmax among the count
// triangles of packet pack, and its number (tmax and -1 if none).
func (g *Geometry) hitLeaf(r *ray, pack, count int32, tmax float64) (float64, int32) {
	if !useAVX2 {
		return g.hitLeafScalar(r, pack, count, tmax)
	}
	var t [packLanes]float64
	set := hitPackAVX2(r, &g.packs[pack], tmax, &t)
	if set == 0 {
		return tmax, -1
	}
	return nearestLane(set, &t, pack, tmax)
}
